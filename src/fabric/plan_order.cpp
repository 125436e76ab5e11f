// checkPlanOrder: every two data moves that touch the same elements of one chip, one of them
// writing, must be ordered by the plan's dependencies.
#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "trn/fabric/functional_collective.h"

namespace trn::fabric {
namespace {

struct Touch {
  OpId op = 0;
  std::int64_t chip = 0;
  Region region = Region::kBuffer;
  std::int64_t begin = 0;  ///< elements [begin, end) of the region
  std::int64_t end = 0;
  bool write = false;
};

void addRuns(std::vector<Touch>& out, OpId op, std::int64_t chip, const Segment& s, bool write) {
  for (std::int64_t p = 0; p < s.pieces; ++p) {
    if (s.length > 0) {
      const std::int64_t begin = s.begin + p * s.stride;
      out.push_back({op, chip, s.region, begin, begin + s.length, write});
    }
  }
}

std::string describe(const Plan& plan, OpId op) {
  const DataMove& m = plan.moves()[plan.ops()[op].move];
  std::string to;
  for (const Access& w : plan.writesOf(m)) {
    to += fmt::format("{}chip {}", to.empty() ? "" : " and ", w.place);
  }
  return m.kind == DataMove::Kind::kCopy
             ? fmt::format("operation {} (a copy from chip {} to {})", op, m.issuer, to)
             : fmt::format("operation {} (a reduction on chip {} into {})", op, m.issuer, to);
}

}  // namespace

Status checkPlanOrder(const Plan& plan) {
  const std::vector<PlanOp>& ops = plan.ops();
  if (ops.size() > kMaxCheckedOperations) {
    return invalidArgument(fmt::format("a plan of {} operations is too large to check (at most {})",
                                       ops.size(), kMaxCheckedOperations));
  }
  // before[i]: the operations that end before operation i starts (its ancestors), as bits.
  const std::size_t words = (ops.size() + 63) / 64;
  std::vector<std::uint64_t> before(ops.size() * words, 0);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    std::uint64_t* mine = &before[i * words];
    for (const OpId p : plan.predecessorsOf(ops[i])) {
      const std::uint64_t* theirs = &before[p * words];
      for (std::size_t w = 0; w < words; ++w) {
        mine[w] |= theirs[w];
      }
      mine[p / 64] |= std::uint64_t{1} << (p % 64);
    }
  }
  auto ordered = [&](OpId a, OpId b) {  // a < b
    return (before[b * words + a / 64] >> (a % 64) & 1) != 0;
  };
  // Staging is private to a copy and the reduction that consumes it, so only the buffers count.
  std::vector<Touch> accesses;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].move == kNoMove) {
      continue;
    }
    const DataMove& m = plan.moves()[ops[i].move];
    const auto op = static_cast<OpId>(i);
    for (const Access& r : plan.readsOf(m)) {
      if (r.segment.region != Region::kStaging) {
        addRuns(accesses, op, r.place, r.segment, false);
      }
    }
    for (const Access& w : plan.writesOf(m)) {
      if (w.segment.region != Region::kStaging) {
        addRuns(accesses, op, w.place, w.segment, true);
      }
    }
  }
  std::sort(accesses.begin(), accesses.end(), [](const Touch& a, const Touch& b) {
    return std::tie(a.chip, a.region, a.begin, a.op) < std::tie(b.chip, b.region, b.begin, b.op);
  });
  for (std::size_t i = 0; i < accesses.size(); ++i) {
    const Touch& a = accesses[i];
    for (std::size_t j = i + 1; j < accesses.size(); ++j) {
      const Touch& b = accesses[j];
      if (b.chip != a.chip || b.region != a.region || b.begin >= a.end) {
        break;
      }
      if (a.op == b.op || (!a.write && !b.write)) {
        continue;
      }
      const OpId first = std::min(a.op, b.op);
      const OpId second = std::max(a.op, b.op);
      if (!ordered(first, second)) {
        return failedPrecondition(fmt::format(
            "{} and {} touch elements {}..{} of chip {}'s {} and neither waits for the other",
            describe(plan, first), describe(plan, second), std::max(a.begin, b.begin),
            std::min(a.end, b.end) - 1, a.chip,
            a.region == Region::kBuffer ? "buffer" : "receive"));
      }
    }
  }
  return {};
}

}  // namespace trn::fabric
