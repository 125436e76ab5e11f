// Fuzz target: chip descriptions as YAML text, loaded as if they were a file next to the real
// chips (configs/chips/fuzz.yaml), so `base: trn2` and relative base paths resolve and most inputs
// are what-if overlays of a real chip. The contract: the loader returns an error that names a
// file (and, for the text itself, a line and column), or a description that every consumer takes
// without crashing: it passes its own cross-field validation again, loads the same way twice,
// renders for `spec show` and `spec diff`, gives derived values, evaluates every cost class,
// builds the timing model's cost calculator and converts to the core's limits within the
// bounds the simulator relies on.
#include <string>
#include <string_view>

#include "fuzz_target.h"
#include "trn/core/hazard_detector.h"
#include "trn/core/instruction_cost.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"
#include "trn/spec/report.h"
#include "validate.h"

namespace {

using trn::spec::ChipSpec;

/// True when `message` starts with "<something>.yaml:" or "<something>.yml:" (a file, usually
/// followed by line and column).
bool namesAFile(std::string_view message) {
  const std::size_t colon = message.find(':');
  if (colon == std::string_view::npos) {
    return false;
  }
  const std::string_view file = message.substr(0, colon);
  return file.ends_with(".yaml") || file.ends_with(".yml");
}

/// Every cost class evaluated for a few typical instructions on each of its engines.
void evaluateCosts(const ChipSpec& spec) {
  for (const trn::spec::CostClass& costClass : spec.costs.classes) {
    for (const trn::spec::Engine engine : costClass.engines) {
      for (const std::int64_t n : {std::int64_t{1}, std::int64_t{512}, std::int64_t{65536}}) {
        trn::spec::CostQuery query;
        query.engine = engine;
        query.dtypes = {trn::DType::kBf16, trn::DType::kFp32};
        query.ops = {"add"};
        query.variables.set(trn::spec::CostVariable::kN, n)
            .set(trn::spec::CostVariable::kP, 128)
            .set(trn::spec::CostVariable::kNStationary, 128)
            .set(trn::spec::CostVariable::kNMoving, n)
            .set(trn::spec::CostVariable::kK, 8)
            .set(trn::spec::CostVariable::kIndices, n)
            .set(trn::spec::CostVariable::kDtypeBytes, 2);
        const trn::Result<trn::spec::CostEstimate> estimate = costClass.estimate(query);
        TRN_CHECK(!estimate.ok() || estimate->cycles >= 0)
            << costClass.name << ": negative cost " << estimate->cycles;
      }
    }
  }
}

/// What the simulator relies on from the limits of a loaded chip.
void checkCoreLimits(const ChipSpec& spec) {
  const trn::isa::CoreLimits limits = trn::runtime::coreLimits(spec);
  TRN_CHECK(limits.partitions >= 1 && limits.sbufPartitionBytes >= 1 && limits.psumBanks >= 1);
  TRN_CHECK(limits.semaphores >= 1 && limits.registers >= 0 && limits.dmaQueues >= 1);
  TRN_CHECK(trn::isa::kNumEngines + limits.dmaQueues <= trn::core::kBarrierSlot)
      << limits.dmaQueues << " DMA queues are more than race detection follows";
  std::int64_t sbufBytes = 0;
  TRN_CHECK(!__builtin_mul_overflow(limits.partitions, limits.sbufPartitionBytes, &sbufBytes));
  std::int64_t psumBytes = 0;
  TRN_CHECK(!__builtin_mul_overflow(limits.partitions, limits.psumPartitionBytes(), &psumBytes));
}

void checkLoaded(ChipSpec& spec, std::string_view text, const std::string& path) {
  ChipSpec again = spec;
  const trn::Status valid = trn::spec::detail::finalizeChip(again);
  TRN_CHECK(valid.ok()) << "a loaded chip fails its own validation: " << valid.message();

  const trn::Result<ChipSpec> reloaded = trn::spec::loadChipFromString(text, path);
  TRN_CHECK(reloaded.ok()) << "the same text fails the second time: "
                           << reloaded.status().message();
  TRN_CHECK(trn::spec::formatChip(*reloaded) == trn::spec::formatChip(spec))
      << "the same text loads differently the second time";

  static const trn::Result<ChipSpec> trn2 = trn::spec::loadChip("trn2");
  TRN_CHECK(trn2.ok()) << trn2.status().message();
  (void)trn::spec::formatDiff(*trn2, spec);
  (void)trn::spec::diffChips(spec, *trn2);
  for (const trn::spec::DerivedValue& derived : trn::spec::derivedValues(spec)) {
    TRN_CHECK(!derived.value.empty()) << derived.name;
  }
  TRN_CHECK(trn::spec::numberAt(spec, "costs.min_ii") == trn::Ratio(spec.costs.minIi));

  evaluateCosts(spec);
  const trn::Result<trn::core::CostCalculator> calculator =
      trn::core::CostCalculator::create(spec);
  TRN_CHECK(calculator.ok() || !calculator.status().message().empty());
  checkCoreLimits(spec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = trn::spec::configDir() + "/chips/fuzz.yaml";
  const std::string_view text = trn::fuzz::asText(data, size);
  trn::Result<ChipSpec> spec = trn::spec::loadChipFromString(text, path);
  if (!spec.ok()) {
    const trn::Status status = spec.status();
    TRN_CHECK(namesAFile(status.message())) << "an error that names no file: " << status.message();
    return 0;
  }
  checkLoaded(*spec, text, path);
  return 0;
}
