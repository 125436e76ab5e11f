// The shared part of the nisa functions (nisa.h): one Call per function call checks the operands
// (declared, all from the same kernel) while converting them to isa operands, and records the
// instruction. Internal to the kernel module.
#pragma once

#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "trn/isa/instruction_set.h"
#include "trn/kernel/kernel.h"
#include "trn/kernel/nisa.h"

namespace trn::kernel::nisa::detail {

/// The number of engines allowed to issue instruction type I.
template <typename I>
constexpr int engineCount() {
  int n = 0;
  for (const isa::Engine e : isa::kAllEngines) {
    n += I::kInfo.engines.contains(e) ? 1 : 0;
  }
  return n;
}

/// Operand checks and emission for one call of a nisa function.
class Operands {
 public:
  Operands(std::string_view mnemonic, std::source_location loc) : mnemonic_(mnemonic), loc_(loc) {}

  /// `tensor`'s access pattern, after checking that it is declared and of this call's kernel.
  isa::AccessPattern operator()(std::string_view operand, const Tensor& tensor);
  /// The same for an optional operand (nullopt stays absent).
  std::optional<isa::AccessPattern> operator()(std::string_view operand,
                                               const std::optional<Tensor>& tensor);
  /// An immediate, or the tensor's access pattern checked as above.
  isa::ScalarOperand operator()(std::string_view operand, const Scalar& scalar);

  /// Stops tracing with "<file>:<line>: <mnemonic>: <message>".
  [[noreturn]] void fail(const std::string& message) const;

 protected:
  void record(isa::InstructionBody body, std::optional<isa::Engine> engine);

 private:
  std::string_view mnemonic_;
  std::source_location loc_;
  Kernel* kernel_ = nullptr;  ///< the kernel of the first operand seen
  std::string firstName_;     ///< that operand's name, for messages
};

/// Operands of a call that records an I; emit() takes an engine exactly when I has a choice.
template <typename I>
class Call : public Operands {
 public:
  explicit Call(std::source_location loc) : Operands(I::kInfo.mnemonic, loc) {}

  void emit(I body) {
    static_assert(engineCount<I>() == 1, "this instruction needs an engine parameter");
    record(std::move(body), std::nullopt);
  }
  void emit(I body, std::optional<isa::Engine> engine) {
    static_assert(engineCount<I>() > 1, "a single-engine instruction takes no engine parameter");
    record(std::move(body), engine);
  }
};

/// An index pattern from (step, count) pairs, outermost first; fails on 0 or > 4 pairs.
isa::IndexPattern indexPattern(const Operands& call, const std::vector<isa::Dim>& pattern);

}  // namespace trn::kernel::nisa::detail
