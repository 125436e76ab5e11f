// How a graph value is laid out over the ranks of a tensor-parallel run (shard.h): whole on every
// rank (replicated), split along one axis, or, for a weight added once after a row-parallel
// product (a bias), whole on rank 0 and zeros on the others. A split axis of size n is seen as
// [outer, ranks, n / (outer × ranks)]: rank r holds the blocks [:, r, :], so that a split carried
// through a reshape that merges the axis with outer ones (heads after batch) stays exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace trn::graph {

struct RankLayout {
  enum class Kind { kReplicated, kSplit, kFirstRank, kPartial };
  Kind kind = Kind::kReplicated;
  int axis = 0;            ///< the split axis (kSplit)
  std::int64_t outer = 1;  ///< blocks of the axis outside the rank index (kSplit)

  static RankLayout replicated() { return {}; }
  static RankLayout split(int axis, std::int64_t outer = 1) { return {Kind::kSplit, axis, outer}; }
  static RankLayout firstRank() { return {Kind::kFirstRank, 0, 1}; }
  static RankLayout partial() { return {Kind::kPartial, 0, 1}; }
  [[nodiscard]] bool isSplit() const { return kind == Kind::kSplit; }
  friend bool operator==(const RankLayout&, const RankLayout&) = default;
};

/// "replicated", "split(2)/4", "split(0, outer 2)/4", "rank 0" or "partial sum" (what the
/// printer shows).
std::string describeLayout(const RankLayout& layout, int ranks);

/// A rank's sizes of a value of `sizes` laid out as `layout` over `ranks` (the split axis
/// divided; the caller checked that it divides).
std::vector<std::int64_t> localSizes(const std::vector<std::int64_t>& sizes,
                                     const RankLayout& layout, int ranks);

/// Rank `rank`'s share of a dense row-major tensor of `sizes` with elements of `elementBytes`:
/// its blocks of the split axis, the whole (replicated), or the whole on rank 0 and zero bytes on
/// the others (kFirstRank).
std::vector<std::byte> rankShare(std::span<const std::byte> data,
                                 const std::vector<std::int64_t>& sizes, std::size_t elementBytes,
                                 const RankLayout& layout, int rank, int ranks);

}  // namespace trn::graph
