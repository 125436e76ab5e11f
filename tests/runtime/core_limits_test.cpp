// runtime::coreLimits: the chip counts the core verifies programs against arrive in CoreLimits'
// int32 fields unchanged at the largest values the chip schema allows, race detection can
// follow every DMA queue a chip may declare, and the verifier applies the chip's own access rules.
#include <gtest/gtest.h>

#include "trn/core/hazard_detector.h"
#include "trn/isa/engine.h"
#include "trn/isa/program_text.h"
#include "trn/isa/verifier.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace trn::runtime {
namespace {

TEST(CoreLimits, TheLargestSequencerAndQueueCountsArriveUnchanged) {
  const Result<spec::ChipSpec> chip = spec::loadChipFromString(
      "version: 1\nname: big\nbase: trn2\ncore:\n"
      "  sequencer: {registers: 65536, semaphores: 65536}\n"
      "  dma: {queues_per_engine: 18}\n",
      "big.yaml");
  ASSERT_TRUE(chip.ok()) << chip.status().toString();
  const isa::CoreLimits limits = coreLimits(*chip);
  EXPECT_EQ(limits.registers, 65536);
  EXPECT_EQ(limits.semaphores, 65536);
  EXPECT_EQ(limits.dmaQueues, 18);
  EXPECT_LE(isa::kNumEngines + limits.dmaQueues, core::kBarrierSlot);
}

TEST(CoreLimits, Trn2) {
  const Result<spec::ChipSpec> chip = spec::loadChip("trn2");
  ASSERT_TRUE(chip.ok()) << chip.status().toString();
  const isa::CoreLimits limits = coreLimits(*chip);
  EXPECT_EQ(limits, isa::CoreLimits{});  // CoreLimits' defaults are Trainium2's
}

Status verifyText(const std::string& body, const isa::CoreLimits& limits) {
  auto program = isa::parseProgramText(".tensor c output fp32 [128, 64]\n" + body, "t.tasm");
  EXPECT_TRUE(program.ok()) << program.status().toString();
  return isa::verifyProgram(*program, limits);
}

TEST(CoreLimits, TheVerifierAppliesTheChipsAccessRules) {
  // A what-if trn2 whose compute engines start every access at partition 0 and whose on-chip
  // strides stop at 1024 elements.
  const Result<spec::ChipSpec> chip = spec::loadChipFromString(
      "version: 1\nname: strict\nbase: trn2\ncore:\n"
      "  access:\n"
      "    free_dim_max_stride: 1024\n"
      "    start_partition_rules:\n"
      "      - {max_partitions: 128, starts: [0], source: what-if}\n",
      "strict.yaml");
  ASSERT_TRUE(chip.ok()) << chip.status().toString();
  const isa::CoreLimits strict = coreLimits(*chip);
  const isa::CoreLimits trn2;
  const std::string quarter =
      "dve: tensor_copy dst=sbuf[32:64]:fp32[[1,64]] src=sbuf[32:64]+256:fp32[[1,64]]\n";
  EXPECT_TRUE(verifyText(quarter, trn2).ok());
  const Status started = verifyText(quarter, strict);
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.message().find("an access of 32 partitions (<= 128) must start at partition "
                                   "0, not 32"),
            std::string::npos)
      << started.message();
  const std::string strided =
      "dve: tensor_copy dst=sbuf[0:128]:fp32[[1,4]] src=sbuf[0:128]:fp32[[2000,4]]\n";
  EXPECT_TRUE(verifyText(strided, trn2).ok());
  const Status stride = verifyText(strided, strict);
  ASSERT_FALSE(stride.ok());
  EXPECT_NE(stride.message().find("stride 2000; on-chip strides are -32768..1024 elements"),
            std::string::npos)
      << stride.message();
}

}  // namespace
}  // namespace trn::runtime
