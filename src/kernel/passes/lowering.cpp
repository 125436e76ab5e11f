// Lowering of kernel IR to a Program (see lowering.h).
#include "passes/lowering.h"

#include <fmt/format.h>

#include <array>

#include "passes/operands.h"
#include "trn/isa/verifier.h"

namespace trn::kernel {

Result<isa::Program> lowerToProgram(KernelIR& ir, const isa::CoreLimits& limits, bool verify) {
  TRN_CHECK(ir.allocated) << "lowering needs allocated IR";
  isa::Program program;
  std::vector<std::int32_t> tensorOf(ir.buffers.size(), -1);
  auto add = [&](std::int32_t b) {
    if (tensorOf[static_cast<std::size_t>(b)] >= 0) {
      return;
    }
    const Buffer& buf = ir.buffers[static_cast<std::size_t>(b)];
    tensorOf[static_cast<std::size_t>(b)] = static_cast<std::int32_t>(program.tensors.size());
    program.tensors.push_back(isa::TensorDecl{buf.name, buf.hbmKind, buf.dtype, buf.shape});
  };
  for (const std::int32_t b : ir.inputs) {
    add(b);
  }
  for (const std::int32_t b : ir.outputs) {
    add(b);
  }
  for (std::size_t b = 0; b < ir.buffers.size(); ++b) {
    if (ir.buffers[b].memory == isa::Memory::kHbm) {
      add(static_cast<std::int32_t>(b));
    }
  }
  // Each stream's room at once (a loop adds three control instructions on its engine).
  std::array<std::size_t, isa::kNumEngines> perEngine{};
  for (const Op& op : ir.ops) {
    ++perEngine[static_cast<std::size_t>(op.instr.engine)];
  }
  for (const DynamicLoop& loop : ir.loops) {
    perEngine[static_cast<std::size_t>(ir.ops[static_cast<std::size_t>(loop.begin)].instr.engine)] +=
        3;
  }
  for (const isa::Engine e : isa::kAllEngines) {
    program.stream(e).reserve(perEngine[static_cast<std::size_t>(e)]);
  }
  // A dynamic loop: set the count, run the body, count down, branch back while non-zero.
  constexpr std::int64_t kLoopRegister = 0;
  std::size_t nextLoop = 0;
  std::int64_t bodyStart = 0;
  for (std::size_t i = 0; i < ir.ops.size(); ++i) {
    Op& op = ir.ops[i];
    const DynamicLoop* loop = nextLoop < ir.loops.size() ? &ir.loops[nextLoop] : nullptr;
    auto control = [&](isa::InstructionBody body) {
      program.stream(op.instr.engine)
          .push_back(isa::Instruction{op.instr.engine, std::move(body), {}, loop->location});
    };
    if (loop && loop->begin == static_cast<std::int64_t>(i)) {
      control(isa::RegSet{kLoopRegister, loop->trips});
      bodyStart = static_cast<std::int64_t>(program.stream(op.instr.engine).size());
    }
    forEachOperand(op.instr.body, [&](isa::FieldRole, isa::AccessPattern& ap) {
      ap.tensor =
          ap.memory == isa::Memory::kHbm ? tensorOf[static_cast<std::size_t>(ap.tensor)] : -1;
    });
    isa::SemaphoreUpdate signal;
    program.stream(op.instr.engine)
        .push_back(op.instr.engine, op.instr.body, ir.semaphores.of(i, signal), ir.file(op.site),
                   op.site.line);
    if (loop && loop->end == static_cast<std::int64_t>(i) + 1) {
      control(isa::RegAdd{kLoopRegister, -1});
      control(isa::BranchNonZero{kLoopRegister, bodyStart});
      ++nextLoop;
    }
  }
  if (!verify) {
    return program;
  }
  const Status status = isa::verifyProgram(program, limits);
  if (!status.ok()) {
    return status.withContext(
        fmt::format("kernel '{}' lowered to an invalid program (a trnsim "
                    "bug; please report it)",
                    ir.name));
  }
  return program;
}

}  // namespace trn::kernel
