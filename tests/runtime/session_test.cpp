// runtime::Session: a program run with host arrays against a float64 reference, the errors a
// caller can make (an unbound input, an unknown tensor, outputs in timing-only mode, the wrong
// number of kernel inputs), the shared defaults, and a kernel run that shares its program.
#include "trn/runtime/session.h"

#include <gtest/gtest.h>

#include <vector>

#include "trn/isa/program_text.h"
#include "trn/kernel/nisa.h"

namespace trn::runtime {
namespace {

const Session& trn2() {
  static const Session session = Session::open("trn2").value();
  return session;
}

/// c = a + b over one [128, 64] fp32 tile.
std::shared_ptr<const isa::Program> addProgram() {
  const char* text = R"(
.tensor a input fp32 [128, 64]
.tensor b input fp32 [128, 64]
.tensor c output fp32 [128, 64]
sp:  dma_copy dst=sbuf[0:128]:fp32[[1,64]] src=hbm:a:fp32[[64,128],[1,64]] queue=0 signal(s0+=1)
sp:  dma_copy dst=sbuf[0:128]+256:fp32[[1,64]] src=hbm:b:fp32[[64,128],[1,64]] queue=1 signal(s0+=1)
dve: tensor_tensor dst=sbuf[0:128]+512:fp32[[1,64]] data0=sbuf[0:128]:fp32[[1,64]] data1=sbuf[0:128]+256:fp32[[1,64]] op=add wait(s0>=2) signal(s1+=1)
sp:  dma_copy dst=hbm:c:fp32[[64,128],[1,64]] src=sbuf[0:128]+512:fp32[[1,64]] queue=0 wait(s1>=1)
)";
  auto program = isa::parseProgramText(text, "add.tasm");
  EXPECT_TRUE(program.ok()) << program.status().toString();
  return std::make_shared<const isa::Program>(std::move(program).value());
}

std::vector<float> iota(float start, float step) {
  std::vector<float> v(128 * 64);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = start + step * static_cast<float>(i % 97);
  }
  return v;
}

TEST(Session, RunsAProgramWithHostArraysInAndOut) {
  const std::vector<float> a = iota(0.5f, 0.25f);
  const std::vector<float> b = iota(-3.0f, 0.125f);
  const NpyArray aArray = floatArray({128, 64}, a);
  const NpyArray bArray = floatArray({128, 64}, b);
  const std::vector<TensorInput> inputs = {{"a", &aArray, "a.npy"}, {"b", &bArray, "b.npy"}};
  const std::vector<TensorOutput> outputs = {{"c", std::nullopt}};
  auto result = trn2().run(addProgram(), inputs, outputs, RunOptions{});
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->outputs.size(), 1u);
  const std::vector<float> c = floatValues(result->outputs[0]);
  for (std::size_t i = 0; i < c.size(); ++i) {
    ASSERT_EQ(c[i], static_cast<float>(static_cast<double>(a[i]) + b[i])) << i;
  }
  EXPECT_EQ(result->stats.instructions, 4u);
  EXPECT_GT(result->stats.total.count(), 0);  // the default mode is timed
}

TEST(Session, NamesWhatTheCallerGotWrong) {
  const NpyArray aArray = floatArray({128, 64}, iota(0, 1));
  const std::vector<TensorInput> onlyA = {{"a", &aArray, "a.npy"}};
  auto unbound = trn2().run(addProgram(), onlyA, {}, RunOptions{});
  ASSERT_FALSE(unbound.ok());
  EXPECT_NE(unbound.status().message().find("input tensor(s) b have no value"), std::string::npos)
      << unbound.status().message();

  const std::vector<TensorInput> stray = {
      {"a", &aArray, "a.npy"}, {"b", &aArray, "b.npy"}, {"z", &aArray, "z.npy"}};
  auto unknown = trn2().run(addProgram(), stray, {}, RunOptions{});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("z.npy: no program has a tensor 'z'"),
            std::string::npos)
      << unknown.status().message();

  RunOptions timingOnly;
  timingOnly.mode = core::RunMode::kTimingOnly;
  const std::vector<TensorOutput> c = {{"c", std::nullopt}};
  auto noValues = trn2().run(addProgram(), {}, c, timingOnly);
  ASSERT_FALSE(noValues.ok());
  EXPECT_NE(noValues.status().message().find("timing-only"), std::string::npos);
  // Without outputs, timing-only needs no arrays at all.
  EXPECT_TRUE(trn2().run(addProgram(), {}, {}, timingOnly).ok());
}

TEST(Session, PoisonIsOnByDefaultInTheModesWithData) {
  // A program that reads a scratch tensor it never wrote.
  const char* text = R"(
.tensor s scratch fp32 [128, 64]
.tensor c output fp32 [128, 64]
sp:  dma_copy dst=sbuf[0:128]:fp32[[1,64]] src=hbm:s:fp32[[64,128],[1,64]] queue=0 signal(s0+=1)
sp:  dma_copy dst=hbm:c:fp32[[64,128],[1,64]] src=sbuf[0:128]:fp32[[1,64]] queue=0 wait(s0>=1)
)";
  auto parsed = isa::parseProgramText(text, "poison.tasm");
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  const auto program = std::make_shared<const isa::Program>(std::move(parsed).value());
  auto poisoned = trn2().run(program, {}, {}, RunOptions{});
  ASSERT_FALSE(poisoned.ok());
  EXPECT_NE(poisoned.status().message().find("reads never-written memory at tensor 's' byte 0"), std::string::npos)
      << poisoned.status().message();
  RunOptions off;
  off.poison = false;
  EXPECT_TRUE(trn2().run(program, {}, {}, off).ok());
  RunOptions timingOnly;
  timingOnly.mode = core::RunMode::kTimingOnly;  // poison does not apply: no values
  EXPECT_TRUE(trn2().run(program, {}, {}, timingOnly).ok());
}

kernel::Tensor doubleKernel(kernel::Kernel& k, kernel::Tensor x) {
  kernel::Tensor out = k.output("out", x.shape(), x.dtype());
  kernel::Tensor t = k.sbuf(x.shape(), x.dtype(), "t");
  kernel::nisa::dmaCopy(t, x);
  kernel::nisa::tensorTensor(t, t, t, isa::AluOp::kAdd);
  kernel::nisa::dmaCopy(out, t);
  return out;
}

TEST(Session, RunsAKernelThroughItsCacheAndChecksItsArity) {
  const kernel::KernelDef def = kernel::makeKernel("double", doubleKernel);
  const std::vector<kernel::TensorSpec> specs = {{"x", {128, 64}, DType::kBf16}};
  kernel::KernelCache cache;
  const std::vector<float> x = iota(-1.0f, 0.5f);  // exact in bf16
  const std::vector<NpyArray> inputs = {floatArray({128, 64}, x)};
  auto run = trn2().runKernel(def, specs, inputs, RunOptions{}, &cache);
  ASSERT_TRUE(run.ok()) << run.status().toString();
  const std::vector<float> out = floatValues(run->outputs.at(0));  // bf16 widened to fp32
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(out[i], 2 * x[i]) << i;
  }
  EXPECT_EQ(cache.size(), 1u);
  auto compiled = trn2().compile(def, specs, {}, &cache);
  ASSERT_TRUE(compiled.ok());
  EXPECT_EQ(cache.size(), 1u);  // the same shapes compile once
  auto wrongArity = trn2().runKernel(*compiled, {}, RunOptions{});
  ASSERT_FALSE(wrongArity.ok());
  EXPECT_NE(wrongArity.status().message().find("takes 1 inputs; 0 arrays"), std::string::npos)
      << wrongArity.status().message();
}

}  // namespace
}  // namespace trn::runtime
