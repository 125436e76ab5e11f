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

/// The rows, simulated once for both tests.
const Result<std::vector<FidelityRow>>& rowsOnce() {
  static const Result<std::vector<FidelityRow>> rows = fidelityRows();
  return rows;
}

TEST(FidelityReport, DocsTableIsWhatTheCommandPrints) {
  const Result<std::vector<FidelityRow>>& rows = rowsOnce();
  ASSERT_TRUE(rows.ok()) << rows.status().toString();
  EXPECT_EQ(tableInDocs(), fidelityTable(*rows))
      << "docs/fidelity.md's table is out of date: paste what `trnsim fidelity` prints";
}

TEST(FidelityReport, EachErrorIsTheSimulatedAgainstThePublishedTime) {
  const Result<std::vector<FidelityRow>>& rows = rowsOnce();
  ASSERT_TRUE(rows.ok()) << rows.status().toString();
  ASSERT_EQ(rows->size(), publishedMeasurements().size());
  for (const FidelityRow& row : *rows) {
    SCOPED_TRACE(row.measurement.kernel);
    EXPECT_GT(row.simulatedSeconds, 0);
    EXPECT_GT(row.trn2Seconds, 0);
    EXPECT_DOUBLE_EQ(row.error,
                     (row.simulatedSeconds - row.measurement.seconds) / row.measurement.seconds);
  }
  // The tutorial's fully optimised step: 6.97 ms on Trn1.
  EXPECT_DOUBLE_EQ(publishedMeasurements().back().seconds, 6.97e-3);
  EXPECT_EQ(publishedMeasurements().back().kernel, "matmul_optimised");
}

}  // namespace
}  // namespace trn::harness
