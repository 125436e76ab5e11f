#include "passes/engine_rules.h"

#include <array>

namespace trn::kernel {

EngineCandidates engineCandidates(const isa::InstructionBody& body) {
  const isa::InstrInfo& info = isa::info(body);
  if (info.viaDma) {
    return {{isa::Engine::kSp}, 1};
  }
  // nl.power runs on GpSimd (nki-reference §3, tensor_tensor); everything else prefers the
  // vector engine over the scalar engine over GpSimd, and the tensor engine first when allowed.
  std::array<isa::Engine, isa::kNumEngines> order = {
      isa::Engine::kPe, isa::Engine::kDve, isa::Engine::kAct, isa::Engine::kPool, isa::Engine::kSp};
  if (const auto* tt = std::get_if<isa::TensorTensor>(&body); tt && tt->op == isa::AluOp::kPow) {
    order = {isa::Engine::kPool, isa::Engine::kDve, isa::Engine::kPe, isa::Engine::kAct,
             isa::Engine::kSp};
  }
  EngineCandidates out;
  for (const isa::Engine e : order) {
    if (info.engines.contains(e)) {
      out.order[out.count++] = e;
    }
  }
  return out;
}

}  // namespace trn::kernel
