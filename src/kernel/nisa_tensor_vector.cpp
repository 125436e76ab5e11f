// nisa functions of the tensor engine and the vector engine (nisa.h).
#include <fmt/format.h>

#include <algorithm>

#include "nisa_call.h"
#include "trn/kernel/nisa.h"

namespace trn::kernel::nisa {

// ---- Tensor engine --------------------------------------------------------------------------

void ncMatmul(const Tensor& dst, const Tensor& stationary, const Tensor& moving, bool accumulate,
              PeTile tilePosition, PeTile tileSize, MatmulPerfMode perfMode, bool isTranspose,
              Loc loc) {
  detail::Call<isa::NcMatmul> c(loc);
  c.emit({.dst = c("dst", dst),
          .stationary = c("stationary", stationary),
          .moving = c("moving", moving),
          .isTranspose = isTranspose,
          .accumulate = accumulate,
          .tilePosition = tilePosition,
          .tileSize = tileSize,
          .perfMode = perfMode});
}

void ncTranspose(const Tensor& dst, const Tensor& data, std::optional<Engine> engine, Loc loc) {
  detail::Call<isa::NcTranspose> c(loc);
  c.emit({.dst = c("dst", dst), .data = c("data", data)}, engine);
}

// ---- Vector engine: element-wise ------------------------------------------------------------

void tensorTensor(const Tensor& dst, const Tensor& data0, const Tensor& data1, AluOp op,
                  std::optional<Engine> engine, Loc loc) {
  detail::Call<isa::TensorTensor> c(loc);
  c.emit({.dst = c("dst", dst), .data0 = c("data0", data0), .data1 = c("data1", data1), .op = op},
         engine);
}

void tensorCopy(const Tensor& dst, const Tensor& src, std::optional<Engine> engine, Loc loc) {
  detail::Call<isa::TensorCopy> c(loc);
  c.emit({.dst = c("dst", dst), .src = c("src", src)}, engine);
}

void memset(const Tensor& dst, float value, std::optional<Engine> engine, Loc loc) {
  detail::Call<isa::Memset> c(loc);
  c.emit({.dst = c("dst", dst), .value = value}, engine);
}

void tensorScalar(const Tensor& dst, const Tensor& data, AluOp op0, const Scalar& operand0,
                  bool reverse0, AluOp op1, const Scalar& operand1, bool reverse1,
                  std::optional<Engine> engine, Loc loc) {
  detail::Call<isa::TensorScalar> c(loc);
  c.emit({.dst = c("dst", dst),
          .data = c("data", data),
          .op0 = op0,
          .operand0 = c("operand0", operand0),
          .reverse0 = reverse0,
          .op1 = op1,
          .operand1 = c("operand1", operand1),
          .reverse1 = reverse1},
         engine);
}

void scalarTensorTensor(const Tensor& dst, const Tensor& data, AluOp op0, const Scalar& operand0,
                        AluOp op1, const Tensor& operand1, bool reverse0, bool reverse1, Loc loc) {
  detail::Call<isa::ScalarTensorTensor> c(loc);
  c.emit({.dst = c("dst", dst),
          .data = c("data", data),
          .op0 = op0,
          .operand0 = c("operand0", operand0),
          .reverse0 = reverse0,
          .op1 = op1,
          .operand1 = c("operand1", operand1),
          .reverse1 = reverse1});
}

void tensorCopyPredicated(const Tensor& dst, const Scalar& src, const Tensor& predicate,
                          bool reversePred, Loc loc) {
  detail::Call<isa::TensorCopyPredicated> c(loc);
  c.emit({.dst = c("dst", dst),
          .src = c("src", src),
          .predicate = c("predicate", predicate),
          .reversePred = reversePred});
}

void reciprocal(const Tensor& dst, const Tensor& data, Loc loc) {
  detail::Call<isa::Reciprocal> c(loc);
  c.emit({.dst = c("dst", dst), .data = c("data", data)});
}

void dropout(const Tensor& dst, const Tensor& data, const Scalar& prob, Loc loc) {
  detail::Call<isa::Dropout> c(loc);
  c.emit({.dst = c("dst", dst), .data = c("data", data), .prob = c("prob", prob)});
}

void rng(const Tensor& dst, std::optional<Engine> engine, Loc loc) {
  detail::Call<isa::Rng> c(loc);
  c.emit({.dst = c("dst", dst)}, engine);
}

void setRngSeed(const Tensor& srcSeeds, Loc loc) {
  detail::Call<isa::SetRngSeed> c(loc);
  c.emit({.srcSeeds = c("src_seeds", srcSeeds)});
}

// ---- Vector engine: reductions, scans, selections -------------------------------------------

void tensorReduce(const Tensor& dst, const Tensor& data, AluOp op, std::int64_t axis, bool negate,
                  Loc loc) {
  detail::Call<isa::TensorReduce> c(loc);
  c.emit({.dst = c("dst", dst), .op = op, .data = c("data", data), .axis = axis, .negate = negate});
}

void tensorScalarReduce(const Tensor& dst, const Tensor& reduceRes, const Tensor& data, AluOp op0,
                        const Scalar& operand0, AluOp reduceOp, bool reverse0, ReduceCmd reduceCmd,
                        const Scalar& reduceInit, Loc loc) {
  detail::Call<isa::TensorScalarReduce> c(loc);
  c.emit({.dst = c("dst", dst),
          .data = c("data", data),
          .op0 = op0,
          .operand0 = c("operand0", operand0),
          .reduceOp = reduceOp,
          .reduceRes = c("reduce_res", reduceRes),
          .reverse0 = reverse0,
          .reduceCmd = reduceCmd,
          .reduceInit = c("reduce_init", reduceInit)});
}

void tensorTensorScan(const Tensor& dst, const Tensor& data0, const Tensor& data1,
                      const Scalar& initial, AluOp op0, AluOp op1, bool reverse0, bool reverse1,
                      Loc loc) {
  detail::Call<isa::TensorTensorScan> c(loc);
  c.emit({.dst = c("dst", dst),
          .data0 = c("data0", data0),
          .data1 = c("data1", data1),
          .initial = c("initial", initial),
          .op0 = op0,
          .op1 = op1,
          .reverse0 = reverse0,
          .reverse1 = reverse1});
}

void tensorScalarCumulative(const Tensor& dst, const Tensor& src, AluOp op0, AluOp op1,
                            const Scalar& imm0, const Scalar& imm1, ReduceCmd reduceCmd,
                            bool reverse0, Loc loc) {
  detail::Call<isa::TensorScalarCumulative> c(loc);
  c.emit({.dst = c("dst", dst),
          .src = c("src", src),
          .op0 = op0,
          .op1 = op1,
          .imm0 = c("imm0", imm0),
          .imm1 = c("imm1", imm1),
          .reduceCmd = reduceCmd,
          .reverse0 = reverse0});
}

void rangeSelect(const Tensor& dst, const Tensor& onTrueTile, const Tensor& bound0,
                 const Tensor& bound1, AluOp compOp0, AluOp compOp1, ReduceCmd reduceCmd,
                 const std::optional<Tensor>& reduceRes, AluOp reduceOp, std::int64_t rangeStart,
                 float onFalseValue, Loc loc) {
  detail::Call<isa::RangeSelect> c(loc);
  c.emit({.dst = c("dst", dst),
          .onTrueTile = c("on_true_tile", onTrueTile),
          .compOp0 = compOp0,
          .compOp1 = compOp1,
          .bound0 = c("bound0", bound0),
          .bound1 = c("bound1", bound1),
          .reduceCmd = reduceCmd,
          .reduceRes = c("reduce_res", reduceRes),
          .reduceOp = reduceOp,
          .rangeStart = rangeStart,
          .onFalseValue = onFalseValue});
}

void selectReduce(const Tensor& dst, const Tensor& predicate, const Tensor& onTrue,
                  const Scalar& onFalse, const std::optional<Tensor>& reduceRes,
                  ReduceCmd reduceCmd, AluOp reduceOp, bool reversePred, Loc loc) {
  detail::Call<isa::SelectReduce> c(loc);
  c.emit({.dst = c("dst", dst),
          .predicate = c("predicate", predicate),
          .onTrue = c("on_true", onTrue),
          .onFalse = c("on_false", onFalse),
          .reduceRes = c("reduce_res", reduceRes),
          .reduceCmd = reduceCmd,
          .reduceOp = reduceOp,
          .reversePred = reversePred});
}

// ---- Vector engine: special-purpose ---------------------------------------------------------

void bnStats(const Tensor& dst, const Tensor& data, Loc loc) {
  detail::Call<isa::BnStats> c(loc);
  c.emit({.dst = c("dst", dst), .data = c("data", data)});
}

void bnAggr(const Tensor& dst, const Tensor& data, Loc loc) {
  detail::Call<isa::BnAggr> c(loc);
  c.emit({.dst = c("dst", dst), .data = c("data", data)});
}

void max8(const Tensor& dst, const Tensor& src, Loc loc) {
  detail::Call<isa::Max8> c(loc);
  c.emit({.dst = c("dst", dst), .src = c("src", src)});
}

void ncFindIndex8(const Tensor& dst, const Tensor& data, const Tensor& vals, Loc loc) {
  detail::Call<isa::NcFindIndex8> c(loc);
  c.emit({.dst = c("dst", dst), .data = c("data", data), .vals = c("vals", vals)});
}

void ncMatchReplace8(const Tensor& dst, const Tensor& data, const Tensor& vals, float imm,
                     const std::optional<Tensor>& dstIdx, Loc loc) {
  detail::Call<isa::NcMatchReplace8> c(loc);
  c.emit({.dst = c("dst", dst),
          .data = c("data", data),
          .vals = c("vals", vals),
          .imm = imm,
          .dstIdx = c("dst_idx", dstIdx)});
}

void ncStreamShuffle(const Tensor& dst, const Tensor& src,
                     const std::vector<std::int64_t>& shuffleMask, Loc loc) {
  detail::Call<isa::NcStreamShuffle> c(loc);
  isa::NcStreamShuffle body{.dst = c("dst", dst), .src = c("src", src)};
  if (shuffleMask.size() != body.shuffleMask.size()) {
    c.fail(
        fmt::format("shuffle_mask has {} entries; it needs exactly {} (one per partition of a "
                    "quadrant, {} to keep the dst partition)",
                    shuffleMask.size(), body.shuffleMask.size(), isa::kShuffleKeep));
  }
  std::copy(shuffleMask.begin(), shuffleMask.end(), body.shuffleMask.begin());
  c.emit(body);
}

}  // namespace trn::kernel::nisa
