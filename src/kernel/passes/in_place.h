// The allocation pass's in-place rule: which tiles an element-wise instruction may compute over
// an input tile that dies there, so that the two share one space.
#pragma once

#include <cstdint>
#include <vector>

#include "trn/kernel/kernel_ir.h"

namespace trn::kernel {

/// The in-place rule, given each buffer's first and last use (-1 when unused). An element-wise
/// instruction outside any dynamic loop that writes an automatically placed tile at that tile's
/// first use may write it over an input tile when the
/// two have one memory, dtype, partition count and size per partition, the instruction reads the
/// input with exactly the pattern it writes the result with (element k is then read before
/// element k is written, at the same address, as an in-place NKI step
/// `nisa.tensor_tensor(dst=x, data1=x, ...)` does), and the input dies there, or the result is
/// written in pieces the same way until the input dies (computedInPlace). The result takes the
/// input's space. Returns, per buffer, the tile whose space it takes (itself when none), through
/// chains of such steps.
std::vector<std::int32_t> inPlaceSpaces(const KernelIR& ir,
                                        const std::vector<std::int64_t>& firstUse,
                                        const std::vector<std::int64_t>& lastUse);

}  // namespace trn::kernel
