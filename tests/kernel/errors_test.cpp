// Author errors in tile kernels: every kind of mistake (shapes, dtypes, partitions, PSUM banks,
// SBUF/PSUM exhaustion, engine/memory pairs, view operations, explicit addresses, HBM names,
// returned tiles) is reported by compile() before anything runs, as a Status whose message starts
// with "errors_test.cpp:<line>:" for the offending kernel line and names the numbers, shapes and
// tensors involved. Also checks that the kernel source line reaches the profile trace.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "trn/kernel/compiler.h"
#include "trn/kernel/nisa.h"
#include "trn/profile/trace.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace trn::kernel {
namespace {

using testutil::limits;
using testutil::trn2;

using isa::AluOp;
using isa::Engine;

const std::vector<TensorSpec> kOneInput = {{"a", {128, 64}, DType::kFp32}};

/// Compiles `kernel` (which must fail) and returns the error message.
template <typename Fn>
std::string compileError(Fn fn, const std::vector<TensorSpec>& specs = kOneInput,
                         const CompileOptions& options = {}) {
  auto compiled = compile(makeKernel("bad", fn), specs, limits(), options);
  EXPECT_FALSE(compiled.ok()) << "the kernel compiled";
  return compiled.ok() ? std::string() : compiled.status().message();
}

/// The message starts at `line` of this file and contains every fact.
void expectError(const std::string& message, int line, const std::vector<std::string>& facts) {
  const std::string prefix = "errors_test.cpp:" + std::to_string(line) + ":";
  EXPECT_EQ(message.rfind(prefix, 0), 0u) << "expected prefix " << prefix << " in: " << message;
  for (const std::string& fact : facts) {
    EXPECT_NE(message.find(fact), std::string::npos) << "missing '" << fact << "' in: " << message;
  }
}

std::string at(int line) { return "errors_test.cpp:" + std::to_string(line); }

TEST(KernelErrors, ShapeMismatchInTensorTensor) {
  int line = 0;
  const std::string message = compileError([&line](Kernel& k, Tensor a) {
    Tensor x = k.sbuf({128, 64}, DType::kFp32, "x");
    Tensor y = k.sbuf({128, 32}, DType::kFp32, "y");
    nisa::dmaCopy(x, a);
    nisa::dmaCopy(y, a(all, ds(0, 32)));
    line = __LINE__ + 1;
    nisa::tensorTensor(x, x, y, AluOp::kAdd);
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(message, line, {"tensor_tensor", "data0", "data1", "128", "64", "32"});
}

TEST(KernelErrors, MatmulDTypesThePeDoesNotTake) {
  int line = 0;
  const std::string intOperand = compileError([&line](Kernel& k, Tensor) {
    Tensor s = k.sbuf({128, 128}, DType::kInt32, "s");
    Tensor m = k.sbuf({128, 128}, DType::kFp32, "m");
    Tensor acc = k.psum({128, 128}, DType::kFp32, "acc");
    nisa::memset(s, 1.0f);
    nisa::memset(m, 1.0f);
    line = __LINE__ + 1;
    nisa::ncMatmul(acc, s, m);
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(intOperand, line, {"nc_matmul", "stationary", "int32", "floating-point"});

  const std::string bf16Dst = compileError([&line](Kernel& k, Tensor) {
    Tensor s = k.sbuf({128, 128}, DType::kBf16, "s");
    Tensor acc = k.psum({128, 128}, DType::kBf16, "acc");
    nisa::memset(s, 1.0f);
    line = __LINE__ + 1;
    nisa::ncMatmul(acc, s, s);
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(bf16Dst, line, {"nc_matmul", "dst", "bf16", "fp32"});

  const std::string mixed = compileError([&line](Kernel& k, Tensor) {
    Tensor s = k.sbuf({128, 128}, DType::kFp32, "s");
    Tensor m = k.sbuf({128, 128}, DType::kBf16, "m");
    Tensor acc = k.psum({128, 128}, DType::kFp32, "acc");
    nisa::memset(s, 1.0f);
    nisa::memset(m, 1.0f);
    line = __LINE__ + 1;
    nisa::ncMatmul(acc, s, m);
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(mixed, line, {"nc_matmul", "fp32", "bf16"});
}

TEST(KernelErrors, BitwiseOperatorOnFloatData) {
  int line = 0;
  const std::string message = compileError([&line](Kernel& k, Tensor a) {
    Tensor x = k.sbuf({128, 64}, DType::kFp32, "x");
    nisa::dmaCopy(x, a);
    line = __LINE__ + 1;
    nisa::tensorTensor(x, x, x, AluOp::kBitwiseAnd);
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(message, line, {"tensor_tensor", "fp32", "not an integer type"});
}

TEST(KernelErrors, PartitionViolations) {
  int line = 0;
  const std::string tooMany = compileError([&line](Kernel& k, Tensor) {
    line = __LINE__ + 1;
    k.sbuf({129, 64}, DType::kFp32, "wide");
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(tooMany, line, {"'wide'", "129 partitions", "128"});

  const std::string badIndex = compileError([&line](Kernel& k, Tensor a) {
    Tensor x = k.sbuf({128, 64}, DType::kFp32, "x");
    line = __LINE__ + 1;
    nisa::dmaCopy(x(ds(100, 40)), a(ds(0, 40)));
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(badIndex, line, {"slice [100:140:1]", "dimension 0", "size 128", "'x'"});

  const std::string badInteger = compileError([&line](Kernel& k, Tensor) {
    Tensor x = k.sbuf({128, 64}, DType::kFp32, "x");
    line = __LINE__ + 1;
    nisa::memset(x(all, 64), 0.0f);
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(badInteger, line, {"index 64", "dimension 1", "size 64"});

  const std::string badStart = compileError([&line](Kernel& k, Tensor) {
    Tensor x = k.sbuf({128, 64}, DType::kFp32, "x");
    nisa::memset(x, 0.0f);
    line = __LINE__ + 1;
    nisa::tensorCopy(x(ds(16, 32)), x(ds(64, 32)));
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(badStart, line, {"tensor_copy", "32 partitions", "0, 32, 64 or 96", "not 16"});

  const std::string badHalf = compileError([&line](Kernel& k, Tensor) {
    Tensor x = k.sbuf({128, 64}, DType::kFp32, "x");
    nisa::memset(x, 0.0f);
    line = __LINE__ + 1;
    nisa::tensorCopy(x(ds(0, 64)), x(ds(32, 64)));
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(badHalf, line, {"64 partitions", "0 or 64", "not 32"});
}

TEST(KernelErrors, PsumBankViolations) {
  int line = 0;
  const std::string wide = compileError([&line](Kernel& k, Tensor) {
    Tensor s = k.sbuf({128, 128}, DType::kBf16, "s");
    Tensor m = k.sbuf({128, 1024}, DType::kBf16, "m");
    Tensor acc = k.psum({128, 1024}, DType::kFp32, "acc");
    nisa::memset(s, 1.0f);
    nisa::memset(m, 1.0f);
    line = __LINE__ + 1;
    nisa::ncMatmul(acc, s, m);
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(wide, line, {"nc_matmul", "N = 1024", "512", "PSUM bank"});

  const std::string crossing = compileError([&line](Kernel& k, Tensor) {
    Tensor s = k.sbuf({128, 128}, DType::kBf16, "s");
    Tensor m = k.sbuf({128, 512}, DType::kBf16, "m");
    Tensor acc = k.psum({128, 1024}, DType::kFp32, "acc");
    nisa::memset(s, 1.0f);
    nisa::memset(m, 1.0f);
    line = __LINE__ + 1;
    nisa::ncMatmul(acc(all, ds(256, 512)), s, m);
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(crossing, line, {"nc_matmul", "[1024, 3072)", "2048-byte PSUM bank"});

  const std::string huge = compileError([&line](Kernel& k, Tensor) {
    line = __LINE__ + 1;
    k.psum({128, 8192}, DType::kFp32, "huge");
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(huge, line,
              {"'huge'", "[128, 8192]", "32768 bytes per partition",
               std::to_string(limits().psumPartitionBytes())});
}

TEST(KernelErrors, SbufExhaustionListsTheLiveTilesWithTheirLines) {
  // Three live tiles of 64 KiB per partition leave 32 KiB of SBUF's 224 KiB; a 48 KiB tile does
  // not fit.
  ASSERT_EQ(limits().sbufPartitionBytes, 229376);
  int lines[4] = {};
  const std::string message = compileError([&lines](Kernel& k, Tensor) {
    lines[0] = __LINE__ + 1;
    Tensor t0 = k.sbuf({128, 16384}, DType::kFp32, "first");
    lines[1] = __LINE__ + 1;
    Tensor t1 = k.sbuf({128, 16384}, DType::kFp32, "second");
    lines[2] = __LINE__ + 1;
    Tensor t2 = k.sbuf({128, 16384}, DType::kFp32, "third");
    lines[3] = __LINE__ + 1;
    Tensor t3 = k.sbuf({128, 12288}, DType::kFp32, "fourth");
    Tensor out = k.output("out", {128, 64}, DType::kFp32);
    // Each written in two halves: no one instruction writes all of it, so none can be stored
    // to HBM to make room (spilling.h).
    for (const Tensor& t : {t0, t1, t2, t3}) {
      const std::int64_t half = t.shape(1) / 2;
      nisa::memset(t(all, ds(0, half)), 0.0f);
      nisa::memset(t(all, ds(half, half)), 0.0f);
    }
    for (const Tensor& t : {t0, t1, t2, t3}) {
      nisa::tensorTensor(t(all, ds(0, 64)), t(all, ds(0, 64)), t(all, ds(64, 64)), AluOp::kAdd);
    }
    nisa::dmaCopy(out, t3(all, ds(0, 64)));
    return out;
  });
  expectError(
      message, lines[3],
      {"sbuf is full", "'fourth'", "[128, 12288]", "49152 bytes per partition",
       "196608 of the 229376", "3 live tiles", "'first' [128, 16384] fp32 at bytes 0..65536",
       "'third' [128, 16384] fp32 at bytes 131072..196608", at(lines[0]), at(lines[1]),
       at(lines[2])});
}

TEST(KernelErrors, PsumExhaustionListsTheLiveTilesWithTheirLines) {
  ASSERT_EQ(limits().psumPartitionBytes(), 16384);
  int lines[5] = {};
  const std::string message = compileError([&lines](Kernel& k, Tensor) {
    // Declared at separate lines, so that no two form a multi-buffering ring.
    std::vector<Tensor> banks;
    lines[0] = __LINE__ + 1;
    banks.push_back(k.psum({128, 1024}, DType::kFp32, "pair0"));
    lines[1] = __LINE__ + 1;
    banks.push_back(k.psum({128, 1024}, DType::kFp32, "pair1"));
    lines[2] = __LINE__ + 1;
    banks.push_back(k.psum({128, 1024}, DType::kFp32, "pair2"));
    lines[3] = __LINE__ + 1;
    banks.push_back(k.psum({128, 512}, DType::kFp32, "single"));
    lines[4] = __LINE__ + 1;
    banks.push_back(k.psum({128, 1024}, DType::kFp32, "last"));
    for (const Tensor& t : banks) {
      nisa::memset(t, 0.0f);
    }
    Tensor sum = k.sbuf({128, 512}, DType::kFp32, "sum");
    nisa::memset(sum, 0.0f);
    for (const Tensor& t : banks) {
      nisa::tensorTensor(sum, sum, t(all, ds(0, 512)), AluOp::kAdd);
    }
    Tensor out = k.output("out", {128, 512}, DType::kFp32);
    nisa::dmaCopy(out, sum);
    return out;
  });
  expectError(message, lines[4],
              {"psum is full", "'last'", "4096 bytes per partition", "14336 of the 16384",
               "4 live tiles", "'pair0' [128, 1024] fp32", "'single' [128, 512] fp32", at(lines[0]),
               at(lines[1]), at(lines[2]), at(lines[3])});
}

TEST(KernelErrors, IllegalEngineAndMemoryPairs) {
  int line = 0;
  const std::string poolPsum = compileError([&line](Kernel& k, Tensor) {
    Tensor acc = k.psum({128, 64}, DType::kFp32, "acc");
    Tensor x = k.sbuf({128, 64}, DType::kFp32, "x");
    nisa::memset(x, 0.0f);
    line = __LINE__ + 1;
    nisa::tensorCopy(acc, x, Engine::kPool);
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(poolPsum, line, {"tensor_copy", "GpSimd engine cannot access PSUM"});

  const std::string hbmOperand = compileError([&line](Kernel& k, Tensor a) {
    Tensor x = k.sbuf({128, 64}, DType::kFp32, "x");
    nisa::memset(x, 0.0f);
    line = __LINE__ + 1;
    nisa::tensorTensor(x, x, a, AluOp::kAdd);
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(hbmOperand, line, {"tensor_tensor", "data1", "cannot access HBM", "dma_copy"});

  const std::string peSbuf = compileError([&line](Kernel& k, Tensor) {
    Tensor s = k.sbuf({128, 128}, DType::kBf16, "s");
    Tensor dst = k.sbuf({128, 128}, DType::kFp32, "dst");
    nisa::memset(s, 1.0f);
    line = __LINE__ + 1;
    nisa::ncMatmul(dst, s, s);
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(peSbuf, line, {"nc_matmul", "dst", "tensor engine writes only PSUM"});
}

TEST(KernelErrors, ViewOperationErrors) {
  int line = 0;
  const auto viewError = [&line](auto makeView) {
    return compileError([&line, makeView](Kernel& k, Tensor) {
      Tensor x = k.sbuf({128, 64}, DType::kFp32, "v");
      Tensor row = k.sbuf({1, 64}, DType::kFp32, "row");
      makeView(x, row, line);
      return k.output("out", {128, 64}, DType::kFp32);
    });
  };
  {
    const std::string message = viewError([](Tensor x, Tensor, int& l) {
      l = __LINE__ + 1;
      (void)x.reshape({128, 33});
    });
    expectError(message, line, {"cannot reshape", "'v'", "8192 elements", "[128, 33]"});
  }
  {
    const std::string message = viewError([](Tensor x, Tensor, int& l) {
      l = __LINE__ + 1;
      (void)x.reshape({64, 128});
    });
    expectError(message, line, {"[64, 128]", "partition dimension"});
  }
  {
    const std::string message = viewError([](Tensor x, Tensor, int& l) {
      l = __LINE__ + 1;
      (void)x(all, Slice{0, std::nullopt, 2}).reshape({128, 2, 16});
    });
    expectError(message, line, {"cannot reshape", "not contiguous"});
  }
  {
    const std::string message = viewError([](Tensor x, Tensor, int& l) {
      l = __LINE__ + 1;
      (void)x.permute({1, 0});
    });
    expectError(message, line, {"permute [1, 0]", "moves the partition dimension", "'v'"});
  }
  {
    const std::string message = viewError([](Tensor x, Tensor, int& l) {
      l = __LINE__ + 1;
      (void)x.permute({0, 0});
    });
    expectError(message, line, {"[0, 0]", "not a permutation"});
  }
  {
    const std::string message = viewError([](Tensor x, Tensor, int& l) {
      l = __LINE__ + 1;
      (void)x.broadcast(1, 4);
    });
    expectError(message, line,
                {"cannot broadcast dimension 1", "'v'", "only a dimension of size 1"});
  }
  {
    const std::string message = viewError([](Tensor, Tensor row, int& l) {
      l = __LINE__ + 1;
      (void)row.broadcast(0, 128);
    });
    expectError(message, line, {"partition dimension", "'row'"});
  }
  {
    const std::string message = viewError([](Tensor x, Tensor, int& l) {
      l = __LINE__ + 1;
      (void)x.bitcast(DType::kBf16);
    });
    expectError(message, line, {"cannot view", "bf16", "4 and 2 bytes"});
  }
}

TEST(KernelErrors, ExplicitAddressThatDoesNotFit) {
  const std::int64_t end = limits().sbufPartitionBytes;
  int line = 0;
  const std::string pastEnd = compileError([&line, end](Kernel& k, Tensor) {
    line = __LINE__ + 1;
    k.sbuf({128, 1024}, DType::kFp32, "pinned", Address{0, end - 1024});
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(pastEnd, line,
              {"address (partition 0, byte " + std::to_string(end - 1024) + ")", "'pinned'",
               "4096 bytes", "does not fit"});

  const std::string partitions = compileError([&line](Kernel& k, Tensor) {
    line = __LINE__ + 1;
    k.sbuf({128, 16}, DType::kFp32, "low", Address{64, 0});
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(partitions, line, {"address (partition 64, byte 0)", "'low'", "128 partitions"});
}

TEST(KernelErrors, DuplicateHbmNames) {
  int first = 0;
  int line = 0;
  const std::string twice = compileError([&first, &line](Kernel& k, Tensor) {
    first = __LINE__ + 1;
    Tensor o = k.output("out", {128, 64}, DType::kFp32);
    line = __LINE__ + 1;
    k.output("out", {128, 64}, DType::kFp32);
    return o;
  });
  expectError(twice, line, {"'out'", "already declared", at(first)});

  const std::string likeInput = compileError([&line](Kernel& k, Tensor) {
    line = __LINE__ + 1;
    return k.output("a", {128, 64}, DType::kFp32);
  });
  expectError(likeInput, line, {"'a'", "already declared"});
}

TEST(KernelErrors, ReturningAnOnChipTile) {
  int line = 0;
  const std::string message = compileError([&line](Kernel& k, Tensor a) {
    line = __LINE__ + 1;
    Tensor x = k.sbuf({128, 64}, DType::kFp32, "tile");
    nisa::dmaCopy(x, a);
    return x;
  });
  EXPECT_NE(message.find("'tile'"), std::string::npos) << message;
  EXPECT_NE(message.find("on-chip tile"), std::string::npos) << message;
  // The return statement has no location the library can see: the error names the line that
  // declared the returned tile.
  expectError(message, line, {});
}

TEST(KernelErrors, AKernelWithAnErrorProducesNoProgram) {
  // A trace error stops before any pass: nothing is dumped after the trace.
  std::ostringstream dump;
  CompileOptions options;
  options.dumpAfter = "trace";
  options.dumpStream = &dump;
  auto traced = compile(makeKernel("bad",
                                   [](Kernel& k, Tensor a) {
                                     Tensor x = k.sbuf({128, 32}, DType::kFp32);
                                     nisa::dmaCopy(x, a);
                                     return k.output("out", {128, 64}, DType::kFp32);
                                   }),
                        kOneInput, limits(), options);
  ASSERT_FALSE(traced.ok());
  EXPECT_TRUE(dump.str().empty()) << dump.str();

  // An allocation error comes after the trace but before lowering: no program text.
  options.dumpAfter = "lower";
  auto allocated = compile(makeKernel("hog",
                                      [](Kernel& k, Tensor) {
                                        Tensor x = k.psum({128, 2048}, DType::kFp32);
                                        Tensor y = k.psum({128, 2048}, DType::kFp32);
                                        Tensor z = k.psum({128, 2048}, DType::kFp32);
                                        Tensor s = k.sbuf({128, 2048}, DType::kFp32);
                                        nisa::memset(x, 0.0f);
                                        nisa::memset(y, 0.0f);
                                        nisa::memset(z, 0.0f);
                                        nisa::tensorCopy(s, x);
                                        nisa::tensorTensor(s, s, y, AluOp::kAdd);
                                        nisa::tensorTensor(s, s, z, AluOp::kAdd);
                                        return k.output("out", {128, 64}, DType::kFp32);
                                      }),
                           kOneInput, limits(), options);
  ASSERT_FALSE(allocated.ok());
  EXPECT_NE(allocated.status().message().find("psum is full"), std::string::npos)
      << allocated.status().message();
  EXPECT_TRUE(dump.str().empty()) << dump.str();
}

TEST(KernelErrors, AMultiLineCallIsReportedAtItsFirstLine) {
  int line = 0;
  const std::string message = compileError([&line](Kernel& k, Tensor a) {
    Tensor x = k.sbuf({128, 64}, DType::kFp32, "x");
    Tensor y = k.sbuf({128, 32}, DType::kFp32, "y");
    nisa::dmaCopy(x, a);
    nisa::dmaCopy(y, a(all, ds(0, 32)));
    line = __LINE__ + 1;
    nisa::tensorTensor(x,  // the destination
                       x,  // the first input
                       y,  // the second input, too narrow
                       AluOp::kAdd);
    return k.output("out", {128, 64}, DType::kFp32);
  });
  expectError(message, line, {"tensor_tensor"});
}

TEST(KernelErrors, TheSourceLineReachesTheProfileTrace) {
  int line = 0;
  auto compiled = compile(makeKernel("add",
                                     [&line](Kernel& k, Tensor a) {
                                       Tensor x = k.sbuf({128, 64}, DType::kFp32, "x");
                                       nisa::dmaCopy(x, a);
                                       line = __LINE__ + 1;
                                       nisa::tensorTensor(x, x, x, AluOp::kAdd);
                                       Tensor out = k.output("out", {128, 64}, DType::kFp32);
                                       nisa::dmaCopy(out, x);
                                       return out;
                                     }),
                          kOneInput, limits());
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
  runtime::RunOptions options;
  options.mode = core::RunMode::kFunctionalTiming;
  options.record = true;
  const std::vector<float> values(128 * 64, 1.5f);
  const std::vector<runtime::NpyArray> inputs = {runtime::floatArray({128, 64}, values)};
  auto run = kernel::testutil::trn2Session().runKernel(*compiled, inputs, options);
  ASSERT_TRUE(run.ok()) << run.status().toString();
  EXPECT_EQ(runtime::floatValues(run->outputs[0]), std::vector<float>(128 * 64, 3.0f));

  std::ostringstream text;
  ASSERT_TRUE(profile::writeTrace(text, compiled->program, run->stats).ok());
  const nlohmann::json trace = nlohmann::json::parse(text.str());
  const std::string suffix = at(line);
  int adds = 0;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event.value("ph", "") != "X" || event.value("name", "") != "tensor_tensor") {
      continue;
    }
    ++adds;
    const std::string location = event["args"]["location"].get<std::string>();
    ASSERT_GE(location.size(), suffix.size()) << location;
    EXPECT_EQ(location.substr(location.size() - suffix.size()), suffix) << location;
    EXPECT_NE(location.find("errors_test.cpp"), std::string::npos);
  }
  EXPECT_EQ(adds, 1);
}

}  // namespace
}  // namespace trn::kernel
