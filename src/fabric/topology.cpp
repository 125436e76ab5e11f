#include "trn/fabric/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace trn::fabric {
namespace {

constexpr double kPicosecondsPerSecond = 1e12;
/// Resources are indexed by 32 bits.
constexpr std::int64_t kMaxResources = std::numeric_limits<ResourceId>::max();

}  // namespace

Result<Topology> Topology::create(const spec::SystemSpec& system, const spec::ChipSpec& chip,
                                  std::int64_t ranksPerChip) {
  Topology t;
  if (system.dimensions.empty()) {
    return invalidArgument(fmt::format("system {} has no dimensions", system.name));
  }
  TRN_RETURN_IF_ERROR(t.addLogicalCores(chip, ranksPerChip));
  std::int64_t chips = t.ranksPerChip_;
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
    t.dimensions_.push_back(d);
    t.strides_.push_back(chips);
    if (__builtin_mul_overflow(chips, d.size, &chips) ||
        chips > kMaxResources / static_cast<std::int64_t>(2 * system.dimensions.size() + 4)) {
      return invalidArgument(fmt::format("system {} has too many chips to model", system.name));
    }
    t.latency_.push_back(link->latency.count());
    t.overhead_.push_back(link->messageOverhead.count());
    t.linkBandwidth_.push_back(static_cast<double>(link->bandwidth.count()) /
                               kPicosecondsPerSecond);
  }
  t.chips_ = chips;
  const std::size_t hbms = static_cast<std::size_t>(t.physicalChips() * t.hbmStacks_);
  t.bandwidth_.assign(t.linkCount() + hbms, 0.0);
  for (std::int64_t c = 0; c < chips; ++c) {
    for (std::size_t d = 0; d < t.dimensions_.size(); ++d) {
      const spec::Dimension& dim = t.dimensions_[d];
      const std::int64_t x = t.coordinate(c, d);
      const bool line = dim.kind == spec::DimensionKind::kLine;
      const bool hasPositive = dim.size > 1 && !(line && x == dim.size - 1);
      const bool hasNegative = dim.size > 1 && !(line && x == 0);
      t.bandwidth_[t.link(c, d, 0)] = hasPositive ? t.linkBandwidth_[d] : 0.0;
      t.bandwidth_[t.link(c, d, 1)] = hasNegative ? t.linkBandwidth_[d] : 0.0;
    }
  }
  for (std::size_t h = 0; h < hbms; ++h) {
    t.bandwidth_[t.linkCount() + h] = static_cast<double>(chip.hbm.bandwidth.count()) /
                                      kPicosecondsPerSecond / static_cast<double>(t.hbmStacks_);
  }
  const spec::Dma& dma = chip.core.dma;
  t.collectiveCores_ = std::max<std::int64_t>(chip.chip.collectiveCores, 0);
  t.neuronCores_ = std::max<std::int64_t>(chip.chip.neuronCores, 1);
  if (t.collectiveCores_ > 0 && chip.chip.neuronCores > 0 && dma.enginesPerCore > 0 &&
      dma.engineBandwidth.count() > 0) {
    t.streamBandwidth_ = static_cast<double>(chip.chip.neuronCores * dma.enginesPerCore) *
                         static_cast<double>(dma.engineBandwidth.count()) / kPicosecondsPerSecond /
                         static_cast<double>(t.collectiveCores_);
    const double efficiency = dma.computeEfficiency.toDouble();
    t.reduceBandwidth_ = t.streamBandwidth_ * (efficiency > 0 ? efficiency : 1.0);
  }
  return t;
}

Status Topology::addLogicalCores(const spec::ChipSpec& chip, std::int64_t ranksPerChip) {
  if (ranksPerChip == 1) {
    return {};
  }
  std::string fits;
  std::int64_t physicalPerLogical = 0;
  for (const std::int64_t size : chip.chip.logicalCores.sizes) {
    if (size > 0 && chip.chip.neuronCores % size == 0) {
      const std::int64_t logical = chip.chip.neuronCores / size;
      fits += fmt::format("{}{} (LNC={})", fits.empty() ? "" : ", ", logical, size);
      physicalPerLogical = logical == ranksPerChip ? size : physicalPerLogical;
    }
  }
  if (physicalPerLogical == 0) {
    return invalidArgument(fmt::format(
        "{} ranks per chip: a {} chip runs one rank, or one per logical core{}", ranksPerChip,
        chip.name, fits.empty() ? " (its file gives no logical core sizes)" : ": " + fits));
  }
  const spec::Dma& dma = chip.core.dma;
  if (dma.enginesPerCore < 1 || dma.engineBandwidth.count() <= 0 || chip.hbm.stacks < 1) {
    return invalidArgument(fmt::format(
        "chip {} gives no DMA engines or HBM stacks to carry logical cores' traffic", chip.name));
  }
  ranksPerChip_ = ranksPerChip;
  hbmStacks_ = chip.hbm.stacks;
  for (std::int64_t r = 0; r < ranksPerChip; ++r) {
    stackOfRank_.push_back(
        std::clamp<std::int64_t>(chip.hbm.stackOf(r * physicalPerLogical), 0, hbmStacks_ - 1));
  }
  dimensions_.push_back({"core", ranksPerChip, spec::DimensionKind::kSwitch, "on-chip DMA"});
  strides_.push_back(1);
  latency_.push_back(dma.fixedCost.count());
  overhead_.push_back(0);
  linkBandwidth_.push_back(static_cast<double>(physicalPerLogical * dma.enginesPerCore) *
                           static_cast<double>(dma.engineBandwidth.count()) /
                           kPicosecondsPerSecond);
  return {};
}

Result<Topology> Topology::forRanks(const spec::SystemSpec& system, const spec::ChipSpec& chip,
                                    std::int64_t ranks) {
  TRN_ASSIGN_OR_RETURN(Topology t, create(system, chip));
  if (ranks <= t.chips()) {
    return t;
  }
  if (ranks % t.chips() != 0) {
    return invalidArgument(fmt::format(
        "{} ranks on {} chips: more ranks than chips must be a whole number of logical cores "
        "per chip",
        ranks, t.chips()));
  }
  Result<Topology> logical = create(system, chip, ranks / t.chips());
  if (!logical.ok()) {
    return logical.status().withContext(fmt::format("{} ranks on {} chips", ranks, t.chips()));
  }
  return logical;
}

std::int64_t Topology::chipOf(ResourceId r) const {
  const std::size_t chipLinks = static_cast<std::size_t>(physicalChips()) * chipDimensions() * 2;
  if (r < chipLinks) {
    return static_cast<std::int64_t>(r / (chipDimensions() * 2)) * ranksPerChip_;
  }
  if (isLink(r)) {
    return static_cast<std::int64_t>((r - chipLinks) / 2);
  }
  const auto h = static_cast<std::int64_t>(r - linkCount());
  if (ranksPerChip_ == 1) {
    return h;
  }
  const std::int64_t stack = h % hbmStacks_;
  std::int64_t local = 0;
  while (local + 1 < ranksPerChip_ && stackOfRank_[static_cast<std::size_t>(local)] != stack) {
    ++local;
  }
  return (h / hbmStacks_) * ranksPerChip_ + local;
}

std::string Topology::resourceName(ResourceId r) const {
  const std::size_t chipLinks = static_cast<std::size_t>(physicalChips()) * chipDimensions() * 2;
  if (!isLink(r)) {
    const std::size_t h = r - linkCount();
    return ranksPerChip_ == 1
               ? fmt::format("chip {} HBM", h)
               : fmt::format("chip {} HBM stack {}", h / static_cast<std::size_t>(hbmStacks_),
                             h % static_cast<std::size_t>(hbmStacks_));
  }
  if (r >= chipLinks) {
    const std::int64_t place = chipOf(r);
    return fmt::format("chip {} core {} DMA {}", physicalChipOf(place), place % ranksPerChip_,
                       (r - chipLinks) % 2 == 1 ? "in" : "out");
  }
  const std::size_t perChip = chipDimensions() * 2;
  const std::size_t chip = r / perChip;
  const std::size_t d = (r % perChip) / 2 + (ranksPerChip_ > 1 ? 1 : 0);
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
