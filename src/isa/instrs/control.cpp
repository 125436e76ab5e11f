#include "trn/isa/instrs/control.h"

#include <fmt/format.h>

#include <limits>
#include <utility>

#include "trn/isa/verifier.h"

namespace trn::isa {
namespace {

Status checkRegister(std::int64_t reg, const VerifyContext& ctx) {
  if (reg < 0 || reg >= ctx.limits.registers) {
    return failedPrecondition(
        fmt::format("register r{} does not exist (0..{})", reg, ctx.limits.registers - 1));
  }
  return {};
}

Status checkInt32(std::int64_t value) {
  if (value < std::numeric_limits<std::int32_t>::min() ||
      value > std::numeric_limits<std::int32_t>::max()) {
    return failedPrecondition(fmt::format("value {} does not fit a 32-bit register", value));
  }
  return {};
}

/// Whether `ap` visits a dense row-major range: each stride the size of what it steps over.
bool isContiguous(const AccessPattern& ap) {
  std::int64_t expected = 1;
  for (std::int32_t d = ap.numDims; d-- > 0;) {
    const Dim& dim = ap.dims[static_cast<std::size_t>(d)];
    if (dim.count > 1 && dim.stride != expected) {
      return false;
    }
    expected *= dim.count;
  }
  return ap.partitionCount <= 1 || ap.partitionStride == expected;
}

}  // namespace

Status Collective::verify(const VerifyContext& /*ctx*/) const {
  TRN_RETURN_IF_ERROR(requireMemory("dst", dst, {Memory::kHbm}));
  TRN_RETURN_IF_ERROR(requireMemory("src", src, {Memory::kHbm}));
  if (dst.dtype != src.dtype) {
    return failedPrecondition(fmt::format("dst is {} and src {}: a collective moves one dtype",
                                          dtypeName(dst.dtype), dtypeName(src.dtype)));
  }
  for (const auto& [name, ap] : {std::pair{"dst", &dst}, std::pair{"src", &src}}) {
    if (!isContiguous(*ap)) {
      return failedPrecondition(
          fmt::format("{} is not a contiguous HBM range (a collective moves whole ranges)", name));
    }
  }
  TRN_RETURN_IF_ERROR(checkReplicaGroupsForm(groups).withContext("field 'groups'"));
  if (op != CollectiveOp::kAllToAllV) {
    if (counts) {
      return failedPrecondition(
          fmt::format("{} takes no counts (only all_to_allv does)", enumName(op)));
    }
  } else {
    if (!counts) {
      return failedPrecondition(
          "all_to_allv needs counts: a uint32 HBM tensor of send counts and displacements");
    }
    TRN_RETURN_IF_ERROR(requireMemory("counts", *counts, {Memory::kHbm}));
    if (counts->dtype != DType::kUint32 || !isContiguous(*counts)) {
      return failedPrecondition(
          fmt::format("counts is {}{}: all_to_allv's counts are a contiguous uint32 HBM range",
                      dtypeName(counts->dtype), isContiguous(*counts) ? "" : ", not contiguous"));
    }
    if (!groups.all()) {
      const std::int64_t rows = counts->elementCount() / groups.groupSize;
      if (counts->elementCount() % groups.groupSize != 0 || rows < 2 || rows > 4) {
        return failedPrecondition(fmt::format(
            "counts has {} elements: all_to_allv over replica groups of {} ranks takes 2 to 4 "
            "rows of {} (send counts, send displacements, receive counts, receive displacements)",
            counts->elementCount(), groups.groupSize, groups.groupSize));
      }
    }
    return {};  // src and dst may differ: the counts say what moves
  }
  if (!groups.all()) {
    // The sizes by the group's size; with every rank, the run's size is the scheduler's to check.
    const std::int64_t n = groups.groupSize;
    const std::int64_t srcCount = src.elementCount();
    const std::int64_t dstCount = dst.elementCount();
    const bool fits = op == CollectiveOp::kAllGather       ? dstCount == srcCount * n
                      : op == CollectiveOp::kReduceScatter ? srcCount == dstCount * n
                                                           : srcCount == dstCount;
    if (!fits) {
      return failedPrecondition(fmt::format(
          "{} over replica groups of {} ranks with src of {} elements and dst of {}: {}",
          enumName(op), n, srcCount, dstCount,
          op == CollectiveOp::kAllGather       ? "dst must be the group size times src"
          : op == CollectiveOp::kReduceScatter ? "src must be the group size times dst"
                                               : "src and dst must be the same size"));
    }
  }
  if (op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter) {
    if (reduce != AluOp::kAdd && reduce != AluOp::kMax && reduce != AluOp::kMin) {
      return failedPrecondition(
          fmt::format("reduce={} is not a collective reduction (add, max or "
                      "min)",
                      enumName(reduce)));
    }
    if (src.dtype != DType::kFp32 && src.dtype != DType::kBf16) {
      return failedPrecondition(
          fmt::format("{} reduces, and the collective cores reduce in fp32 or bf16, not {}",
                      enumName(op), dtypeName(src.dtype)));
    }
  }
  return {};
}

Status SendRecv::verify(const VerifyContext& /*ctx*/) const {
  TRN_RETURN_IF_ERROR(requireMemory("dst", dst, {Memory::kSbuf}));
  TRN_RETURN_IF_ERROR(requireMemory("src", src, {Memory::kSbuf}));
  if (dst.dtype != src.dtype) {
    return failedPrecondition(
        fmt::format("dst is {} and src {}: sendrecv copies bytes, so the "
                    "two tiles must have one dtype",
                    dtypeName(dst.dtype), dtypeName(src.dtype)));
  }
  return requireSameShape("dst", dst, "src", src);
}

Status RegSet::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(checkRegister(reg, ctx));
  return checkInt32(value);
}

Status RegSet::execute(ExecContext& ctx) const {
  ctx.reg(static_cast<int>(reg)) = static_cast<std::int32_t>(value);
  return {};
}

Status RegAdd::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(checkRegister(reg, ctx));
  return checkInt32(value);
}

Status RegAdd::execute(ExecContext& ctx) const {
  std::int32_t& r = ctx.reg(static_cast<int>(reg));
  r = static_cast<std::int32_t>(static_cast<std::uint32_t>(r) + static_cast<std::uint32_t>(value));
  return {};
}

Status BranchNonZero::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(checkRegister(reg, ctx));
  if (target < 0 || static_cast<std::size_t>(target) >= ctx.streamLength) {
    return failedPrecondition(fmt::format("branch target {} is outside this stream (0..{})", target,
                                          ctx.streamLength - 1));
  }
  return {};
}

Status BranchNonZero::execute(ExecContext& ctx) const {
  if (ctx.reg(static_cast<int>(reg)) != 0) {
    ctx.jumpTo(target);
  }
  return {};
}

}  // namespace trn::isa
