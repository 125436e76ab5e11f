// The trnsim command line: `spec show`, `spec diff`, errors with their exit status (docs/cli.md:
// 2 usage, 3 input) and no crash.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"
#include "trnsim_cli.h"

namespace trn::spec {
namespace {

using trn::testing::CliRun;

CliRun trnsim(const std::string& arguments) {
  return trn::testing::runCommand(TRNSIM_BINARY, arguments);
}

TEST(Cli, ShowTrn2) {
  const CliRun r = trnsim("spec show trn2");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  for (const char* expected :
       {"trn2:", "2.4GHz", "224KiB", "[N2 engine table (§4)]", "96GiB", "23GB/s", "78.64 TFLOPS"}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected;
  }
}

TEST(Cli, DiffTrn2Trn3) {
  const CliRun r = trnsim("spec diff trn2 trn3");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("core.sbuf.partition_bytes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("224KiB"), std::string::npos);
  EXPECT_NE(r.output.find("256KiB"), std::string::npos);
}

TEST(Cli, MissingChipListsAvailableChips) {
  const CliRun r = trnsim("spec show nosuchchip");
  EXPECT_EQ(r.exitCode, 3) << r.output;
  EXPECT_NE(r.output.find("trnsim: error: chip 'nosuchchip' not found"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("trn1, trn2, trn3"), std::string::npos) << r.output;
}

TEST(Cli, BadFileGivesLocatedError) {
  const CliRun r = trnsim("spec show " + testing::badFile("negative_size.yaml"));
  EXPECT_EQ(r.exitCode, 3) << r.output;
  EXPECT_NE(r.output.find("trnsim: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("negative_size.yaml:7:22: core.sbuf.partition_bytes: '-4KiB' is "
                          "negative; expected a value >= 0"),
            std::string::npos)
      << r.output;
  const CliRun diff = trnsim("spec diff trn2 " + testing::badFile("malformed_yaml.yaml"));
  EXPECT_EQ(diff.exitCode, 3) << diff.output;
  EXPECT_NE(diff.output.find("YAML syntax error"), std::string::npos) << diff.output;
}

TEST(Cli, UsageErrorsExitWithTwo) {
  for (const char* arguments : {"", "spec", "spec diff trn2", "spec show", "frobnicate"}) {
    const CliRun r = trnsim(arguments);
    EXPECT_EQ(r.exitCode, 2) << arguments << ": " << r.output;
    EXPECT_NE(r.output.find("trnsim: error: "), std::string::npos) << arguments;
  }
  EXPECT_EQ(trnsim("--help").exitCode, 0);
}

TEST(Cli, DemoListAndSchema) {
  const CliRun demo = trnsim("demo --small --trace ''");
  EXPECT_EQ(demo.exitCode, 0) << demo.output;
  EXPECT_NE(demo.output.find("trn2: AWS Trainium2"), std::string::npos);
  const CliRun list = trnsim("spec list");
  EXPECT_EQ(list.exitCode, 0);
  EXPECT_NE(list.output.find("examples/trn2-wide-sbuf"), std::string::npos);
  const CliRun schema = trnsim("spec schema");
  EXPECT_EQ(schema.exitCode, 0);
  EXPECT_NE(schema.output.find("`core.sbuf.partition_bytes`"), std::string::npos);
}

}  // namespace
}  // namespace trn::spec
