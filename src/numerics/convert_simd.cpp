// Highway compiles this file once per SIMD target and dispatches at run time. The kernels work on
// the fp32 bit pattern with integer operations only (plus one exact float multiply when widening
// subnormals), so they give the same bits on every target; convert_scalar.cpp is the definition
// they are tested against. Stochastic rounding is not vectorised (see docs/numerics.md).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/numerics/convert_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "src/numerics/convert_simd.h"
#include "src/numerics/float_format.h"
#include "trn/base/check.h"

HWY_BEFORE_NAMESPACE();
namespace trn::numerics {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DU32 = hn::ScalableTag<std::uint32_t>;
using VU32 = hn::Vec<DU32>;

/// Per-call constants of a narrowing conversion; `roundMask` is all ones for nearest-even and 0
/// for toward-zero, so one branch-free kernel serves both modes.
struct NarrowParams {
  VU32 roundMask;
  VU32 overflowCode;  ///< code of a finite value above maxFinite
  VU32 infCode;       ///< code of an infinite input
};

template <FloatFormat F>
HWY_INLINE NarrowParams narrowParams(DU32 du, RoundingMode mode, bool saturate) {
  const bool nearest = mode == RoundingMode::kNearestEven;
  const bool toInf = F.hasInf && !saturate;
  return NarrowParams{hn::Set(du, nearest ? ~std::uint32_t{0} : 0u),
                      hn::Set(du, toInf && nearest ? F.infCode() : F.maxCode()),
                      hn::Set(du, toInf ? F.infCode() : F.maxCode())};
}

/// Rounds `value >> shift` (0 < shift < 32) to nearest-even, or truncates, per params.roundMask.
template <int kShift>
HWY_INLINE VU32 roundShiftConst(DU32 du, VU32 value, const NarrowParams& params) {
  const VU32 lsb = hn::And(hn::ShiftRight<kShift>(value), hn::Set(du, 1u));
  const VU32 bias = hn::Add(hn::Set(du, (std::uint32_t{1} << (kShift - 1)) - 1), lsb);
  return hn::ShiftRight<kShift>(hn::Add(value, hn::And(bias, params.roundMask)));
}

/// As roundShiftConst with a per-lane shift in [1, 31].
HWY_INLINE VU32 roundShiftVar(DU32 du, VU32 value, VU32 shift, const NarrowParams& params) {
  const VU32 one = hn::Set(du, 1u);
  const VU32 lsb = hn::And(value >> shift, one);
  const VU32 bias = hn::Add(hn::Sub(one << hn::Sub(shift, one), one), lsb);
  return hn::Add(value, hn::And(bias, params.roundMask)) >> shift;
}

/// fp32 bit patterns -> storage patterns of format F (encodeToFormat << storageShift).
template <FloatFormat F>
HWY_INLINE VU32 narrowLanes(DU32 du, VU32 bits, const NarrowParams& params) {
  constexpr int kShift = 23 - F.mantissaBits;
  constexpr int kSignShift = 31 - (F.exponentBits + F.mantissaBits);
  const VU32 magnitude = hn::And(bits, hn::Set(du, 0x7FFFFFFFu));
  const VU32 sign = hn::ShiftRight<kSignShift>(hn::And(bits, hn::Set(du, 0x80000000u)));
  VU32 code = magnitude;
  if constexpr (kShift > 0) {
    // Normal range: re-bias the exponent in place, then round away the low mantissa bits; a
    // carry out of the mantissa moves to the next binade (and past maxCode into overflow).
    const VU32 rebiased =
        hn::Sub(magnitude, hn::Set(du, static_cast<std::uint32_t>(127 - F.bias) << 23));
    code = roundShiftConst<kShift>(du, rebiased, params);
    if constexpr (F.bias != 127) {
      // Below the target's smallest normal: shift the significand (implicit bit included) so
      // that its units are the target's subnormal spacing.
      const hn::RebindToSigned<DU32> di;
      const VU32 exponent = hn::ShiftRight<23>(magnitude);
      const VU32 one = hn::Set(du, 1u);
      const VU32 significand = hn::Or(hn::And(magnitude, hn::Set(du, 0x7FFFFFu)),
                                      hn::ShiftLeft<23>(hn::Min(exponent, one)));
      const auto shift = hn::Sub(hn::Set(di, kShift + 127 + F.minExponent()),
                                 hn::BitCast(di, hn::Max(exponent, one)));
      const auto clamped = hn::Min(hn::Max(shift, hn::Set(di, 1)), hn::Set(di, 31));
      const VU32 subnormal = roundShiftVar(du, significand, hn::BitCast(du, clamped), params);
      const auto minNormal =
          hn::Set(du, static_cast<std::uint32_t>(127 + F.minExponent()) << 23);
      code = hn::IfThenElse(hn::Lt(magnitude, minNormal), subnormal, code);
    }
  }
  code = hn::IfThenElse(hn::Gt(code, hn::Set(du, F.maxCode())), params.overflowCode, code);
  code = hn::IfThenElse(hn::Eq(magnitude, hn::Set(du, 0x7F800000u)), params.infCode, code);
  code = hn::Or(code, sign);
  code = hn::IfThenElse(hn::Gt(magnitude, hn::Set(du, 0x7F800000u)), hn::Set(du, F.nanCode()),
                        code);
  return hn::ShiftLeft<F.storageShift>(code);
}

/// 2^exponent for exponents where the result is a normal fp32 value.
constexpr float exp2Float(int exponent) {
  float value = 1.0f;
  for (; exponent > 0; --exponent) {
    value *= 2.0f;
  }
  for (; exponent < 0; ++exponent) {
    value *= 0.5f;
  }
  return value;
}

/// Storage patterns of format F (zero-extended to 32 bits) -> fp32 bit patterns.
template <FloatFormat F>
HWY_INLINE VU32 widenLanes(DU32 du, VU32 storage) {
  constexpr int kShift = 23 - F.mantissaBits;
  constexpr int kSignShift = 31 - (F.exponentBits + F.mantissaBits);
  const VU32 code = hn::ShiftRight<F.storageShift>(storage);
  const VU32 magnitude = hn::And(code, hn::Set(du, F.magnitudeMask()));
  const VU32 sign = hn::ShiftLeft<kSignShift>(hn::And(code, hn::Set(du, F.signBit())));
  const VU32 mantissa = hn::And(magnitude, hn::Set(du, F.mantissaMask()));
  const VU32 exponent = hn::ShiftRight<F.mantissaBits>(magnitude);
  const VU32 zero = hn::Zero(du);
  VU32 result = hn::ShiftLeft<kShift>(
      hn::Add(magnitude, hn::Set(du, static_cast<std::uint32_t>(127 - F.bias) << F.mantissaBits)));
  if constexpr (F.bias != 127) {
    // mantissa * 2^(minExponent - M) is exact in fp32.
    const hn::Rebind<float, DU32> df;
    const hn::RebindToSigned<DU32> di;
    constexpr float kUnit = exp2Float(F.minExponent() - F.mantissaBits);
    const auto value = hn::Mul(hn::ConvertTo(df, hn::BitCast(di, mantissa)), hn::Set(df, kUnit));
    result = hn::IfThenElse(hn::Eq(exponent, zero), hn::BitCast(du, value), result);
  }
  const VU32 payload = hn::ShiftLeft<kShift>(mantissa);
  VU32 special;
  hn::Mask<DU32> isSpecial;
  if constexpr (F.nanAllOnes) {
    isSpecial = hn::Eq(magnitude, hn::Set(du, F.magnitudeMask()));
    special = hn::Or(hn::Set(du, 0x7FC00000u), payload);
  } else {
    isSpecial = hn::Eq(exponent, hn::Set(du, F.maxExponentField()));
    const VU32 quiet = hn::IfThenElseZero(hn::Ne(mantissa, zero), hn::Set(du, 0x00400000u));
    special = hn::Or(hn::Or(hn::Set(du, 0x7F800000u), payload), quiet);
  }
  result = hn::IfThenElse(isSpecial, special, result);
  return hn::Or(result, sign);
}

/// Converts whole vectors of src; the tail goes through a zero-padded vector, so every element
/// takes the same SIMD path.
template <FloatFormat F, typename TOut>
HWY_NOINLINE void narrowArray(const float* HWY_RESTRICT src, std::size_t count,
                              std::byte* HWY_RESTRICT dst, RoundingMode mode, bool saturate) {
  const DU32 du;
  const hn::Rebind<float, DU32> df;
  const hn::Rebind<TOut, DU32> dout;
  const hn::RebindToSigned<DU32> di;
  const NarrowParams params = narrowParams<F>(du, mode, saturate);
  const std::size_t lanes = hn::Lanes(du);
  auto encode = [&](const float* in, TOut* out) {
    const VU32 code = narrowLanes<F>(du, hn::BitCast(du, hn::LoadU(df, in)), params);
    if constexpr (sizeof(TOut) == 4) {
      hn::StoreU(code, du, out);
    } else {
      // Codes fit in TOut, so the saturating demotion is a plain truncation.
      hn::StoreU(hn::DemoteTo(dout, hn::BitCast(di, code)), dout, out);
    }
  };
  auto* out = reinterpret_cast<TOut*>(dst);
  std::size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    encode(src + i, out + i);
  }
  if (i < count) {
    HWY_ALIGN float inTail[hn::MaxLanes(du)] = {};
    HWY_ALIGN TOut outTail[hn::MaxLanes(du)] = {};
    std::memcpy(inTail, src + i, (count - i) * sizeof(float));
    encode(inTail, outTail);
    std::memcpy(out + i, outTail, (count - i) * sizeof(TOut));
  }
}

template <FloatFormat F, typename TIn>
HWY_NOINLINE void widenArray(const std::byte* HWY_RESTRICT src, std::size_t count,
                             float* HWY_RESTRICT dst) {
  const DU32 du;
  const hn::Rebind<float, DU32> df;
  const hn::Rebind<TIn, DU32> din;
  const std::size_t lanes = hn::Lanes(du);
  auto decode = [&](const TIn* in, float* out) {
    VU32 storage;
    if constexpr (sizeof(TIn) == 4) {
      storage = hn::LoadU(du, in);
    } else {
      storage = hn::PromoteTo(du, hn::LoadU(din, in));
    }
    hn::StoreU(hn::BitCast(df, widenLanes<F>(du, storage)), df, out);
  };
  const auto* in = reinterpret_cast<const TIn*>(src);
  std::size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    decode(in + i, dst + i);
  }
  if (i < count) {
    HWY_ALIGN TIn inTail[hn::MaxLanes(du)] = {};
    HWY_ALIGN float outTail[hn::MaxLanes(du)] = {};
    std::memcpy(inTail, in + i, (count - i) * sizeof(TIn));
    decode(inTail, outTail);
    std::memcpy(dst + i, outTail, (count - i) * sizeof(float));
  }
}

void narrowDispatch(const float* src, std::size_t count, std::byte* dst, DType type,
                    RoundingMode mode, bool saturate) {
  switch (type) {
    case DType::kFp32:
      return narrowArray<kFp32Format, std::uint32_t>(src, count, dst, mode, saturate);
    case DType::kTf32:
      return narrowArray<kTf32Format, std::uint32_t>(src, count, dst, mode, saturate);
    case DType::kBf16:
      return narrowArray<kBf16Format, std::uint16_t>(src, count, dst, mode, saturate);
    case DType::kFp16:
      return narrowArray<kFp16Format, std::uint16_t>(src, count, dst, mode, saturate);
    case DType::kFp8E4m3:
      return narrowArray<kFp8E4m3Format, std::uint8_t>(src, count, dst, mode, saturate);
    case DType::kFp8E5m2:
      return narrowArray<kFp8E5m2Format, std::uint8_t>(src, count, dst, mode, saturate);
    case DType::kFp8E3m4:
      return narrowArray<kFp8E3m4Format, std::uint8_t>(src, count, dst, mode, saturate);
    case DType::kFp8E4m3Fn:
      return narrowArray<kFp8E4m3FnFormat, std::uint8_t>(src, count, dst, mode, saturate);
    default:
      break;
  }
  TRN_UNREACHABLE() << "no SIMD narrowing to " << dtypeName(type);
}

void widenDispatch(const std::byte* src, std::size_t count, float* dst, DType type) {
  switch (type) {
    case DType::kFp32: return widenArray<kFp32Format, std::uint32_t>(src, count, dst);
    case DType::kTf32: return widenArray<kTf32Format, std::uint32_t>(src, count, dst);
    case DType::kBf16: return widenArray<kBf16Format, std::uint16_t>(src, count, dst);
    case DType::kFp16: return widenArray<kFp16Format, std::uint16_t>(src, count, dst);
    case DType::kFp8E4m3: return widenArray<kFp8E4m3Format, std::uint8_t>(src, count, dst);
    case DType::kFp8E5m2: return widenArray<kFp8E5m2Format, std::uint8_t>(src, count, dst);
    case DType::kFp8E3m4: return widenArray<kFp8E3m4Format, std::uint8_t>(src, count, dst);
    case DType::kFp8E4m3Fn: return widenArray<kFp8E4m3FnFormat, std::uint8_t>(src, count, dst);
    default: break;
  }
  TRN_UNREACHABLE() << "no SIMD widening from " << dtypeName(type);
}

const char* targetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace trn::numerics
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trn::numerics {

HWY_EXPORT(narrowDispatch);
HWY_EXPORT(widenDispatch);
HWY_EXPORT(targetName);

bool hasSimdNarrow(DType type, RoundingMode mode) {
  return isFloat(type) && mode != RoundingMode::kStochastic;
}

bool hasSimdWiden(DType type) { return isFloat(type); }

void simdNarrow(const float* src, std::size_t count, std::byte* dst, DType type,
                RoundingMode mode, bool saturate) {
  TRN_CHECK(hasSimdNarrow(type, mode)) << dtypeName(type) << " " << roundingModeName(mode);
  HWY_DYNAMIC_DISPATCH(narrowDispatch)(src, count, dst, type, mode, saturate);
}

void simdWiden(const std::byte* src, std::size_t count, float* dst, DType type) {
  TRN_CHECK(hasSimdWiden(type)) << dtypeName(type);
  HWY_DYNAMIC_DISPATCH(widenDispatch)(src, count, dst, type);
}

const char* simdTarget() { return HWY_DYNAMIC_DISPATCH(targetName)(); }

}  // namespace trn::numerics
#endif  // HWY_ONCE
