#include "trn/fabric/kernel_collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "trn/fabric/all_to_allv.h"
#include "trn/fabric/functional_collective.h"

namespace trn::fabric {
namespace {

ReduceOp reduceOf(isa::AluOp op) {
  return op == isa::AluOp::kMax   ? ReduceOp::kMax
         : op == isa::AluOp::kMin ? ReduceOp::kMin
                                  : ReduceOp::kSum;
}

/// The request's size from one rank's operands, or an error when they do not fit the operation.
Result<std::int64_t> requestBytes(const core::CollectiveCall& call, std::int64_t ranks) {
  const CollectiveOp op = call.instr->op;
  const std::int64_t src = call.srcBytes;
  const std::int64_t dst = call.dstBytes;
  const bool fits = op == CollectiveOp::kAllGather       ? dst == src * ranks
                    : op == CollectiveOp::kReduceScatter ? src == dst * ranks
                                                         : src == dst;
  if (!fits) {
    return invalidArgument(fmt::format(
        "{} over {} ranks with src of {} bytes and dst of {}: {}", opName(op), ranks, src, dst,
        op == CollectiveOp::kAllGather       ? "dst must be the ranks times src"
        : op == CollectiveOp::kReduceScatter ? "src must be the ranks times dst"
                                             : "src and dst must be the same size"));
  }
  return op == CollectiveOp::kAllGather ? dst : src;
}

/// An all-to-all-v's exchange: from each rank's counts tensor (rows of the group size: send counts,
/// send displacements, then receive counts and receive displacements if given) in the modes with
/// data; in timing-only runs, which have no values, every rank sending an equal share of its src
/// to each (evenVariableCounts). Fails naming the rank whose counts do not fit.
Result<VariableCounts> kernelVariableCounts(std::span<const core::CollectiveCall> calls,
                                            bool withData, std::int64_t elementBytes) {
  const auto n = static_cast<std::int64_t>(calls.size());
  const core::CollectiveCall& first = calls.front();
  std::vector<RankCounts> ranks;
  for (const core::CollectiveCall& call : calls) {
    if (call.srcBytes != first.srcBytes || call.dstBytes != first.dstBytes) {
      return invalidArgument(fmt::format(
          "rank {}'s all_to_allv has src of {} bytes and dst of {}, rank {}'s {} and {}", call.rank,
          call.srcBytes, call.dstBytes, first.rank, first.srcBytes, first.dstBytes));
    }
    const std::int64_t rows = call.countsElements / n;
    if (call.countsAddress < 0 || call.countsElements % n != 0 || rows < 2 || rows > 4) {
      return invalidArgument(fmt::format(
          "rank {}'s all_to_allv counts have {} elements: over {} ranks they are 2 to 4 rows of "
          "{} (send counts, send displacements, receive counts, receive displacements)",
          call.rank, call.countsElements, n, n));
    }
    if (!withData) {
      continue;
    }
    TRN_ASSIGN_OR_RETURN(const std::span<const std::byte> bytes,
                         call.device->read(call.countsAddress, call.countsElements * 4));
    std::vector<std::vector<std::int64_t>> row(static_cast<std::size_t>(rows));
    for (std::int64_t e = 0; e < call.countsElements; ++e) {
      std::uint32_t value = 0;
      std::memcpy(&value, bytes.data() + e * 4, 4);
      row[static_cast<std::size_t>(e / n)].push_back(value);
    }
    row.resize(4);
    ranks.push_back({std::move(row[0]), std::move(row[1]), std::move(row[2]), std::move(row[3])});
  }
  const std::int64_t sendElements = first.srcBytes / elementBytes;
  const std::int64_t receiveElements = first.dstBytes / elementBytes;
  VariableCounts v;
  if (withData) {
    TRN_ASSIGN_OR_RETURN(v, variableCountsFromRanks(ranks, receiveElements));
  } else {
    v = evenVariableCounts(n, sendElements, receiveElements);
  }
  TRN_RETURN_IF_ERROR(checkVariableCounts(v, n, sendElements, receiveElements));
  return v;
}

/// Copies `bytes` from `from` to `to` within `device`.
Status copyWithin(core::DeviceMemory& device, std::int64_t to, std::int64_t from,
                  std::int64_t bytes) {
  TRN_ASSIGN_OR_RETURN(const std::span<const std::byte> data, device.read(from, bytes));
  const std::vector<std::byte> copy(data.begin(), data.end());
  return device.write(to, copy);
}

/// Per member of `group`, what `plan` asks of the DMA engines of one of its chip's NeuronCores
/// (the collective cores share every core's engines evenly, as Topology::streamBandwidth assumes)
/// and of its HBM: the bytes each operation the chip issues moves, a reduction counting as many
/// more as DMA compute is slower than a copy, over the chip's cores; and every byte any operation
/// reads or writes in the chip's HBM.
std::vector<core::CollectiveChipLoad> chipLoads(const Plan& plan,
                                                std::span<const std::int64_t> group) {
  const Topology& topology = plan.topology();
  std::vector<core::CollectiveChipLoad> byChip(static_cast<std::size_t>(topology.chips()));
  for (const PlanOp& op : plan.ops()) {
    if (op.issuer >= 0) {
      const double slower = op.rateLimit > 0 && topology.streamBandwidth() > 0
                                ? topology.streamBandwidth() / op.rateLimit
                                : 1.0;
      byChip[static_cast<std::size_t>(op.issuer)].engineBytes +=
          op.bytes * slower / static_cast<double>(topology.neuronCoresPerChip());
    }
    const std::span<const ResourceId> resources = plan.resourcesOf(op);
    const std::span<const double> weights = plan.weightsOf(op);
    for (std::size_t k = 0; k < resources.size(); ++k) {
      if (!topology.isLink(resources[k])) {
        byChip[static_cast<std::size_t>(topology.chipOf(resources[k]))].hbmBytes +=
            op.bytes * weights[k];
      }
    }
  }
  std::vector<core::CollectiveChipLoad> loads;
  for (const std::int64_t chip : group) {
    loads.push_back(byChip[static_cast<std::size_t>(chip)]);
  }
  return loads;
}

}  // namespace

Result<ConcurrentResult> FabricCollectives::timeAmongInFlight(const CollectiveRequest& request,
                                                              std::int64_t start) {
  // Still in flight: those that end after `start` and share no rank with `request` (a rank
  // reaches its next collective only once its last one has ended).
  const auto sharesARank = [&](const CollectiveRequest& other) {
    return std::any_of(other.group.begin(), other.group.end(), [&](std::int64_t rank) {
      return std::find(request.group.begin(), request.group.end(), rank) != request.group.end();
    });
  };
  std::size_t kept = 0;
  for (std::size_t i = 0; i < inFlight_.size(); ++i) {
    if (inFlightEnd_[i] > start && !sharesARank(inFlight_[i].request)) {
      inFlight_[kept] = inFlight_[i];
      inFlightEnd_[kept++] = inFlightEnd_[i];
    }
  }
  inFlight_.resize(kept);
  inFlightEnd_.resize(kept);
  // On the clock of the earliest still in flight, so that every start is >= 0.
  std::int64_t origin = start;
  for (const ConcurrentCollective& c : inFlight_) {
    origin = std::min(origin, c.start);
  }
  std::vector<ConcurrentCollective> all;
  for (const ConcurrentCollective& c : inFlight_) {
    all.push_back({c.request, c.algorithm, c.start - origin});
  }
  all.push_back({request, std::nullopt, start - origin});
  TRN_ASSIGN_OR_RETURN(ConcurrentResult timing, runConcurrentCollectives(topology_, all));
  inFlight_.push_back({request, timing.algorithms.back(), start});
  inFlightEnd_.push_back(start + timing.together.back());
  return timing;
}

Result<std::int64_t> FabricCollectives::run(std::span<const core::CollectiveCall> calls,
                                            bool withData) {
  lastLoads_.clear();
  const auto n = static_cast<std::int64_t>(calls.size());
  if (n > topology_.chips()) {
    return invalidArgument(
        fmt::format("{} ranks, but the system has {} places for ranks ({} per chip)", n,
                    topology_.chips(), topology_.ranksPerChip()));
  }
  const isa::Collective& first = *calls.front().instr;
  CollectiveRequest request;
  request.op = first.op;
  for (const core::CollectiveCall& call : calls) {
    if (call.rank >= topology_.chips()) {
      return invalidArgument(
          fmt::format("rank {}, but the system has {} places for ranks ({} per chip)", call.rank,
                      topology_.chips(), topology_.ranksPerChip()));
    }
    request.group.push_back(call.rank);
  }
  request.elementBytes = byteSize(first.src.dtype);
  const bool variable = first.op == CollectiveOp::kAllToAllV;
  if (variable) {
    // Scratch for src (and, by size, dst); what moves is the counts'.
    request.bytes = std::max(calls.front().srcBytes, calls.front().dstBytes);
  } else {
    TRN_ASSIGN_OR_RETURN(request.bytes, requestBytes(calls.front(), n));
  }
  for (std::int64_t r = 1; r < n; ++r) {
    const core::CollectiveCall& call = calls[static_cast<std::size_t>(r)];
    const isa::Collective& mine = *call.instr;
    const bool reducing =
        first.op == CollectiveOp::kAllReduce || first.op == CollectiveOp::kReduceScatter;
    if (mine.op != first.op || mine.src.dtype != first.src.dtype ||
        (reducing && mine.reduce != first.reduce)) {
      return invalidArgument(fmt::format(
          "rank {} issues {} of {} (reduce={}) where rank {} issues {} of {} (reduce={})",
          call.rank, opName(mine.op), dtypeName(mine.src.dtype), isa::enumName(mine.reduce),
          calls.front().rank, opName(first.op), dtypeName(first.src.dtype),
          isa::enumName(first.reduce)));
    }
    if (variable) {
      continue;  // kernelVariableCounts compares the sizes
    }
    TRN_ASSIGN_OR_RETURN(const std::int64_t bytes, requestBytes(call, n));
    if (bytes != request.bytes) {
      return invalidArgument(fmt::format("rank {}'s {} is of {} bytes, rank {}'s of {}", call.rank,
                                         opName(first.op), bytes, calls.front().rank,
                                         request.bytes));
    }
  }
  if (variable) {
    TRN_ASSIGN_OR_RETURN(request.variable,
                         kernelVariableCounts(calls, withData, request.elementBytes));
  }
  if (n == 1 && !variable) {
    // A group of one: the collective is a copy of the rank's src to its dst, at once.
    records_.push_back({request.op, request.bytes, std::nullopt, 0, 0, request.group});
    if (withData) {
      const core::CollectiveCall& call = calls.front();
      TRN_RETURN_IF_ERROR(copyWithin(*call.device, call.dstAddress, call.srcAddress,
                                     std::min(call.srcBytes, call.dstBytes)));
    }
    return 0;
  }
  TRN_ASSIGN_OR_RETURN(const ConcurrentResult timing,
                       timeAmongInFlight(request, calls.front().start));
  const Algorithm algorithm = timing.algorithms.back();
  const std::int64_t picoseconds = timing.together.back();
  records_.push_back(
      {request.op, request.bytes, algorithm, picoseconds, timing.alone.back(), request.group});
  TRN_ASSIGN_OR_RETURN(const Plan plan, buildPlan(topology_, request, algorithm));
  lastLoads_ = chipLoads(plan, request.group);
  if (!withData) {
    return picoseconds;
  }
  // Scratch buffers in each rank's HBM (stack 0), given back at the end.
  std::vector<RankMemory> ranks;
  std::vector<std::int64_t> tops;
  for (std::int64_t r = 0; r < n; ++r) {
    const core::CollectiveCall& call = calls[static_cast<std::size_t>(r)];
    core::DeviceMemory& device = *call.device;
    tops.push_back(device.top(0));
    RankMemory m{&device, 0, 0};
    TRN_ASSIGN_OR_RETURN(m.buffer, device.allocate(request.bytes, 0, "collective buffer"));
    // An all-to-all-v receives straight into dst, leaving what no rank sends as it was.
    if (variable) {
      m.receive = call.dstAddress;
    } else {
      TRN_ASSIGN_OR_RETURN(m.receive, device.allocate(request.bytes, 0, "collective buffer"));
    }
    const std::int64_t at =
        request.op == CollectiveOp::kAllGather ? m.buffer + r * call.srcBytes : m.buffer;
    TRN_RETURN_IF_ERROR(copyWithin(device, at, call.srcAddress, call.srcBytes));
    ranks.push_back(m);
  }
  TRN_RETURN_IF_ERROR(
      executePlan(plan, request.group, first.src.dtype, reduceOf(first.reduce), ranks));
  for (std::int64_t r = 0; r < n && !variable; ++r) {
    const core::CollectiveCall& call = calls[static_cast<std::size_t>(r)];
    const RankMemory& m = ranks[static_cast<std::size_t>(r)];
    const bool received =
        request.op == CollectiveOp::kAllToAll || request.op == CollectiveOp::kPermute;
    const std::int64_t from = received ? m.receive
                              : request.op == CollectiveOp::kReduceScatter
                                  ? m.buffer + r * call.dstBytes
                                  : m.buffer;
    TRN_RETURN_IF_ERROR(copyWithin(*call.device, call.dstAddress, from, call.dstBytes));
  }
  for (std::int64_t r = n; r-- > 0;) {
    calls[static_cast<std::size_t>(r)].device->popTo(0, tops[static_cast<std::size_t>(r)]);
  }
  return picoseconds;
}

}  // namespace trn::fabric
