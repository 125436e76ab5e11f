// The fidelity report: the table in docs/fidelity.md is exactly what `trnsim fidelity` prints
// (so a change that moves a simulated figure must update the report), and each row's error is
// the simulated time against the published one.
#include "trn/harness/fidelity.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace trn::harness {
namespace {

/// The text between the report's begin and end markers in docs/fidelity.md.
std::string tableInDocs() {
  std::ifstream in(std::string(TRN_SOURCE_DIR) + "/docs/fidelity.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string begin = "<!-- trnsim fidelity: begin -->\n";
  const std::size_t a = doc.find(begin);
  const std::size_t b = doc.find("<!-- trnsim fidelity: end -->");
  if (a == std::string::npos || b == std::string::npos || b < a) {
    return "(no table between the markers)";
  }
  return doc.substr(a + begin.size(), b - a - begin.size());
}

// One test, so that the rows (about 20 s of simulation) are computed once: the table, and each
// row's error against its published and simulated times.
TEST(FidelityReport, DocsTableIsWhatTheCommandPrints) {
  const Result<std::vector<FidelityRow>> rows = fidelityRows();
  ASSERT_TRUE(rows.ok()) << rows.status().toString();
  EXPECT_EQ(tableInDocs(), fidelityTable(*rows))
      << "docs/fidelity.md's table is out of date: paste what `trnsim fidelity` prints";
  ASSERT_EQ(rows->size(), publishedMeasurements().size());
  int simulated = 0;
  for (const FidelityRow& row : *rows) {
    SCOPED_TRACE(row.measurement.kernel + " at " + row.measurement.inputs[0].name);
    if (!row.notSimulated.empty()) {
      // Not simulated: the reason is the start of the error, without a source location.
      EXPECT_EQ(row.notSimulated.find(".cpp"), std::string::npos) << row.notSimulated;
      EXPECT_EQ(row.simulatedSeconds, 0);
      EXPECT_FALSE(row.measurement.calibration) << "every calibration row must simulate";
      continue;
    }
    ++simulated;
    EXPECT_GT(row.simulatedSeconds, 0);
    EXPECT_EQ(row.trn2Seconds > 0, row.trn2NotSimulated.empty());
    EXPECT_DOUBLE_EQ(row.error,
                     (row.simulatedSeconds - row.measurement.seconds) / row.measurement.seconds);
  }
  EXPECT_GT(simulated, 4);
  // The matmul tutorial's fully optimised step: 6.97 ms on Trn1; the layernorm tutorial's v2:
  // p50 1969 us.
  EXPECT_DOUBLE_EQ(publishedMeasurements()[3].seconds, 6.97e-3);
  EXPECT_EQ(publishedMeasurements()[3].kernel, "matmul_optimised");
  EXPECT_DOUBLE_EQ(publishedMeasurements().back().seconds, 1969e-6);
  EXPECT_EQ(publishedMeasurements().back().kernel, "layernorm_tutorial_v2");
}

}  // namespace
}  // namespace trn::harness
