// Vectorised bulk conversions (Google Highway, dispatched at run time to the best instruction
// set of the host). Private to the numerics module; callers use convert.h. Every kernel is
// bit-identical to the scalar definition in convert_scalar.cpp.
#pragma once

#include <cstddef>

#include "trn/numerics/convert.h"

namespace trn::numerics {

/// Whether simdNarrow handles (type, mode): float targets with nearest-even or toward-zero.
bool hasSimdNarrow(DType type, RoundingMode mode);

/// Whether simdWiden handles `type`: every float type.
bool hasSimdWiden(DType type);

/// Encodes src[0..count) into `type` at dst (count * byteSize(type) bytes, any alignment).
/// Requires hasSimdNarrow(type, mode).
void simdNarrow(const float* src, std::size_t count, std::byte* dst, DType type,
                RoundingMode mode, bool saturate);

/// Decodes count elements of `type` at src (any alignment) into dst. Requires hasSimdWiden(type).
void simdWiden(const std::byte* src, std::size_t count, float* dst, DType type);

/// Name of the Highway target that the two functions above dispatch to.
const char* simdTarget();

}  // namespace trn::numerics
