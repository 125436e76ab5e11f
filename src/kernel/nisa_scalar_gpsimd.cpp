// nisa functions of the scalar engine and the GpSimd engine (nisa.h).
#include <fmt/format.h>

#include "nisa_call.h"
#include "trn/kernel/nisa.h"

namespace trn::kernel::nisa {

// ---- Scalar engine --------------------------------------------------------------------------

void activation(const Tensor& dst, const Tensor& data, ActivationFunction op, const Scalar& bias,
                const Scalar& scale, AluOp reduceOp, const std::optional<Tensor>& reduceRes,
                ReduceCmd reduceCmd, Loc loc) {
  detail::Call<isa::Activation> c(loc);
  c.emit({.dst = c("dst", dst),
          .function = op,
          .data = c("data", data),
          .bias = c("bias", bias),
          .scale = c("scale", scale),
          .reduceOp = reduceOp,
          .reduceRes = c("reduce_res", reduceRes),
          .reduceCmd = reduceCmd});
}

void activationReduce(const Tensor& dst, const Tensor& reduceRes, const Tensor& data,
                      ActivationFunction op, const Scalar& bias, const Scalar& scale,
                      AluOp reduceOp, Loc loc) {
  detail::Call<isa::ActivationReduce> c(loc);
  c.emit({.dst = c("dst", dst),
          .function = op,
          .data = c("data", data),
          .reduceOp = reduceOp,
          .reduceRes = c("reduce_res", reduceRes),
          .bias = c("bias", bias),
          .scale = c("scale", scale)});
}

// ---- GpSimd engine --------------------------------------------------------------------------

void iota(const Tensor& dst, const std::vector<isa::Dim>& pattern, std::int64_t offset,
          std::int64_t channelMultiplier, Loc loc) {
  detail::Call<isa::Iota> c(loc);
  c.emit({.dst = c("dst", dst),
          .pattern = detail::indexPattern(c, pattern),
          .offset = offset,
          .channelMultiplier = channelMultiplier});
}

void affineSelect(const Tensor& dst, const Tensor& onTrueTile, const std::vector<isa::Dim>& pattern,
                  std::int64_t channelMultiplier, float onFalseValue, AluOp cmpOp,
                  std::int64_t offset, Loc loc) {
  detail::Call<isa::AffineSelect> c(loc);
  c.emit({.dst = c("dst", dst),
          .pattern = detail::indexPattern(c, pattern),
          .offset = offset,
          .channelMultiplier = channelMultiplier,
          .onTrueTile = c("on_true_tile", onTrueTile),
          .onFalseValue = onFalseValue,
          .cmpOp = cmpOp});
}

void tensorPartitionReduce(const Tensor& dst, const Tensor& data, PartitionReduceOp op, Loc loc) {
  detail::Call<isa::TensorPartitionReduce> c(loc);
  c.emit({.dst = c("dst", dst), .op = op, .data = c("data", data)});
}

void localGather(const Tensor& dst, const Tensor& srcBuffer, const Tensor& index,
                 std::int64_t numElemPerIdx, std::int64_t numValidIndices, Loc loc) {
  detail::Call<isa::LocalGather> c(loc);
  c.emit({.dst = c("dst", dst),
          .srcBuffer = c("src_buffer", srcBuffer),
          .index = c("index", index),
          .numElemPerIdx = numElemPerIdx,
          .numValidIndices = numValidIndices});
}

void ncNGather(const Tensor& dst, const Tensor& data, const Tensor& indices, Loc loc) {
  detail::Call<isa::NcNGather> c(loc);
  c.emit({.dst = c("dst", dst), .data = c("data", data), .indices = c("indices", indices)});
}

void coreBarrier(const Tensor& data, Engine engine, Loc loc) {
  detail::Call<isa::CoreBarrier> c(loc);
  c("data", data);
  if (data.memory() != isa::Memory::kHbm) {
    c.fail("data must be an HBM tensor the cores exchange through");
  }
  c.emit(isa::CoreBarrier{}, engine);
}

void sendrecv(const Tensor& dst, const Tensor& src, Engine engine, Loc loc) {
  detail::Call<isa::SendRecv> c(loc);
  c.emit({.dst = c("dst", dst), .src = c("src", src)}, engine);
}

namespace {

/// Emits a collective on `c`: `groups` as NKI's replica groups (empty: every rank), checked.
void emitCollective(detail::Call<isa::Collective>& c, isa::CollectiveOp op, const Tensor& dst,
                    const Tensor& src, const std::optional<Tensor>& counts, isa::AluOp reduce,
                    Engine engine, const std::vector<std::vector<int>>& groups) {
  if (dst.memory() != isa::Memory::kHbm || src.memory() != isa::Memory::kHbm) {
    c.fail("a collective moves HBM tensors: store tiles to HBM first");
  }
  isa::ReplicaGroups replicas;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::vector<int>& members = groups[g];
    if (members.empty() || members.size() != groups.front().size()) {
      c.fail(
          fmt::format("replica group {} has {} ranks and group 0 has {}: the groups of a "
                      "collective are non-empty and of one size",
                      g, members.size(), groups.front().size()));
    }
    for (const int rank : members) {
      if (replicas.count == isa::ReplicaGroups::kMaxRanks) {
        c.fail(
            fmt::format("replica groups list more than {} ranks", isa::ReplicaGroups::kMaxRanks));
      }
      replicas.ranks[static_cast<std::size_t>(replicas.count++)] = rank;
    }
    replicas.groupSize = static_cast<std::int32_t>(groups.front().size());
  }
  if (Status form = isa::checkReplicaGroupsForm(replicas); !form.ok()) {
    c.fail(form.message());
  }
  c.emit({.op = op,
          .reduce = reduce,
          .dst = c("dst", dst),
          .src = c("src", src),
          .counts = c("counts", counts),
          .groups = replicas},
         engine);
}

}  // namespace

void collective(isa::CollectiveOp op, const Tensor& dst, const Tensor& src, isa::AluOp reduce,
                Engine engine, const std::vector<std::vector<int>>& groups, Loc loc) {
  detail::Call<isa::Collective> c(loc);
  emitCollective(c, op, dst, src, std::nullopt, reduce, engine, groups);
}

void allToAllV(const Tensor& dst, const Tensor& src, const Tensor& counts, Engine engine,
               const std::vector<std::vector<int>>& groups, Loc loc) {
  detail::Call<isa::Collective> c(loc);
  if (counts.memory() != isa::Memory::kHbm) {
    c.fail("all_to_allv's counts are an HBM tensor: store them to HBM first");
  }
  emitCollective(c, isa::CollectiveOp::kAllToAllV, dst, src, counts, isa::AluOp::kAdd, engine,
                 groups);
}

}  // namespace trn::kernel::nisa
