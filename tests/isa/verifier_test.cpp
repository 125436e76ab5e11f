// One test per generic verifier rule: each malformed instruction is rejected with a message that
// names the instruction (engine, index, text), the operand, the rule and the offending values.
#include "trn/isa/verifier.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "trn/isa/program_text.h"

namespace trn::isa {
namespace {

/// Verifies a program made of `.tensor a input fp32 [128, 1024]` plus `line`.
Status verifyLine(std::string_view line, const CoreLimits& limits = {}) {
  const std::string text = fmt::format(".tensor a input fp32 [128, 1024]\n{}\n", line);
  const Result<Program> program = parseProgramText(text, "v.tasm");
  TRN_CHECK(program.ok()) << program.status().toString();
  return verifyProgram(*program, limits);
}

void expectRejected(std::string_view line, std::initializer_list<std::string_view> fragments) {
  const Status s = verifyLine(line);
  ASSERT_FALSE(s.ok()) << "accepted: " << line;
  EXPECT_EQ(s.code(), ErrorCode::kFailedPrecondition);
  for (const std::string_view f : fragments) {
    EXPECT_NE(s.message().find(f), std::string::npos) << "missing '" << f << "' in: " << s.message();
  }
}

TEST(Verifier, AcceptsALegalProgram) {
  EXPECT_TRUE(verifyLine("dve: tensor_tensor dst=sbuf[0:128]:fp32[[1,512]] "
                         "data0=sbuf[0:128]+2048:bf16[[1,512]] data1=psum[0:128]:fp32[[1,512]] op=add")
                  .ok());
}

TEST(Verifier, InstructionOnAnEngineThatCannotIssueIt) {
  expectRejected("act: nc_matmul dst=psum[0:128]:fp32[[1,128]] stationary=sbuf[0:128]:bf16[[1,128]] "
                 "moving=sbuf[0:128]:bf16[[1,128]]",
                 {"act#0 'nc_matmul", "cannot be issued by the act engine (allowed: pe)"});
}

TEST(Verifier, ComputeEnginesCannotTouchHbm) {
  expectRejected("dve: memset dst=hbm:a:fp32[[1024,128],[1,16]]",
                 {"operand 'dst'", "the dve engine cannot access HBM; move data with dma_copy"});
}

TEST(Verifier, TensorEngineReadsSbufAndWritesPsumOnly) {
  expectRejected("pe: nc_matmul dst=sbuf[0:128]:fp32[[1,128]] stationary=sbuf[0:128]:bf16[[1,128]] "
                 "moving=sbuf[0:128]:bf16[[1,128]]",
                 {"operand 'dst'", "writes only PSUM"});
  expectRejected("pe: nc_matmul dst=psum[0:128]:fp32[[1,128]] stationary=psum[0:128]:bf16[[1,128]] "
                 "moving=sbuf[0:128]:bf16[[1,128]]",
                 {"operand 'stationary'", "reads only SBUF"});
}

TEST(Verifier, GpSimdNeverTouchesPsum) {
  expectRejected("pool: memset dst=psum[0:32]:fp32[[1,16]]",
                 {"operand 'dst'", "GpSimd engine cannot access PSUM"});
}

TEST(Verifier, DmaCannotReachPsum) {
  expectRejected("sp: dma_copy dst=psum[0:128]:fp32[[1,16]] src=hbm:a:fp32[[1024,128],[1,16]]",
                 {"operand 'dst'", "DMA transfers reach HBM and SBUF, not PSUM"});
}

TEST(Verifier, PartitionRangeWithinTheMemory) {
  expectRejected("dve: memset dst=sbuf[96:160]:fp32[[1,16]]",
                 {"partitions [96:160] are outside 0..128"});
}

TEST(Verifier, StartPartitionRules) {
  expectRejected("dve: memset dst=sbuf[32:128]:fp32[[1,16]]",
                 {"96 partitions (> 64) must start at partition 0, not 32"});
  expectRejected("dve: memset dst=sbuf[32:96]:fp32[[1,16]]",
                 {"64 partitions (33..64) must start at partition 0 or 64, not 32"});
  expectRejected("dve: memset dst=sbuf[16:48]:fp32[[1,16]]",
                 {"32 partitions (<= 32) must start at partition 0, 32, 64 or 96, not 16"});
  EXPECT_TRUE(verifyLine("dve: memset dst=sbuf[64:128]:fp32[[1,16]]").ok());
  EXPECT_TRUE(verifyLine("dve: memset dst=sbuf[96:97]:fp32[[1,16]]").ok());
  // DMA is not bound by the compute-engine start rules.
  EXPECT_TRUE(verifyLine("sp: dma_copy dst=sbuf[5:7]:fp32[[1,16]] src=hbm:a:fp32[[1024,2],[1,16]]")
                  .ok());
}

TEST(Verifier, FreeDimensionCountAndStrideEncoding) {
  expectRejected("dve: memset dst=sbuf[0:1]:fp32[[1,65536]]",
                 {"free dimension 0 has count 65536; counts are 1..65535"});
  expectRejected("dve: memset dst=sbuf[0:1]:fp32[[40000,2],[1,4]]",
                 {"free dimension 0 has stride 40000; on-chip strides are -32768..32767"});
}

TEST(Verifier, OffsetsAreAlignedToTheElement) {
  expectRejected("dve: memset dst=sbuf[0:1]+2:fp32[[1,4]]",
                 {"byte offset 2 is not a multiple of the 4-byte fp32 element"});
}

TEST(Verifier, EveryAccessStaysInsideItsMemory) {
  expectRejected("dve: memset dst=sbuf[0:1]+229368:fp32[[1,4]]",
                 {"bytes [229368, 229384) of each partition fall outside sbuf's 229376 bytes"});
  expectRejected("dve: memset dst=sbuf[0:1]+16:fp32[[-1,8]]",
                 {"bytes [-12, 20) of each partition fall outside sbuf"});
  expectRejected("dve: memset dst=psum[0:1]+16384:fp32[[1,1]]",
                 {"fall outside psum's 16384 bytes per partition"});
  expectRejected("sp: dma_copy dst=sbuf[0:1]:fp32[[1,16]] src=hbm:a+524228:fp32[[1,1],[1,16]]",
                 {"bytes [524228, 524292) fall outside tensor 'a'"});
}

TEST(Verifier, TrainiumOneGeometryComesFromTheLimits) {
  CoreLimits trn1;
  trn1.sbufPartitionBytes = 192 * 1024;
  EXPECT_TRUE(verifyLine("dve: memset dst=sbuf[0:1]+200000:fp32[[1,4]]").ok());
  EXPECT_FALSE(verifyLine("dve: memset dst=sbuf[0:1]+200000:fp32[[1,4]]", trn1).ok());
}

TEST(Verifier, TensorsMustFitInHbm) {
  CoreLimits tiny;
  tiny.hbmBytes = 1 << 18;
  EXPECT_TRUE(verifyLine("sp: nop").ok());
  const Status s = verifyLine("sp: nop", tiny);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("need 524288 bytes"), std::string::npos) << s.message();
  const Result<Program> big = parseProgramText(
      ".tensor a input fp32 [128, 1024]\n.tensor b output fp32 [256, 1024]\n", "v.tasm");
  CoreLimits small;
  small.hbmBytes = 1 << 20;
  const Status s2 = verifyProgram(*big, small);
  ASSERT_FALSE(s2.ok());
  EXPECT_NE(s2.message().find("need 1572864 bytes by tensor 'b', more than the device's 1048576 "
                              "bytes of HBM"),
            std::string::npos)
      << s2.message();
}

TEST(Verifier, SemaphoresMustExist) {
  expectRejected("sp: nop wait(s256>=1)", {"semaphore s256 does not exist (0..255)"});
  expectRejected("sp: nop signal(s300+=1)", {"semaphore s300 does not exist"});
}

TEST(Verifier, ComputeTileFreeSizeLimits) {
  expectRejected("dve: memset dst=psum[0:1]:bf16[[1,4097]]",
                 {"free size 4097 exceeds 4096 (Vector/Scalar free size from PSUM)"});
}

TEST(Verifier, RegistersAndBranchTargets) {
  expectRejected("sp: reg_set reg=64 value=1", {"register r64 does not exist (0..63)"});
  expectRejected("sp: reg_set reg=0 value=4294967296", {"does not fit a 32-bit register"});
  expectRejected("sp: branch_nz reg=0 target=3", {"branch target 3 is outside this stream (0..0)"});
}

TEST(Verifier, ErrorsCarryTheSourceLocationWhenKnown) {
  const Status s = verifyLine("dve: memset dst=sbuf[16:48]:fp32[[1,16]] loc=kernels/rmsnorm.cpp:42");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("kernels/rmsnorm.cpp:42: dve#0 'memset dst=sbuf[16:48]", 0), 0U)
      << s.message();
}

}  // namespace
}  // namespace trn::isa
