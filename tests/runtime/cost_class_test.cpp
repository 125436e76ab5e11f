// The ISA and the chip descriptions agree on costs: every instruction's declared cost class exists
// in each chip's cost table, names the instruction, and covers every engine that may issue it.
// DMA and control instructions are costed by the timing model itself (DMA bandwidth, fixed cost,
// sequencer overheads), not by a cost class.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "trn/isa/instruction_set.h"
#include "trn/spec/loader.h"

namespace trn::runtime {
namespace {

/// Classes the timing model computes from the DMA and sequencer sections of the spec.
const std::set<std::string_view> kTimingModelOwned = {"control", "dma_copy", "dma_transpose",
                                                      "dma_compute"};

TEST(CostClasses, EveryInstructionHasItsClassOnEveryChip) {
  for (const char* chipName : {"trn1", "trn2", "trn3"}) {
    const Result<spec::ChipSpec> chip = spec::loadChip(chipName);
    ASSERT_TRUE(chip.ok()) << chip.status().toString();
    isa::forEachInstructionType([&]<typename I>() {
      const std::string_view name = I::kInfo.costClass;
      if (kTimingModelOwned.contains(name)) {
        return;
      }
      const spec::CostClass* cls = chip->costs.find(name);
      ASSERT_NE(cls, nullptr) << chipName << ": no cost class '" << name << "' for "
                              << I::kInfo.mnemonic;
      EXPECT_NE(std::find(cls->instructions.begin(), cls->instructions.end(), I::kInfo.mnemonic),
                cls->instructions.end())
          << chipName << ": class '" << name << "' does not list " << I::kInfo.mnemonic;
      for (const isa::Engine engine : isa::kAllEngines) {
        if (!I::kInfo.engines.contains(engine)) {
          continue;
        }
        EXPECT_NE(std::find(cls->engines.begin(), cls->engines.end(), engine), cls->engines.end())
            << chipName << ": class '" << name << "' does not cover " << I::kInfo.mnemonic
            << " on " << isa::engineName(engine);
      }
    });
  }
}

}  // namespace
}  // namespace trn::runtime
