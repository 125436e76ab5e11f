// The fabric of a system as resources that carry bytes: each directed chip-to-chip link (one per
// neighbour and direction along a ring or line dimension, an uplink and a downlink per chip
// along a switch dimension) and each chip's HBM, and the limits of a chip's collective cores and
// DMA engines on a collective's streams. Ranks are chips, or logical cores (LNC) on an innermost
// on-chip dimension whose links are their DMA engines and whose HBM is their stack. Built from a
// SystemSpec (spec/system_spec.h) and the chip it names; routes messages the way the hardware
// forwards them: dimension by dimension, innermost first, the shorter way round each ring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/spec/chip_spec.h"
#include "trn/spec/system_spec.h"

namespace trn::fabric {

using ResourceId = std::uint32_t;

/// The way a message takes from one chip to another.
struct Route {
  std::vector<ResourceId> links;  ///< in order (empty from a chip to itself)
  std::int64_t latency = 0;       ///< ps: the hops' latencies
  std::int64_t overhead = 0;      ///< ps: per-message overheads of the link classes it uses
};

class Topology {
 public:
  /// The fabric of `system` of chips `chip`; fails when a dimension names no declared link.
  /// With `ranksPerChip` > 1 the ranks are logical cores (LNC): `ranksPerChip` must be a count
  /// of logical cores the chip can be configured as (4 at LNC=2 or 8 at LNC=1 on Trn2), and the
  /// topology's places (chips(), below) are the logical cores, chip-major, along an innermost
  /// dimension "core" whose links are each logical core's DMA engines (out and in) with the
  /// DMA's fixed cost as latency. The places of a chip share its links to other chips and its
  /// collective cores, and each uses the HBM stack of its physical cores.
  static Result<Topology> create(const spec::SystemSpec& system, const spec::ChipSpec& chip,
                                 std::int64_t ranksPerChip = 1);
  /// The fabric for `ranks` ranks: one per chip when the system has as many chips, else
  /// `ranks` / chips logical cores per chip (create's `ranksPerChip`); fails naming the counts
  /// that fit.
  static Result<Topology> forRanks(const spec::SystemSpec& system, const spec::ChipSpec& chip,
                                   std::int64_t ranks);

  /// The places a rank can run on: the chips, or with logical cores as ranks the logical cores
  /// (place = chip x ranksPerChip() + core). Collective requests and plans name places.
  [[nodiscard]] std::int64_t chips() const { return chips_; }
  /// Ranks (places) per physical chip: 1, or the logical cores of a chip.
  [[nodiscard]] std::int64_t ranksPerChip() const { return ranksPerChip_; }
  /// The physical chip of place `place`.
  [[nodiscard]] std::int64_t physicalChipOf(std::int64_t place) const {
    return place / ranksPerChip_;
  }
  [[nodiscard]] const std::vector<spec::Dimension>& dimensions() const { return dimensions_; }
  /// Coordinate of `chip` along dimension `d`.
  [[nodiscard]] std::int64_t coordinate(std::int64_t chip, std::size_t d) const {
    return (chip / strides_[d]) % dimensions_[d].size;
  }
  /// The chip with `chip`'s coordinates except `value` along dimension `d`.
  [[nodiscard]] std::int64_t withCoordinate(std::int64_t chip, std::size_t d,
                                            std::int64_t value) const {
    return chip + (value - coordinate(chip, d)) * strides_[d];
  }
  /// Links, then each chip's HBM: resources that move bytes at a bandwidth shared by the
  /// transfers using them at once.
  [[nodiscard]] std::size_t resourceCount() const { return bandwidth_.size(); }
  /// Bytes per picosecond (per direction for a link); 0 for a link a line does not have.
  [[nodiscard]] double bandwidth(ResourceId r) const { return bandwidth_[r]; }
  /// For messages and reports: "chip 3 x+", "chip 3 node up", "chip 3 HBM".
  [[nodiscard]] std::string resourceName(ResourceId r) const;
  /// The chip `r` belongs to: the one a link leaves (or a switch downlink reaches), or whose HBM
  /// it is.
  [[nodiscard]] std::int64_t chipOf(ResourceId r) const;
  /// Whether `r` is a link (else a chip's HBM).
  [[nodiscard]] bool isLink(ResourceId r) const { return r < linkCount(); }
  /// The HBM place `chip` reads and writes: its chip's, or with logical cores its stack.
  [[nodiscard]] ResourceId hbm(std::int64_t chip) const {
    return static_cast<ResourceId>(
        linkCount() + (ranksPerChip_ == 1
                           ? chip
                           : physicalChipOf(chip) * hbmStacks_ +
                                 stackOfRank_[static_cast<std::size_t>(chip % ranksPerChip_)]));
  }
  /// The route from `from` to `to`. `direction` +1 or -1 sends the long way round a ring when
  /// the short way is the other direction (ring algorithms pick their direction); 0 takes the
  /// shorter way, and halfway round a ring the positive one from an even coordinate and the
  /// negative one from an odd one.
  [[nodiscard]] Route route(std::int64_t from, std::int64_t to, int direction = 0) const;

  /// The collective cores (TOP_SP) of a chip: each DMA stream of a collective (a transfer the
  /// chip sends, a reduction on it) holds one while it moves bytes, and streams beyond them wait
  /// their turn. 0 when the chip file does not say: no limit.
  [[nodiscard]] std::int64_t collectiveCores() const { return collectiveCores_; }
  /// Bytes per ps one collective core's stream moves at most: the chip's DMA engines (cores x
  /// engines per core x engine bandwidth) shared evenly among its collective cores; 0: no limit.
  [[nodiscard]] double streamBandwidth() const { return streamBandwidth_; }
  /// NeuronCores of a physical chip (at least 1): the cores whose DMA engines the collective cores
  /// share evenly.
  [[nodiscard]] std::int64_t neuronCoresPerChip() const { return neuronCores_; }
  /// Output bytes per ps of a reduction on one stream: DMA compute runs at the chip file's
  /// `compute_efficiency` of a copy; 0: no limit.
  [[nodiscard]] double reduceBandwidth() const { return reduceBandwidth_; }

 private:
  Topology() = default;
  /// With `ranksPerChip` > 1, the on-chip dimension of logical-core ranks.
  Status addLogicalCores(const spec::ChipSpec& chip, std::int64_t ranksPerChip);
  /// Dimensions between chips (all but the on-chip "core" one of logical-core ranks).
  [[nodiscard]] std::size_t chipDimensions() const {
    return dimensions_.size() - (ranksPerChip_ > 1 ? 1 : 0);
  }
  [[nodiscard]] std::int64_t physicalChips() const { return chips_ / ranksPerChip_; }
  /// The chips' links, then (logical-core ranks) each place's DMA out and in.
  [[nodiscard]] std::size_t linkCount() const {
    return static_cast<std::size_t>(physicalChips()) * chipDimensions() * 2 +
           (ranksPerChip_ > 1 ? static_cast<std::size_t>(chips_) * 2 : 0);
  }
  /// Link `side` (0: positive or uplink, 1: negative or downlink) of place `chip` along
  /// dimension d: its chip's link, or along "core" its own DMA.
  [[nodiscard]] ResourceId link(std::int64_t chip, std::size_t d, int side) const {
    if (ranksPerChip_ > 1 && d == 0) {
      return static_cast<ResourceId>(
          static_cast<std::size_t>(physicalChips()) * chipDimensions() * 2 +
          static_cast<std::size_t>(chip) * 2 + static_cast<std::size_t>(side));
    }
    const std::size_t chipD = d - (ranksPerChip_ > 1 ? 1 : 0);
    return static_cast<ResourceId>(
        (static_cast<std::size_t>(physicalChipOf(chip)) * chipDimensions() + chipD) * 2 +
        static_cast<std::size_t>(side));
  }

  std::int64_t chips_ = 0;
  std::vector<spec::Dimension> dimensions_;
  std::vector<std::int64_t> strides_;
  std::vector<std::int64_t> latency_;   ///< per dimension, ps per hop
  std::vector<std::int64_t> overhead_;  ///< per dimension, ps per message
  std::vector<double> linkBandwidth_;   ///< per dimension, bytes per ps of its links
  std::vector<double> bandwidth_;       ///< per resource: links, then each chip's HBM
  std::int64_t ranksPerChip_ = 1;
  std::int64_t hbmStacks_ = 1;             ///< HBM resources per chip (stacks, or 1)
  std::vector<std::int64_t> stackOfRank_;  ///< per logical core of a chip, its HBM stack
  std::int64_t collectiveCores_ = 0;
  std::int64_t neuronCores_ = 1;
  double streamBandwidth_ = 0;
  double reduceBandwidth_ = 0;
};

}  // namespace trn::fabric
