// ProgramLimits: the text parser, the binary decoder and the encoder accept and reject the same
// programs, with messages naming the file, line or byte, the tensor or instruction, and the limit;
// checkTensorDecl and the verifier's tensor checks; NaN payloads and bare line numbers survive
// text; and the parser's cost grows linearly with the number of tensors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <ctime>
#include <limits>
#include <string>

#include "trn/isa/program_binary.h"
#include "trn/isa/program_text.h"
#include "trn/isa/verifier.h"

namespace trn::isa {
namespace {

constexpr std::string_view kWrapped = "4611686018427387905";  // 2^62 + 1

TensorDecl decl(std::string name, std::vector<std::int64_t> shape = {4},
                DType dtype = DType::kFp32) {
  return TensorDecl{std::move(name), TensorKind::kInput, dtype, std::move(shape)};
}

Program withTensors(std::vector<TensorDecl> tensors) {
  Program p;
  p.tensors = std::move(tensors);
  return p;
}

std::string messageOf(const Status& status) {
  EXPECT_FALSE(status.ok()) << "accepted";
  return status.message();
}
template <typename T>
std::string messageOf(const Result<T>& result) {
  EXPECT_FALSE(result.ok()) << "accepted";
  return result.ok() ? std::string() : result.status().message();
}

/// `binary` with the bytes of `from` (which occur once) replaced by `to` (as long).
std::vector<std::byte> patched(std::vector<std::byte> binary, std::string_view from,
                               std::string_view to) {
  EXPECT_EQ(from.size(), to.size());
  const auto* begin = reinterpret_cast<const char*>(binary.data());
  const std::string_view all(begin, binary.size());
  const std::size_t at = all.find(from);
  EXPECT_NE(at, std::string_view::npos) << from;
  EXPECT_EQ(all.find(from, at + 1), std::string_view::npos) << from << " occurs twice";
  std::memcpy(binary.data() + at, to.data(), to.size());
  return binary;
}

/// `binary` with the little-endian uint32 at `offset` replaced by `value`.
std::vector<std::byte> withUint32(std::vector<std::byte> binary, std::size_t offset,
                                  std::uint32_t value) {
  for (std::size_t i = 0; i < 4; ++i) {
    binary[offset + i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
  }
  return binary;
}

constexpr std::size_t kTensorCountOffset = 12;  // after the magic and the version
constexpr std::size_t kFirstNameOffset = 16;    // the first tensor's name length

TEST(ProgramLimits, TensorCountIsTheSameLimitForTextBinaryAndTheEncoder) {
  std::vector<TensorDecl> tensors;
  for (std::size_t i = 0; i < ProgramLimits::kMaxTensors; ++i) {
    tensors.push_back(decl(fmt::format("t{}", i), {1}, DType::kUint8));
  }
  Program atLimit = withTensors(tensors);
  const std::vector<std::byte> binary = encodeProgram(atLimit).value();
  EXPECT_TRUE(decodeProgram(binary, "p.tprog").ok());
  EXPECT_TRUE(parseProgramText(formatProgramText(atLimit), "p.tasm").ok());

  Program over = atLimit;
  over.tensors.push_back(decl("extra", {1}, DType::kUint8));
  EXPECT_EQ(messageOf(encodeProgram(over)),
            "cannot encode the program: 65537 tensors; a program declares at most 65536");
  // Line 1 is the formatter's comment, so tensor number 65,537 is on line 65,538.
  EXPECT_EQ(messageOf(parseProgramText(formatProgramText(over), "p.tasm")),
            "p.tasm:65538: more than 65536 tensors; a program declares at most 65536");
  EXPECT_EQ(messageOf(decodeProgram(withUint32(binary, kTensorCountOffset, 65537), "p.tprog")),
            "p.tprog: corrupt program at byte 16: 65537 tensors; a program declares at most "
            "65536");
}

TEST(ProgramLimits, NameLengthIsTheSameLimitForTextBinaryAndTheEncoder) {
  const std::string longest(ProgramLimits::kMaxTensorNameBytes, 'n');
  const std::vector<std::byte> binary = encodeProgram(withTensors({decl(longest)})).value();
  EXPECT_TRUE(decodeProgram(binary, "p.tprog").ok());
  const std::string text = formatProgramText(withTensors({decl(longest)}));
  EXPECT_TRUE(parseProgramText(text, "p.tasm").ok());

  const std::string tooLong = longest + "n";
  const std::string shown = std::string(64, 'n') + "... (257 bytes)";
  EXPECT_EQ(messageOf(encodeProgram(withTensors({decl(tooLong)}))),
            "cannot encode the program: tensor 0: tensor name '" + shown +
                "' is longer than 256 bytes");
  EXPECT_EQ(messageOf(parseProgramText(formatProgramText(withTensors({decl(tooLong)})), "p.tasm")),
            "p.tasm:2: tensor name '" + shown + "' is longer than 256 bytes");
  EXPECT_EQ(messageOf(decodeProgram(withUint32(binary, kFirstNameOffset, 257), "p.tprog")),
            "p.tprog: corrupt program at byte 20: a tensor name of 257 bytes; the limit is 256");
}

TEST(ProgramLimits, NameCharactersAreTheSameForTextBinaryAndTheEncoder) {
  const std::vector<std::byte> binary = encodeProgram(withTensors({decl("aXb")})).value();
  // A newline in a name would make disasm print an extra line.
  EXPECT_EQ(messageOf(decodeProgram(patched(binary, "aXb", "a\nb"), "p.tprog")),
            "p.tprog: corrupt program at byte 37: tensor 0: tensor name 'a\\x0ab' has '\\x0a' at "
            "byte 1; names use letters, digits, '_' and '.'");
  EXPECT_EQ(messageOf(encodeProgram(withTensors({decl("a\nb")}))),
            "cannot encode the program: tensor 0: tensor name 'a\\x0ab' has '\\x0a' at byte 1; "
            "names use letters, digits, '_' and '.'");
  // A name that no HBM operand could spell.
  EXPECT_EQ(messageOf(parseProgramText(".tensor a-b input fp32 [4]", "p.tasm")),
            "p.tasm:1: tensor name 'a-b' has '-' at byte 1; names use letters, digits, '_' and "
            "'.'");
  EXPECT_EQ(messageOf(decodeProgram(patched(binary, "aXb", "a-b"), "p.tprog")),
            "p.tprog: corrupt program at byte 37: tensor 0: tensor name 'a-b' has '-' at byte 1; "
            "names use letters, digits, '_' and '.'");
  EXPECT_EQ(messageOf(checkTensorName("")), "a tensor name is empty");
}

TEST(ProgramLimits, EveryNameCharacterCanBeUsedInAnHbmOperand) {
  // isTensorNameChar must agree with what the access-pattern syntax reads as a name.
  for (int c = 0x21; c < 0x7f; ++c) {
    const std::string name = std::string("a") + static_cast<char>(c);
    const std::string text = fmt::format(
        ".tensor {} input fp32 [4, 4]\nsp: dma_copy dst=sbuf[0:4]:fp32[[1,4]] "
        "src=hbm:{}:fp32[[4,4],[1,4]] queue=0",
        name, name);
    const bool accepted = parseProgramText(text, "c.tasm").ok();
    EXPECT_EQ(accepted, isTensorNameChar(static_cast<char>(c))) << "character " << c;
  }
}

TEST(ProgramLimits, DuplicateNamesAreRejectedWithBothDeclarations) {
  EXPECT_EQ(messageOf(parseProgramText(
                ".tensor a input fp32 [4]\n.tensor b input fp32 [4]\n.tensor a output fp32 [8]",
                "d.tasm")),
            "d.tasm:3: tensor 'a' is declared twice (first at line 1)");
  const Program twice = withTensors({decl("a"), decl("a", {8})});
  EXPECT_EQ(messageOf(encodeProgram(twice)),
            "cannot encode the program: tensors 0 and 1 are both named 'a'");
  const std::vector<std::byte> binary =
      encodeProgram(withTensors({decl("aa"), decl("zz", {8})})).value();
  EXPECT_EQ(messageOf(decodeProgram(patched(binary, "zz", "aa"), "d.tprog")),
            "d.tprog: corrupt program at byte 56: tensors 0 and 1 are both named 'aa'");
  EXPECT_EQ(messageOf(verifyProgram(twice, CoreLimits{})), "tensors 0 and 1 are both named 'a'");
}

TEST(ProgramLimits, RankIsTheSameLimitForTextBinaryAndTheEncoder) {
  const std::vector<std::int64_t> rank16(ProgramLimits::kMaxTensorRank, 1);
  const std::vector<std::byte> binary = encodeProgram(withTensors({decl("a", rank16)})).value();
  EXPECT_TRUE(decodeProgram(binary, "r.tprog").ok());
  std::vector<std::int64_t> rank17 = rank16;
  rank17.push_back(1);
  const std::string limit = "tensor 'a' has rank 17; ranks are 1 to 16";
  EXPECT_EQ(messageOf(encodeProgram(withTensors({decl("a", rank17)}))),
            "cannot encode the program: tensor 0: " + limit);
  EXPECT_EQ(messageOf(parseProgramText(formatProgramText(withTensors({decl("a", rank17)})),
                                       "r.tasm")),
            "r.tasm:2: " + limit);
  // The rank follows the name (4 + 1 bytes), the kind and the dtype.
  EXPECT_EQ(messageOf(decodeProgram(withUint32(binary, kFirstNameOffset + 7, 17), "r.tprog")),
            "r.tprog: corrupt program at byte 27: tensor rank 17; ranks are 1 to 16");
  EXPECT_EQ(messageOf(parseProgramText(".tensor a input fp32 []", "r.tasm")),
            "r.tasm:1: tensor 'a' has rank 0; ranks are 1 to 16");
}

TEST(ProgramLimits, SyncEntriesAreTheSameLimitForTextBinaryAndTheEncoder) {
  Program p;
  Instruction nop{Engine::kSp, Nop{}, {}, {}};
  for (std::int32_t s = 0; s < 64; ++s) {
    nop.sync.waits.push_back({s, WaitCompare::kGreaterEqual, 1});
  }
  p.stream(Engine::kSp).push_back(nop);
  const std::vector<std::byte> binary = encodeProgram(p, kFixedProgramFormatVersion).value();
  EXPECT_TRUE(decodeProgram(binary, "s.tprog").ok());
  const std::string limit = "65 semaphore waits and 0 updates; an instruction has at most 64 of "
                            "each";
  nop.sync.waits.push_back({64, WaitCompare::kGreaterEqual, 1});
  p.stream(Engine::kSp).set(0, nop);
  EXPECT_EQ(messageOf(encodeProgram(p)), "cannot encode the program: sp#0 (nop): " + limit);
  EXPECT_EQ(messageOf(parseProgramText(formatProgramText(p), "s.tasm")), "s.tasm:2: " + limit);
  // Five empty streams' counts (8 bytes each) precede sp's first instruction, then its opcode
  // and engine (3 bytes) and the wait count.
  const std::size_t waitCount = 16 + 4 * 8 + 8 + 3;
  EXPECT_EQ(messageOf(decodeProgram(withUint32(binary, waitCount, 65), "s.tprog")),
            "s.tprog: corrupt program at byte 63: 65 semaphore waits; an instruction has at most "
            "64");
}

TEST(ProgramLimits, InstructionCountOfTheBinaryIsBoundedBeforeAnythingIsAllocated) {
  Program p;
  p.stream(Engine::kPe).push_back(Instruction{Engine::kPe, Nop{}, {}, {}});
  std::vector<std::byte> binary = encodeProgram(p, kFixedProgramFormatVersion).value();
  const std::size_t peCount = 16;  // no tensors: the pe stream's count follows the tensor count
  EXPECT_EQ(messageOf(decodeProgram(withUint32(binary, peCount, 4194305), "n.tprog")),
            "n.tprog: corrupt program at byte 24: 4194305 more instructions in the pe stream; a "
            "program holds at most 4194304");
  EXPECT_EQ(messageOf(decodeProgram(withUint32(binary, peCount, 1000), "n.tprog")),
            "n.tprog: corrupt program at byte 24: 1000 instructions in the pe stream do not fit in "
            "the 51 bytes left");
}

TEST(ProgramLimits, LocationFilesAreOneTextToken) {
  Program p;
  p.stream(Engine::kSp).push_back(Instruction{Engine::kSp, Nop{}, {}, {"k.cpp", 7}});
  const std::vector<std::byte> binary = encodeProgram(p, kFixedProgramFormatVersion).value();
  EXPECT_EQ(messageOf(decodeProgram(patched(binary, "k.cpp", "k\ncpp"), "l.tprog")),
            "l.tprog: corrupt program at byte 80: nop: source location file 'k\\x0acpp' has "
            "'\\x0a' at byte 1; file names are printable ASCII without spaces or '#'");
  Instruction nop = p.stream(Engine::kSp)[0];
  nop.location.file = "my kernel.cpp";
  p.stream(Engine::kSp).set(0, nop);
  EXPECT_EQ(messageOf(encodeProgram(p)),
            "cannot encode the program: sp#0 (nop): source location file 'my kernel.cpp' has ' ' "
            "at byte 2; file names are printable ASCII without spaces or '#'");
  nop.location.file = std::string(4097, 'f');
  p.stream(Engine::kSp).set(0, nop);
  EXPECT_NE(messageOf(encodeProgram(p)).find("is longer than 4096 bytes"), std::string::npos);
}

TEST(ProgramLimits, OperandsOutsideTheTextSyntaxAreRejected) {
  Program p = withTensors({decl("a")});
  Memset memset;
  memset.dst.memory = Memory::kSbuf;
  memset.dst.partitionCount = 4;
  memset.dst.tensor = 0;  // an SBUF operand names no tensor
  p.stream(Engine::kDve).push_back(Instruction{Engine::kDve, memset, {}, {}});
  EXPECT_EQ(messageOf(encodeProgram(p)),
            "cannot encode the program: dve#0 (memset): field 'dst': an sbuf operand names no "
            "tensor and has no row stride, not tensor 0 and row stride 0");
  Instruction instr = p.stream(Engine::kDve)[0];
  auto& dst = std::get<Memset>(instr.body).dst;
  dst.memory = Memory::kHbm;
  dst.tensor = 1;
  p.stream(Engine::kDve).set(0, instr);
  EXPECT_EQ(messageOf(encodeProgram(p)),
            "cannot encode the program: dve#0 (memset): field 'dst': HBM tensor index 1 is not "
            "declared (the program declares 1)");
  dst.tensor = 0;
  dst.numDims = 5;
  p.stream(Engine::kDve).set(0, instr);
  EXPECT_EQ(messageOf(encodeProgram(p)),
            "cannot encode the program: dve#0 (memset): field 'dst': the access pattern has 5 "
            "dimensions; it has 1 to 4");
  instr.engine = Engine::kAct;
  p.stream(Engine::kDve).set(0, instr);
  EXPECT_EQ(messageOf(encodeProgram(p)),
            "cannot encode the program: dve#0 (memset) is issued by engine 1 but is in the dve "
            "stream");
}

TEST(ProgramLimits, AWrappingShapeIsRejectedByEveryReaderAndTheVerifier) {
  const std::string text = fmt::format(".tensor a output fp32 [{}, 4]", kWrapped);
  const std::string tooLarge =
      fmt::format("tensor 'a' [{}, 4] fp32 is too large: its size in bytes does not fit in 64 "
                  "bits (at most 9223372036854775807)",
                  kWrapped);
  EXPECT_EQ(messageOf(parseProgramText(text, "w.tasm")), "w.tasm:1: " + tooLarge);
  const Program wrapped = withTensors({decl("a", {(std::int64_t{1} << 62) + 1, 4})});
  EXPECT_EQ(messageOf(encodeProgram(wrapped)), "cannot encode the program: tensor 0: " + tooLarge);
  EXPECT_EQ(messageOf(verifyProgram(wrapped, CoreLimits{})), tooLarge);

  std::vector<std::byte> binary =
      encodeProgram(withTensors({decl("a", {std::int64_t{1} << 60, 1})})).value();
  binary[kFirstNameOffset + 4 + 1 + 2 + 4 + 7] = std::byte{0x50};  // 2^60 -> 2^62 + 2^60
  EXPECT_EQ(messageOf(decodeProgram(binary, "w.tprog")),
            "w.tprog: corrupt program at byte 43: tensor 0: tensor 'a' [5764607523034234880, 1] "
            "fp32 is too large: its size in bytes does not fit in 64 bits (at most "
            "9223372036854775807)");
}

TEST(ProgramLimits, CheckTensorDeclNamesTheExtentAndTheKind) {
  EXPECT_EQ(messageOf(checkTensorDecl(decl("x", {4, 0}))),
            "tensor 'x' has extent 0 in dimension 1; extents are >= 1");
  EXPECT_EQ(messageOf(checkTensorDecl(decl("x", {-3}))),
            "tensor 'x' has extent -3 in dimension 0; extents are >= 1");
  TensorDecl badKind = decl("x");
  badKind.kind = static_cast<TensorKind>(9);
  EXPECT_EQ(messageOf(checkTensorDecl(badKind)), "tensor 'x' has kind 9, which is not defined");
  // The largest fp32 tensor: 2^61 - 1 elements of 4 bytes, 2^63 - 4 bytes.
  const TensorDecl largest = decl("x", {(std::int64_t{1} << 61) - 1});
  EXPECT_TRUE(checkTensorDecl(largest).ok());
  EXPECT_EQ(largest.byteSize(), std::numeric_limits<std::int64_t>::max() - 3);
  EXPECT_FALSE(checkTensorDecl(decl("x", {std::int64_t{1} << 61})).ok());
}

TEST(ProgramLimits, TheVerifierSumsHbmBytesWithoutWrapping) {
  const std::int64_t quarter = std::int64_t{1} << 60;  // [2^60] fp32: 2^62 bytes each
  Program p = withTensors({decl("a", {quarter})});
  CoreLimits limits;
  limits.hbmBytes = std::numeric_limits<std::int64_t>::max();
  EXPECT_TRUE(verifyProgram(p, limits).ok());
  p.tensors.push_back(decl("b", {quarter}));
  EXPECT_EQ(messageOf(verifyProgram(p, limits)),
            "the program's HBM tensors need more than 9223372036854775807 bytes by tensor 'b', "
            "more than the device's 9223372036854775807 bytes of HBM");
}

TEST(ProgramLimits, NanPayloadsAndBareLineNumbersSurviveText) {
  Program p;
  for (const std::uint32_t bits : {0x7fc00000U, 0xffc00000U, 0x7f800001U, 0xffffffffU}) {
    Memset memset;
    memset.dst.partitionCount = 4;
    memset.value = std::bit_cast<float>(bits);
    p.stream(Engine::kDve).push_back(Instruction{Engine::kDve, memset, {}, {"", 5}});
  }
  const std::string text = formatProgramText(p);
  EXPECT_NE(text.find("value=nan loc=:5"), std::string::npos) << text;
  EXPECT_NE(text.find("value=-nan loc=:5"), std::string::npos) << text;
  EXPECT_NE(text.find("value=nan(0x7f800001) loc=:5"), std::string::npos) << text;
  EXPECT_NE(text.find("value=nan(0xffffffff) loc=:5"), std::string::npos) << text;
  const Program back = parseProgramText(text, "n.tasm").value();
  EXPECT_EQ(encodeProgram(back).value(), encodeProgram(p).value());
  EXPECT_EQ(messageOf(parseProgramText(
                "dve: memset dst=sbuf[0:4]:fp32[[1,1]] value=nan(0x3f800000)", "n.tasm")),
            "n.tasm:1: field 'value': 'nan(0x3f800000)' is not a NaN bit pattern nan(0xHHHHHHHH)");
}

/// Program text with `tensors` declarations and one DMA per 8 of them into the last one.
std::string manyTensors(std::size_t tensors) {
  std::string text;
  for (std::size_t i = 0; i < tensors; ++i) {
    text += fmt::format(".tensor t{} input fp32 [4, 4]\n", i);
  }
  for (std::size_t i = 0; i < tensors / 8; ++i) {
    text += fmt::format("sp: dma_copy dst=sbuf[0:4]:fp32[[1,4]] src=hbm:t{}:fp32[[4,4],[1,4]] "
                        "queue=0\n",
                        tensors - 1);
  }
  return text;
}

/// CPU seconds this thread has run: unlike the wall clock, it does not count the time other
/// processes of a loaded machine take the core away.
double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// The fastest of three parses of `text`, in CPU seconds.
double parseSeconds(const std::string& text) {
  double best = 1e9;
  for (int round = 0; round < 3; ++round) {
    const double start = threadCpuSeconds();
    const bool ok = parseProgramText(text, "many.tasm").ok();
    const double took = threadCpuSeconds() - start;
    EXPECT_TRUE(ok);
    best = std::min(best, took);
  }
  return best;
}

TEST(ProgramLimits, ParsingGrowsLinearlyWithTheTensorCount) {
  // 8x the tensors: a linear parser takes about 8x as long, the former quadratic one 64x (70,001
  // tensors took 29 s). Comparing the two sizes on the same machine needs no absolute threshold;
  // the bound sits halfway (in ratio) between the two, because on a loaded host the larger
  // parse's cache misses grow its CPU time beyond 24x now and then.
  const double small = parseSeconds(manyTensors(8192));
  const double large = parseSeconds(manyTensors(65536));
  EXPECT_LT(large, 32 * small) << "8192 tensors: " << small << " s, 65536: " << large << " s";

  // The 70,001 tensors: rejected at the limit, naming the line.
  EXPECT_EQ(messageOf(parseProgramText(manyTensors(70001), "many.tasm")),
            "many.tasm:65537: more than 65536 tensors; a program declares at most 65536");
}

}  // namespace
}  // namespace trn::isa
