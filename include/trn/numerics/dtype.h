// Element data types of the simulated NeuronCore and their properties. Every type is described
// once, in a constexpr traits table (bit layout, range, special values), and every other part of
// trnsim (conversions, the ISA verifier, .npy I/O, the cost model) reads its facts from there.
// Which fp8 e4m3 variant Trainium2 uses, and why, is documented in docs/numerics.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trn/base/status.h"

namespace trn {

/// An element type. Floating-point formats are sign-exponent-mantissa; integers are two's
/// complement (signed) or plain binary (unsigned); all are stored in host (little-endian) order.
enum class DType : std::uint8_t {
  kFp32,       ///< IEEE binary32
  kTf32,       ///< 1-8-10 TensorFloat-32, stored as a 32-bit fp32 pattern whose low 13 bits are 0
  kBf16,       ///< bfloat16, 1-8-7
  kFp16,       ///< IEEE binary16, 1-5-10
  kFp8E4m3,    ///< 1-4-3, IEEE-like (bias 7, has Inf, max 240): the Trainium1/2 "fp8_e4m3"
  kFp8E5m2,    ///< 1-5-2, IEEE-like (bias 15, has Inf, max 57344); identical to OCP E5M2
  kFp8E3m4,    ///< 1-3-4, IEEE-like (bias 3, has Inf, max 15.5)
  kFp8E4m3Fn,  ///< 1-4-3, OCP E4M3 "fn" (bias 7, no Inf, NaN = S.1111.111, max 448); Trainium3
  kInt8,
  kInt16,
  kInt32,
  kUint8,
  kUint16,
  kUint32,
};

/// Number of DType values.
inline constexpr int kNumDTypes = 14;

/// Broad class of a type.
enum class DTypeKind : std::uint8_t { kFloat, kSignedInt, kUnsignedInt };

/// How a floating-point format encodes NaN.
enum class NanEncoding : std::uint8_t {
  kNone,     ///< integers: no NaN
  kIeee,     ///< exponent all ones and mantissa non-zero (exponent all ones, mantissa 0 is Inf)
  kAllOnes,  ///< only exponent and mantissa all ones (S.1111.111); the format has no Inf
};

/// Facts about one DType. For integer types the exponent/mantissa/bias fields are 0, hasInf is
/// false, nan is kNone, maxFinite/lowest are the largest/smallest values and minNormal and
/// minSubnormal are 1 (the smallest positive value).
struct DTypeTraits {
  DType type;
  std::string_view name;  ///< canonical name, e.g. "bf16", "fp8_e4m3"
  int byteSize;           ///< bytes per element in memory
  DTypeKind kind;
  int exponentBits;
  int mantissaBits;  ///< stored (explicit) mantissa bits
  int exponentBias;
  bool hasInf;
  NanEncoding nan;
  double maxFinite;     ///< largest finite value
  double lowest;        ///< most negative finite value (-maxFinite for floats)
  double minNormal;     ///< smallest positive normal value
  double minSubnormal;  ///< smallest positive subnormal value (denormals are kept, never flushed)
};

/// The traits table, indexed by static_cast<int>(DType).
inline constexpr std::array<DTypeTraits, kNumDTypes> kDTypeTraits = {{
    {DType::kFp32, "fp32", 4, DTypeKind::kFloat, 8, 23, 127, true, NanEncoding::kIeee,
     0x1.fffffep127, -0x1.fffffep127, 0x1p-126, 0x1p-149},
    {DType::kTf32, "tf32", 4, DTypeKind::kFloat, 8, 10, 127, true, NanEncoding::kIeee,
     0x1.ffcp127, -0x1.ffcp127, 0x1p-126, 0x1p-136},
    {DType::kBf16, "bf16", 2, DTypeKind::kFloat, 8, 7, 127, true, NanEncoding::kIeee,
     0x1.fep127, -0x1.fep127, 0x1p-126, 0x1p-133},
    {DType::kFp16, "fp16", 2, DTypeKind::kFloat, 5, 10, 15, true, NanEncoding::kIeee, 65504.0,
     -65504.0, 0x1p-14, 0x1p-24},
    {DType::kFp8E4m3, "fp8_e4m3", 1, DTypeKind::kFloat, 4, 3, 7, true, NanEncoding::kIeee, 240.0,
     -240.0, 0x1p-6, 0x1p-9},
    {DType::kFp8E5m2, "fp8_e5m2", 1, DTypeKind::kFloat, 5, 2, 15, true, NanEncoding::kIeee,
     57344.0, -57344.0, 0x1p-14, 0x1p-16},
    {DType::kFp8E3m4, "fp8_e3m4", 1, DTypeKind::kFloat, 3, 4, 3, true, NanEncoding::kIeee, 15.5,
     -15.5, 0x1p-2, 0x1p-6},
    {DType::kFp8E4m3Fn, "fp8_e4m3fn", 1, DTypeKind::kFloat, 4, 3, 7, false, NanEncoding::kAllOnes,
     448.0, -448.0, 0x1p-6, 0x1p-9},
    {DType::kInt8, "int8", 1, DTypeKind::kSignedInt, 0, 0, 0, false, NanEncoding::kNone, 127.0,
     -128.0, 1.0, 1.0},
    {DType::kInt16, "int16", 2, DTypeKind::kSignedInt, 0, 0, 0, false, NanEncoding::kNone,
     32767.0, -32768.0, 1.0, 1.0},
    {DType::kInt32, "int32", 4, DTypeKind::kSignedInt, 0, 0, 0, false, NanEncoding::kNone,
     2147483647.0, -2147483648.0, 1.0, 1.0},
    {DType::kUint8, "uint8", 1, DTypeKind::kUnsignedInt, 0, 0, 0, false, NanEncoding::kNone,
     255.0, 0.0, 1.0, 1.0},
    {DType::kUint16, "uint16", 2, DTypeKind::kUnsignedInt, 0, 0, 0, false, NanEncoding::kNone,
     65535.0, 0.0, 1.0, 1.0},
    {DType::kUint32, "uint32", 4, DTypeKind::kUnsignedInt, 0, 0, 0, false, NanEncoding::kNone,
     4294967295.0, 0.0, 1.0, 1.0},
}};

/// The traits of `type`.
constexpr const DTypeTraits& dtypeTraits(DType type) {
  return kDTypeTraits[static_cast<std::size_t>(type)];
}

/// Canonical name of `type`, e.g. "fp8_e4m3".
constexpr std::string_view dtypeName(DType type) { return dtypeTraits(type).name; }

/// Bytes per element.
constexpr int byteSize(DType type) { return dtypeTraits(type).byteSize; }

/// True for the floating-point formats (including tf32 and the fp8 formats).
constexpr bool isFloat(DType type) { return dtypeTraits(type).kind == DTypeKind::kFloat; }

/// True for the signed and unsigned integer types.
constexpr bool isInteger(DType type) { return !isFloat(type); }

/// All types in enum order, for iteration.
constexpr std::array<DType, kNumDTypes> allDTypes() {
  std::array<DType, kNumDTypes> types{};
  for (int i = 0; i < kNumDTypes; ++i) {
    types[static_cast<std::size_t>(i)] = static_cast<DType>(i);
  }
  return types;
}

/// Parses a type name. Accepts the canonical names (dtypeName) and the NKI / NumPy spellings
/// ("float32", "tfloat32", "bfloat16", "float16", "float8_e4m3", "float8_e5m2", "float8_e3m4",
/// "float8_e4m3fn", "int8", ...), case-insensitively. The error lists every valid name.
Result<DType> parseDType(std::string_view text);

}  // namespace trn
