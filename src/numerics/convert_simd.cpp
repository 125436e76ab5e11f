// Highway compiles this file once per SIMD target and dispatches at run time. The kernels work on
// the fp32 bit pattern with integer operations only (plus one exact float multiply when widening
// subnormals), so they give the same bits on every target; convert_scalar.cpp is the definition
// they are tested against. Stochastic rounding takes its random words from the caller.
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

/// Per-call constants of a narrowing conversion. `roundMask` is all ones for nearest-even and 0
/// for toward-zero, so one branch-free kernel serves both; stochastic rounding ignores it.
struct NarrowParams {
  VU32 roundMask;
  VU32 overflowCode;  ///< code of a finite value above maxFinite
  VU32 infCode;       ///< code of an infinite input
};

template <FloatFormat F>
HWY_INLINE NarrowParams narrowParams(DU32 du, RoundingMode mode, bool saturate) {
  const bool toInf = F.hasInf && !saturate;
  return NarrowParams{
      hn::Set(du, mode == RoundingMode::kNearestEven ? ~std::uint32_t{0} : 0u),
      hn::Set(du, toInf && mode != RoundingMode::kTowardZero ? F.infCode() : F.maxCode()),
      hn::Set(du, toInf ? F.infCode() : F.maxCode())};
}

/// `value >> shift` (1 <= shift <= 31 in every lane) rounded: to nearest-even or toward zero
/// per params.roundMask, or stochastically by adding the top `shift` bits of `words` to the
/// discarded bits (a carry rounds up), as encodeToFormat defines.
template <bool kStochastic>
HWY_INLINE VU32 roundShift(DU32 du, VU32 value, VU32 shift, VU32 words,
                           const NarrowParams& params) {
  const VU32 one = hn::Set(du, 1u);
  if constexpr (kStochastic) {
    return hn::Add(value, words >> hn::Sub(hn::Set(du, 32u), shift)) >> shift;
  } else {
    const VU32 lsb = hn::And(value >> shift, one);
    const VU32 bias = hn::Add(hn::Sub(one << hn::Sub(shift, one), one), lsb);
    return hn::Add(value, hn::And(bias, params.roundMask)) >> shift;
  }
}

/// fp32 bit patterns -> storage patterns of format F (encodeToFormat << storageShift). `words`
/// holds each lane's stochastic-rounding word (unused unless kStochastic).
template <FloatFormat F, bool kStochastic>
HWY_INLINE VU32 narrowLanes(DU32 du, VU32 bits, VU32 words, const NarrowParams& params) {
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
    code = roundShift<kStochastic>(du, rebiased, hn::Set(du, std::uint32_t{kShift}), words,
                                   params);
    if constexpr (F.bias != 127) {
      // Below the target's smallest normal: shift the significand (implicit bit included) so
      // that its units are the target's subnormal spacing; `shift` bits are discarded.
      const hn::RebindToSigned<DU32> di;
      const VU32 exponent = hn::ShiftRight<23>(magnitude);
      const VU32 one = hn::Set(du, 1u);
      const VU32 significand = hn::Or(hn::And(magnitude, hn::Set(du, 0x7FFFFFu)),
                                      hn::ShiftLeft<23>(hn::Min(exponent, one)));
      const auto shift = hn::Sub(hn::Set(di, kShift + 127 + F.minExponent()),
                                 hn::BitCast(di, hn::Max(exponent, one)));
      const auto clamped = hn::Min(hn::Max(shift, hn::Set(di, 1)), hn::Set(di, 31));
      VU32 subnormal =
          roundShift<kStochastic>(du, significand, hn::BitCast(du, clamped), words, params);
      if constexpr (kStochastic) {
        // 32 or more discarded bits: only the top 32 bits of the fraction (significand >>
        // (shift - 32)) meet the word, and a carry out of 32 bits gives the smallest subnormal.
        const auto excess = hn::Min(hn::Sub(shift, hn::Set(di, 32)), hn::Set(di, 31));
        const VU32 top32 = significand >> hn::BitCast(du, hn::Max(excess, hn::Zero(di)));
        const auto carry = hn::And(hn::Ne(top32, hn::Zero(du)),
                                   hn::Not(hn::Lt(words, hn::Sub(hn::Zero(du), top32))));
        subnormal = hn::IfThenElse(hn::RebindMask(du, hn::Gt(shift, hn::Set(di, 31))),
                                   hn::IfThenElseZero(carry, one), subnormal);
      }
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
/// takes the same SIMD path. `words` (stochastic rounding only) has one word per element.
template <FloatFormat F, typename TOut, bool kStochastic>
HWY_NOINLINE void narrowArray(const float* HWY_RESTRICT src, std::size_t count,
                              const std::uint32_t* HWY_RESTRICT words,
                              std::byte* HWY_RESTRICT dst, const NarrowParams& params) {
  const DU32 du;
  const hn::Rebind<float, DU32> df;
  const hn::Rebind<TOut, DU32> dout;
  const hn::RebindToSigned<DU32> di;
  const std::size_t lanes = hn::Lanes(du);
  auto encode = [&](const float* in, const std::uint32_t* inWords, TOut* out) {
    const VU32 wordVec = kStochastic ? hn::LoadU(du, inWords) : hn::Zero(du);
    const VU32 code =
        narrowLanes<F, kStochastic>(du, hn::BitCast(du, hn::LoadU(df, in)), wordVec, params);
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
    encode(src + i, kStochastic ? words + i : nullptr, out + i);
  }
  if (i < count) {
    HWY_ALIGN float inTail[hn::MaxLanes(du)] = {};
    HWY_ALIGN std::uint32_t wordTail[hn::MaxLanes(du)] = {};
    HWY_ALIGN TOut outTail[hn::MaxLanes(du)] = {};
    std::memcpy(inTail, src + i, (count - i) * sizeof(float));
    if (kStochastic) {
      std::memcpy(wordTail, words + i, (count - i) * sizeof(std::uint32_t));
    }
    encode(inTail, wordTail, outTail);
    std::memcpy(out + i, outTail, (count - i) * sizeof(TOut));
  }
}

template <FloatFormat F, typename TOut>
void narrowFormat(const float* src, std::size_t count, const std::uint32_t* words,
                  std::byte* dst, RoundingMode mode, bool saturate) {
  const NarrowParams params = narrowParams<F>(DU32(), mode, saturate);
  if (mode == RoundingMode::kStochastic) {
    narrowArray<F, TOut, true>(src, count, words, dst, params);
  } else {
    narrowArray<F, TOut, false>(src, count, nullptr, dst, params);
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

void narrowDispatch(const float* src, std::size_t count, const std::uint32_t* words,
                    std::byte* dst, DType type, RoundingMode mode, bool saturate) {
  switch (type) {
    case DType::kFp32:
      return narrowFormat<kFp32Format, std::uint32_t>(src, count, words, dst, mode, saturate);
    case DType::kTf32:
      return narrowFormat<kTf32Format, std::uint32_t>(src, count, words, dst, mode, saturate);
    case DType::kBf16:
      return narrowFormat<kBf16Format, std::uint16_t>(src, count, words, dst, mode, saturate);
    case DType::kFp16:
      return narrowFormat<kFp16Format, std::uint16_t>(src, count, words, dst, mode, saturate);
    case DType::kFp8E4m3:
      return narrowFormat<kFp8E4m3Format, std::uint8_t>(src, count, words, dst, mode, saturate);
    case DType::kFp8E5m2:
      return narrowFormat<kFp8E5m2Format, std::uint8_t>(src, count, words, dst, mode, saturate);
    case DType::kFp8E3m4:
      return narrowFormat<kFp8E3m4Format, std::uint8_t>(src, count, words, dst, mode, saturate);
    case DType::kFp8E4m3Fn:
      return narrowFormat<kFp8E4m3FnFormat, std::uint8_t>(src, count, words, dst, mode,
                                                            saturate);
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

bool hasSimdNarrow(DType type) { return isFloat(type); }

bool hasSimdWiden(DType type) { return isFloat(type); }

void simdNarrow(const float* src, std::size_t count, const std::uint32_t* words, std::byte* dst,
                DType type, RoundingMode mode, bool saturate) {
  TRN_CHECK(hasSimdNarrow(type)) << dtypeName(type);
  TRN_CHECK(words != nullptr || mode != RoundingMode::kStochastic);
  HWY_DYNAMIC_DISPATCH(narrowDispatch)(src, count, words, dst, type, mode, saturate);
}

void simdWiden(const std::byte* src, std::size_t count, float* dst, DType type) {
  TRN_CHECK(hasSimdWiden(type)) << dtypeName(type);
  HWY_DYNAMIC_DISPATCH(widenDispatch)(src, count, dst, type);
}

const char* simdTarget() { return HWY_DYNAMIC_DISPATCH(targetName)(); }

}  // namespace trn::numerics
#endif  // HWY_ONCE
