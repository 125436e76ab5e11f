// The collective nodes of the shard pass (shard.h) on the kernel-level collectives
// (fabric/kernel_collectives.h, nisa::collective): trn.AllReduce sums a row-parallel product's
// partial results over the ranks into its output; trn.AllGather gathers each rank's share into
// HBM scratch, rank after rank, and a tile loop whose reads stride over the ranks puts the shares
// in their places along the split axis. On a logical core of several cores (LNC=2) a rank's
// collective is its first core's, on the tensors the cores share in HBM; the core barrier after
// each node (and one after the gather) orders the other core's accesses around it.
#include <fmt/format.h>

#include "lowering_context.h"
#include "trn/graph/fuse_attention.h"
#include "trn/graph/shard.h"
#include "trn/kernel/nisa.h"

namespace trn::graph::detail {
namespace {

void allReduce(LoweringContext& ctx) {
  const DeviceValue& in = ctx.input(0);
  const DeviceValue out = ctx.declareOutput(0);
  if (ctx.kernel().programId(0) == 0) {
    kernel::nisa::collective(isa::CollectiveOp::kAllReduce, out.flat, in.flat);
  }
}

void allGather(LoweringContext& ctx) {
  const Node& node = ctx.node();
  const DeviceValue& in = ctx.input(0);
  const DeviceValue out = ctx.declareOutput(0);
  const std::int64_t axis = node.intAttribute("axis").value_or(0);
  const std::int64_t outer = node.intAttribute("outer").value_or(1);
  const std::int64_t ranks = node.intAttribute("ranks").value_or(1);
  if (axis < 0 || static_cast<std::size_t>(axis) >= out.sizes.size() || outer < 1 || ranks < 1 ||
      out.sizes[static_cast<std::size_t>(axis)] % (outer * ranks) != 0 ||
      elementCount(in.sizes) * ranks != elementCount(out.sizes)) {
    ctx.fail(fmt::format("axis {}, outer {} and ranks {} do not gather [{}] into [{}]", axis, outer,
                         ranks, fmt::join(in.sizes, ", "), fmt::join(out.sizes, ", ")));
  }
  const std::int64_t local = elementCount(in.sizes);
  const std::int64_t row = in.sizes.empty() ? 1 : in.sizes.back();
  const kernel::Tensor gathered = ctx.kernel()
                                      .hbmScratch(ctx.programName(node.outputs[0]) + "_of_ranks",
                                                  {ranks * local / row, row}, out.flat.dtype())
                                      .reshape({ranks * local});
  if (ctx.kernel().programId(0) == 0) {
    kernel::nisa::collective(isa::CollectiveOp::kAllGather, gathered, in.flat);
  }
  meetBetweenStages(ctx, gathered);
  const auto a = static_cast<std::size_t>(axis);
  const std::int64_t pre = elementCount(out.sizes, 0, a);
  const std::int64_t post = elementCount(out.sizes, a + 1, out.sizes.size());
  const std::int64_t n = out.sizes[a];
  const std::int64_t inner = n / (outer * ranks);
  const Sizes index = {pre, outer, ranks, inner, post};
  const Sizes reads = {n / ranks * post, inner * post, local, post, 1};
  emitCopyLoop(ctx, StridedOperand{out.flat, 0, contiguousStrides(index)},
               StridedOperand{gathered, 0, reads}, index);
}

}  // namespace

void addCollectiveLowerings(OpLowerings& table) {
  table[fmt::format("{}.{}", kTrnDomain, kAllReduceOp)] = {allReduce, "all-reduce (fabric)"};
  table[fmt::format("{}.{}", kTrnDomain, kAllGatherOp)] = {allGather,
                                                           "all-gather (fabric), tile loop"};
}

}  // namespace trn::graph::detail
