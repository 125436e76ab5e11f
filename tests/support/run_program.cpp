#include "run_program.h"

#include "trn/isa/program_text.h"
#include "trn/spec/loader.h"

namespace trn::testing {

Result<TensorBytes> runProgram(std::string_view text, const TensorBytes& inputs,
                               const core::CoreOptions& options) {
  TRN_ASSIGN_OR_RETURN(isa::Program program, isa::parseProgramText(text, "test.tasm"));
  core::CoreOptions timed = options;
  if (timed.chip == nullptr) {
    // Every golden test also exercises the timing model: each instruction must be costable.
    static const std::shared_ptr<const spec::ChipSpec> kTrn2 =
        std::make_shared<const spec::ChipSpec>(spec::loadChip("trn2").value());
    timed.chip = kTrn2;
    timed.mode = core::RunMode::kFunctionalTiming;
  }
  TRN_ASSIGN_OR_RETURN(auto core, core::NeuronCore::create(std::move(program), timed));
  for (const auto& [name, bytes] : inputs) {
    TRN_RETURN_IF_ERROR(core->setTensor(name, bytes));
  }
  TRN_RETURN_IF_ERROR(core->run());
  TensorBytes outputs;
  for (const isa::TensorDecl& t : core->program().tensors) {
    if (t.kind == isa::TensorKind::kOutput) {
      TRN_ASSIGN_OR_RETURN(const auto bytes, core->tensorBytes(t.name));
      outputs[t.name].assign(bytes.begin(), bytes.end());
    }
  }
  return outputs;
}

}  // namespace trn::testing
