#include "trn/fabric/collective.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <utility>

#include "ring_steps.h"
#include "trn/fabric/all_to_allv.h"

namespace trn::fabric {
namespace {

constexpr std::array<std::pair<Algorithm, std::string_view>, 6> kAlgorithmNames = {{
    {Algorithm::kRing, "ring"},
    {Algorithm::kMesh, "mesh"},
    {Algorithm::kRecursive, "rdh"},
    {Algorithm::kTorus, "torus"},
    {Algorithm::kKangaRing, "kangaring"},
    {Algorithm::kChipMesh, "chipmesh"},
}};

/// DMA compute adds at most 16 sources (hardware-trn2.md §9): the two-step mesh's last reduction
/// reads a partial from every chip.
constexpr std::int64_t kMaxReduceSources = 16;

template <typename E, std::size_t N>
std::string namesOf(const std::array<std::pair<E, std::string_view>, N>& names) {
  std::string out;
  for (const auto& [value, name] : names) {
    out += out.empty() ? "" : ", ";
    out += name;
  }
  return out;
}

bool dividesAmongRanks(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather ||
         op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllToAll;
}

/// All-reduce, reduce-scatter and all-gather: the operations of the ring-like and two-step
/// algorithms.
bool reducesOrGathers(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather ||
         op == CollectiveOp::kReduceScatter;
}

}  // namespace

Status checkRequest(const Topology& topology, const CollectiveRequest& r) {
  if (r.group.empty()) {
    return invalidArgument("a collective needs at least one rank");
  }
  std::vector<bool> used(static_cast<std::size_t>(topology.chips()), false);
  for (std::size_t i = 0; i < r.group.size(); ++i) {
    const std::int64_t c = r.group[i];
    if (c < 0 || c >= topology.chips()) {
      return invalidArgument(fmt::format("rank {} is chip {}, but the system has chips 0..{}", i, c,
                                         topology.chips() - 1));
    }
    if (used[static_cast<std::size_t>(c)]) {
      return invalidArgument(fmt::format("chip {} is in the group twice (rank {})", c, i));
    }
    used[static_cast<std::size_t>(c)] = true;
  }
  if (r.elementBytes < 1 || r.bytes < 0 || r.bytes % r.elementBytes != 0) {
    return invalidArgument(
        fmt::format("{} bytes is not a whole number of {}-byte elements", r.bytes, r.elementBytes));
  }
  const auto n = static_cast<std::int64_t>(r.group.size());
  if (dividesAmongRanks(r.op) && (r.bytes / r.elementBytes) % n != 0) {
    return invalidArgument(
        fmt::format("{} of {} bytes ({} elements) does not divide among {} "
                    "ranks",
                    opName(r.op), r.bytes, r.bytes / r.elementBytes, n));
  }
  if (r.op == CollectiveOp::kAllToAllV) {
    const std::int64_t elements = r.bytes / r.elementBytes;
    return checkVariableCounts(r.variable, n, elements, elements)
        .withContext(
            fmt::format("all_to_allv over {} ranks with buffers of {} elements", n, elements));
  }
  if (!r.variable.counts.empty()) {
    return invalidArgument(
        fmt::format("{} takes no per-rank counts (only all_to_allv does)", opName(r.op)));
  }
  if (r.op == CollectiveOp::kBroadcast && (r.root < 0 || r.root >= n)) {
    return invalidArgument(fmt::format("broadcast root {} is not a rank (0..{})", r.root, n - 1));
  }
  return {};
}

std::string_view opName(CollectiveOp op) { return isa::enumName(op); }

std::string_view algorithmName(Algorithm a) {
  for (const auto& [value, name] : kAlgorithmNames) {
    if (value == a) {
      return name;
    }
  }
  return "?";
}

Result<CollectiveOp> parseOp(std::string_view name) {
  CollectiveOp op = CollectiveOp::kAllReduce;
  if (isa::enumFromName(name, op)) {
    return op;
  }
  return invalidArgument(fmt::format("unknown collective '{}' (one of {})", name,
                                     namesOf(isa::EnumTable<CollectiveOp>::kEntries)));
}

Result<Algorithm> parseAlgorithm(std::string_view name) {
  for (const auto& [value, n] : kAlgorithmNames) {
    if (n == name) {
      return value;
    }
  }
  return invalidArgument(
      fmt::format("unknown algorithm '{}' (one of {})", name, namesOf(kAlgorithmNames)));
}

std::uint64_t plannedOperations(const CollectiveRequest& request, Algorithm algorithm) {
  const auto n = static_cast<std::uint64_t>(request.group.size());
  const std::uint64_t pairs = n * (n > 0 ? n - 1 : 0);
  const auto log = static_cast<std::uint64_t>(std::bit_width(n));
  const bool allReduce = request.op == CollectiveOp::kAllReduce;
  switch (algorithm) {
    case Algorithm::kRing:
      return (allReduce ? 6 : 4) * pairs + 4 * n + 8 * n;
    case Algorithm::kMesh:
      return (allReduce ? 2 : 1) * (pairs + n) + n;
    case Algorithm::kRecursive:
      return (allReduce ? 4 : 2) * n * log + n;
    case Algorithm::kTorus:
      // At most the ring's count; a 4 x 4 x 4 x 64 grid is far below it.
      return (allReduce ? 6 : 4) * n * 80 + 4 * n;
    case Algorithm::kKangaRing:
      // Up to 4 channels of n/2 members, each (n/2)^2 operations a phase, and a few per member.
      return (allReduce ? 2 : 1) * n * n + 8 * n;
    case Algorithm::kChipMesh:
      // A partial per rank and chip, a block per pair of chips and the copies within chips.
      return (allReduce ? 2 : 1) * (pairs + 2 * n);
  }
  return 0;
}

std::uint64_t concurrentMessages(const CollectiveRequest& request, Algorithm algorithm) {
  const auto n = static_cast<std::uint64_t>(request.group.size());
  // A ring's chip sends and receives on each of its two channels; recursive halving exchanges
  // with one partner; the torus runs one ring per dimension at a time. A mesh chip sends to and
  // receives from every other at once.
  return algorithm == Algorithm::kMesh || algorithm == Algorithm::kChipMesh ? 2 * n : 4;
}

std::string unsupportedReason(const Topology& topology, const CollectiveRequest& request,
                              Algorithm algorithm) {
  const std::size_t n = request.group.size();
  const CollectiveOp op = request.op;
  switch (algorithm) {
    case Algorithm::kRing:
      if (op == CollectiveOp::kAllToAll || op == CollectiveOp::kAllToAllV ||
          op == CollectiveOp::kPermute) {
        return fmt::format("has no {} form here (mesh sends every piece directly)", opName(op));
      }
      break;
    case Algorithm::kMesh:
      break;
    case Algorithm::kRecursive:
      if (!std::has_single_bit(n)) {
        return fmt::format("needs a power-of-two number of ranks, not {}", n);
      }
      if (op == CollectiveOp::kAllToAll || op == CollectiveOp::kAllToAllV ||
          op == CollectiveOp::kPermute) {
        return fmt::format("has no {} form", opName(op));
      }
      break;
    case Algorithm::kTorus:
      if (!reducesOrGathers(op)) {
        return fmt::format("has no {} form", opName(op));
      }
      if (n > 1 && detail::torusDimensions(topology, request.group).empty()) {
        return "needs a group that fills the grid's first dimensions in order (rank i is chip i, "
               "the number of ranks a product of the innermost dimension sizes)";
      }
      break;
    case Algorithm::kKangaRing:
    case Algorithm::kChipMesh:
      if (!reducesOrGathers(op)) {
        return fmt::format("has no {} form", opName(op));
      }
      if (std::string why = detail::wholeChipsUnsupported(topology, request.group,
                                                          algorithm == Algorithm::kKangaRing);
          !why.empty()) {
        return why;
      }
      if (const auto chips = static_cast<std::int64_t>(n) / topology.ranksPerChip();
          algorithm == Algorithm::kChipMesh && chips > kMaxReduceSources) {
        return fmt::format(
            "reduces a partial from each of {} chips at once, and DMA compute adds at most {}",
            chips, kMaxReduceSources);
      }
      break;
  }
  const std::uint64_t ops = plannedOperations(request, algorithm);
  if (ops > kMaxPlanOperations) {
    return fmt::format("its plan would hold about {} operations, more than the {} timed", ops,
                       kMaxPlanOperations);
  }
  const std::uint64_t sharing = concurrentMessages(request, algorithm);
  if (ops * sharing > kMaxPlanWork) {
    return fmt::format(
        "its plan of about {} operations, up to {} messages sharing a chip's HBM, "
        "would take too long to time",
        ops, sharing);
  }
  return {};
}

Result<Plan> buildPlan(const Topology& topology, const CollectiveRequest& request,
                       Algorithm algorithm) {
  TRN_RETURN_IF_ERROR(checkRequest(topology, request));
  if (std::string why = unsupportedReason(topology, request, algorithm); !why.empty()) {
    return invalidArgument(
        fmt::format("{} {}: {}", algorithmName(algorithm), opName(request.op), why));
  }
  Plan plan(topology, request.elementBytes);
  switch (algorithm) {
    case Algorithm::kRing:
      detail::buildRingPlan(plan, request);
      break;
    case Algorithm::kMesh:
      detail::buildMeshPlan(plan, request);
      break;
    case Algorithm::kRecursive:
      detail::buildRecursivePlan(plan, request);
      break;
    case Algorithm::kTorus:
      detail::buildTorusPlan(plan, request);
      break;
    case Algorithm::kKangaRing:
      detail::buildKangaRingPlan(plan, request);
      break;
    case Algorithm::kChipMesh:
      detail::buildChipMeshPlan(plan, request);
      break;
  }
  return plan;
}

Result<CollectiveResult> runCollective(const Topology& topology, const CollectiveRequest& request,
                                       std::optional<Algorithm> algorithm) {
  TRN_RETURN_IF_ERROR(checkRequest(topology, request));
  CollectiveResult result;
  bool found = false;
  std::string reasons;
  for (const Algorithm a : kAllAlgorithms) {
    Candidate candidate;
    candidate.algorithm = a;
    if (algorithm && *algorithm != a) {
      candidate.skipped = "not asked for";
      result.candidates.push_back(candidate);
      continue;
    }
    candidate.skipped = unsupportedReason(topology, request, a);
    if (!candidate.skipped.empty()) {
      reasons += fmt::format("; {}: {}", algorithmName(a), candidate.skipped);
      result.candidates.push_back(candidate);
      continue;
    }
    TRN_ASSIGN_OR_RETURN(Plan plan, buildPlan(topology, request, a));
    TRN_ASSIGN_OR_RETURN(PlanTiming timing, simulate(plan));
    candidate.picoseconds = timing.makespan;
    candidate.messages = plan.messages();
    if (!found || timing.makespan < result.picoseconds) {
      found = true;
      result.algorithm = a;
      result.picoseconds = timing.makespan;
      result.messages = plan.messages();
      result.timing = std::move(timing);
    }
    result.candidates.push_back(candidate);
  }
  if (!found) {
    return invalidArgument(fmt::format("no algorithm can run {} over {} ranks{}",
                                       opName(request.op), request.group.size(), reasons));
  }
  return result;
}

double busBandwidthFactor(CollectiveOp op, std::int64_t ranks) {
  const auto n = static_cast<double>(std::max<std::int64_t>(ranks, 1));
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2 * (n - 1) / n;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllToAllV:
      return (n - 1) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kPermute:
      return 1;
  }
  return 1;
}

}  // namespace trn::fabric
