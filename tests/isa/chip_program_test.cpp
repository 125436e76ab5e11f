// The multi-core form of TRNPROG (version 2): round trips, the single-program form for one core,
// and a clear error with the byte offset for every kind of corruption.
#include "trn/isa/chip_program.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "trn/isa/program_binary.h"
#include "trn/isa/program_text.h"

namespace trn::isa {
namespace {

Program parse(const std::string& text) {
  Result<Program> p = parseProgramText(text, "chip.tasm");
  TRN_CHECK(p.ok()) << p.status().toString();
  return std::move(*p);
}

ChipProgram pair() {
  ChipProgram chip;
  chip.lnc = 2;
  chip.cores.push_back({0, parse(".tensor x input fp32 [4, 4]\npool: core_barrier\n")});
  chip.cores.push_back({1, parse(".tensor x input fp32 [4, 4]\nact: nop\npool: core_barrier\n")});
  return chip;
}

std::vector<std::byte> encode(const ChipProgram& chip) {
  Result<std::vector<std::byte>> bytes = encodeChipProgram(chip);
  TRN_CHECK(bytes.ok()) << bytes.status().toString();
  return std::move(*bytes);
}

std::string decodeError(const std::vector<std::byte>& bytes) {
  Result<ChipProgram> chip = decodeChipProgram(bytes, "c.tprog");
  return chip.ok() ? std::string("decoded") : chip.status().message();
}

void putU32(std::vector<std::byte>& bytes, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) {
    bytes[at + static_cast<std::size_t>(i)] = static_cast<std::byte>(value >> (8 * i));
  }
}

TEST(ChipProgramFormat, APairRoundTripsWithItsCoresAndLnc) {
  const ChipProgram chip = pair();
  const std::vector<std::byte> bytes = encode(chip);
  std::uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, kChipProgramFormatVersion);
  Result<ChipProgram> back = decodeChipProgram(bytes, "c.tprog");
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_EQ(back->lnc, 2);
  ASSERT_EQ(back->cores.size(), 2u);
  for (std::size_t c = 0; c < 2; ++c) {
    EXPECT_EQ(back->cores[c].physicalCore, chip.cores[c].physicalCore);
    EXPECT_EQ(formatProgramText(back->cores[c].program), formatProgramText(chip.cores[c].program));
  }
  EXPECT_EQ(encode(*back), bytes);
}

TEST(ChipProgramFormat, OneCoreIsTheSingleProgramForm) {
  ChipProgram one;
  one.cores.push_back({0, parse(".tensor x input fp32 [4, 4]\nact: nop\n")});
  const std::vector<std::byte> bytes = encode(one);
  Result<std::vector<std::byte>> single = encodeProgram(one.cores[0].program);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(bytes, *single);  // version 1: every reader of single programs reads it
  Result<ChipProgram> back = decodeChipProgram(bytes, "c.tprog");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->lnc, 1);
  ASSERT_EQ(back->cores.size(), 1u);
  EXPECT_EQ(back->cores[0].physicalCore, 0);
  // One core elsewhere than core 0 needs the chip form.
  one.cores[0].physicalCore = 3;
  Result<ChipProgram> moved = decodeChipProgram(encode(one), "c.tprog");
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->cores[0].physicalCore, 3);
}

TEST(ChipProgramFormat, EncodingRefusesWhatDecodingWouldReject) {
  ChipProgram chip = pair();
  chip.cores[1].physicalCore = 0;
  EXPECT_FALSE(encodeChipProgram(chip).ok());
  chip = pair();
  chip.lnc = 9;
  EXPECT_FALSE(encodeChipProgram(chip).ok());
  EXPECT_FALSE(encodeChipProgram(ChipProgram{}).ok());
}

TEST(ChipProgramFormat, CorruptionIsALocatedError) {
  ChipProgram fixed = pair();
  fixed.programVersion = kFixedProgramFormatVersion;  // the offsets below are version 1's
  const std::vector<std::byte> good = encode(fixed);
  // Header: magic (8), version (4), lnc (4), count (4); each core: index (4), length (8), bytes.
  std::vector<std::byte> bytes = good;
  putU32(bytes, 12, 0);
  EXPECT_NE(decodeError(bytes).find("corrupt program at byte 16: LNC 0"), std::string::npos)
      << decodeError(bytes);
  bytes = good;
  putU32(bytes, 16, 65);
  EXPECT_NE(decodeError(bytes).find("65 cores; a chip program has 1 to 64"), std::string::npos);
  bytes = good;
  putU32(bytes, 20, 64);
  EXPECT_NE(decodeError(bytes).find("physical core 64; cores are 0 to 63"), std::string::npos);
  bytes = good;
  putU32(bytes, 24, 0xffffffffu);  // low word of core 0's length
  EXPECT_NE(decodeError(bytes).find("claims"), std::string::npos) << decodeError(bytes);
  // Core 1 claims core 0's index.
  std::uint64_t length = 0;
  std::memcpy(&length, good.data() + 24, 8);
  bytes = good;
  putU32(bytes, 32 + static_cast<std::size_t>(length), 0);
  EXPECT_NE(decodeError(bytes).find("physical core 0 has two programs"), std::string::npos)
      << decodeError(bytes);
  bytes = good;
  bytes.push_back(std::byte{0});
  EXPECT_NE(decodeError(bytes).find("1 bytes after the last core's program"), std::string::npos);
  bytes = good;
  bytes.resize(bytes.size() - 3);
  EXPECT_NE(decodeError(bytes).find("corrupt program"), std::string::npos) << decodeError(bytes);
  bytes = good;
  bytes[40] = std::byte{0x7f};  // inside core 0's embedded program: its own error, named
  EXPECT_NE(decodeError(bytes).find("c.tprog (core 0 at byte 32)"), std::string::npos)
      << decodeError(bytes);
  bytes = good;
  putU32(bytes, 8, 4);
  EXPECT_NE(decodeError(bytes).find("version 4 is not supported (this trnsim reads versions 1, "
                                    "2 and 3)"),
            std::string::npos)
      << decodeError(bytes);
}

TEST(ChipProgramFormat, TheCoresShareOneProgramVersionAndKeepIt) {
  ChipProgram chip = pair();
  chip.programVersion = kFixedProgramFormatVersion;
  const std::vector<std::byte> fixed = encode(chip);
  const Result<ChipProgram> back = decodeChipProgram(fixed, "f.tprog");
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_EQ(back->programVersion, kFixedProgramFormatVersion);
  EXPECT_EQ(encode(*back), fixed);
  const std::vector<std::byte> compact = encode(pair());
  EXPECT_LT(compact.size(), fixed.size());
  // Core 1's program in version 3 after core 0's in version 1.
  std::vector<std::byte> mixed(fixed.begin(), fixed.begin() + 20);
  chip.programVersion = kCompactProgramFormatVersion;
  const std::vector<std::byte> allCompact = encode(chip);
  std::uint64_t length0 = 0;
  std::memcpy(&length0, fixed.data() + 24, 8);
  mixed.insert(mixed.end(), fixed.begin() + 20,
               fixed.begin() + 32 + static_cast<std::ptrdiff_t>(length0));
  std::uint64_t compactLength0 = 0;
  std::memcpy(&compactLength0, allCompact.data() + 24, 8);
  mixed.insert(mixed.end(), allCompact.begin() + 32 + static_cast<std::ptrdiff_t>(compactLength0),
               allCompact.end());
  EXPECT_NE(decodeError(mixed).find("is format version 3, an earlier core's 1; a chip program uses "
                                    "one"),
            std::string::npos)
      << decodeError(mixed);
}

// A file is read core by core (BoundedFile) rather than whole: every prefix of a chip program
// (each truncation the reader meets on the way) and the whole one decode alike from memory and
// from the file, with the same error at the same byte.
TEST(ChipProgramFormat, AFileDecodesAsItsBytesDo) {
  const std::vector<std::byte> good = encode(pair());
  trn::testing::ScratchDir scratch;
  for (std::size_t length = 0; length <= good.size(); ++length) {
    const std::vector<std::byte> bytes(good.begin(),
                                       good.begin() + static_cast<std::ptrdiff_t>(length));
    const std::string path =
        scratch.write("c.tprog", std::string(reinterpret_cast<const char*>(bytes.data()), length));
    Result<std::unique_ptr<BoundedFile>> file = BoundedFile::open(path, 1 << 20, "program");
    ASSERT_TRUE(file.ok()) << file.status().toString();
    const Result<ChipProgram> fromFile = decodeChipProgram(**file, "c.tprog");
    const Result<ChipProgram> fromMemory = decodeChipProgram(bytes, "c.tprog");
    ASSERT_EQ(fromFile.ok(), fromMemory.ok()) << length;
    if (fromFile.ok()) {
      EXPECT_EQ(length, good.size());
      EXPECT_EQ(encode(*fromFile), good);
    } else {
      EXPECT_EQ(fromFile.status().message(), fromMemory.status().message()) << length;
    }
  }
}

}  // namespace
}  // namespace trn::isa
