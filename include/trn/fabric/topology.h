// The fabric of a system as resources that carry bytes: each directed chip-to-chip link (one per
// neighbour and direction along a ring or line dimension, an uplink and a downlink per chip
// along a switch dimension) and each chip's HBM. Built from a SystemSpec (spec/system_spec.h)
// and the chip it names; routes messages between chips the way the hardware forwards them:
// dimension by dimension, innermost first, the shorter way round each ring.
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
  static Result<Topology> create(const spec::SystemSpec& system, const spec::ChipSpec& chip);

  [[nodiscard]] std::int64_t chips() const { return chips_; }
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
  [[nodiscard]] std::int64_t chipOf(ResourceId r) const {
    return isLink(r) ? static_cast<std::int64_t>(r / (dimensions_.size() * 2))
                     : static_cast<std::int64_t>(r - linkCount());
  }
  /// Whether `r` is a link (else a chip's HBM).
  [[nodiscard]] bool isLink(ResourceId r) const { return r < linkCount(); }
  [[nodiscard]] ResourceId hbm(std::int64_t chip) const {
    return static_cast<ResourceId>(linkCount() + chip);
  }
  /// The route from `from` to `to`. `direction` +1 or -1 sends the long way round a ring when
  /// the short way is the other direction (ring algorithms pick their direction); 0 takes the
  /// shorter way, and halfway round a ring the positive one from an even coordinate and the
  /// negative one from an odd one.
  [[nodiscard]] Route route(std::int64_t from, std::int64_t to, int direction = 0) const;

 private:
  Topology() = default;
  [[nodiscard]] std::size_t linkCount() const {
    return static_cast<std::size_t>(chips_) * dimensions_.size() * 2;
  }
  /// Link `side` (0: positive or uplink, 1: negative or downlink) of `chip` along dimension d.
  [[nodiscard]] ResourceId link(std::int64_t chip, std::size_t d, int side) const {
    return static_cast<ResourceId>((static_cast<std::size_t>(chip) * dimensions_.size() + d) * 2 +
                                   static_cast<std::size_t>(side));
  }

  std::int64_t chips_ = 0;
  std::vector<spec::Dimension> dimensions_;
  std::vector<std::int64_t> strides_;
  std::vector<std::int64_t> latency_;   ///< per dimension, ps per hop
  std::vector<std::int64_t> overhead_;  ///< per dimension, ps per message
  std::vector<double> bandwidth_;       ///< per resource: links, then each chip's HBM
};

}  // namespace trn::fabric
