#include "nisa_call.h"

#include <fmt/format.h>

namespace trn::kernel::nisa::detail {

void Operands::fail(const std::string& message) const {
  const std::string full = fmt::format("{}: {}", mnemonic_, message);
  if (kernel_ != nullptr) {
    kernel_->fail(ErrorCode::kInvalidArgument, full, loc_);
  }
  // No kernel seen yet (the first operand is not a tensor): the same message, thrown directly.
  throw TraceError{Status(ErrorCode::kInvalidArgument,
                          fmt::format("{}: {}", formatLocation(toLocation(loc_)), full))};
}

isa::AccessPattern Operands::operator()(std::string_view operand, const Tensor& tensor) {
  if (!tensor.valid()) {
    fail(
        fmt::format("operand '{}' is an empty Tensor; declare tensors with Kernel::sbuf, psum, "
                    "input or output",
                    operand));
  }
  if (kernel_ == nullptr) {
    kernel_ = &tensor.kernel();
    firstName_ = operand;
  } else if (&tensor.kernel() != kernel_) {
    fail(
        fmt::format("operand '{}' belongs to kernel '{}', but '{}' belongs to kernel '{}'; an "
                    "instruction's tensors must all come from the kernel that issues it",
                    operand, tensor.kernel().ir().name, firstName_, kernel_->ir().name));
  }
  return tensor.ap();
}

std::optional<isa::AccessPattern> Operands::operator()(std::string_view operand,
                                                       const std::optional<Tensor>& tensor) {
  if (!tensor) {
    return std::nullopt;
  }
  return (*this)(operand, *tensor);
}

isa::ScalarOperand Operands::operator()(std::string_view operand, const Scalar& scalar) {
  if (const Tensor* t = scalar.tensor()) {
    return (*this)(operand, *t);
  }
  return scalar.immediate();
}

void Operands::record(isa::InstructionBody body, std::optional<isa::Engine> engine) {
  if (kernel_ == nullptr) {
    fail("an instruction needs at least one tensor operand");
  }
  kernel_->emit(std::move(body), engine, loc_);
}

isa::IndexPattern indexPattern(const Operands& call, const std::vector<isa::Dim>& pattern) {
  if (pattern.empty() || pattern.size() > static_cast<std::size_t>(isa::kMaxFreeDims)) {
    call.fail(fmt::format("pattern has {} [step, count] pairs; it takes 1 to {}", pattern.size(),
                          isa::kMaxFreeDims));
  }
  isa::IndexPattern out;
  out.numDims = static_cast<std::int32_t>(pattern.size());
  for (std::size_t d = 0; d < pattern.size(); ++d) {
    out.dims[d] = pattern[d];
  }
  return out;
}

}  // namespace trn::kernel::nisa::detail
