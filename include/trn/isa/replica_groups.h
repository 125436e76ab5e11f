// The replica groups of a `collective` instruction (isa/instrs/control.h): which ranks of a
// system run take part in each rank's collective, as NKI's `replica_groups` say. Either every
// rank of the run in one group (the default), or an explicit list of groups of equal size that
// together hold every rank once, e.g. [[0,1,2,3],[4,5,6,7]] for two tensor-parallel groups of
// 4. The list is held inline and bounded (kMaxRanks ranks in all) so that an instruction stays a
// fixed-size value; docs/collectives.md#replica-groups has the semantics.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"

namespace trn::isa {

/// Groups of ranks, held as the groups' ranks one group after another.
struct ReplicaGroups {
  /// The most ranks an explicit list holds (an UltraServer's 64 chips).
  static constexpr std::int32_t kMaxRanks = 64;
  /// The largest rank number a list may name (a system has at most 2^20 chips).
  static constexpr std::int32_t kMaxRank = (1 << 20) - 1;

  std::int32_t groupSize = 0;  ///< ranks per group; 0: one group of every rank of the run
  std::int32_t count = 0;      ///< ranks listed (groups x groupSize); 0 when groupSize is 0
  std::array<std::int32_t, kMaxRanks> ranks{};  ///< the first `count` are meaningful

  /// Every rank of the run in one group.
  [[nodiscard]] bool all() const { return groupSize == 0; }
  [[nodiscard]] std::int32_t groupCount() const { return groupSize == 0 ? 1 : count / groupSize; }
  /// Group g's ranks (an explicit list only).
  [[nodiscard]] std::span<const std::int32_t> group(std::int32_t g) const {
    return std::span<const std::int32_t>(ranks).subspan(static_cast<std::size_t>(g * groupSize),
                                                        static_cast<std::size_t>(groupSize));
  }
  /// The listed ranks (the entries past `count` are not part of the value).
  [[nodiscard]] std::span<const std::int32_t> listed() const {
    return std::span<const std::int32_t>(ranks).first(
        static_cast<std::size_t>(count < 0 ? 0 : (count > kMaxRanks ? kMaxRanks : count)));
  }
  bool operator==(const ReplicaGroups& other) const;
};

/// "all" or "[[0,1],[2,3]]".
std::string formatReplicaGroups(const ReplicaGroups& groups);

/// Parses formatReplicaGroups' text; groups of different sizes, empty groups and lists longer
/// than kMaxRanks are errors here (the form, checkReplicaGroupsForm, is the caller's to check).
Result<ReplicaGroups> parseReplicaGroups(std::string_view text);

/// The form any program may hold: groupSize and count consistent and in range, every rank in
/// 0..kMaxRank and no rank in two groups.
Status checkReplicaGroupsForm(const ReplicaGroups& groups);

/// Against a run of `ranks` ranks: no rank out of range and every rank in a group.
Status checkReplicaGroupsCover(const ReplicaGroups& groups, std::int64_t ranks);

/// The ranks of `rank`'s group in a run of `ranks` ranks, in the order the list gives them
/// (every rank in rank order for all()). The groups must cover the run.
std::vector<std::int32_t> replicaGroupOf(const ReplicaGroups& groups, std::int32_t rank,
                                         std::int64_t ranks);

}  // namespace trn::isa
