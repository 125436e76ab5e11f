// Text <-> binary round trips for every instruction type, with randomly generated field values,
// and robustness of the decoder and parser against corrupted input.
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "random_program.h"
#include "trn/isa/index_pattern.h"
#include "trn/isa/program_binary.h"
#include "trn/isa/program_text.h"

namespace trn::isa {
namespace {

using test_programs::randomProgram;

TEST(ProgramFormat, EveryInstructionRoundTripsThroughTextAndBinary) {
  std::size_t types = 0;
  forEachInstructionType([&]<typename I>() { ++types; });
  for (std::uint32_t seed = 0; seed < 20; ++seed) {
    const Program program = randomProgram(seed, 5);
    ASSERT_EQ(program.instructionCount(), types * 5);
    const std::vector<std::byte> binary = encodeProgram(program).value();
    const std::string text = formatProgramText(program);

    const Result<Program> fromText = parseProgramText(text, "roundtrip.tasm");
    ASSERT_TRUE(fromText.ok()) << fromText.status().toString() << "\n" << text;
    EXPECT_EQ(formatProgramText(*fromText), text);
    EXPECT_EQ(encodeProgram(*fromText).value(), binary) << "text lost information";

    const Result<Program> fromBinary = decodeProgram(binary, "roundtrip.tprog");
    ASSERT_TRUE(fromBinary.ok()) << fromBinary.status().toString();
    EXPECT_EQ(encodeProgram(*fromBinary).value(), binary);
    EXPECT_EQ(formatProgramText(*fromBinary), text);
  }
}

TEST(ProgramFormat, ParserNamesTheLineAndTheProblem) {
  struct Case {
    std::string_view text;
    std::string_view expected;
  };
  const Case cases[] = {
      {"pe: nc_matmul bogus=1", "t.tasm:1: nc_matmul has no field 'bogus'; its fields are: dst, "
                                "stationary, moving, is_transpose, accumulate, tile_position, "
                                "tile_size, perf_mode"},
      {"\n\nxx: nop", "t.tasm:3: unknown engine 'xx'"},
      {"pe nop", "t.tasm:1: expected 'ENGINE: mnemonic ...'"},
      {"sp: frobnicate", "t.tasm:1: unknown instruction 'frobnicate'"},
      {"sp: nop wait(s1>>2)", "bad semaphore wait 'wait(s1>>2)'"},
      {"sp: nop signal(x1+=1)", "bad semaphore update"},
      {"sp: dma_copy dst=sbuf[0:128]:bf16[[1,4]] src=hbm:nope:bf16[[4,128],[1,4]]",
       "tensor 'nope' is not declared"},
      {"dve: memset dst=sbuf[4:2]:fp32[[1,4]]", "empty or negative partition range [4:2]"},
      {"dve: memset dst=sbuf[0:2]:fp33[[1,4]]", "unknown"},
      {"dve: memset dst=sbuf[0:2]:fp32[[1,0]]", "dimension count 0 is not positive"},
      {"dve: memset dst=sbuf[0:2]:fp32[[1,1],[1,1],[1,1],[1,1],[1,1]]", "5 free dimensions"},
      {"dve: memset dst=sbuf[0:2]:fp32[[1,4]] value=abc", "field 'value': 'abc' is not a number"},
      {"dve: tensor_tensor op=plus", "'plus' is not a alu_op; expected one of add, subtract"},
      {".tensor a input fp32 [0, 4]",
       "t.tasm:1: tensor 'a' has extent 0 in dimension 0; extents are >= 1"},
      {".tensor a input fp32 [4]\n.tensor a input fp32 [4]", "t.tasm:2: tensor 'a' is declared twice"},
      {"sp: nop loc=nowhere", "bad source location 'nowhere'"},
  };
  for (const Case& c : cases) {
    const Result<Program> r = parseProgramText(c.text, "t.tasm");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos)
        << "input: " << c.text << "\nmessage: " << r.status().message();
  }
}

TEST(ProgramFormat, DecoderRejectsCorruptHeaders) {
  std::vector<std::byte> binary = encodeProgram(randomProgram(1, 1)).value();
  EXPECT_NE(decodeProgram(std::span(binary).subspan(0, 4), "x").status().message().find("bad magic"),
            std::string::npos);
  std::vector<std::byte> badVersion = binary;
  badVersion[8] = std::byte{9};
  EXPECT_NE(decodeProgram(badVersion, "x").status().message().find("version 9 is not supported"),
            std::string::npos);
  binary.push_back(std::byte{0});
  EXPECT_NE(decodeProgram(binary, "x").status().message().find("trailing bytes"),
            std::string::npos);
}

// Random corruption of valid binaries and texts: every outcome is a program or a clear error;
// nothing crashes, hangs or reads out of bounds (the asan preset runs this under ASan/UBSan).
TEST(ProgramFormat, SurvivesCorruptedBinariesAndMangledText) {
  std::mt19937 rng(99);
  const Program program = randomProgram(3, 2);
  const std::vector<std::byte> binary = encodeProgram(program).value();
  const std::string text = formatProgramText(program);
  int rejectedBinaries = 0;
  int rejectedTexts = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::vector<std::byte> corrupt = binary;
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      corrupt[rng() % corrupt.size()] = static_cast<std::byte>(rng());
    }
    if (rng() % 4 == 0) {
      corrupt.resize(rng() % corrupt.size());
    }
    const Result<Program> decoded = decodeProgram(corrupt, "fuzz.tprog");
    if (!decoded.ok()) {
      ++rejectedBinaries;
      EXPECT_NE(decoded.status().message().find("fuzz.tprog"), std::string::npos);
    }

    std::string mangled = text;
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % mangled.size();
      switch (rng() % 3) {
        case 0: mangled[at] = static_cast<char>(rng() % 128); break;
        case 1: mangled.erase(at, 1 + rng() % 5); break;
        default: mangled.insert(at, 1, "[]:,=+-()#0123456789"[rng() % 20]); break;
      }
    }
    const Result<Program> parsed = parseProgramText(mangled, "fuzz.tasm");
    if (!parsed.ok()) {
      ++rejectedTexts;
      EXPECT_NE(parsed.status().message().find("fuzz.tasm:"), std::string::npos)
          << parsed.status().message();
    }
  }
  EXPECT_GT(rejectedBinaries, 1500);
  EXPECT_GT(rejectedTexts, 1000);
}

}  // namespace
}  // namespace trn::isa
