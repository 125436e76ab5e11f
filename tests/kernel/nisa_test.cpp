// Trace-level tests of the isa-level kernel API (nisa.h): every data instruction of the core has
// a function; a call records exactly that instruction with the views' access patterns as
// operands, the engine chosen or pinned, and the caller's line; operand and hardware-rule
// violations stop tracing with an error at the offending call's line.
#include "trn/kernel/nisa.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

#include "trn/kernel/kernel.h"

namespace trn::kernel {
namespace {

using isa::AluOp;
using isa::Engine;

/// The last recorded op, which must hold an I.
template <typename I>
const I& lastAs(const Kernel& k) {
  const Op& op = k.ir().ops.back();
  const I* body = std::get_if<I>(&op.instr.body);
  EXPECT_NE(body, nullptr) << "last op is " << isa::info(op.instr.body).mnemonic;
  static const I kEmpty{};
  return body != nullptr ? *body : kEmpty;
}

/// Runs `trace`, expects it to throw TraceError at nisa_test.cpp:`line` (which `trace` sets to the
/// line of the offending call), and checks the message contains every fragment.
void expectTraceError(const std::function<void()>& trace, const int& line,
                      std::initializer_list<std::string_view> fragments) {
  try {
    trace();
    ADD_FAILURE() << "tracing succeeded; expected an error";
  } catch (const TraceError& e) {
    const std::string& message = e.status.message();
    const std::string prefix = "nisa_test.cpp:" + std::to_string(line) + ":";
    EXPECT_EQ(message.rfind(prefix, 0), 0u) << "expected prefix '" << prefix << "' in: " << message;
    for (const std::string_view f : fragments) {
      EXPECT_NE(message.find(f), std::string::npos) << "missing '" << f << "' in: " << message;
    }
  }
}

TEST(Nisa, MatmulRecordsOperandsEngineAndLine) {
  Kernel k("mm", isa::CoreLimits{});
  const Tensor st = k.sbuf({128, 128}, DType::kBf16, "st");
  const Tensor mv = k.sbuf({128, 512}, DType::kBf16, "mv");
  const Tensor ps = k.psum({128, 512}, DType::kFp32, "ps");
  const int line = __LINE__ + 1;
  nisa::ncMatmul(ps, st, mv, /*accumulate=*/true);
  ASSERT_EQ(k.ir().ops.size(), 1u);
  const Op& op = k.ir().ops[0];
  const auto& mm = lastAs<isa::NcMatmul>(k);
  EXPECT_EQ(mm.dst, ps.ap());
  EXPECT_EQ(mm.stationary, st.ap());
  EXPECT_EQ(mm.moving, mv.ap());
  EXPECT_TRUE(mm.accumulate);
  EXPECT_FALSE(mm.isTranspose);
  EXPECT_EQ(op.instr.engine, Engine::kPe);
  EXPECT_EQ(op.origin, EngineOrigin::kRule);
  EXPECT_EQ(op.site.line, line);
  EXPECT_NE(k.ir().file(op.site).find("nisa_test.cpp"), std::string::npos);
}

TEST(Nisa, AMultiLineCallReportsTheLineWhereItStarts) {
  Kernel k("lines", isa::CoreLimits{});
  const Tensor a = k.sbuf({128, 64}, DType::kFp32, "a");
  const int line = __LINE__ + 1;
  nisa::tensorScalar(a, a, AluOp::kMultiply, 2, false, AluOp::kAdd, 0.25,
                     /*reverse1=*/false, Engine::kAct);
  EXPECT_EQ(k.ir().ops.back().site.line, line);
  EXPECT_EQ(std::get<float>(lastAs<isa::TensorScalar>(k).operand0), 2.0f);
  EXPECT_EQ(std::get<float>(lastAs<isa::TensorScalar>(k).operand1), 0.25f);
}

TEST(Nisa, SlicedViewsBecomeTheirAccessPatterns) {
  Kernel k("views", isa::CoreLimits{});
  const Tensor a = k.sbuf({128, 4, 256}, DType::kFp32, "a");
  const Tensor b = k.sbuf({128, 1024}, DType::kBf16, "b");
  const Tensor dst = a(ds(32, 32), 1, Slice{0, 256, 2});
  const Tensor src = b(ds(64, 32), Slice{1, 257, 2});
  nisa::tensorCopy(dst, src);
  const auto& copy = lastAs<isa::TensorCopy>(k);
  EXPECT_EQ(copy.dst, dst.ap());
  EXPECT_EQ(copy.src, src.ap());
  EXPECT_EQ(copy.dst.partitionStart, 32);
  EXPECT_EQ(copy.src.partitionStart, 64);
  EXPECT_EQ(k.ir().ops.back().instr.engine, Engine::kDve);
}

TEST(Nisa, EngineIsPinnedOrChosenByTheRules) {
  Kernel k("engines", isa::CoreLimits{});
  const Tensor a = k.sbuf({128, 64}, DType::kFp32, "a");
  const Tensor b = k.sbuf({128, 64}, DType::kFp32, "b");
  nisa::tensorTensor(a, a, b, AluOp::kAdd);
  EXPECT_EQ(k.ir().ops.back().instr.engine, Engine::kDve);
  EXPECT_EQ(k.ir().ops.back().origin, EngineOrigin::kRule);
  nisa::tensorTensor(a, a, b, AluOp::kPow);
  EXPECT_EQ(k.ir().ops.back().instr.engine, Engine::kPool);
  nisa::tensorTensor(a, a, b, AluOp::kAdd, Engine::kPool);
  EXPECT_EQ(k.ir().ops.back().instr.engine, Engine::kPool);
  EXPECT_EQ(k.ir().ops.back().origin, EngineOrigin::kPinned);
  nisa::tensorCopy(a, b, Engine::kAct);
  EXPECT_EQ(k.ir().ops.back().instr.engine, Engine::kAct);
  nisa::memset(a, 1.5f, Engine::kPool);
  EXPECT_EQ(k.ir().ops.back().instr.engine, Engine::kPool);
  EXPECT_EQ(lastAs<isa::Memset>(k).value, 1.5f);
}

TEST(Nisa, ScalarOperandsTakeImmediatesOrTensors) {
  Kernel k("scalars", isa::CoreLimits{});
  const Tensor x = k.sbuf({128, 256}, DType::kBf16, "x");
  const Tensor y = k.sbuf({128, 256}, DType::kFp32, "y");
  const Tensor col = k.sbuf({128, 1}, DType::kFp32, "col");
  nisa::tensorScalar(y, x, AluOp::kMultiply, col, false, AluOp::kAdd, 0.5f);
  const auto& ts = lastAs<isa::TensorScalar>(k);
  ASSERT_TRUE(std::holds_alternative<isa::AccessPattern>(ts.operand0));
  EXPECT_EQ(std::get<isa::AccessPattern>(ts.operand0), col.ap());
  ASSERT_TRUE(std::holds_alternative<float>(ts.operand1));
  EXPECT_EQ(std::get<float>(ts.operand1), 0.5f);
  EXPECT_EQ(ts.op1, AluOp::kAdd);

  nisa::activation(y, x, isa::ActivationFunction::kExp, col, 2.0f);
  const auto& act = lastAs<isa::Activation>(k);
  EXPECT_EQ(std::get<isa::AccessPattern>(act.bias), col.ap());
  EXPECT_EQ(std::get<float>(act.scale), 2.0f);
  EXPECT_FALSE(act.reduceRes.has_value());
  EXPECT_EQ(k.ir().ops.back().instr.engine, Engine::kAct);

  nisa::activation(y, x, isa::ActivationFunction::kExp, 0.0f, 1.0f, AluOp::kAdd, col,
                   isa::ReduceCmd::kResetReduce);
  const auto& reduced = lastAs<isa::Activation>(k);
  ASSERT_TRUE(reduced.reduceRes.has_value());
  EXPECT_EQ(*reduced.reduceRes, col.ap());
  EXPECT_EQ(reduced.reduceCmd, isa::ReduceCmd::kResetReduce);
}

TEST(Nisa, DmaRecordsQueueZeroAndIndirectOperands) {
  Kernel k("dma", isa::CoreLimits{});
  const Tensor table = k.input("table", {1000, 64}, DType::kFp32);
  const Tensor rows = k.sbuf({128, 64}, DType::kFp32, "rows");
  const Tensor idx = k.sbuf({128, 1}, DType::kInt32, "idx");
  nisa::dmaCopy(rows, table, std::nullopt, idx, isa::DmaOobMode::kSkip);
  const auto& gather = lastAs<isa::DmaCopy>(k);
  EXPECT_EQ(gather.queue, 0);
  EXPECT_EQ(gather.src, table.ap());
  ASSERT_TRUE(gather.srcIndex.has_value());
  EXPECT_EQ(*gather.srcIndex, idx.ap());
  EXPECT_FALSE(gather.dstIndex.has_value());
  EXPECT_EQ(gather.oobMode, isa::DmaOobMode::kSkip);
  EXPECT_EQ(k.ir().ops.back().instr.engine, Engine::kSp);

  const Tensor a = k.input("a", {128, 64}, DType::kFp32);
  const Tensor b = k.input("b", {128, 64}, DType::kBf16);
  const Tensor out = k.output("out", {128, 64}, DType::kFp32);
  nisa::dmaCompute(out, {a, b}, AluOp::kAdd, {1.0f, -2.0f}, Engine::kAct);
  const auto& sum = lastAs<isa::DmaCompute>(k);
  EXPECT_EQ(sum.queue, 0);
  EXPECT_EQ(sum.src0, a.ap());
  EXPECT_EQ(sum.src1, b.ap());
  EXPECT_FALSE(sum.src2.has_value());
  EXPECT_EQ(sum.scale1, -2.0f);
  EXPECT_EQ(k.ir().ops.back().instr.engine, Engine::kAct);
  EXPECT_EQ(k.ir().ops.back().origin, EngineOrigin::kPinned);
}

/// Calls every nisa function once with legal operands.
void traceEveryInstruction(Kernel& k) {
  using F = isa::ActivationFunction;
  const Tensor st = k.sbuf({128, 128}, DType::kBf16, "st");
  const Tensor a = k.sbuf({128, 512}, DType::kBf16, "a");
  const Tensor b = k.sbuf({128, 512}, DType::kBf16, "b");
  const Tensor f = k.sbuf({128, 512}, DType::kFp32, "f");
  const Tensor g = k.sbuf({128, 512}, DType::kFp32, "g");
  const Tensor col = k.sbuf({128, 1}, DType::kFp32, "col");
  const Tensor col2 = k.sbuf({128, 1}, DType::kFp32, "col2");
  const Tensor mask = k.sbuf({128, 512}, DType::kUint8, "mask");
  const Tensor ps = k.psum({128, 512}, DType::kFp32, "ps");
  const Tensor psT = k.psum({128, 128}, DType::kBf16, "psT");
  nisa::ncMatmul(ps, st, a);
  nisa::ncTranspose(psT, st);
  nisa::tensorTensor(f, a, b, AluOp::kAdd);
  nisa::tensorCopy(f, a);
  nisa::memset(f, 0.0f);
  nisa::tensorScalar(f, a, AluOp::kMultiply, 2.0f, false, AluOp::kAdd, col);
  nisa::scalarTensorTensor(f, a, AluOp::kMultiply, col, AluOp::kAdd, b);
  nisa::tensorCopyPredicated(f, g, mask);
  nisa::reciprocal(f, g);
  nisa::dropout(f, g, 0.5f);
  nisa::rng(k.sbuf({128, 512}, DType::kUint32, "words"));
  nisa::setRngSeed(k.sbuf({1, 1}, DType::kUint32, "seed"));
  nisa::tensorReduce(col, f, AluOp::kAdd, 1);
  nisa::tensorScalarReduce(f, col, g, AluOp::kMultiply, 2.0f, AluOp::kAdd);
  nisa::tensorTensorScan(f, g, a, 0.0f, AluOp::kMultiply, AluOp::kAdd);
  nisa::tensorScalarCumulative(f, g, AluOp::kMultiply, AluOp::kAdd, 1.0f);
  nisa::rangeSelect(f, g, col, col2, AluOp::kGreaterEqual, AluOp::kLess);
  nisa::selectReduce(f, mask, g, 0.0f);
  const Tensor stats = k.sbuf({128, 6}, DType::kFp32, "stats");
  nisa::bnStats(stats, g);
  nisa::bnAggr(k.sbuf({128, 2}, DType::kFp32, "mv"), stats);
  const Tensor top = k.sbuf({128, 8}, DType::kFp32, "top");
  nisa::max8(top, g);
  nisa::ncFindIndex8(k.sbuf({128, 8}, DType::kUint32, "where"), g, top);
  nisa::ncMatchReplace8(f, g, top, 0.0f);
  std::vector<std::int64_t> identity(32);
  for (std::size_t i = 0; i < identity.size(); ++i) {
    identity[i] = static_cast<std::int64_t>(i);
  }
  nisa::ncStreamShuffle(f, g, identity);
  nisa::activation(f, a, F::kExp);
  nisa::activationReduce(f, col, a, F::kExp);
  nisa::iota(k.sbuf({128, 512}, DType::kInt32, "ramp"), {{1, 512}}, 0, 1);
  nisa::affineSelect(f, g, {{-1, 512}}, 1, -1e9f, AluOp::kGreaterEqual);
  nisa::tensorPartitionReduce(k.sbuf({1, 512}, DType::kFp32, "row"), g,
                              isa::PartitionReduceOp::kAdd);
  nisa::localGather(k.sbuf({128, 16}, DType::kFp32, "gathered"), g,
                    k.sbuf({128, 1}, DType::kUint16, "lidx"));
  nisa::ncNGather(k.sbuf({128, 8}, DType::kFp32, "picked"), g,
                  k.sbuf({128, 8}, DType::kUint32, "nidx"));
  const Tensor in = k.input("in", {128, 512}, DType::kBf16);
  nisa::dmaCopy(a, in);
  nisa::dmaTranspose(k.sbuf({128, 128}, DType::kBf16, "t"),
                     k.input("sq", {128, 128}, DType::kBf16));
  nisa::dmaCompute(k.output("out", {128, 512}, DType::kFp32), {in, a});
}

TEST(Nisa, EveryDataInstructionHasAFunction) {
  Kernel k("all", isa::CoreLimits{});
  try {
    traceEveryInstruction(k);
  } catch (const TraceError& e) {
    FAIL() << e.status.message();
  }
  std::set<std::string_view> traced;
  for (const Op& op : k.ir().ops) {
    traced.insert(isa::info(op.instr.body).mnemonic);
  }
  std::set<std::string_view> data;
  isa::forEachInstructionType([&]<typename I>() {
    if (!I::kInfo.isControl()) {
      data.insert(I::kInfo.mnemonic);
    }
  });
  EXPECT_EQ(traced, data);
}

// ---- errors ---------------------------------------------------------------------------------

TEST(NisaErrors, MatmulWithTooWideMovingTile) {
  Kernel k("mm", isa::CoreLimits{});
  const Tensor st = k.sbuf({128, 128}, DType::kBf16, "st");
  const Tensor mv = k.sbuf({128, 1024}, DType::kBf16, "mv");
  const Tensor ps = k.psum({128, 1024}, DType::kFp32, "ps");
  int line = 0;
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::ncMatmul(ps, st, mv);
      },
      line, {"nc_matmul", "moving", "exceeds 512"});
  EXPECT_TRUE(k.ir().ops.empty());
}

TEST(NisaErrors, MatmulIntoSbuf) {
  Kernel k("mm", isa::CoreLimits{});
  const Tensor st = k.sbuf({128, 128}, DType::kBf16, "st");
  const Tensor mv = k.sbuf({128, 512}, DType::kBf16, "mv");
  const Tensor out = k.sbuf({128, 512}, DType::kFp32, "out");
  int line = 0;
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::ncMatmul(out, st, mv);
      },
      line, {"nc_matmul", "operand 'dst'", "writes only PSUM"});
}

TEST(NisaErrors, PsumOperandOnPinnedGpSimd) {
  Kernel k("pool", isa::CoreLimits{});
  const Tensor ps = k.psum({128, 512}, DType::kFp32, "ps");
  const Tensor s = k.sbuf({128, 512}, DType::kFp32, "s");
  int line = 0;
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::tensorCopy(s, ps, Engine::kPool);
      },
      line, {"tensor_copy", "operand 'src'", "GpSimd engine cannot access PSUM"});
  // Unpinned, the rules choose an engine that can read PSUM.
  nisa::tensorCopy(s, ps);
  EXPECT_EQ(k.ir().ops.back().instr.engine, Engine::kDve);
}

TEST(NisaErrors, TensorTensorShapeMismatch) {
  Kernel k("tt", isa::CoreLimits{});
  const Tensor a = k.sbuf({128, 512}, DType::kFp32, "a");
  const Tensor b = k.sbuf({128, 256}, DType::kFp32, "b");
  int line = 0;
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::tensorTensor(a, a, b, AluOp::kAdd);
      },
      line, {"tensor_tensor", "'data1' [128 partitions x 256]", "differ in shape"});
}

TEST(NisaErrors, HbmOperandToComputeInstruction) {
  Kernel k("hbm", isa::CoreLimits{});
  const Tensor x = k.input("x", {128, 512}, DType::kFp32);
  const Tensor s = k.sbuf({128, 512}, DType::kFp32, "s");
  int line = 0;
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::activation(s, x, isa::ActivationFunction::kExp);
      },
      line, {"activation", "operand 'data'", "cannot access HBM", "dma_copy"});
}

TEST(NisaErrors, TensorsFromTwoKernels) {
  Kernel k1("first", isa::CoreLimits{});
  Kernel k2("second", isa::CoreLimits{});
  const Tensor a = k1.sbuf({128, 64}, DType::kFp32, "a");
  const Tensor b = k2.sbuf({128, 64}, DType::kFp32, "b");
  const Tensor col = k2.sbuf({128, 1}, DType::kFp32, "col");
  int line = 0;
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::tensorTensor(a, a, b, AluOp::kAdd);
      },
      line, {"tensor_tensor", "operand 'data1'", "kernel 'second'", "'dst'", "kernel 'first'"});
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::tensorScalar(a, a, AluOp::kAdd, col);
      },
      line, {"tensor_scalar", "operand 'operand0'", "kernel 'second'"});
  EXPECT_TRUE(k1.ir().ops.empty());
  EXPECT_TRUE(k2.ir().ops.empty());
}

TEST(NisaErrors, EmptyTensor) {
  Kernel k("empty", isa::CoreLimits{});
  const Tensor a = k.sbuf({128, 64}, DType::kFp32, "a");
  int line = 0;
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::tensorCopy(a, Tensor());
      },
      line, {"tensor_copy", "operand 'src'", "empty Tensor"});
  // No kernel known yet when the first operand is empty: the same message all the same.
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::reciprocal(Tensor(), a);
      },
      line, {"reciprocal", "operand 'dst'", "empty Tensor"});
}

TEST(NisaErrors, ImmediateListsAreChecked) {
  Kernel k("lists", isa::CoreLimits{});
  const Tensor a = k.sbuf({128, 64}, DType::kFp32, "a");
  const Tensor x = k.input("x", {128, 64}, DType::kFp32);
  int line = 0;
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::ncStreamShuffle(a, a, {0, 1, 2});
      },
      line, {"nc_stream_shuffle", "shuffle_mask has 3 entries", "exactly 32"});
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::iota(a, {});
      },
      line, {"iota", "pattern has 0"});
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::dmaCompute(a, {x, x}, AluOp::kAdd, {1.0f});
      },
      line, {"dma_compute", "1 scales for 2 sources"});
  expectTraceError(
      [&] {
        line = __LINE__ + 1;
        nisa::dmaCompute(a, {});
      },
      line, {"dma_compute", "0 sources given"});
}

}  // namespace
}  // namespace trn::kernel
