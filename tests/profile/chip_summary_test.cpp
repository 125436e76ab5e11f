// The chip summary's HBM stacks: traffic is counted in the stack its bytes lie in, whichever
// core moved it, and a stack only reached from other cores is listed too.
#include "trn/profile/chip_summary.h"

#include <gtest/gtest.h>

#include <vector>

#include "trn/spec/loader.h"

namespace trn::profile {
namespace {

TEST(ChipSummary, CountsTrafficInTheStackItLiesIn) {
  Result<spec::ChipSpec> chip = spec::loadChip("trn2");
  ASSERT_TRUE(chip.ok()) << chip.status().toString();
  // Core 0 (stack 0) moves 3 MB of its own stack; core 4 (stack 2) moves 1 MB of stack 0 and
  // 2 MB of stack 3, in 10 us.
  std::vector<core::RunStats> cores(2);
  for (core::RunStats& s : cores) {
    s.mode = core::RunMode::kTimingOnly;
    s.total = Picoseconds(10'000'000);
  }
  cores[0].dma.hbmBytes = 3'000'000;
  cores[0].dma.hbmBytesByStack = {3'000'000, 0, 0, 0};
  cores[1].dma.hbmBytes = 3'000'000;
  cores[1].dma.hbmBytesByStack = {1'000'000, 0, 0, 2'000'000};
  const std::vector<int> physical = {0, 4};
  const ChipSummary s = makeChipSummary(cores, physical, *chip);
  ASSERT_EQ(s.stacks.size(), 3U);
  EXPECT_EQ(s.stacks[0].stack, 0);
  EXPECT_EQ(s.stacks[0].cores, std::vector<int>{0});
  EXPECT_EQ(s.stacks[0].hbmBytes, 4'000'000);
  EXPECT_DOUBLE_EQ(s.stacks[0].bytesPerSecond, 4e11);  // 4 MB in 10 us
  EXPECT_DOUBLE_EQ(s.stacks[0].utilisation, 4e11 / (2.9e12 / 4));
  EXPECT_EQ(s.stacks[1].stack, 2);
  EXPECT_EQ(s.stacks[1].cores, std::vector<int>{4});
  EXPECT_EQ(s.stacks[1].hbmBytes, 0);
  EXPECT_EQ(s.stacks[2].stack, 3);
  EXPECT_TRUE(s.stacks[2].cores.empty());
  EXPECT_EQ(s.stacks[2].hbmBytes, 2'000'000);
  const std::string text = formatChipSummary(s);
  EXPECT_NE(text.find("HBM stack 3 (no core of the run; reached from others): 200.0 GB/s"),
            std::string::npos)
      << text;
  EXPECT_EQ(s.cores[1].hbmBytes, 3'000'000);
}

}  // namespace
}  // namespace trn::profile
