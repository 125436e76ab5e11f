// The replica groups of the `collective` instruction: their text and both binary forms round
// trip, the default (every rank) prints as before, malformed groups are refused where they are
// read (with the line), and the verifier checks the operand sizes by the group's size.
#include "trn/isa/replica_groups.h"

#include <gtest/gtest.h>

#include <string>

#include "trn/isa/program_binary.h"
#include "trn/isa/program_text.h"
#include "trn/isa/verifier.h"

namespace trn::isa {
namespace {

const std::string kTensors =
    ".tensor x input fp32 [128, 64]\n"
    ".tensor y output fp32 [512, 64]\n";

std::string collectiveLine(const std::string& groups, const std::string& op = "all_reduce",
                           int dstRows = 128) {
  return "pool: collective op=" + op + " reduce=add dst=hbm:y:fp32[[64," + std::to_string(dstRows) +
         "],[1,64]] src=hbm:x:fp32[[64,128],[1,64]]" + (groups.empty() ? "" : " groups=" + groups) +
         "\n";
}

TEST(ReplicaGroups, TextAndBothBinaryFormsRoundTrip) {
  for (const std::string groups :
       {"", "[[0,1,2,3],[4,5,6,7]]", "[[0,4],[1,5],[2,6],[3,7]]", "[[3,1],[0,2]]", "[[5]]"}) {
    const std::string text = kTensors + collectiveLine(groups);
    const Result<Program> program = parseProgramText(text, "g.tasm");
    ASSERT_TRUE(program.ok()) << program.status().toString();
    EXPECT_EQ(formatProgramText(*program), "# trnsim program\n" + text);
    for (const std::uint32_t version : {kFixedProgramFormatVersion, kCompactProgramFormatVersion}) {
      const Result<std::vector<std::byte>> binary = encodeProgram(*program, version);
      ASSERT_TRUE(binary.ok()) << binary.status().toString();
      const Result<Program> back = decodeProgram(*binary, "g.tprog");
      ASSERT_TRUE(back.ok()) << back.status().toString();
      EXPECT_EQ(formatProgramText(*back), "# trnsim program\n" + text) << "version " << version;
      // A stream decodes an instruction into a new value: keep it, not a reference into it.
      const Instruction decoded = back->stream(Engine::kPool)[0];
      const Instruction expected = program->stream(Engine::kPool)[0];
      EXPECT_EQ(std::get<Collective>(decoded.body).groups,
                std::get<Collective>(expected.body).groups);
    }
  }
}

TEST(ReplicaGroups, TheListIsHeldInListOrder) {
  const Result<ReplicaGroups> g = parseReplicaGroups("[[3,1],[0,2]]");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->groupSize, 2);
  EXPECT_EQ(g->groupCount(), 2);
  EXPECT_EQ(replicaGroupOf(*g, 1, 4), (std::vector<std::int32_t>{3, 1}));
  EXPECT_EQ(replicaGroupOf(*g, 2, 4), (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(replicaGroupOf(ReplicaGroups{}, 2, 3), (std::vector<std::int32_t>{0, 1, 2}));
}

void expectTextError(const std::string& groups, const std::string& fragment) {
  const Result<Program> program =
      parseProgramText(kTensors + "sp: nop\n" + collectiveLine(groups), "bad.tasm");
  ASSERT_FALSE(program.ok()) << groups;
  EXPECT_NE(program.status().message().find("bad.tasm:4"), std::string::npos)
      << program.status().message();
  EXPECT_NE(program.status().message().find(fragment), std::string::npos)
      << program.status().message();
}

TEST(ReplicaGroups, MalformedGroupsInTextAreErrorsAtTheirLine) {
  expectTextError("[[0,1],[2]]", "replica group 1 has 1 ranks and group 0 has 2");
  expectTextError("[[0,1],[1,2]]", "rank 1 is in replica groups 0 and 1");
  expectTextError("[[0,0]]", "replica group 0 names rank 0 twice");
  expectTextError("[[0,-1]]", "replica group 0 names rank -1");
  expectTextError("[[0,x]]", "'x' is not a rank");
  expectTextError("[]", "is not replica groups");
  expectTextError("[[]]", "is not a non-empty list of ranks");
}

TEST(ReplicaGroups, CoverageOfARunIsCheckedAgainstItsRanks) {
  const ReplicaGroups g = parseReplicaGroups("[[0,1],[2,3]]").value();
  EXPECT_TRUE(checkReplicaGroupsCover(g, 4).ok());
  const Status outside = checkReplicaGroupsCover(g, 3);
  EXPECT_NE(outside.message().find("replica group 1 names rank 3, but the run has 3 ranks"),
            std::string::npos)
      << outside.message();
  const Status missing = checkReplicaGroupsCover(g, 6);
  EXPECT_NE(missing.message().find("rank 4 is in no replica group [[0,1],[2,3]]"),
            std::string::npos)
      << missing.message();
  EXPECT_TRUE(checkReplicaGroupsCover(ReplicaGroups{}, 7).ok());
}

TEST(ReplicaGroups, TheVerifierChecksSizesByGroupSize) {
  auto verify = [](const std::string& line) {
    const Result<Program> program = parseProgramText(kTensors + line, "v.tasm");
    TRN_CHECK(program.ok()) << program.status().toString();
    return verifyProgram(*program, CoreLimits{});
  };
  // An all-gather within groups of 4: dst is 4 times src.
  EXPECT_TRUE(verify(collectiveLine("[[0,1,2,3],[4,5,6,7]]", "all_gather", 512)).ok());
  const Status wrong = verify(collectiveLine("[[0,1],[2,3]]", "all_gather", 512));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("all_gather over replica groups of 2 ranks with src of 8192 "
                                 "elements and dst of 32768: dst must be the group size times src"),
            std::string::npos)
      << wrong.message();
  // Every rank: the run's size is the scheduler's to check.
  EXPECT_TRUE(verify(collectiveLine("", "all_gather", 512)).ok());
}

TEST(ReplicaGroups, CorruptBinaryGroupsAreRefused) {
  std::string line = collectiveLine("[[0,1],[2,3]]");
  line.replace(0, 5, "sp:");  // the last stream, so the groups end the file
  const Program program = parseProgramText(kTensors + line, "g.tasm").value();
  std::vector<std::byte> binary = encodeProgram(program, kFixedProgramFormatVersion).value();
  // The last field's ranks are the last 16 bytes before the instruction's end: make rank 3 a 1.
  std::size_t at = binary.size() - 4;
  binary[at] = std::byte{1};
  const Result<Program> back = decodeProgram(binary, "bad.tprog");
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("rank 1 is in replica groups 0 and 1"), std::string::npos)
      << back.status().message();
}

}  // namespace
}  // namespace trn::isa
