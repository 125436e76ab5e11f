// The packed instruction stream: every instruction reads back exactly as it was stored (field by
// field against the original, for random and extreme values), edits replace one instruction only,
// and a typical kernel instruction stays within 128 resident bytes.
#include "trn/isa/instruction_stream.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "random_program.h"

namespace trn::isa {
namespace {

template <typename T>
bool sameValue(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
  } else if constexpr (std::is_same_v<T, ScalarOperand>) {
    if (a.index() != b.index()) {
      return false;
    }
    return a.index() == 0 ? sameValue(std::get<float>(a), std::get<float>(b))
                          : std::get<AccessPattern>(a) == std::get<AccessPattern>(b);
  } else {
    return a == b;
  }
}

/// Field-by-field equality of two instructions, floats by their bits.
::testing::AssertionResult sameInstruction(const Instruction& a, const Instruction& b) {
  if (a.engine != b.engine || a.sync != b.sync || a.location != b.location ||
      a.body.index() != b.body.index()) {
    return ::testing::AssertionFailure() << "engine, sync, location or type differ";
  }
  bool same = true;
  std::visit(
      [&]<typename I>(const I& x) {
        const I& y = std::get<I>(b.body);
        std::apply(
            [&](const auto&... desc) { same = (sameValue(x.*desc.member, y.*desc.member) && ...); },
            I::fields());
      },
      a.body);
  return same ? ::testing::AssertionSuccess()
              : ::testing::AssertionFailure()
                    << "a field of " << info(a.body).mnemonic << " differs";
}

TEST(InstructionStream, RandomInstructionsOfEveryTypeReadBackExactly) {
  for (std::uint32_t seed = 0; seed < 10; ++seed) {
    const Program source = test_programs::randomProgram(seed, 4);
    for (const Engine engine : kAllEngines) {
      // Pack each instruction again, into a fresh stream, from an independent decoded copy.
      std::vector<Instruction> originals;
      for (std::size_t i = 0; i < source.stream(engine).size(); ++i) {
        originals.push_back(source.stream(engine)[i]);
      }
      InstructionStream stream;
      for (const Instruction& instr : originals) {
        stream.push_back(instr);
      }
      ASSERT_EQ(stream.size(), originals.size());
      std::size_t i = 0;
      for (const Instruction& instr : stream) {
        EXPECT_TRUE(sameInstruction(instr, originals[i])) << "instruction " << i;
        EXPECT_EQ(stream.engine(i), originals[i].engine);
        EXPECT_EQ(stream.typeIndex(i), originals[i].body.index());
        EXPECT_EQ(stream.info(i).mnemonic, info(originals[i].body).mnemonic);
        ++i;
      }
      EXPECT_EQ(i, originals.size());
    }
  }
}

TEST(InstructionStream, ExtremeAndInvalidValuesArePackedWithoutLoss) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  TensorTensor body;
  body.dst.memory = static_cast<Memory>(200);  // undefined: the form check's business
  body.dst.dtype = static_cast<DType>(255);
  body.dst.tensor = std::numeric_limits<std::int32_t>::min();
  body.dst.partitionStart = kMin;
  body.dst.partitionCount = kMax;
  body.dst.partitionStride = -1;
  body.dst.offset = kMin + 1;
  body.dst.numDims = 5;
  body.dst.dims = {Dim{kMax, kMin}, Dim{0, 0}, Dim{1, 1}, Dim{-7, 3}};
  body.data0.numDims = 0;
  body.data0.dims[3] = Dim{2, 2};  // beyond numDims, still kept
  body.data1.numDims = -3;
  Instruction instr{Engine::kDve, body, {}, {"", -12}};
  for (int s = 0; s < 300; ++s) {
    instr.sync.waits.push_back(
        {s, s % 2 == 0 ? WaitCompare::kEqual : WaitCompare::kGreaterEqual, s - 150});
  }
  instr.sync.updates.push_back({-1, static_cast<SemaphoreUpdateOp>(9), kMax > 0 ? -5 : 5});

  Activation nan;
  nan.scale = std::bit_cast<float>(0x7f800001U);  // a signalling NaN payload
  nan.bias = -0.0f;
  const Instruction nanInstr{
      Engine::kAct, nan, {}, {"k.cpp", std::numeric_limits<std::int32_t>::max()}};

  InstructionStream stream;
  stream.push_back(instr);
  stream.push_back(nanInstr);
  EXPECT_TRUE(sameInstruction(stream[0], instr));
  EXPECT_TRUE(sameInstruction(stream[1], nanInstr));
  EXPECT_EQ(stream.waits(0).size(), 300U);
  EXPECT_EQ(stream.updates(0)[0].value, -5);
  EXPECT_EQ(stream.locationLine(0), -12);
  EXPECT_EQ(stream.locationFile(1), "k.cpp");
}

TEST(InstructionStream, SetReplacesOneInstructionAndDecodeBodyReusesOrReplacesTheType) {
  InstructionStream stream;
  TensorCopy copy;
  copy.dst.offset = 64;
  stream.push_back({Engine::kDve, copy, {}, {"a.cpp", 1}});
  stream.push_back({Engine::kDve, Nop{}, {{{3, WaitCompare::kEqual, 2}}, {}}, {"b.cpp", 2}});
  InstructionStream copyOfStream = stream;
  EXPECT_TRUE(copyOfStream == stream);

  Memset memset;
  memset.dst.partitionCount = 7;
  const Instruction replacement{
      Engine::kDve, memset, {{}, {{4, SemaphoreUpdateOp::kSet, 9}}}, {"a.cpp", 5}};
  stream.set(0, replacement);
  EXPECT_FALSE(copyOfStream == stream);
  EXPECT_TRUE(sameInstruction(stream[0], replacement));
  EXPECT_TRUE(sameInstruction(stream[1], copyOfStream[1]));
  EXPECT_EQ(stream.waits(1)[0].semaphore, 3);
  EXPECT_TRUE(stream.waits(0).empty());

  InstructionBody body = Nop{};
  stream.decodeBody(0, body);
  ASSERT_TRUE(std::holds_alternative<Memset>(body));
  EXPECT_EQ(std::get<Memset>(body).dst.partitionCount, 7);
  std::get<Memset>(body).dst.offset = 999;  // stale state that decoding must overwrite
  stream.decodeBody(0, body);
  EXPECT_EQ(std::get<Memset>(body).dst.offset, 0);
  stream.decodeBody(1, body);
  EXPECT_TRUE(std::holds_alternative<Nop>(body));
}

TEST(InstructionStream, AKernelInstructionTakesAtMost128ResidentBytes) {
  // What the kernel compiler emits most: an elementwise op on three one-dimensional SBUF tiles
  // with one wait and one update, at a kernel source line.
  TensorTensor body;
  for (AccessPattern* ap : {&body.dst, &body.data0, &body.data1}) {
    ap->memory = Memory::kSbuf;
    ap->dtype = DType::kBf16;
    ap->partitionCount = 128;
    ap->offset = 8192;
    ap->dims[0] = {1, 512};
  }
  constexpr std::size_t kCount = 100'000;
  InstructionStream stream;
  stream.reserve(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    body.dst.offset = static_cast<std::int64_t>(i % 96) * 2048;
    stream.push_back({Engine::kDve,
                      body,
                      {{{1, WaitCompare::kGreaterEqual, static_cast<std::int32_t>(i)}},
                       {{2, SemaphoreUpdateOp::kAdd, 1}}},
                      {"src/kernels/layernorm.cpp", static_cast<std::int32_t>(40 + i % 30)}});
  }
  const double perInstruction = static_cast<double>(stream.residentBytes()) / kCount;
  EXPECT_LE(perInstruction, 128.0);
  EXPECT_GT(perInstruction, 28.0);  // at least the entry: the accounting is not empty
  RecordProperty("bytes_per_instruction", std::to_string(perInstruction));
}

}  // namespace
}  // namespace trn::isa
