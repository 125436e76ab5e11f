// Shared helpers of the nl-level API (nl.h): shape checks with messages that name both operands,
// dtype promotion, and result-tile allocation at the caller's line. Internal to the kernel module.
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "trn/kernel/kernel.h"
#include "trn/kernel/nl.h"

namespace trn::kernel::nl::detail {

/// "[128, 64]".
std::string shapeText(const std::vector<std::int64_t>& shape);

/// Stops tracing with "<file>:<line>: nl.<function>: <message>".
[[noreturn]] void fail(const Tensor& any, std::string_view function, const std::string& message,
                       std::source_location loc);

/// Fails unless `t` is a declared on-chip view.
void requireOnChip(const Tensor& t, std::string_view function, std::string_view operand,
                   std::source_location loc);

/// The dtype two operands combine to: equal dtypes stay, float with integer gives the float type,
/// anything else fp32.
DType promote(DType a, DType b);

/// The dtype of a result computed from `in`: `requested`, or `in` (PSUM inputs included).
DType resultDType(DType in, const OptDType& requested);

/// A new SBUF tile declared at `loc`.
Tensor newTile(const Tensor& like, const std::vector<std::int64_t>& shape, DType dtype,
               std::string_view name, std::source_location loc);

/// `column` ([P, 1]) as an fp32 tile, the dtype tensor-scalar operands need: itself when it is
/// already fp32, otherwise an fp32 copy.
Tensor fp32Column(const Tensor& column, std::source_location loc);

/// True for a [P, 1] view.
bool isColumn(const Tensor& t);

}  // namespace trn::kernel::nl::detail
