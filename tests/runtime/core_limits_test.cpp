// runtime::coreLimits: the chip counts the core verifies programs against arrive in CoreLimits'
// int32 fields unchanged at the largest values the chip schema allows, and race detection can
// follow every DMA queue a chip may declare.
#include <gtest/gtest.h>

#include "trn/core/hazard_detector.h"
#include "trn/isa/engine.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace trn::runtime {
namespace {

TEST(CoreLimits, TheLargestSequencerAndQueueCountsArriveUnchanged) {
  const Result<spec::ChipSpec> chip = spec::loadChipFromString(
      "version: 1\nname: big\nbase: trn2\ncore:\n"
      "  sequencer: {registers: 65536, semaphores: 65536}\n"
      "  dma: {queues_per_engine: 19}\n",
      "big.yaml");
  ASSERT_TRUE(chip.ok()) << chip.status().toString();
  const isa::CoreLimits limits = coreLimits(*chip);
  EXPECT_EQ(limits.registers, 65536);
  EXPECT_EQ(limits.semaphores, 65536);
  EXPECT_EQ(limits.dmaQueues, 19);
  EXPECT_LE(isa::kNumEngines + limits.dmaQueues, core::kMaxAgents);
}

TEST(CoreLimits, Trn2) {
  const Result<spec::ChipSpec> chip = spec::loadChip("trn2");
  ASSERT_TRUE(chip.ok()) << chip.status().toString();
  const isa::CoreLimits limits = coreLimits(*chip);
  EXPECT_EQ(limits, isa::CoreLimits{});  // CoreLimits' defaults are Trainium2's
}

}  // namespace
}  // namespace trn::runtime
