#include "trn/profile/html_report.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "report_assets.h"

namespace trn::profile {
namespace {

/// Text safe inside an HTML element: & < > escaped.
std::string escapeHtml(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// JSON safe inside a <script> element: "</" cannot end it early.
std::string scriptSafe(std::string json) {
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    out += json[i];
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') {
      out += '\\';
    }
  }
  return out;
}

Status writePage(std::ostream& out, const nlohmann::ordered_json& data,
                 const std::string& title) {
  const std::string json =
      scriptSafe(data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"generator\" content=\"trnsim\">\n<title>" << escapeHtml(title)
      << "</title>\n<style>\n"
      << assets::reportStyle() << "</style>\n</head>\n<body data-status=\"loading\">\n"
      << "<noscript>This report needs JavaScript.</noscript>\n<div id=\"app\"></div>\n"
      << "<script>\n" << assets::echartsScript() << "\n</script>\n"
      << "<script type=\"application/json\" id=\"trn-data\">" << json << "</script>\n"
      << "<script>\n" << assets::reportScript() << "\n</script>\n</body>\n</html>\n";
  if (!out) {
    return ioError("writing the HTML report failed");
  }
  return {};
}

/// Writes the page of `data` to the file `path` (its directory created when missing).
Status writePageFile(const std::string& path, const nlohmann::ordered_json& data,
                     const std::string& title) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!dir.empty()) {
    std::filesystem::create_directories(dir, error);
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file.is_open()) {
    return ioError(
        fmt::format("cannot open report file '{}' for writing: {}", path, std::strerror(errno)));
  }
  if (const Status status = writePage(file, data, title); !status.ok()) {
    return ioError(fmt::format("cannot write report file '{}': {}", path, status.message()));
  }
  file.close();
  if (!file) {
    return ioError(fmt::format("cannot write report file '{}': closing it failed", path));
  }
  return {};
}

}  // namespace

Status writeHtmlReport(std::ostream& out, const std::vector<PageRun>& runs,
                       const spec::ChipSpec& chip, const PageOptions& options,
                       PageSummary* summary) {
  TRN_ASSIGN_OR_RETURN(const nlohmann::ordered_json data,
                       makePageData(runs, chip, options, summary));
  return writePage(out, data, options.title);
}

Status writeHtmlReportFile(const std::string& path, const std::vector<PageRun>& runs,
                           const spec::ChipSpec& chip, const PageOptions& options,
                           PageSummary* summary) {
  // The data first, so a run that cannot be reported leaves no file behind.
  TRN_ASSIGN_OR_RETURN(const nlohmann::ordered_json data,
                       makePageData(runs, chip, options, summary));
  return writePageFile(path, data, options.title);
}

Status writeCollectiveReport(std::ostream& out, const CollectiveRun& run,
                             const CollectivePageOptions& options, PageSummary* summary) {
  TRN_ASSIGN_OR_RETURN(const nlohmann::ordered_json data,
                       makeCollectivePageData(run, options, summary));
  return writePage(out, data, options.title);
}

Status writeCollectiveReportFile(const std::string& path, const CollectiveRun& run,
                                 const CollectivePageOptions& options, PageSummary* summary) {
  TRN_ASSIGN_OR_RETURN(const nlohmann::ordered_json data,
                       makeCollectivePageData(run, options, summary));
  return writePageFile(path, data, options.title);
}

}  // namespace trn::profile
