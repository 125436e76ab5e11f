// Every malformed description under tests/spec/bad gives a clear error that names the file, the
// line and the full key path; no input crashes the loader.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"

namespace trn::spec {
namespace {

struct BadCase {
  const char* file;       ///< under tests/spec/bad
  const char* location;   ///< "<file>:<line>:" expected in the message
  const char* keyPath;    ///< full key path expected in the message ("" if none)
  const char* text;       ///< the explanation expected in the message
  ErrorCode code = ErrorCode::kInvalidArgument;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

class BadFile : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadFile, GivesALocatedError) {
  const BadCase& c = GetParam();
  const Result<ChipSpec> spec = loadChip(testing::badFile(c.file));
  ASSERT_FALSE(spec.ok()) << c.file << " loaded";
  const std::string message = spec.status().message();
  EXPECT_EQ(spec.status().code(), c.code) << message;
  EXPECT_NE(message.find(c.location), std::string::npos) << message;
  EXPECT_NE(message.find(c.keyPath), std::string::npos) << message;
  EXPECT_NE(message.find(c.text), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Spec, BadFile,
    ::testing::Values(
        BadCase{"malformed_yaml.yaml", "malformed_yaml.yaml:7:7: ", "",
                "YAML syntax error: did not find expected ',' or '}' (while parsing a flow "
                "mapping at line 6, column 9)",
                ErrorCode::kParseError},
        BadCase{"unknown_key.yaml", "unknown_key.yaml:7:5: ", "core.sbuf.partition_byte: ",
                "unknown key 'partition_byte'; did you mean 'partition_bytes'?"},
        BadCase{"missing_key.yaml", "missing_key.yaml:8:7: ", "costs.classes.my_class.engines: ",
                "missing required key 'engines'"},
        BadCase{"bad_unit.yaml", "bad_unit.yaml:7:12: ", "core.pe.clock: ",
                "'2.4GHZ' has unknown unit 'GHZ'; a frequency takes one of"},
        BadCase{"wrong_dimension.yaml", "wrong_dimension.yaml:7:30: ",
                "core.sbuf.partition_bytes: ", "'2.4GHz' has unknown unit 'GHz'; a size takes"},
        BadCase{"negative_size.yaml", "negative_size.yaml:7:22: ", "core.sbuf.partition_bytes: ",
                "'-4KiB' is negative; expected a value >= 0"},
        BadCase{"out_of_range.yaml", "out_of_range.yaml:9:17: ", "core.sbuf.partitions: ",
                "'5000' is out of range; expected a value in [1, 4096]"},
        BadCase{"wrong_type.yaml", "wrong_type.yaml:7:11: ", "core.pe.rows: ",
                "expected an integer (a single value), got a list"},
        BadCase{"missing_source.yaml", "missing_source.yaml:5:17: ", "chip.neuron_cores: ",
                "missing source: write {value: 8, source: \"...\"}"},
        BadCase{"base_cycle_a.yaml", "base_cycle_b.yaml:4:7: ", "base: ", "inheritance cycle: "},
        BadCase{"base_not_found.yaml", "base_not_found.yaml:4:7: ", "base: ",
                "chip 'trn9' not found", ErrorCode::kNotFound},
        BadCase{"empty.yaml", "empty.yaml:1:1: ", "", "the file is empty"},
        BadCase{"psum_mismatch.yaml", "psum_mismatch.yaml:7:12: ", "core.psum.banks: ",
                "core.psum.partition_bytes 16KiB != core.psum.banks 7 x core.psum.bank_bytes "
                "2KiB = 14KiB"},
        BadCase{"matmul_n_too_large.yaml", "matmul_n_too_large.yaml:7:15: ",
                "core.tile_limits.matmul_n: ", "exceed core.psum.bank_bytes 2KiB"},
        BadCase{"bad_formula.yaml",
                "bad_formula.yaml:9:27: ", "costs.classes.activation.variants.default.cycles: ",
                "expected ',' or ')' at character 20"},
        BadCase{"unknown_formula_name.yaml", "unknown_formula_name.yaml:9:27: ",
                "costs.classes.reciprocal.variants.default.cycles: ",
                "uses unknown name 'costs.min_iii'"},
        BadCase{"duplicate_key.yaml", "duplicate_key.yaml:8:5: ", "",
                "duplicate key 'partitions' (first defined at line 7)", ErrorCode::kParseError},
        BadCase{"not_a_mapping.yaml", "not_a_mapping.yaml:2:1: ", "",
                "expected a mapping with keys version, name"},
        BadCase{"costs_file_missing.yaml", "costs_file_missing.yaml:5:8: ", "costs: ",
                "no_such_costs.yaml: no such file", ErrorCode::kNotFound},
        BadCase{"costs_not_yaml.yaml", "costs_not_yaml.yaml:5:8: ", "costs: ",
                "expected a mapping, or the relative path of a .yaml file that holds one"},
        BadCase{"costs_bad_entry.yaml", "bad_class.yaml:4:5: ", "costs.classes.my_class.engines: ",
                "missing required key 'engines'"}),
    [](const ::testing::TestParamInfo<BadCase>& param) {
      std::string name = param.param.file;
      name = name.substr(0, name.find('.'));
      return name;
    });

TEST(LoaderErrors, BaseCycleNamesTheWholeChain) {
  const Result<ChipSpec> spec = loadChip(testing::badFile("base_cycle_a.yaml"));
  ASSERT_FALSE(spec.ok());
  const std::string m = spec.status().message();
  const std::size_t a = m.find("base_cycle_a.yaml ->");
  const std::size_t b = m.find("base_cycle_b.yaml ->", a);
  EXPECT_NE(a, std::string::npos) << m;
  EXPECT_NE(b, std::string::npos) << m;
  EXPECT_TRUE(m.ends_with("base_cycle_a.yaml")) << m;
}

TEST(LoaderErrors, MissingChipListsTheChipsThatExist) {
  const Result<ChipSpec> spec = loadChip("nosuchchip");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), ErrorCode::kNotFound);
  const std::string m = spec.status().message();
  EXPECT_NE(m.find("chip 'nosuchchip' not found"), std::string::npos) << m;
  EXPECT_NE(m.find("available chips: examples/trn2-wide-sbuf, trn1, trn2, trn3"),
            std::string::npos)
      << m;
}

TEST(LoaderErrors, MissingFileByPath) {
  const Result<ChipSpec> spec = loadChip("no/such/dir/chip.yaml");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(spec.status().message().find("chip.yaml: no such file"), std::string::npos);
}

TEST(LoaderErrors, ReportsSeveralErrorsAtOnce) {
  const Result<ChipSpec> spec = loadChipFromString(
      "version: 1\nname: two\nbase: trn2\ncore:\n  pe:\n    clock: 0GHz\n    rowz: 4\n",
      "two.yaml");
  ASSERT_FALSE(spec.ok());
  const std::string m = spec.status().message();
  EXPECT_NE(m.find("two.yaml:6:12: core.pe.clock: '0Hz' is out of range; expected a value in "
                   "[100MHz, 100GHz]"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("two.yaml:7:5: core.pe.rowz: unknown key 'rowz'; did you mean 'rows'?"),
            std::string::npos)
      << m;
}

TEST(LoaderErrors, DataTypesAreTheNumericsNames) {
  const auto load = [](const char* dtypes) {
    return loadChipFromString(
        fmt::format("version: 1\nname: d\nbase: trn2\ncore:\n  pe:\n    psum_accumulate_dtypes: "
                    "{{value: {}, source: \"test\"}}\n",
                    dtypes),
        "d.yaml");
  };
  const Result<ChipSpec> nki = load("[fp32, bfloat16, fp8_e4m3fn]");
  ASSERT_TRUE(nki.ok()) << nki.status().toString();
  EXPECT_EQ(nki->core.pe.psumAccumulateDtypes,
            (std::vector<DType>{DType::kFp32, DType::kBf16, DType::kFp8E4m3Fn}));
  const Result<ChipSpec> unknown = load("[fp32, fp33]");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find(
                "d.yaml:6:44: core.pe.psum_accumulate_dtypes: item 1: unknown dtype 'fp33'"),
            std::string::npos)
      << unknown.status().message();
}

TEST(LoaderErrors, RecordRules) {
  const auto load = [](const char* text) {
    return loadChipFromString(std::string("version: 1\nname: x\nbase: trn2\n") + text, "r.yaml");
  };
  const Result<ChipSpec> twoFallbacks =
      load("costs:\n  classes:\n    topk:\n      variants:\n        other: {cycles: \"n\"}\n");
  ASSERT_FALSE(twoFallbacks.ok());
  EXPECT_NE(twoFallbacks.status().message().find(
                "r.yaml:8:16: costs.classes.topk.variants.other: needs exactly one variant "
                "without `when:` (the fallback); found 2"),
            std::string::npos)
      << twoFallbacks.status().message();

  const Result<ChipSpec> sourcedField = load(
      "costs:\n  classes:\n    topk:\n      variants:\n        default: {cycles: {value: n}}\n");
  ASSERT_FALSE(sourcedField.ok());
  EXPECT_NE(sourcedField.status().message().find("fields of a record are plain values"),
            std::string::npos);

  const Result<ChipSpec> wrongEngine = load(
      "costs:\n  classes:\n    topk:\n      variants:\n        fast: {when: {engine: pe}, "
      "cycles: n}\n");
  ASSERT_FALSE(wrongEngine.ok());
  EXPECT_NE(wrongEngine.status().message().find(
                "costs.classes.topk.variants.fast.when.engine: is not one of "
                "costs.classes.topk.engines"),
            std::string::npos)
      << wrongEngine.status().message();
}

TEST(LoaderErrors, SourcedValueShape) {
  const auto load = [](const char* text) {
    return loadChipFromString(std::string("version: 1\nname: x\nbase: trn2\n") + text, "s.yaml");
  };
  const Result<ChipSpec> noValue = load("hbm:\n  stacks: {source: x}\n");
  ASSERT_FALSE(noValue.ok());
  EXPECT_NE(noValue.status().message().find("hbm.stacks: missing `value:`"), std::string::npos);
  const Result<ChipSpec> extra = load("hbm:\n  stacks: {value: 4, sauce: x}\n");
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("unknown key 'sauce' in a sourced value"),
            std::string::npos);
  const Result<ChipSpec> empty = load("hbm:\n  stacks:\n");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("s.yaml:5:3: hbm.stacks: expected an integer"),
            std::string::npos)
      << empty.status().message();
}

TEST(LoaderErrors, DeepAndRecursiveDocumentsAreRejected) {
  const Result<ChipSpec> recursive = loadChipFromString("x: &a [*a]\n", "rec.yaml");
  ASSERT_FALSE(recursive.ok());
  EXPECT_NE(recursive.status().message().find("rec.yaml:"), std::string::npos);
  std::string deep = "version: 1\nname: d\nbase: trn2\ncore: ";
  deep += std::string(5000, '[') + std::string(5000, ']');
  const Result<ChipSpec> nested = loadChipFromString(deep, "deep.yaml");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("deep.yaml:"), std::string::npos);
}

TEST(LoaderErrors, NoCrashOnTruncatedOrCorruptedInput) {
  std::ifstream in(testing::sourcePath("configs/chips/trn2.yaml"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  ASSERT_GT(text.size(), 1000U);
  int failures = 0;
  for (std::size_t cut = 0; cut < text.size(); cut += 53) {
    const Result<ChipSpec> spec = loadChipFromString(text.substr(0, cut), "cut.yaml");
    if (!spec.ok()) {
      ++failures;
      EXPECT_TRUE(spec.status().message().starts_with("cut.yaml:")) << spec.status().message();
    }
  }
  EXPECT_GT(failures, 0);
  const char replacements[] = {'{', '}', '[', ']', ':', '"', '-', '\n', ' ', 'x', '0', '&', '*'};
  std::uint32_t state = 12345;
  for (int i = 0; i < 300; ++i) {
    std::string corrupted = text;
    for (int k = 0; k < 3; ++k) {
      state = state * 1664525U + 1013904223U;
      corrupted[state % corrupted.size()] = replacements[(state >> 16) % sizeof(replacements)];
    }
    const Result<ChipSpec> spec = loadChipFromString(corrupted, "fuzz.yaml");
    if (!spec.ok()) {
      EXPECT_TRUE(spec.status().message().starts_with("fuzz.yaml:")) << spec.status().message();
    }
  }
}

}  // namespace
}  // namespace trn::spec
