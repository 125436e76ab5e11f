// The HTML report's embedded files (tools/report-ui), generated into report_assets.cpp by
// cmake/embed_files.cmake.
#pragma once

#include <string>

namespace trn::profile::assets {

const std::string& echartsScript();  ///< vendor/echarts.report.min.js
const std::string& reportScript();   ///< src/report.js
const std::string& reportStyle();    ///< src/report.css

}  // namespace trn::profile::assets
