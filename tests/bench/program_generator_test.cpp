// The pipeline program generator: its programs verify, have the requested size, use every engine
// and DMA queue, run on the functional core with the expected results, and order every pair of
// conflicting accesses by happens-before (checked here independently of the core's race
// detector, with each DMA transfer treated as its own agent).
#include "program_generator.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "trn/core/neuron_core.h"
#include "trn/isa/program_text.h"
#include "trn/isa/verifier.h"
#include "trn/numerics/convert.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace trn::bench {
namespace {

using isa::Engine;
using isa::Memory;

isa::CoreLimits trn2Limits() {
  const Result<spec::ChipSpec> chip = spec::loadChip("trn2");
  TRN_CHECK(chip.ok()) << chip.status().toString();
  return runtime::coreLimits(*chip);
}

isa::Program generate(const GeneratorOptions& options) {
  Result<isa::Program> program = generatePipelineProgram(options, trn2Limits());
  TRN_CHECK(program.ok()) << program.status().toString();
  return std::move(program).value();
}

/// The bytes one operand touches: a box of partitions (HBM: one) by per-partition bytes.
struct Access {
  Memory memory = Memory::kSbuf;
  std::int32_t tensor = -1;
  std::int64_t partitionBegin = 0;
  std::int64_t partitionEnd = 0;
  std::int64_t byteBegin = 0;
  std::int64_t byteEnd = 0;
  bool write = false;

  [[nodiscard]] bool conflicts(const Access& o) const {
    return (write || o.write) && memory == o.memory && tensor == o.tensor &&
           partitionBegin < o.partitionEnd && o.partitionBegin < partitionEnd &&
           byteBegin < o.byteEnd && o.byteBegin < byteEnd;
  }
};

/// On-chip: partitions by the bytes of each. HBM: rows of the tensor by the bytes of a row when
/// the operand's row stride is the tensor's row length, else the whole range as one row.
Access accessOf(const isa::AccessPattern& ap, bool write, const isa::Program& program) {
  Access access;
  access.memory = ap.memory;
  access.write = write;
  const isa::AccessPattern::ByteRange range = ap.byteRange();
  if (ap.memory != Memory::kHbm) {
    access.partitionBegin = ap.partitionStart;
    access.partitionEnd = ap.partitionStart + ap.partitionCount;
    access.byteBegin = range.begin;
    access.byteEnd = range.end;
    return access;
  }
  access.tensor = ap.tensor;
  const isa::TensorDecl& tensor = program.tensors[static_cast<std::size_t>(ap.tensor)];
  const std::int64_t rowBytes = tensor.shape.back() * byteSize(tensor.dtype);
  isa::AccessPattern oneRow = ap;
  oneRow.partitionCount = 1;
  const isa::AccessPattern::ByteRange first = oneRow.byteRange();
  const std::int64_t row = first.begin / rowBytes;
  if (ap.partitionStride == tensor.shape.back() && (first.end - 1) / rowBytes == row) {
    access.partitionBegin = row;
    access.partitionEnd = row + ap.partitionCount;
    access.byteBegin = first.begin - row * rowBytes;
    access.byteEnd = first.end - row * rowBytes;
  } else {
    access.partitionBegin = 0;
    access.partitionEnd = 1;
    access.byteBegin = range.begin;
    access.byteEnd = range.end;
  }
  return access;
}

std::vector<Access> accessesOf(const isa::Instruction& instr, const isa::Program& program) {
  std::vector<Access> out;
  std::visit(
      [&](const auto& body) {
        isa::forEachAccessPattern(
            body, [&](std::string_view, isa::FieldRole role, const isa::AccessPattern& ap) {
              out.push_back(accessOf(ap, role == isa::FieldRole::kOutput, program));
            });
      },
      instr.body);
  return out;
}

/// Happens-before over a program whose semaphores only grow by 1 and whose waits are `>=`:
/// nodes are engine instructions and DMA transfers (each its own agent); edges are program order,
/// issue -> transfer, and k-th signal of s -> every wait `s >= k`. That last edge is sound only
/// if the signals of each semaphore are totally ordered, which is checked too. Returns every
/// problem found (deadlock, unordered signals, races), at most `limit`.
std::vector<std::string> orderingProblems(const isa::Program& program, std::size_t limit = 10) {
  std::vector<std::string> problems;
  const auto report = [&](std::string message) {
    if (problems.size() < limit) {
      problems.push_back(std::move(message));
    }
  };
  const std::size_t maxNodes = 2 * program.instructionCount();
  const std::size_t words = (maxNodes + 63) / 64;
  std::vector<std::uint64_t> before;  // node i's predecessors: words [i * words, (i + 1) * words)
  before.reserve(maxNodes * words);
  std::vector<std::vector<Access>> accesses;
  std::vector<std::string> names;
  const auto addNode = [&](const std::vector<std::int64_t>& preds, std::vector<Access> acc,
                           std::string name) {
    const std::size_t id = accesses.size();
    before.resize((id + 1) * words, 0);
    for (const std::int64_t p : preds) {
      if (p < 0) {
        continue;
      }
      const auto pred = static_cast<std::size_t>(p);
      for (std::size_t w = 0; w < words; ++w) {
        before[id * words + w] |= before[pred * words + w];
      }
      before[id * words + pred / 64] |= std::uint64_t{1} << (pred % 64);
    }
    accesses.push_back(std::move(acc));
    names.push_back(std::move(name));
    return static_cast<std::int64_t>(id);
  };
  const auto ordered = [&](std::size_t a, std::size_t b) {  // a happens before b
    return (before[b * words + a / 64] >> (a % 64) & 1) != 0;
  };

  // The node of the k-th signal of each semaphore.
  std::vector<std::vector<std::int64_t>> signals(static_cast<std::size_t>(trn2Limits().semaphores));
  std::array<std::size_t, isa::kNumEngines> pc{};
  std::array<std::int64_t, isa::kNumEngines> last{};
  last.fill(-1);
  bool progress = true;
  while (progress) {
    progress = false;
    for (const Engine engine : isa::kAllEngines) {
      const auto e = static_cast<std::size_t>(engine);
      const auto& stream = program.stream(engine);
      while (pc[e] < stream.size()) {
        const isa::Instruction& instr = stream[pc[e]];
        bool ready = true;
        std::vector<std::int64_t> preds = {last[e]};  // program order, then waited-for signals
        for (const isa::SemaphoreWait& w : instr.sync.waits) {
          EXPECT_EQ(w.compare, isa::WaitCompare::kGreaterEqual);
          const auto& sig = signals.at(static_cast<std::size_t>(w.semaphore));
          if (static_cast<std::int64_t>(sig.size()) < w.value) {
            ready = false;
            break;
          }
          preds.push_back(w.value > 0 ? sig[static_cast<std::size_t>(w.value - 1)] : -1);
        }
        if (!ready) {
          break;
        }
        const std::string name = fmt::format("{}#{} '{}'", isa::engineName(engine), pc[e],
                                             isa::formatInstruction(instr, program, false));
        const bool viaDma = isa::info(instr.body).viaDma;
        const std::int64_t node =
            addNode(preds, viaDma ? std::vector<Access>{} : accessesOf(instr, program), name);
        last[e] = node;
        const std::int64_t signaller =
            viaDma ? addNode({node}, accessesOf(instr, program), name + " (its transfer)") : node;
        for (const isa::SemaphoreUpdate& u : instr.sync.updates) {
          EXPECT_EQ(u.op, isa::SemaphoreUpdateOp::kAdd);
          EXPECT_EQ(u.value, 1);
          auto& sig = signals.at(static_cast<std::size_t>(u.semaphore));
          if (!sig.empty() &&
              !ordered(static_cast<std::size_t>(sig.back()), static_cast<std::size_t>(signaller))) {
            report(fmt::format("signals {} and {} of s{} are not ordered", sig.size(),
                               sig.size() + 1, u.semaphore));
          }
          sig.push_back(signaller);
        }
        ++pc[e];
        progress = true;
      }
    }
  }
  for (const Engine engine : isa::kAllEngines) {
    if (pc[static_cast<std::size_t>(engine)] < program.stream(engine).size()) {
      report(fmt::format("deadlock: {} stops at #{}", isa::engineName(engine),
                         pc[static_cast<std::size_t>(engine)]));
    }
  }
  for (std::size_t b = 0; b < accesses.size(); ++b) {
    for (std::size_t a = 0; a < b; ++a) {
      bool conflict = false;
      for (const Access& x : accesses[a]) {
        for (const Access& y : accesses[b]) {
          conflict = conflict || x.conflicts(y);
        }
      }
      if (conflict && !ordered(a, b)) {
        report(fmt::format("race: {} and {}", names[a], names[b]));
      }
    }
  }
  return problems;
}

TEST(PipelineGenerator, VerifiesAndHasTheRequestedSize) {
  for (const std::int64_t count : {14, 100, 2000, 2013}) {
    GeneratorOptions options;
    options.instructions = count;
    const isa::Program program = generate(options);
    EXPECT_EQ(program.instructionCount(), static_cast<std::size_t>(count));
    const Status verified = isa::verifyProgram(program, trn2Limits());
    EXPECT_TRUE(verified.ok()) << verified.toString();
  }
  GeneratorOptions tiny;
  tiny.instructions = 3;  // less than one tile: one whole tile
  EXPECT_EQ(generate(tiny).instructionCount(),
            static_cast<std::size_t>(pipelineInstructionsPerTile(tiny)));
}

TEST(PipelineGenerator, UsesEveryEngineAndQueue) {
  GeneratorOptions options;
  options.instructions = 2000;
  const isa::Program program = generate(options);
  std::set<std::int64_t> queues;
  std::set<std::int32_t> semaphores;
  for (const Engine engine : isa::kAllEngines) {
    EXPECT_FALSE(program.stream(engine).empty()) << isa::engineName(engine);
    for (const isa::Instruction& instr : program.stream(engine)) {
      if (const auto* copy = std::get_if<isa::DmaCopy>(&instr.body)) {
        queues.insert(copy->queue);
      }
      for (const isa::SemaphoreUpdate& u : instr.sync.updates) {
        semaphores.insert(u.semaphore);
      }
    }
  }
  EXPECT_EQ(queues.size(), 16u);
  EXPECT_EQ(static_cast<std::int64_t>(semaphores.size()), pipelineSemaphoreCount(options));
  EXPECT_LE(pipelineSemaphoreCount(options), trn2Limits().semaphores);
}

TEST(PipelineGenerator, EveryConflictIsOrderedAndNothingDeadlocks) {
  GeneratorOptions options;
  options.instructions = 1500;
  EXPECT_EQ(orderingProblems(generate(options)), std::vector<std::string>{});
  // Other shapes: minimal buffering, more PSUM than SBUF slots, single transfers, few queues.
  options.instructions = 700;
  options.sbufSlots = 2;
  options.psumSlots = 3;
  options.contractionSteps = 3;
  options.loadSplit = 4;
  options.storeSplit = 1;
  options.dmaQueues = 5;
  EXPECT_EQ(orderingProblems(generate(options)), std::vector<std::string>{});
  options.sbufSlots = 5;
  options.psumSlots = 2;
  options.contractionSteps = 1;
  options.loadSplit = 1;
  options.storeSplit = 4;
  EXPECT_EQ(orderingProblems(generate(options)), std::vector<std::string>{});
}

/// The program with the waits of the first instruction of `engine` that `pick` selects removed.
template <typename Pick>
isa::Program withoutWaits(Engine engine, Pick pick) {
  GeneratorOptions options;
  options.instructions = 300;
  isa::Program program = generate(options);
  isa::InstructionStream& stream = program.stream(engine);
  for (std::size_t i = 0; i < stream.size(); ++i) {
    isa::Instruction instr = stream[i];
    if (!instr.sync.waits.empty() && pick(instr)) {
      instr.sync.waits.clear();
      stream.set(i, instr);
      break;
    }
  }
  return program;
}

/// The error of running `program` on the functional core with race detection ("" if none).
std::string coreError(const isa::Program& program) {
  core::CoreOptions options;
  options.limits = trn2Limits();
  options.detectRaces = true;
  Result<std::unique_ptr<core::NeuronCore>> core = core::NeuronCore::create(program, options);
  TRN_CHECK(core.ok()) << core.status().toString();
  const Result<core::RunStats> stats = (*core)->run();
  return stats.ok() ? "" : stats.status().toString();
}

TEST(PipelineGenerator, TheCheckerFindsAMissingWait) {
  // The Vector engine reading hs and gs before the activation and GpSimd wrote them (RAW).
  const isa::Program unordered = withoutWaits(Engine::kDve, [](const isa::Instruction& instr) {
    return std::holds_alternative<isa::TensorTensor>(instr.body);
  });
  std::vector<std::string> problems = orderingProblems(unordered);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("race: dve#0 'tensor_tensor"), std::string::npos) << problems[0];
  EXPECT_NE(coreError(unordered).find("race"), std::string::npos);  // the core agrees
  // A store reading os before the Vector engine wrote it.
  problems = orderingProblems(withoutWaits(Engine::kSp, [](const isa::Instruction& instr) {
    const auto* copy = std::get_if<isa::DmaCopy>(&instr.body);
    return copy != nullptr && copy->dst.memory == Memory::kHbm;
  }));
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("(its transfer) and dve#0 'tensor_tensor"), std::string::npos)
      << problems[0];
}

TEST(PipelineGenerator, RunsOnTheFunctionalCore) {
  GeneratorOptions options;
  options.instructions = 2000;
  const isa::Program program = generate(options);
  core::CoreOptions coreOptions;
  coreOptions.limits = trn2Limits();
  coreOptions.poison = true;
  Result<std::unique_ptr<core::NeuronCore>> core = core::NeuronCore::create(program, coreOptions);
  ASSERT_TRUE(core.ok()) << core.status().toString();
  for (const isa::TensorDecl& t : program.tensors) {
    if (t.kind == isa::TensorKind::kInput) {
      const std::vector<std::byte> zeros(static_cast<std::size_t>(t.byteSize()));
      ASSERT_TRUE((*core)->setTensor(t.name, zeros).ok());
    }
  }
  const Result<core::RunStats> stats = (*core)->run();
  ASSERT_TRUE(stats.ok()) << stats.status().toString();
  EXPECT_EQ(stats->instructions, 2000u);

  // Zero inputs: gelu(0) = 0, so out = bf16(bf16(gs) * 0.5 + 0.25) for the last tile of each
  // slot, gs being iota (t + column + partition) for even tiles and 1 for odd ones.
  const std::int64_t tiles = 2000 / pipelineInstructionsPerTile(options);
  const Result<std::span<const std::byte>> out = (*core)->tensorBytes("out");
  ASSERT_TRUE(out.ok());
  const std::int64_t slots = options.sbufSlots;
  const std::int64_t n = 512;
  for (std::int64_t t = tiles - slots; t < tiles; ++t) {
    const std::int64_t slot = t % slots;
    for (std::int64_t p = 0; p < 128; p += 9) {
      for (std::int64_t i = 0; i < n; i += 7) {
        const float g = t % 2 == 0 ? static_cast<float>(t % 1024 + i + p) : 1.0f;
        const float sum = quantize(0.0f + g, DType::kBf16);
        const float expected = quantize(sum * 0.5f + 0.25f, DType::kBf16);
        std::uint16_t bits = 0;
        std::memcpy(&bits, out->data() + (p * slots * n + slot * n + i) * 2, 2);
        ASSERT_EQ(decodeFloat(bits, DType::kBf16), expected)
            << "tile " << t << " partition " << p << " column " << i;
      }
    }
  }
}

TEST(PipelineGenerator, RunsWithoutRacesInTheTimedModes) {
  GeneratorOptions options;
  options.instructions = 2000;
  const isa::Program program = generate(options);
  Result<spec::ChipSpec> chip = spec::loadChip("trn2");
  ASSERT_TRUE(chip.ok()) << chip.status().toString();
  std::vector<std::vector<std::byte>> outputs;
  for (const core::RunMode mode : {core::RunMode::kFunctionalOnly, core::RunMode::kTimingOnly,
                                   core::RunMode::kFunctionalTiming}) {
    core::CoreOptions coreOptions;
    coreOptions.limits = runtime::coreLimits(*chip);
    coreOptions.chip = std::make_shared<const spec::ChipSpec>(*chip);
    coreOptions.mode = mode;
    coreOptions.detectRaces = true;
    Result<std::unique_ptr<core::NeuronCore>> core = core::NeuronCore::create(program, coreOptions);
    ASSERT_TRUE(core.ok()) << core.status().toString();
    const Result<core::RunStats> stats = (*core)->run();
    ASSERT_TRUE(stats.ok()) << core::runModeName(mode) << ": " << stats.status().toString();
    EXPECT_EQ(stats->instructions, 2000u);
    EXPECT_EQ(stats->total.count() > 0, core::hasTiming(mode)) << core::runModeName(mode);
    if (core::hasData(mode)) {
      const Result<std::span<const std::byte>> out = (*core)->tensorBytes("out");
      ASSERT_TRUE(out.ok());
      outputs.emplace_back(out->begin(), out->end());
    }
  }
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_TRUE(outputs[0] == outputs[1]) << "functional+timing changed the result";
}

TEST(PipelineGenerator, RejectsOptionsThatDoNotFit) {
  const auto error = [](auto change, isa::CoreLimits limits = trn2Limits()) -> std::string {
    GeneratorOptions options;
    options.instructions = 100;
    change(options);
    const Result<isa::Program> program = generatePipelineProgram(options, limits);
    return program.ok() ? "" : program.status().toString();
  };
  EXPECT_NE(error([](GeneratorOptions& o) { o.instructions = 0; }), "");
  EXPECT_NE(error([](GeneratorOptions& o) { o.sbufSlots = 1; }), "");
  EXPECT_NE(error([](GeneratorOptions& o) { o.psumSlots = 9; }).find("PSUM banks"),
            std::string::npos);
  EXPECT_NE(error([](GeneratorOptions& o) { o.loadSplit = 3; }), "");
  EXPECT_NE(error([](GeneratorOptions& o) { o.dmaQueues = 17; }), "");
  EXPECT_NE(error([](GeneratorOptions& o) { o.contractionSteps = 30; }).find("semaphores"),
            std::string::npos);
  isa::CoreLimits smallSbuf = trn2Limits();
  smallSbuf.sbufPartitionBytes = 16 * 1024;
  EXPECT_NE(error([](GeneratorOptions&) {}, smallSbuf).find("SBUF"), std::string::npos);
  EXPECT_EQ(error([](GeneratorOptions& o) { o.psumSlots = 8; }), "");
}

}  // namespace
}  // namespace trn::bench
