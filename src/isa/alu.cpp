#include "trn/isa/alu.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <optional>
#include <span>
#include <utility>

#include "trn/base/check.h"

namespace trn::isa {
namespace {

/// The value as a 32-bit integer for bitwise operators: truncated toward zero and saturated;
/// NaN gives 0.
std::int64_t toInteger(float x) {
  if (std::isnan(x)) {
    return 0;
  }
  const double t = std::trunc(static_cast<double>(x));
  return static_cast<std::int64_t>(std::fmax(-2147483648.0, std::fmin(4294967295.0, t)));
}

float fromInteger(std::int64_t v) { return static_cast<float>(static_cast<std::int32_t>(v)); }

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// log(1 + e^x) without overflow for large x.
double softplus(double x) { return std::fmax(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }

/// The limit of f at +Inf (positive) or -Inf, for the functions whose formula gives NaN there
/// (Inf * 0); nullopt when the formula already gives the limit.
constexpr std::optional<double> limitAtInfinity(ActivationFunction f, bool positive) {
  switch (f) {
    case ActivationFunction::kGelu:
    case ActivationFunction::kGeluApproxTanh:
    case ActivationFunction::kGeluApproxSigmoid:
    case ActivationFunction::kSilu:
    case ActivationFunction::kMish:
      return positive ? std::optional<double>() : -0.0;  // x * (something -> 0+)
    case ActivationFunction::kGeluDx:
    case ActivationFunction::kGeluApproxSigmoidDx:
    case ActivationFunction::kSiluDx:
      return positive ? 1.0 : 0.0;
    default:
      return std::nullopt;
  }
}

/// a <kOp> b in fp32: the one definition of every operator.
template <AluOp kOp>
float alu(float a, float b) {
  if constexpr (kOp == AluOp::kAdd) {
    return a + b;
  } else if constexpr (kOp == AluOp::kSubtract) {
    return a - b;
  } else if constexpr (kOp == AluOp::kMultiply) {
    return a * b;
  } else if constexpr (kOp == AluOp::kDivide) {
    return a / b;
  } else if constexpr (kOp == AluOp::kMax) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::fmax(a, b);
  } else if constexpr (kOp == AluOp::kMin) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::fmin(a, b);
  } else if constexpr (kOp == AluOp::kPow) {
    return static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  } else if constexpr (kOp == AluOp::kEqual) {
    return a == b ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kNotEqual) {
    return a != b ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kGreater) {
    return a > b ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kGreaterEqual) {
    return a >= b ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kLess) {
    return a < b ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kLessEqual) {
    return a <= b ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kLogicalAnd) {
    return (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kLogicalOr) {
    return (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kLogicalXor) {
    return ((a != 0.0f) != (b != 0.0f)) ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kAbsMax) {
    return std::fmax(std::fabs(a), std::fabs(b));
  } else if constexpr (kOp == AluOp::kAbsMin) {
    return std::fmin(std::fabs(a), std::fabs(b));
  } else if constexpr (kOp == AluOp::kBitwiseAnd) {
    return fromInteger(toInteger(a) & toInteger(b));
  } else if constexpr (kOp == AluOp::kBitwiseOr) {
    return fromInteger(toInteger(a) | toInteger(b));
  } else if constexpr (kOp == AluOp::kBitwiseXor) {
    return fromInteger(toInteger(a) ^ toInteger(b));
  } else if constexpr (kOp == AluOp::kShiftLeft) {
    return fromInteger(static_cast<std::int64_t>(static_cast<std::uint32_t>(toInteger(a))
                                                 << (toInteger(b) & 31)));
  } else if constexpr (kOp == AluOp::kShiftRight) {  // logical: NKI has no arithmetic shift
    return fromInteger(static_cast<std::int64_t>(static_cast<std::uint32_t>(toInteger(a)) >>
                                                 (toInteger(b) & 31)));
  } else {
    static_assert(kOp == AluOp::kBypass, "every AluOp has a definition above");
    return a;  // bypass: the first operand
  }
}

constexpr std::size_t kNumAluOps = static_cast<std::size_t>(AluOp::kBypass) + 1;

template <AluOp kOp>
void elementwise(std::span<float> a, std::span<const float> b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = alu<kOp>(a[i], b[i]);
  }
}

template <AluOp kOp, bool kReverse>
void withScalar(std::span<float> data, float operand) {
  for (float& x : data) {
    x = kReverse ? alu<kOp>(operand, x) : alu<kOp>(x, operand);
  }
}

/// `make(std::integral_constant<E, E(i)>)` for every i < kCount, in enum order: a table with one
/// entry per operator or function (each a template instantiated for it), so that a loop over
/// many elements dispatches once.
template <typename E, std::size_t kCount, typename Make>
constexpr auto perEnumValue(Make make) {
  return [&]<std::size_t... kIndex>(std::index_sequence<kIndex...>) {
    return std::array{make(std::integral_constant<E, static_cast<E>(kIndex)>{})...};
  }
  (std::make_index_sequence<kCount>());
}

/// The index of `value` (an `enumName`) in a table made by perEnumValue.
template <std::size_t kCount, typename E>
std::size_t checkedIndex(E value, const char* enumName) {
  const auto i = static_cast<std::size_t>(value);
  TRN_CHECK(i < kCount) << "bad " << enumName << " " << i;
  return i;
}

/// The scalar operator and its loops, per AluOp.
struct AluTables {
  static constexpr auto kScalar =
      perEnumValue<AluOp, kNumAluOps>([](auto op) { return &alu<decltype(op)::value>; });
  static constexpr auto kElementwise =
      perEnumValue<AluOp, kNumAluOps>([](auto op) { return &elementwise<decltype(op)::value>; });
  static constexpr auto kWithScalar = perEnumValue<AluOp, kNumAluOps>(
      [](auto op) { return &withScalar<decltype(op)::value, false>; });
  static constexpr auto kWithScalarReversed = perEnumValue<AluOp, kNumAluOps>(
      [](auto op) { return &withScalar<decltype(op)::value, true>; });
};

std::size_t indexOf(AluOp op) { return checkedIndex<kNumAluOps>(op, "AluOp"); }

/// f(x): the one definition of every activation function (applyActivation).
template <ActivationFunction kF>
float activate(float xf, float alpha) {
  const double x = xf;
  const double kSqrt2 = std::numbers::sqrt2;
  const double kInvSqrtPi = std::numbers::inv_sqrtpi;
  double y = 0;
  if constexpr (limitAtInfinity(kF, true) || limitAtInfinity(kF, false)) {
    if (std::isinf(x)) {
      if (const std::optional<double> limit = limitAtInfinity(kF, x > 0)) {
        return static_cast<float>(*limit);
      }
    }
  }
  switch (kF) {
    case ActivationFunction::kCopy: return xf;
    case ActivationFunction::kSquare: y = x * x; break;
    case ActivationFunction::kSigmoid: y = sigmoid(x); break;
    case ActivationFunction::kRelu: return std::isnan(xf) || xf > 0.0f ? xf : 0.0f;
    case ActivationFunction::kPrelu:
      // A zero slope gives a (signed) zero for every negative input, -Inf included.
      y = std::isnan(x) || x > 0 ? x : alpha == 0.0f ? std::copysign(0.0, x) : alpha * x;
      break;
    // Phi(x) = erfc(-x / sqrt 2) / 2 keeps its relative accuracy for large negative x, where
    // 1 + erf(x / sqrt 2) cancels to zero.
    case ActivationFunction::kGelu: y = 0.5 * x * std::erfc(-x / kSqrt2); break;
    case ActivationFunction::kGeluDx:
      y = 0.5 * std::erfc(-x / kSqrt2) + x * kInvSqrtPi / kSqrt2 * std::exp(-0.5 * x * x);
      break;
    case ActivationFunction::kGeluApproxTanh:
      // 0.5 (1 + tanh(u)) = sigmoid(2u), without the cancellation for large negative u.
      y = x * sigmoid(2.0 * std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x));
      break;
    case ActivationFunction::kGeluApproxSigmoid: y = x * sigmoid(1.702 * x); break;
    case ActivationFunction::kGeluApproxSigmoidDx: {
      const double s = sigmoid(1.702 * x);
      y = s + 1.702 * x * s * (1.0 - s);
      break;
    }
    case ActivationFunction::kSilu: y = x * sigmoid(x); break;
    case ActivationFunction::kSiluDx: {
      const double s = sigmoid(x);
      y = s * (1.0 + x * (1.0 - s));
      break;
    }
    case ActivationFunction::kTanh: y = std::tanh(x); break;
    case ActivationFunction::kSoftplus: y = softplus(x); break;
    case ActivationFunction::kMish: y = x * std::tanh(softplus(x)); break;
    case ActivationFunction::kErf: y = std::erf(x); break;
    case ActivationFunction::kErfDx: y = 2.0 * kInvSqrtPi * std::exp(-x * x); break;
    case ActivationFunction::kExp: y = std::exp(x); break;
    case ActivationFunction::kLog: y = std::log(x); break;
    case ActivationFunction::kSin: y = std::sin(x); break;
    case ActivationFunction::kArctan: y = std::atan(x); break;
    case ActivationFunction::kSqrt: y = std::sqrt(x); break;
    case ActivationFunction::kRsqrt: y = 1.0 / std::sqrt(x); break;
    case ActivationFunction::kReciprocal: y = 1.0 / x; break;
    case ActivationFunction::kSign: y = std::isnan(x) ? x : (x > 0) - (x < 0); break;
    case ActivationFunction::kAbs: return std::fabs(xf);
  }
  return static_cast<float>(y);
}

template <ActivationFunction kF>
void activateRow(std::span<const float> in, std::span<float> out, float scale, float bias,
                 float alpha) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    out[i] = activate<kF>(in[i] * scale + bias, alpha);  // fp32 product and sum, as the engine
  }
}

constexpr std::size_t kNumActivations = static_cast<std::size_t>(ActivationFunction::kAbs) + 1;

/// The function and its row loop, per ActivationFunction.
struct ActivationTables {
  static constexpr auto kScalar = perEnumValue<ActivationFunction, kNumActivations>(
      [](auto f) { return &activate<decltype(f)::value>; });
  static constexpr auto kRow = perEnumValue<ActivationFunction, kNumActivations>(
      [](auto f) { return &activateRow<decltype(f)::value>; });
};

std::size_t indexOf(ActivationFunction f) {
  return checkedIndex<kNumActivations>(f, "ActivationFunction");
}

}  // namespace

bool isBitwise(AluOp op) {
  return op == AluOp::kBitwiseAnd || op == AluOp::kBitwiseOr || op == AluOp::kBitwiseXor ||
         op == AluOp::kShiftLeft || op == AluOp::kShiftRight;
}

float applyAlu(AluOp op, float a, float b) { return AluTables::kScalar[indexOf(op)](a, b); }

void applyAluElementwise(AluOp op, std::span<float> a, std::span<const float> b) {
  TRN_CHECK(a.size() == b.size()) << "applyAluElementwise over " << a.size() << " and " << b.size();
  AluTables::kElementwise[indexOf(op)](a, b);
}

void applyAluWithScalar(AluOp op, std::span<float> data, float operand, bool reverse) {
  (reverse ? AluTables::kWithScalarReversed : AluTables::kWithScalar)[indexOf(op)](data, operand);
}

float applyActivation(ActivationFunction f, float x, float alpha) {
  return ActivationTables::kScalar[indexOf(f)](x, alpha);
}

void applyActivationRow(ActivationFunction f, std::span<const float> in, std::span<float> out,
                        float scale, float bias, float alpha) {
  TRN_CHECK(in.size() == out.size())
      << "applyActivationRow over " << in.size() << " and " << out.size();
  ActivationTables::kRow[indexOf(f)](in, out, scale, bias, alpha);
}

}  // namespace trn::isa
