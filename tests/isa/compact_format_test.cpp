// The compact binary program format (version 3): it holds what version 1 holds in fewer bytes,
// every program has exactly one encoding (a mutated file either is rejected or re-encodes to
// itself), and corruption is an error at its byte.
#include <gtest/gtest.h>

#include "random_program.h"
#include "trn/isa/program_binary.h"

namespace trn::isa {
namespace {

std::vector<std::byte> encodeAs(const Program& program, std::uint32_t version) {
  Result<std::vector<std::byte>> bytes = encodeProgram(program, version);
  TRN_CHECK(bytes.ok()) << bytes.status().toString();
  return std::move(*bytes);
}

std::string decodeError(const std::vector<std::byte>& bytes) {
  const Result<Program> program = decodeProgram(bytes, "c.tprog");
  return program.ok() ? std::string("decoded") : program.status().message();
}

TEST(CompactFormat, HoldsWhatTheFixedFormatHoldsInFewerBytes) {
  for (std::uint32_t seed = 0; seed < 10; ++seed) {
    const Program program = test_programs::randomProgram(seed, 3);
    const std::vector<std::byte> fixed = encodeAs(program, kFixedProgramFormatVersion);
    const std::vector<std::byte> compact = encodeAs(program, kCompactProgramFormatVersion);
    const Result<Program> fromCompact = decodeProgram(compact, "c.tprog");
    ASSERT_TRUE(fromCompact.ok()) << fromCompact.status().toString();
    EXPECT_EQ(encodeAs(*fromCompact, kFixedProgramFormatVersion), fixed);
    const Result<Program> fromFixed = decodeProgram(fixed, "f.tprog");
    ASSERT_TRUE(fromFixed.ok()) << fromFixed.status().toString();
    EXPECT_EQ(encodeAs(*fromFixed, kCompactProgramFormatVersion), compact);
    EXPECT_LT(compact.size() * 2, fixed.size()) << "seed " << seed;
  }
  EXPECT_EQ(encodeProgram(Program{}, 2).status().message(),
            "program format version 2 cannot be written (versions 1 and 3 can)");
}

TEST(CompactFormat, EveryAcceptedMutationReEncodesToItself) {
  const Program program = test_programs::randomProgram(7, 1);
  const std::vector<std::byte> good = encodeAs(program, kCompactProgramFormatVersion);
  std::size_t accepted = 0;
  for (std::size_t at = 12; at < good.size(); ++at) {
    for (const std::uint8_t flip : {0x01, 0x40, 0x80, 0xff}) {
      std::vector<std::byte> bytes = good;
      bytes[at] ^= static_cast<std::byte>(flip);
      const Result<Program> decoded = decodeProgram(bytes, "m.tprog");
      if (!decoded.ok()) {
        EXPECT_NE(decoded.status().message().find("m.tprog: corrupt program at byte "),
                  std::string::npos)
            << decoded.status().message();
        continue;
      }
      ++accepted;
      EXPECT_EQ(encodeAs(*decoded, kCompactProgramFormatVersion), bytes)
          << "byte " << at << " ^ " << int{flip} << " was accepted but is not canonical";
    }
  }
  EXPECT_GT(accepted, 0U);  // some field values are free to change
  for (std::size_t length = 0; length < good.size(); ++length) {
    const std::vector<std::byte> cut(good.begin(),
                                     good.begin() + static_cast<std::ptrdiff_t>(length));
    EXPECT_NE(decodeError(cut), "decoded") << "cut at " << length;
  }
}

TEST(CompactFormat, CorruptionIsAnErrorAtItsByte) {
  // No tensors; one nop on sp at k.cpp:7. Layout: header (12), tensor count (4), file count
  // (4), "k.cpp" (4 + 5), five stream counts (40), then the nop at byte 69: opcode 0x0600 as a
  // varint (0x80 0x0c), engine, no waits, no updates, file 0, line 7 zigzagged (14).
  Program p;
  p.stream(Engine::kSp).push_back(Instruction{Engine::kSp, Nop{}, {}, {"k.cpp", 7}});
  const std::vector<std::byte> good = encodeAs(p, kCompactProgramFormatVersion);
  ASSERT_EQ(good.size(), 69U + 7U);
  ASSERT_EQ(good[69], std::byte{0x80});
  ASSERT_EQ(good[75], std::byte{14});

  std::vector<std::byte> bytes = good;
  bytes.push_back(std::byte{0});
  EXPECT_EQ(decodeError(bytes),
            "c.tprog: corrupt program at byte 76: trailing bytes after the "
            "last instruction");
  bytes = good;
  bytes[74] = std::byte{1};
  EXPECT_EQ(decodeError(bytes),
            "c.tprog: corrupt program at byte 69: source location file 1 "
            "where 0 is the next new one (of 1)");
  bytes = good;
  bytes[75] = std::byte{0x8e};
  bytes.push_back(std::byte{0});
  EXPECT_EQ(decodeError(bytes),
            "c.tprog: corrupt program at byte 77: a varint with a redundant "
            "last byte");
  bytes = good;
  bytes[71] = std::byte{0};  // pe's number, in the sp stream
  EXPECT_EQ(decodeError(bytes),
            "c.tprog: corrupt program at byte 69: an instruction of engine 0 "
            "in the sp stream");
  bytes = good;
  bytes[70] = std::byte{0x7f};
  EXPECT_EQ(decodeError(bytes), "c.tprog: corrupt program at byte 69: unknown opcode 0x3f80");
  bytes = good;
  bytes[72] = std::byte{65};
  EXPECT_EQ(decodeError(bytes),
            "c.tprog: corrupt program at byte 69: 65 semaphore entries; an "
            "instruction has at most 64 waits and 64 updates");
  bytes = good;
  bytes.pop_back();
  EXPECT_EQ(decodeError(bytes),
            "c.tprog: corrupt program at byte 75: the data ends inside an "
            "instruction");
  bytes = good;
  bytes[24] = std::byte{'k' | 0x80};  // a file name is checked once, where the table lists it
  EXPECT_EQ(decodeError(bytes),
            "c.tprog: corrupt program at byte 20: source location file '\\xeb.cpp' has "
            "'\\xeb' at byte 0; file names are printable ASCII without spaces or '#'");
}

TEST(CompactFormat, KeepsNoDimensionPastAPatternsDimensions) {
  // A pattern of one dimension whose second entry is stale: no form of a program keeps it (the
  // fixed format and the text write numDims entries), so the compact one does not either, and
  // its decoder refuses an encoding that stores it (fuzz regression
  // compact_dims_stored_past_num_dims.tprog).
  Memset memset;
  memset.dst.partitionCount = 128;
  memset.dst.dims[0] = {1, 64};
  memset.dst.dims[1] = {64, 2};
  memset.dst.numDims = 1;
  Program stale;
  stale.stream(Engine::kDve).push_back(Instruction{Engine::kDve, memset, {}, {"k.cpp", 1}});
  memset.dst.dims[1] = Dim{};
  Program clean;
  clean.stream(Engine::kDve).push_back(Instruction{Engine::kDve, memset, {}, {"k.cpp", 1}});
  const std::vector<std::byte> compact = encodeAs(clean, kCompactProgramFormatVersion);
  EXPECT_EQ(encodeAs(stale, kCompactProgramFormatVersion), compact);
  EXPECT_EQ(encodeAs(stale, kFixedProgramFormatVersion),
            encodeAs(clean, kFixedProgramFormatVersion));
  const Result<Program> decoded = decodeProgram(compact, "c.tprog");
  ASSERT_TRUE(decoded.ok()) << decoded.status().toString();
  const Instruction read = decoded->stream(Engine::kDve)[0];  // a value, not a reference into one
  EXPECT_EQ(std::get<Memset>(read.body).dst.dims[1], Dim{});
}

TEST(CompactFormat, TheFileTableListsEachNameOnceInFirstUseOrder) {
  Program p;
  p.stream(Engine::kSp).push_back(Instruction{Engine::kSp, Nop{}, {}, {"b.cpp", 1}});
  p.stream(Engine::kSp).push_back(Instruction{Engine::kSp, Nop{}, {}, {"a.cpp", 2}});
  p.stream(Engine::kSp).push_back(Instruction{Engine::kSp, Nop{}, {}, {"b.cpp", 3}});
  const std::vector<std::byte> good = encodeAs(p, kCompactProgramFormatVersion);
  // The table: count 2, "b.cpp", "a.cpp".
  std::vector<std::byte> bytes = good;
  bytes[24] = std::byte{'a'};  // "a.cpp" twice
  EXPECT_EQ(decodeError(bytes),
            "c.tprog: corrupt program at byte 38: source location files 0 "
            "and 1 are the same");
  EXPECT_EQ(decodeProgram(good, "c.tprog").value().stream(Engine::kSp).locationFile(2), "b.cpp");
}

}  // namespace
}  // namespace trn::isa
