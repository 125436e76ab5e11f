// Issue 17: float64 host arrays for float tensors, rounded once to the tensor's type under the
// run's rounding mode (never first to float32, which would round twice), and `trnsim run`
// returning bf16 and fp8 outputs as float32 by default (--keep-storage-type keeps the bits).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "trn/numerics/convert.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/npy.h"
#include "trnsim_cli.h"

namespace trn::runtime {
namespace {

/// One float64 value rounded to `type` by convertFromDouble; the encoding.
std::uint32_t roundDouble(double value, DType type, RoundingMode mode = RoundingMode::kNearestEven,
                          std::uint64_t index = 0) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(byteSize(type)) * (index + 1));
  std::vector<double> values(index + 1, 0.0);
  values[index] = value;
  ConvertOptions options;
  options.rounding = mode;
  options.seed = 5;
  convertFromDouble(values, type, bytes, options);
  std::uint32_t bits = 0;
  std::memcpy(&bits, bytes.data() + index * static_cast<std::size_t>(byteSize(type)),
              static_cast<std::size_t>(byteSize(type)));
  return bits;
}

float bf16Value(std::uint32_t bits) { return decodeFloat(bits, DType::kBf16); }

// 1 + 2^-8 is the tie between the bf16 neighbours 1 and 1 + 2^-7; a float64 just above it
// rounds to 1 + 2^-8 in float32, and that tie would then go to the even 1.
TEST(HostFloat64, RoundsOnceToBf16NotTwice) {
  const double aboveTie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  EXPECT_EQ(bf16Value(roundDouble(aboveTie, DType::kBf16)), 1.0078125f);
  EXPECT_EQ(bf16Value(roundDouble(-aboveTie, DType::kBf16)), -1.0078125f);
  const double belowTie = 1.0 + std::ldexp(1.0, -8) - std::ldexp(1.0, -30);
  EXPECT_EQ(bf16Value(roundDouble(belowTie, DType::kBf16)), 1.0f);
  // Exact ties still go to even.
  EXPECT_EQ(bf16Value(roundDouble(1.0 + std::ldexp(1.0, -8), DType::kBf16)), 1.0f);
  // Toward zero: just below 1 + 2^-7 truncates to 1 (via float32 it would become 1 + 2^-7).
  const double belowNext = 1.0 + std::ldexp(1.0, -7) - std::ldexp(1.0, -30);
  EXPECT_EQ(bf16Value(roundDouble(belowNext, DType::kBf16, RoundingMode::kTowardZero)), 1.0f);
  EXPECT_EQ(bf16Value(roundDouble(-belowNext, DType::kBf16, RoundingMode::kTowardZero)), -1.0f);
}

TEST(HostFloat64, RoundsToFloat32InEveryMode) {
  const double aboveTie = 1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -40);
  const float up = 1.0f + 0x1p-23f;
  EXPECT_EQ(std::bit_cast<float>(roundDouble(aboveTie, DType::kFp32)), up);
  EXPECT_EQ(std::bit_cast<float>(roundDouble(aboveTie, DType::kFp32, RoundingMode::kTowardZero)),
            1.0f);
  EXPECT_EQ(std::bit_cast<float>(roundDouble(1e300, DType::kFp32)), INFINITY);
  EXPECT_EQ(std::bit_cast<float>(roundDouble(1e300, DType::kFp32, RoundingMode::kTowardZero)),
            0x1.fffffep127f);
  EXPECT_TRUE(std::isnan(std::bit_cast<float>(roundDouble(NAN, DType::kFp32))));
  // Stochastic: one of the two neighbours, the same for the same (seed, stream, index), and
  // both neighbours over many indices for a value halfway between them.
  const double half = 1.0 + std::ldexp(1.0, -24);
  int ups = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const float r =
        std::bit_cast<float>(roundDouble(half, DType::kFp32, RoundingMode::kStochastic, i));
    ASSERT_TRUE(r == 1.0f || r == up) << r;
    EXPECT_EQ(r,
              std::bit_cast<float>(roundDouble(half, DType::kFp32, RoundingMode::kStochastic, i)));
    ups += r == up ? 1 : 0;
  }
  EXPECT_GT(ups, 60);
  EXPECT_LT(ups, 140);
}

TEST(HostFloat64, FeedsFloatTensorsOnly) {
  NpyArray doubles{NpyType::kFloat64, {2}, {}};
  const std::vector<double> values = {0.5, -3.25};
  doubles.data.resize(16);
  std::memcpy(doubles.data.data(), values.data(), 16);
  const isa::TensorDecl fp8{"x", isa::TensorKind::kInput, DType::kFp8E4m3, {2}};
  const Result<std::vector<std::byte>> bytes = tensorFromNpy(fp8, doubles, "x.npy");
  ASSERT_TRUE(bytes.ok()) << bytes.status().toString();
  EXPECT_EQ(decodeFloat(static_cast<std::uint32_t>((*bytes)[0]), DType::kFp8E4m3), 0.5f);
  EXPECT_EQ(decodeFloat(static_cast<std::uint32_t>((*bytes)[1]), DType::kFp8E4m3), -3.25f);
  const isa::TensorDecl ints{"n", isa::TensorKind::kInput, DType::kInt32, {2}};
  const Result<std::vector<std::byte>> refused = tensorFromNpy(ints, doubles, "n.npy");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("n.npy: element type <f8 cannot feed int32 tensor "
                                            "'n'; give <i4 (its storage type)"),
            std::string::npos)
      << refused.status().message();
}

// A bf16 copy through SBUF: what goes in comes out, so the file shows the conversions.
constexpr const char* kCopyProgram =
    ".tensor x input bf16 [4, 8]\n"
    ".tensor y output bf16 [4, 8]\n"
    "sp: dma_copy dst=sbuf[0:4]:bf16[[1,8]] src=hbm:x:bf16[[8,4],[1,8]] queue=0 signal(s0+=1)\n"
    "sp: dma_copy dst=hbm:y:bf16[[8,4],[1,8]] src=sbuf[0:4]:bf16[[1,8]] queue=0 wait(s0>=1)\n";

TEST(HostFloat64, RunTakesFloat64AndReturnsFloat32ForBf16) {
  trn::testing::ScratchDir scratch;
  const std::string program = scratch.file("copy.tasm");
  std::ofstream(program) << kCopyProgram;
  std::vector<double> values(32, 0.25);
  values[0] = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  values[1] = -2.5;
  NpyArray x{NpyType::kFloat64, {4, 8}, {}};
  x.data.resize(values.size() * sizeof(double));
  std::memcpy(x.data.data(), values.data(), x.data.size());
  ASSERT_TRUE(writeNpy(scratch.file("x.npy"), x).ok());

  const auto run =
      testing::runCommand(TRNSIM_BINARY, fmt::format("run {} --in x={} --out y={}", program,
                                                     scratch.file("x.npy"), scratch.file("y.npy")));
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const NpyArray y = readNpy(scratch.file("y.npy")).value();
  ASSERT_EQ(y.type, NpyType::kFloat32);
  std::vector<float> out(32);
  std::memcpy(out.data(), y.data.data(), y.data.size());
  EXPECT_EQ(out[0], 1.0078125f);
  EXPECT_EQ(out[1], -2.5f);
  EXPECT_EQ(out[31], 0.25f);

  const auto kept = testing::runCommand(
      TRNSIM_BINARY, fmt::format("run {} --in x={} --out y={} --keep-storage-type --rounding rtz",
                                 program, scratch.file("x.npy"), scratch.file("z.npy")));
  ASSERT_EQ(kept.exitCode, 0) << kept.output;
  const NpyArray z = readNpy(scratch.file("z.npy")).value();
  ASSERT_EQ(z.type, NpyType::kUInt16);
  std::uint16_t first = 0;
  std::memcpy(&first, z.data.data(), 2);
  EXPECT_EQ(first, 0x3F80);  // 1.0: truncated
}

}  // namespace
}  // namespace trn::runtime
