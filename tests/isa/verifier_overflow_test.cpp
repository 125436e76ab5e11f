// The verifier against hostile sizes (issue 13): counts, strides, offsets and element sizes whose
// products or sums do not fit in 64 bits, and writes larger than their memory. Each used to wrap,
// pass verification and then corrupt the heap or alias rows; each must now be a located error
// naming the instruction and the operand. Expected sizes are derived by hand in the comments.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "trn/isa/program_text.h"
#include "trn/isa/verifier.h"

namespace trn::isa {
namespace {

constexpr std::int64_t k2p52 = std::int64_t{1} << 52;
constexpr std::int64_t k2p60 = std::int64_t{1} << 60;
constexpr std::int64_t k2p62 = std::int64_t{1} << 62;
constexpr std::int64_t kMax = INT64_MAX;

/// Verifies `.tensor x input fp32 [2048]`, `.tensor y output fp32 [2048]` and `line`.
Status verifyLine(const std::string& line) {
  const std::string text =
      ".tensor x input fp32 [2048]\n.tensor y output fp32 [2048]\n" + line + "\n";
  const Result<Program> program = parseProgramText(text, "overflow.tasm");
  if (!program.ok()) {
    return program.status();
  }
  return verifyProgram(*program, CoreLimits{});
}

void expectRejected(const std::string& line, std::string_view operand, std::string_view rule) {
  const Status s = verifyLine(line);
  ASSERT_FALSE(s.ok()) << "accepted: " << line;
  EXPECT_EQ(s.code(), ErrorCode::kFailedPrecondition) << s.toString();
  EXPECT_NE(s.message().find(fmt::format("operand '{}'", operand)), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(rule), std::string::npos) << s.message();
  EXPECT_EQ(s.message().rfind("sp#0 'dma_copy", 0) == 0 || s.message().rfind("act#0", 0) == 0,
            true)
      << "the error names the instruction first: " << s.message();
}

constexpr std::string_view kOverflow = "its size overflows 64-bit arithmetic";

TEST(VerifierOverflow, HbmRowStrideWhoseByteOffsetWraps) {
  // Row stride 2^62 + 2 elements x 3 rows x 4 bytes: 3 x 2^64 + 24 bytes; wrapped, it looked like
  // 24 bytes into the 8192-byte tensor (glibc heap corruption).
  expectRejected(fmt::format("sp: dma_copy dst=sbuf[0:4]:fp32[[1,4]] "
                             "src=hbm:x:fp32[[{},4],[1,4]] queue=0",
                             k2p62 + 2),
                 "src", kOverflow);
}

TEST(VerifierOverflow, HbmRowStrideThatAliasesRows) {
  // Row stride 2^62 + 1 fp32 elements = 2^64 + 4 bytes: row 1 wrapped onto element 1, so rows
  // read 0,1,2,3 then 1,2,3,4.
  expectRejected(fmt::format("sp: dma_copy dst=sbuf[0:2]:fp32[[1,4]] "
                             "src=hbm:x:fp32[[{},2],[1,4]] queue=0",
                             k2p62 + 1),
                 "src", kOverflow);
}

TEST(VerifierOverflow, DmaCountsWhoseProductWraps) {
  // 19531927 x 20821 x 4375 x 10368 = 2^64 + 49,568,384 elements; wrapped, a 49.6 M-element
  // (198 MB) transfer, after which 2^64 elements were copied.
  expectRejected("sp: dma_copy dst=hbm:y:fp32[[0,19531927],[0,20821],[0,4375],[0,10368]] "
                 "src=hbm:x:fp32[[0,19531927],[0,20821],[0,4375],[0,10368]] queue=0",
                 "dst", kOverflow);
}

TEST(VerifierOverflow, MoreRowsWrittenThanTheTensorHolds) {
  // 2^60 + 1 rows of stride 0 stay inside the tensor's bytes but write 2^60 + 1 elements into
  // 2048: a write visits each element at most once.
  expectRejected(fmt::format("sp: dma_copy dst=hbm:y:fp32[[0,{0}],[1,1]] "
                             "src=hbm:x:fp32[[0,{0}],[1,1]] queue=0",
                             k2p60 + 1),
                 "dst", "writes 1152921504606846977 fp32 elements into tensor 'y', which holds 2048");
}

TEST(VerifierOverflow, FreeSizeThatWrapsToZero) {
  // Two HBM free dimensions of 2^32: 2^64 elements, zero when wrapped (SIGSEGV in functional
  // mode, a silent success in timing-only).
  expectRejected("sp: dma_copy dst=hbm:y:fp32[[0,1],[0,4294967296],[0,4294967296]] "
                 "src=hbm:x:fp32[[0,1],[0,4294967296],[0,4294967296]] queue=0",
                 "dst", kOverflow);
}

TEST(VerifierOverflow, InnerStrideWhoseByteSpanWraps) {
  // Stride 2^52 + 1 elements x 4 bytes: the span is 2^54 + 4 bytes, within 64 bits but far
  // outside the tensor; with 2^10 + 1 elements the span passes 2^63 and wraps.
  expectRejected(fmt::format("sp: dma_copy dst=hbm:y:fp32[[0,1],[{},2]] "
                             "src=hbm:x:fp32[[0,1],[1,2]] queue=0",
                             k2p52 + 1),
                 "dst", "bytes [0, 18014398509481992) fall outside tensor 'y' of 8192 bytes");
  expectRejected(fmt::format("sp: dma_copy dst=hbm:y:fp32[[0,1],[{},1025]] "
                             "src=hbm:x:fp32[[0,1],[0,1025]] queue=0",
                             k2p52 + 1),
                 "dst", kOverflow);
}

TEST(VerifierOverflow, OffsetNearTheTopOfTheRange) {
  // PSUM byte offset 2^63 - 1 for a 1-byte dtype: offset + 1 element overflows.
  expectRejected(fmt::format("act: activation dst=psum[0:1]+{}:int8[[1,4]] "
                             "data=psum[0:1]:fp32[[1,4]] op=copy",
                             kMax),
                 "dst", kOverflow);
  // A negative stride that reaches below -2^63.
  expectRejected(fmt::format("sp: dma_copy dst=hbm:y:fp32[[0,1],[1,2]] "
                             "src=hbm:x:fp32[[{},3],[1,2]] queue=0",
                             -k2p62),
                 "src", kOverflow);
}

TEST(VerifierOverflow, OnChipOperandVisitsAtMostAPartitionOfElements) {
  // 65535 x 65535 broadcast elements per partition: 4.3e9, more than a 229376-byte SBUF
  // partition holds.
  expectRejected("sp: dma_copy dst=sbuf[0:1]:fp32[[0,65535],[0,65535]] "
                 "src=hbm:x:fp32[[0,1],[0,65535],[0,65535]] queue=0",
                 "dst", "visits 4294836225 elements per partition, more than the 229376 bytes");
}

TEST(VerifierOverflow, PartitionRangeThatOverflows) {
  const Status s = verifyLine(fmt::format("act: activation dst=sbuf[{}:{}]:fp32[[1,4]] "
                                          "data=sbuf[0:1]:fp32[[1,4]] op=copy",
                                          kMax - 1, kMax));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("outside 0..128"), std::string::npos) << s.message();
}

TEST(VerifierOverflow, LegalExtremesStillPass) {
  // The largest legal operands: every SBUF partition byte of a 128 x 57344-element fp32 tile, and
  // an HBM read of the whole tensor with a negative row stride from the last row.
  EXPECT_TRUE(verifyLine("sp: dma_copy dst=sbuf[0:128]:fp32[[1,57344]] "
                         "src=hbm:x:fp32[[0,128],[0,57344]] queue=0")
                  .ok());
  EXPECT_TRUE(verifyLine("sp: dma_copy dst=sbuf[0:16]:fp32[[1,128]] "
                         "src=hbm:x+7680:fp32[[-128,16],[1,128]] queue=0")
                  .ok());
}

}  // namespace
}  // namespace trn::isa
