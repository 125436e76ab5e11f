// Fuzz target: the binary program decoder (single programs, and chip programs of several cores),
// then the verifier and the core. A program the decoder
// accepts re-encodes to exactly the input bytes and survives the round trips of
// program_round_trip.h; the verifier must answer for it against the default core limits; and a
// verified program small enough to run quickly runs on a functional-only core with poison
// detection and must end normally or with an error Status.
#include <algorithm>
#include <cstring>
#include <memory>

#include "fuzz_target.h"
#include "program_round_trip.h"
#include "trn/base/checked.h"
#include "trn/core/neuron_core.h"
#include "trn/isa/chip_program.h"
#include "trn/isa/core_limits.h"
#include "trn/isa/verifier.h"

namespace {

using trn::Checked;
using trn::isa::Program;

/// Bounds on what a fuzz input may make the core do: elements touched by all instructions once
/// (and by one instruction), element visits over a whole run including loops, HBM tensor bytes.
constexpr std::int64_t kMaxStaticElements = std::int64_t{1} << 20;
constexpr std::int64_t kMaxRunElements = std::int64_t{1} << 22;
constexpr std::int64_t kMaxTensorBytes = std::int64_t{1} << 24;
constexpr std::uint64_t kMaxRunInstructions = 100'000;

/// Elements of one access pattern, or nullopt if the count does not fit in int64.
std::optional<std::int64_t> elementsOf(const trn::isa::AccessPattern& ap) {
  Checked<std::int64_t> n = ap.partitionCount;
  for (int d = 0; d < ap.numDims; ++d) {
    n *= ap.dims[static_cast<std::size_t>(d)].count;
  }
  return n.get();
}

/// The run's instruction limit if `program` is small enough to run, else 0.
std::uint64_t runBudget(const Program& program) {
  Checked<std::int64_t> tensorBytes = 0;
  for (const auto& t : program.tensors) {
    tensorBytes += t.byteSize();
  }
  if (!tensorBytes.valid() || tensorBytes.value() > kMaxTensorBytes) {
    return 0;
  }
  Checked<std::int64_t> total = 0;
  std::int64_t largest = 1;
  for (const auto& stream : program.streams) {
    for (const auto& instr : stream) {
      bool fits = true;
      std::visit(
          [&](const auto& body) {
            trn::isa::forEachAccessPattern(body, [&](auto, auto, const auto& ap) {
              const std::optional<std::int64_t> n = elementsOf(ap);
              fits = fits && n.has_value();
              if (n) {
                total += *n;
                largest = std::max(largest, *n);
              }
            });
          },
          instr.body);
      if (!fits || !total.valid() || total.value() > kMaxStaticElements) {
        return 0;
      }
    }
  }
  const auto perLoop = static_cast<std::uint64_t>(kMaxRunElements / largest);
  return std::max<std::uint64_t>(program.instructionCount(),
                                 std::min(kMaxRunInstructions, perLoop));
}

void run(Program program, std::uint64_t maxInstructions) {
  trn::core::CoreOptions options;
  options.mode = trn::core::RunMode::kFunctionalOnly;
  options.poison = true;
  options.maxInstructions = maxInstructions;
  std::vector<std::pair<std::string, std::vector<std::byte>>> inputs;
  for (const auto& t : program.tensors) {
    if (t.kind == trn::isa::TensorKind::kInput) {
      std::vector<std::byte> bytes(static_cast<std::size_t>(t.byteSize()));
      for (std::size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = static_cast<std::byte>((i * 131 + 7) & 0xff);
      }
      inputs.emplace_back(t.name, std::move(bytes));
    }
  }
  trn::Result<std::unique_ptr<trn::core::NeuronCore>> core =
      trn::core::NeuronCore::create(std::move(program), options);
  if (!core.ok()) {
    return;
  }
  for (const auto& [name, bytes] : inputs) {
    const trn::Status set = (*core)->setTensor(name, bytes);
    TRN_CHECK(set.ok()) << "cannot fill input '" << name << "': " << set.toString();
  }
  (void)(*core)->run();
}

}  // namespace

/// A chip program (version 2) the decoder accepts re-encodes to exactly the input bytes, and
/// each of its cores' programs survives the single-program checks.
void checkChipProgram(std::span<const std::byte> bytes) {
  trn::Result<trn::isa::ChipProgram> chip = trn::isa::decodeChipProgram(bytes, "fuzz.tprog");
  if (!chip.ok()) {
    return;
  }
  const trn::Result<std::vector<std::byte>> again = trn::isa::encodeChipProgram(*chip);
  TRN_CHECK(again.ok()) << "a decoded chip program does not encode: " << again.status().toString();
  TRN_CHECK(std::equal(again->begin(), again->end(), bytes.begin(), bytes.end()))
      << "the chip decoder accepted bytes that do not re-encode to themselves";
  for (const trn::isa::ChipProgram::Core& core : chip->cores) {
    (void)trn::fuzz::checkRoundTrips(core.program);
  }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  trn::Result<Program> program = trn::isa::decodeProgram(bytes, "fuzz.tprog");
  if (!program.ok()) {
    checkChipProgram(bytes);
    return 0;
  }
  // A program is read back in the version it was written in (bytes 8-11, after the magic).
  std::uint32_t version = 0;
  std::memcpy(&version, data + 8, sizeof(version));
  const std::vector<std::byte> binary = trn::fuzz::checkRoundTrips(*program, version);
  TRN_CHECK(std::equal(binary.begin(), binary.end(), bytes.begin(), bytes.end()))
      << "the decoder accepted bytes that do not re-encode to themselves";
  if (!trn::isa::verifyProgram(*program, trn::isa::CoreLimits{}).ok()) {
    return 0;
  }
  if (const std::uint64_t budget = runBudget(*program); budget > 0) {
    run(std::move(program).value(), budget);
  }
  return 0;
}
