#include "trn/fabric/topology.h"

#include <fmt/format.h>

#include <limits>

namespace trn::fabric {
namespace {

constexpr double kPicosecondsPerSecond = 1e12;
/// Resources are indexed by 32 bits.
constexpr std::int64_t kMaxResources = std::numeric_limits<ResourceId>::max();

}  // namespace

Result<Topology> Topology::create(const spec::SystemSpec& system, const spec::ChipSpec& chip) {
  Topology t;
  if (system.dimensions.empty()) {
    return invalidArgument(fmt::format("system {} has no dimensions", system.name));
  }
  t.dimensions_ = system.dimensions;
  std::int64_t chips = 1;
  for (const spec::Dimension& d : system.dimensions) {
    const spec::LinkSpec* link = system.link(d.link);
    if (link == nullptr) {
      return invalidArgument(
          fmt::format("system {}: dimension {} names link '{}', which it "
                      "does not declare",
                      system.name, d.name, d.link));
    }
    if (d.size < 1 || link->bandwidth.count() <= 0) {
      return invalidArgument(
          fmt::format("system {}: dimension {} needs a size and a link "
                      "bandwidth above 0",
                      system.name, d.name));
    }
    t.strides_.push_back(chips);
    if (__builtin_mul_overflow(chips, d.size, &chips) ||
        chips > kMaxResources / static_cast<std::int64_t>(2 * system.dimensions.size() + 1)) {
      return invalidArgument(fmt::format("system {} has too many chips to model", system.name));
    }
    t.latency_.push_back(link->latency.count());
    t.overhead_.push_back(link->messageOverhead.count());
  }
  t.chips_ = chips;
  t.bandwidth_.assign(t.linkCount() + static_cast<std::size_t>(chips), 0.0);
  for (std::int64_t c = 0; c < chips; ++c) {
    for (std::size_t d = 0; d < t.dimensions_.size(); ++d) {
      const spec::Dimension& dim = t.dimensions_[d];
      const double bw =
          static_cast<double>(system.link(dim.link)->bandwidth.count()) / kPicosecondsPerSecond;
      const std::int64_t x = t.coordinate(c, d);
      const bool line = dim.kind == spec::DimensionKind::kLine;
      const bool hasPositive = dim.size > 1 && !(line && x == dim.size - 1);
      const bool hasNegative = dim.size > 1 && !(line && x == 0);
      t.bandwidth_[t.link(c, d, 0)] = hasPositive ? bw : 0.0;
      t.bandwidth_[t.link(c, d, 1)] = hasNegative ? bw : 0.0;
    }
    t.bandwidth_[t.hbm(c)] =
        static_cast<double>(chip.hbm.bandwidth.count()) / kPicosecondsPerSecond;
  }
  return t;
}

std::string Topology::resourceName(ResourceId r) const {
  if (!isLink(r)) {
    return fmt::format("chip {} HBM", r - linkCount());
  }
  const std::size_t perChip = dimensions_.size() * 2;
  const std::size_t chip = r / perChip;
  const std::size_t d = (r % perChip) / 2;
  const bool second = r % 2 == 1;
  const spec::Dimension& dim = dimensions_[d];
  if (dim.kind == spec::DimensionKind::kSwitch) {
    return fmt::format("chip {} {} {}", chip, dim.name, second ? "down" : "up");
  }
  return fmt::format("chip {} {}{}", chip, dim.name, second ? "-" : "+");
}

Route Topology::route(std::int64_t from, std::int64_t to, int direction) const {
  Route route;
  std::int64_t at = from;
  for (std::size_t d = 0; d < dimensions_.size(); ++d) {
    const spec::Dimension& dim = dimensions_[d];
    const std::int64_t a = coordinate(at, d);
    const std::int64_t b = coordinate(to, d);
    if (a == b) {
      continue;
    }
    route.overhead += overhead_[d];
    if (dim.kind == spec::DimensionKind::kSwitch) {
      const std::int64_t next = withCoordinate(at, d, b);
      route.links.push_back(link(at, d, 0));
      route.links.push_back(link(next, d, 1));
      route.latency += latency_[d];
      at = next;
      continue;
    }
    int step = b > a ? 1 : -1;
    std::int64_t hops = b > a ? b - a : a - b;
    if (dim.kind == spec::DimensionKind::kRing) {
      const std::int64_t forward = (b - a + dim.size) % dim.size;
      const std::int64_t backward = dim.size - forward;
      // Halfway round, chips at even coordinates go forward and odd ones back, so that the
      // exchanges of recursive halving (all at that distance) use both directions evenly.
      const bool tieForward = forward == backward && a % 2 == 0;
      const bool goForward =
          direction > 0 || (direction == 0 && (forward < backward || tieForward));
      step = goForward ? 1 : -1;
      hops = goForward ? forward : backward;
    }
    for (std::int64_t h = 0; h < hops; ++h) {
      route.links.push_back(link(at, d, step > 0 ? 0 : 1));
      route.latency += latency_[d];
      const std::int64_t x = (coordinate(at, d) + step + dim.size) % dim.size;
      at = withCoordinate(at, d, x);
    }
  }
  return route;
}

}  // namespace trn::fabric
