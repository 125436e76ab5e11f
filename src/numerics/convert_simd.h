// Vectorised bulk conversions (Google Highway, dispatched at run time to the best instruction
// set of the host). Private to the numerics module; callers use convert.h. Every kernel is
// bit-identical to the scalar definition in convert_scalar.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "trn/numerics/convert.h"

namespace trn::numerics {

/// Whether simdNarrow handles `type`: every float type, in every rounding mode.
bool hasSimdNarrow(DType type);

/// Whether simdWiden handles `type`: every float type.
bool hasSimdWiden(DType type);

/// Encodes src[0..count) into `type` at dst (count * byteSize(type) bytes, any alignment).
/// For stochastic rounding words[j] is element j's random word; other modes ignore `words`
/// (may be null). Requires hasSimdNarrow(type).
void simdNarrow(const float* src, std::size_t count, const std::uint32_t* words, std::byte* dst,
                DType type, RoundingMode mode, bool saturate);

/// Decodes count elements of `type` at src (any alignment) into dst. Requires hasSimdWiden(type).
void simdWiden(const std::byte* src, std::size_t count, float* dst, DType type);

/// Name of the Highway target that the two functions above dispatch to.
const char* simdTarget();

}  // namespace trn::numerics
