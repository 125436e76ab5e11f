// Views derived from the schema: flattening for `spec show`, differences for `spec diff`, the
// schema reference, and that docs/spec.md documents every key.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "test_util.h"
#include "trn/spec/report.h"

namespace trn::spec {
namespace {

const SpecEntry* findEntry(const std::vector<SpecEntry>& entries, std::string_view path) {
  for (const SpecEntry& e : entries) {
    if (e.path == path) {
      return &e;
    }
  }
  return nullptr;
}

TEST(Report, FlattensWithUnitsKindsAndSources) {
  const ChipSpec s = testing::mustLoad("trn2");
  const std::vector<SpecEntry> entries = describeChip(s);
  const SpecEntry* sbuf = findEntry(entries, "core.sbuf.partition_bytes");
  ASSERT_NE(sbuf, nullptr);
  EXPECT_EQ(sbuf->value, "224KiB");
  EXPECT_NE(sbuf->kind.find("size"), std::string::npos);
  EXPECT_FALSE(sbuf->doc.empty());
  EXPECT_NE(sbuf->provenance.source.find("N2"), std::string::npos);
  const SpecEntry* minIi = findEntry(entries, "costs.min_ii");
  ASSERT_NE(minIi, nullptr);
  EXPECT_EQ(minIi->value, "64 cycles");
  const SpecEntry* formula =
      findEntry(entries, "costs.classes.tensor_copy.variants.perf_4x.cycles");
  ASSERT_NE(formula, nullptr);
  EXPECT_EQ(formula->record, "costs.classes.tensor_copy.variants.perf_4x");
  EXPECT_EQ(numberAt(s, "costs.min_ii"), Ratio(64));
  EXPECT_EQ(numberAt(s, "core.pe.peak_tflops.bf16"), Ratio(79));
  EXPECT_FALSE(numberAt(s, "core.pe.clock").has_value());
}

TEST(Report, ShowIsGroupedWithUnitsAndSources) {
  const std::string text = formatChip(testing::mustLoad("trn2"));
  for (const char* expected :
       {"trn2: AWS Trainium2", "\ncore\n  pe\n    clock", "2.4GHz", "[N2 engine table (§4)]",
        "224KiB", "alternative: 27.2 GB/s per engine", "per-core dense BF16 peak    78.64 TFLOPS",
        "    tensor_copy ", "max(costs.min_ii, n / core.dve.perf_mode.fast_factor)"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected;
  }
}

TEST(Report, DiffOfTrn2AndTrn3) {
  const ChipSpec trn2 = testing::mustLoad("trn2");
  const ChipSpec trn3 = testing::mustLoad("trn3");
  const std::vector<SpecDifference> diffs = diffChips(trn2, trn3);
  const auto has = [&](const char* path, const char* left, const char* right) {
    return std::any_of(diffs.begin(), diffs.end(), [&](const SpecDifference& d) {
      return d.path == path && d.left == left && d.right == right;
    });
  };
  EXPECT_TRUE(has("core.sbuf.partition_bytes", "224KiB", "256KiB"));
  EXPECT_TRUE(has("core.sbuf.total_bytes", "28MiB", "32MiB"));
  EXPECT_TRUE(has("core.dve.clock", "960MHz", "1.2GHz"));
  EXPECT_TRUE(has("hbm.capacity", "96GiB", "144GiB"));
  EXPECT_TRUE(has("costs.classes.tensor_copy.variants.act_perf_2x.cycles", "(absent)",
                  "max(costs.min_ii, n / core.act.perf_mode_factor)"));
  EXPECT_FALSE(std::any_of(diffs.begin(), diffs.end(),
                           [](const SpecDifference& d) { return d.path == "name"; }));
  EXPECT_FALSE(has("core.pe.clock", "2.4GHz", "2.4GHz"));
  EXPECT_TRUE(diffChips(trn2, trn2).empty());
  const std::string text = formatDiff(trn2, trn3);
  EXPECT_NE(text.find("core.sbuf.partition_bytes"), std::string::npos);
  EXPECT_NE(text.find("values differ"), std::string::npos);
}

TEST(Report, SchemaDescribesEveryKey) {
  const std::vector<SchemaEntry> schema = describeSchema();
  EXPECT_GT(schema.size(), 150U);
  for (const SchemaEntry& e : schema) {
    EXPECT_FALSE(e.doc.empty()) << e.path;
    EXPECT_FALSE(e.kind.empty()) << e.path;
  }
  const auto entry = std::find_if(schema.begin(), schema.end(), [](const SchemaEntry& e) {
    return e.path == "core.sbuf.partitions";
  });
  ASSERT_NE(entry, schema.end());
  EXPECT_EQ(entry->range, "1 .. 4096");
  EXPECT_TRUE(entry->sourced);
  EXPECT_NE(formatSchemaMarkdown().find("| `costs.classes.<class>.variants.<variant>.cycles` |"),
            std::string::npos);
}

TEST(Report, DocsDocumentEveryKey) {
  std::ifstream in(testing::sourcePath("docs/spec.md"));
  ASSERT_TRUE(in.good()) << "docs/spec.md is missing";
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string docs = buffer.str();
  for (const SchemaEntry& e : describeSchema()) {
    EXPECT_NE(docs.find("`" + e.path + "`"), std::string::npos)
        << e.path << " is not documented in docs/spec.md (regenerate with trnsim spec schema)";
  }
}

}  // namespace
}  // namespace trn::spec
