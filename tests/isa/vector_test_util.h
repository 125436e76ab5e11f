// Test support for the Vector-engine instruction tests (vector_engine_test.cpp,
// vector_reduce_test.cpp): small kernels that load SBUF/PSUM regions from HBM, run compute
// instructions strictly one after another, and store regions back; element encoding helpers; and
// an independent float64 model of the ALU operators used by the golden references.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "run_program.h"
#include "trn/isa/access_pattern.h"
#include "trn/isa/enums.h"
#include "trn/isa/program_text.h"
#include "trn/isa/verifier.h"
#include "trn/numerics/convert.h"

namespace trn::isa::vtest {

using trn::testing::TensorBytes;

/// A region of SBUF or PSUM used by a test kernel: `partitions` partitions from partitionStart,
/// `free` contiguous elements from byte `offset` in each. With `input` set it is loaded from HBM
/// tensor "<name>_in" before the compute instructions; with `output` it is stored to HBM tensor
/// "<name>" afterwards. PSUM regions travel through an SBUF staging area and tensor_copy.
struct Region {
  std::string name;
  DType dtype = DType::kFp32;
  std::int64_t partitionStart = 0;
  std::int64_t partitions = 1;
  std::int64_t free = 1;
  std::int64_t offset = 0;
  Memory memory = Memory::kSbuf;
  std::vector<std::byte> input;
  bool output = false;

  /// The region's partitions with free dimensions `dims` (program-text syntax, e.g.
  /// "[[-1,64]]"), starting `elementOffset` elements into each partition.
  [[nodiscard]] std::string ap(std::string_view dims, std::int64_t elementOffset = 0) const {
    return apOf(memory, offset, dims, elementOffset);
  }
  /// The whole region, contiguous.
  [[nodiscard]] std::string ap() const { return ap(fmt::format("[[1,{}]]", free)); }

  /// The same pattern in `mem` at byte `base` (used for PSUM staging).
  [[nodiscard]] std::string apOf(Memory mem, std::int64_t base, std::string_view dims,
                                 std::int64_t elementOffset = 0) const {
    return fmt::format("{}[{}:{}]+{}:{}{}", memoryName(mem), partitionStart,
                       partitionStart + partitions, base + elementOffset * byteSize(dtype),
                       dtypeName(dtype), dims);
  }
};

/// Byte offset of the SBUF staging areas of PSUM regions (above every test's own regions).
inline constexpr std::int64_t kStagingOffset = 48 * 1024;

/// The test kernels run on a core whose SBUF partitions hold 64 KiB instead of 224 KiB: the
/// instructions' semantics do not depend on it, and allocating (and zeroing) a full 28 MiB SBUF
/// for every small kernel would dominate the test time.
inline core::CoreOptions smallCore(core::CoreOptions options) {
  options.limits.sbufPartitionBytes = 64 * 1024;
  return options;
}

/// Program text of a kernel: loads, `lines` (each "engine: mnemonic fields", executed one after
/// another in the given order whatever their engines), stores.
inline std::string kernelText(const std::vector<Region>& regions,
                              const std::vector<std::string>& lines) {
  std::string text;
  std::vector<std::string> loads;
  std::vector<std::string> compute;
  std::vector<std::string> stores;
  std::vector<std::string> unstage;
  std::int64_t staging = kStagingOffset;
  for (const Region& r : regions) {
    const std::string dims = fmt::format("[[1,{}]]", r.free);
    const std::string sbufAp =
        r.memory == Memory::kSbuf ? r.ap() : r.apOf(Memory::kSbuf, staging, dims);
    const std::string hbm =
        fmt::format("{}[[{},{}],[1,{}]]", dtypeName(r.dtype), r.free, r.partitions, r.free);
    if (!r.input.empty()) {
      text += fmt::format(".tensor {}_in input {} [{}, {}]\n", r.name, dtypeName(r.dtype),
                          r.partitions, r.free);
      loads.push_back(fmt::format("sp: dma_copy dst={} src=hbm:{}_in:{} queue={} signal(s0+=1)",
                                  sbufAp, r.name, hbm, loads.size() % 16));
      if (r.memory == Memory::kPsum) {
        compute.push_back(fmt::format("dve: tensor_copy dst={} src={}", r.ap(), sbufAp));
      }
    }
    if (r.output) {
      text += fmt::format(".tensor {} output {} [{}, {}]\n", r.name, dtypeName(r.dtype),
                          r.partitions, r.free);
      if (r.memory == Memory::kPsum) {
        unstage.push_back(fmt::format("dve: tensor_copy dst={} src={}", sbufAp, r.ap()));
      }
      stores.push_back(
          fmt::format("sp: dma_copy dst=hbm:{}:{} src={} queue=0", r.name, hbm, sbufAp));
    }
    if (r.memory == Memory::kPsum) {
      staging += r.free * byteSize(r.dtype);
    }
  }
  compute.insert(compute.end(), lines.begin(), lines.end());
  compute.insert(compute.end(), unstage.begin(), unstage.end());
  for (const std::string& l : loads) {
    text += l + "\n";
  }
  for (std::size_t j = 0; j < compute.size(); ++j) {
    text +=
        fmt::format("{} wait(s0>={}) wait(s1>={}) signal(s1+=1)\n", compute[j], loads.size(), j);
  }
  for (const std::string& s : stores) {
    text += fmt::format("{} wait(s1>={})\n", s, compute.size());
  }
  return text;
}

/// Runs the kernel; fails the test (and returns no outputs) if it does not run.
inline TensorBytes runKernel(const std::vector<Region>& regions,
                             const std::vector<std::string>& lines,
                             const core::CoreOptions& options = {}) {
  TensorBytes inputs;
  for (const Region& r : regions) {
    if (!r.input.empty()) {
      inputs[r.name + "_in"] = r.input;
    }
  }
  const std::string text = kernelText(regions, lines);
  Result<TensorBytes> out = trn::testing::runProgram(text, inputs, smallCore(options));
  EXPECT_TRUE(out.ok()) << out.status().toString() << "\n" << text;
  return out.ok() ? std::move(out).value() : TensorBytes{};
}

/// The status of running the kernel (for expected failures).
inline Status runStatus(const std::vector<Region>& regions, const std::vector<std::string>& lines,
                        const core::CoreOptions& options = {}) {
  TensorBytes inputs;
  for (const Region& r : regions) {
    if (!r.input.empty()) {
      inputs[r.name + "_in"] = r.input;
    }
  }
  return trn::testing::runProgram(kernelText(regions, lines), inputs, smallCore(options)).status();
}

/// Element bytes of fp32 values cast to `type` with nearest-even rounding.
inline std::vector<std::byte> encode(const std::vector<float>& values, DType type) {
  const auto size = static_cast<std::size_t>(byteSize(type));
  std::vector<std::byte> bytes(values.size() * size);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint32_t bits = encodeFloat(values[i], type);
    std::memcpy(bytes.data() + i * size, &bits, size);
  }
  return bytes;
}

/// The raw encodings (zero-extended) of the elements in `bytes`.
inline std::vector<std::uint32_t> rawBits(const std::vector<std::byte>& bytes, DType type) {
  const auto size = static_cast<std::size_t>(byteSize(type));
  std::vector<std::uint32_t> bits(bytes.size() / size, 0);
  for (std::size_t i = 0; i < bits.size(); ++i) {
    std::memcpy(&bits[i], bytes.data() + i * size, size);
  }
  return bits;
}

/// The fp32 values of the elements in `bytes`.
inline std::vector<float> decode(const std::vector<std::byte>& bytes, DType type) {
  std::vector<float> values;
  for (const std::uint32_t b : rawBits(bytes, type)) {
    values.push_back(decodeFloat(b, type));
  }
  return values;
}

/// `count` random values in [low, high] that are exactly representable in `type`.
inline std::vector<float> randomValues(std::size_t count, DType type, std::mt19937& rng,
                                       double low = -4.0, double high = 4.0) {
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<float> values(count);
  for (float& v : values) {
    v = isInteger(type) ? static_cast<float>(std::nearbyint(dist(rng)))
                        : quantize(static_cast<float>(dist(rng)), type);
  }
  return values;
}

/// Expects the output bytes to be exactly the fp32 results `expected` cast to `type` with
/// nearest-even rounding (NaN: the type's canonical NaN).
inline void expectCastOf(const std::vector<std::byte>& out, const std::vector<float>& expected,
                         DType type, std::string_view what = "") {
  const std::vector<std::uint32_t> got = rawBits(out, type);
  const std::vector<std::uint32_t> want = rawBits(encode(expected, type), type);
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (std::size_t i = 0; i < got.size() && reported < 10; ++i) {
    if (got[i] != want[i]) {
      ADD_FAILURE() << what << " element " << i << ": got 0x" << std::hex << got[i] << " ("
                    << decodeFloat(got[i], type) << ") want 0x" << want[i] << " (" << expected[i]
                    << ")" << std::dec;
      ++reported;
    }
  }
}

/// Expects each output element to be one of the two values of `type` that bracket the fp32
/// result (what stochastic rounding may produce): the result itself when representable, else its
/// truncation or the next value away from zero. NaN must stay NaN.
inline void expectStochasticCastOf(const std::vector<std::byte>& out,
                                   const std::vector<float>& expected, DType type,
                                   std::string_view what = "") {
  const std::vector<std::uint32_t> got = rawBits(out, type);
  ASSERT_EQ(got.size(), expected.size()) << what;
  const ConvertOptions truncate{RoundingMode::kTowardZero};
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float x = expected[i];
    const float value = decodeFloat(got[i], type);
    if (std::isnan(x)) {
      ASSERT_TRUE(std::isnan(value)) << what << " element " << i;
      continue;
    }
    const std::uint32_t low = encodeFloat(x, type, truncate);
    const float down = decodeFloat(low, type);
    const float up = down == x ? x : decodeFloat(low + 1, type);
    ASSERT_TRUE(value == down || value == up)
        << what << " element " << i << ": " << value << " is not " << down << " or " << up
        << " (fp32 result " << x << ")";
  }
}

/// a <op> b evaluated in float64 (comparisons and logical operators give 1 or 0; bitwise
/// operators act on the values truncated to 32-bit integers, NaN as 0): an independent model of
/// the ALU semantics that the references round to fp32 after each operator.
inline double aluRef(AluOp op, double a, double b) {
  const auto toInt = [](double x) -> std::uint32_t {
    if (std::isnan(x)) {
      return 0;
    }
    const double t = std::fmax(-2147483648.0, std::fmin(4294967295.0, std::trunc(x)));
    return static_cast<std::uint32_t>(static_cast<std::int64_t>(t));
  };
  const auto fromInt = [](std::uint32_t v) {
    return static_cast<double>(static_cast<std::int32_t>(v));
  };
  const bool nan = std::isnan(a) || std::isnan(b);
  switch (op) {
    case AluOp::kAdd:
      return a + b;
    case AluOp::kSubtract:
      return a - b;
    case AluOp::kMultiply:
      return a * b;
    case AluOp::kDivide:
      return a / b;
    case AluOp::kMax:
      return nan ? NAN : (a > b || (a == b && !std::signbit(a)) ? a : b);
    case AluOp::kMin:
      return nan ? NAN : (a < b || (a == b && std::signbit(a)) ? a : b);
    case AluOp::kPow:
      return std::pow(a, b);
    case AluOp::kEqual:
      return a == b ? 1 : 0;
    case AluOp::kNotEqual:
      return a != b ? 1 : 0;
    case AluOp::kGreater:
      return a > b ? 1 : 0;
    case AluOp::kGreaterEqual:
      return a >= b ? 1 : 0;
    case AluOp::kLess:
      return a < b ? 1 : 0;
    case AluOp::kLessEqual:
      return a <= b ? 1 : 0;
    case AluOp::kLogicalAnd:
      return a != 0 && b != 0 ? 1 : 0;
    case AluOp::kLogicalOr:
      return a != 0 || b != 0 ? 1 : 0;
    case AluOp::kLogicalXor:
      return (a != 0) != (b != 0) ? 1 : 0;
    case AluOp::kAbsMax:
      return std::fmax(std::fabs(a), std::fabs(b));
    case AluOp::kAbsMin:
      return std::fmin(std::fabs(a), std::fabs(b));
    case AluOp::kBitwiseAnd:
      return fromInt(toInt(a) & toInt(b));
    case AluOp::kBitwiseOr:
      return fromInt(toInt(a) | toInt(b));
    case AluOp::kBitwiseXor:
      return fromInt(toInt(a) ^ toInt(b));
    case AluOp::kShiftLeft:
      return fromInt(toInt(a) << (toInt(b) & 31));
    case AluOp::kShiftRight:
      return fromInt(toInt(a) >> (toInt(b) & 31));
    case AluOp::kBypass:
      return a;
  }
  return NAN;
}

/// One ALU operator as the engines apply it: inputs and result in fp32.
inline float alu32(AluOp op, float a, float b) {
  return static_cast<float>(aluRef(op, static_cast<double>(a), static_cast<double>(b)));
}

/// A region that is neither loaded nor stored.
inline Region makeRegion(std::string name, DType type, std::int64_t partitionStart,
                         std::int64_t partitions, std::int64_t free, std::int64_t offset = 0) {
  Region r;
  r.name = std::move(name);
  r.dtype = type;
  r.partitionStart = partitionStart;
  r.partitions = partitions;
  r.free = free;
  r.offset = offset;
  return r;
}

/// A region with `values` (cast to `type`, nearest-even) as its input.
inline Region inputRegion(std::string name, DType type, std::int64_t partitionStart,
                          std::int64_t partitions, std::int64_t free,
                          const std::vector<float>& values, std::int64_t offset = 0) {
  Region r = makeRegion(std::move(name), type, partitionStart, partitions, free, offset);
  r.input = encode(values, type);
  return r;
}

/// A region stored to HBM after the kernel.
inline Region outputRegion(std::string name, DType type, std::int64_t partitionStart,
                           std::int64_t partitions, std::int64_t free, std::int64_t offset = 0) {
  Region r = makeRegion(std::move(name), type, partitionStart, partitions, free, offset);
  r.output = true;
  return r;
}

/// Verifies a program consisting of the one instruction line `line`.
inline Status verifyLine(std::string_view line) {
  const Result<Program> program = parseProgramText(line, "v.tasm");
  if (!program.ok()) {
    return program.status();
  }
  return verifyProgram(*program, CoreLimits{});
}

/// Expects `status` to be a verifier error mentioning every fragment.
inline void expectRejected(const Status& status,
                           std::initializer_list<std::string_view> fragments) {
  ASSERT_FALSE(status.ok()) << "accepted";
  EXPECT_EQ(status.code(), ErrorCode::kFailedPrecondition) << status.toString();
  for (const std::string_view f : fragments) {
    EXPECT_NE(status.message().find(f), std::string::npos)
        << "missing '" << f << "' in: " << status.message();
  }
}

}  // namespace trn::isa::vtest
