#include "trn/core/neuron_core.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "trn/isa/program_text.h"

namespace trn::core {
namespace {

isa::Program parse(std::string_view text) {
  Result<isa::Program> p = isa::parseProgramText(text, "test.tasm");
  TRN_CHECK(p.ok()) << p.status().toString();
  return std::move(p).value();
}

template <typename T>
std::span<const std::byte> bytesOf(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}

std::vector<float> floatsOf(std::span<const std::byte> bytes) {
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

constexpr std::string_view kMatmulRelu = R"(
.tensor a input fp32 [128, 64]
.tensor b input fp32 [128, 512]
.tensor c output fp32 [64, 512]
sp:  dma_copy dst=sbuf[0:128]:fp32[[1,64]] src=hbm:a:fp32[[64,128],[1,64]] queue=0 signal(s0+=1)
sp:  dma_copy dst=sbuf[0:128]+256:fp32[[1,512]] src=hbm:b:fp32[[512,128],[1,512]] queue=1 signal(s0+=1)
pe:  nc_matmul dst=psum[0:64]:fp32[[1,512]] stationary=sbuf[0:128]:fp32[[1,64]] moving=sbuf[0:128]+256:fp32[[1,512]] wait(s0>=2) signal(s1+=1)
act: activation dst=sbuf[0:64]+4096:fp32[[1,512]] data=psum[0:64]:fp32[[1,512]] op=relu scale=2 bias=-0.5 wait(s1>=1) signal(s2+=1)
sp:  dma_copy dst=hbm:c:fp32[[512,64],[1,512]] src=sbuf[0:64]+4096:fp32[[1,512]] queue=0 wait(s2>=1)
)";

TEST(NeuronCore, MatmulThenActivationMatchesFloat64Reference) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(128 * 64);
  std::vector<float> b(128 * 512);
  for (float& x : a) {
    x = dist(rng);
  }
  for (float& x : b) {
    x = dist(rng);
  }
  auto core = NeuronCore::create(parse(kMatmulRelu), {});
  ASSERT_TRUE(core.ok()) << core.status().toString();
  ASSERT_TRUE((*core)->setTensor("a", bytesOf(a)).ok());
  ASSERT_TRUE((*core)->setTensor("b", bytesOf(b)).ok());
  const Result<RunStats> stats = (*core)->run();
  ASSERT_TRUE(stats.ok()) << stats.status().toString();
  EXPECT_EQ(stats->instructions, 5U);
  const std::vector<float> c = floatsOf((*core)->tensorBytes("c").value());
  for (int m = 0; m < 64; ++m) {
    for (int n = 0; n < 512; ++n) {
      double sum = 0;
      double magnitude = 0;
      for (int k = 0; k < 128; ++k) {
        const double p = double{a[k * 64 + m]} * b[k * 512 + n];
        sum += p;
        magnitude += std::fabs(p);
      }
      const double expected = std::max(0.0, 2 * sum - 0.5);
      const double bound = 2 * 128 * 0x1p-24 * magnitude + 1e-6;
      ASSERT_NEAR(c[m * 512 + n], expected, bound) << m << "," << n;
    }
  }
}

TEST(NeuronCore, ResultsAreBitIdenticalAcrossRuns) {
  std::vector<float> a(128 * 64, 0.3f);
  std::vector<float> b(128 * 512, -0.7f);
  std::vector<float> first;
  for (int run = 0; run < 2; ++run) {
    auto core = NeuronCore::create(parse(kMatmulRelu), {});
    ASSERT_TRUE((*core)->setTensor("a", bytesOf(a)).ok());
    ASSERT_TRUE((*core)->setTensor("b", bytesOf(b)).ok());
    ASSERT_TRUE((*core)->run().ok());
    const std::vector<float> c = floatsOf((*core)->tensorBytes("c").value());
    if (run == 0) {
      first = c;
    } else {
      EXPECT_EQ(std::memcmp(first.data(), c.data(), c.size() * 4), 0);
    }
  }
}

TEST(NeuronCore, DeadlockListsEveryPendingWait) {
  auto core = NeuronCore::create(parse(R"(
pe:  nop wait(s1>=1) signal(s2+=1) loc=attention.py:41
act: nop wait(s2>=1) wait(s0==0) signal(s1+=1)
dve: nop signal(s3+=1)
)"),
                                 {});
  ASSERT_TRUE(core.ok()) << core.status().toString();
  const Result<RunStats> r = (*core)->run();
  ASSERT_FALSE(r.ok());
  const std::string message = r.status().message();
  EXPECT_NE(message.find("deadlock"), std::string::npos) << message;
  // Each blocked instruction by its text and source line, with every wait and the value it saw.
  EXPECT_NE(message.find("pe#0 'nop wait(s1>=1) signal(s2+=1)' at attention.py:41 waits for "
                         "s1 >= 1 (s1 = 0)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("act#0 'nop wait(s2>=1) wait(s0==0) signal(s1+=1)' waits for s2 >= 1 "
                         "(s2 = 0) and s0 == 0 (s0 = 0)"),
            std::string::npos)
      << message;
}

TEST(NeuronCore, PoisonModeReportsReadsOfNeverWrittenMemory) {
  const std::string_view text = R"(
.tensor c output fp32 [1, 4]
dve: tensor_copy dst=sbuf[0:1]+64:fp32[[1,4]] src=sbuf[0:1]+16:fp32[[1,4]] signal(s0+=1)
sp:  dma_copy dst=hbm:c:fp32[[4,1],[1,4]] src=sbuf[0:1]+64:fp32[[1,4]] wait(s0>=1)
)";
  CoreOptions poison;
  poison.poison = true;
  auto core = NeuronCore::create(parse(text), poison);
  const Result<RunStats> r = (*core)->run();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("poison: reads never-written memory at sbuf partition 0 "
                                      "byte 16"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("dve#0"), std::string::npos);
  auto lenient = NeuronCore::create(parse(text), {});
  EXPECT_TRUE((*lenient)->run().ok());
}

TEST(NeuronCore, DynamicLoopRunsItsBodyRegisterTimes) {
  // r0 = 5; loop: s0 += 1; r0 -= 1; branch back while r0 != 0. Then POOL waits for s0 == 5.
  auto core = NeuronCore::create(parse(R"(
sp:   reg_set reg=0 value=5
sp:   nop signal(s0+=1)
sp:   reg_add reg=0 value=-1
sp:   branch_nz reg=0 target=1
pool: nop wait(s0==5) signal(s1+=1)
)"),
                                 {});
  ASSERT_TRUE(core.ok()) << core.status().toString();
  const Result<RunStats> r = (*core)->run();
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->engines[static_cast<int>(isa::Engine::kSp)].instructions, 1U + 5 * 3);
  EXPECT_EQ(r->engines[static_cast<int>(isa::Engine::kPool)].instructions, 1U);
}

TEST(NeuronCore, EndlessLoopHitsTheInstructionLimit) {
  CoreOptions options;
  options.maxInstructions = 1000;
  auto core = NeuronCore::create(parse(R"(
sp: reg_set reg=0 value=1
sp: branch_nz reg=0 target=1
)"),
                                 options);
  const Result<RunStats> r = (*core)->run();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("stopped after 1000 instructions"), std::string::npos);
}

TEST(NeuronCore, RejectsInputsOfTheWrongSize) {
  auto core = NeuronCore::create(parse(".tensor a input fp32 [4]\n"), {});
  const std::vector<float> three(3);
  const Status s = (*core)->setTensor("a", bytesOf(three));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("holds 16 bytes but 12 were given"), std::string::npos);
  EXPECT_EQ((*core)->setTensor("zz", bytesOf(three)).code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace trn::core
