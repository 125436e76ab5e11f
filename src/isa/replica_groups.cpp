#include "trn/isa/replica_groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <unordered_map>

#include "field_codec.h"

namespace trn::isa {

bool ReplicaGroups::operator==(const ReplicaGroups& other) const {
  const auto mine = listed();
  const auto theirs = other.listed();
  return groupSize == other.groupSize && count == other.count &&
         std::equal(mine.begin(), mine.end(), theirs.begin(), theirs.end());
}

std::string formatReplicaGroups(const ReplicaGroups& groups) {
  if (groups.all()) {
    return "all";
  }
  std::string text = "[";
  for (std::int32_t g = 0; g < groups.groupCount(); ++g) {
    text += fmt::format("{}[{}]", g == 0 ? "" : ",", fmt::join(groups.group(g), ","));
  }
  return text + "]";
}

Result<ReplicaGroups> parseReplicaGroups(std::string_view text) {
  ReplicaGroups groups;
  if (text == "all") {
    return groups;
  }
  std::vector<std::string_view> items;
  if (!codec::detail::splitBracketList(text, items) || (items.size() == 1 && items[0].empty())) {
    return parseError(fmt::format(
        "'{}' is not replica groups: 'all' or a list of rank lists [[0,1],[2,3]]", text));
  }
  std::vector<std::string_view> members;
  for (std::size_t g = 0; g < items.size(); ++g) {
    if (!codec::detail::splitBracketList(items[g], members) ||
        (members.size() == 1 && members[0].empty())) {
      return parseError(
          fmt::format("replica group {} '{}' is not a non-empty list of ranks", g, items[g]));
    }
    if (g == 0) {
      groups.groupSize = static_cast<std::int32_t>(
          std::min<std::size_t>(members.size(), ReplicaGroups::kMaxRanks + 1));
    } else if (members.size() != static_cast<std::size_t>(groups.groupSize)) {
      return parseError(
          fmt::format("replica group {} has {} ranks and group 0 has {}: the groups "
                      "of a collective are of one size",
                      g, members.size(), groups.groupSize));
    }
    for (const std::string_view m : members) {
      if (groups.count == ReplicaGroups::kMaxRanks) {
        return parseError(
            fmt::format("replica groups list more than {} ranks", ReplicaGroups::kMaxRanks));
      }
      std::int32_t rank = 0;
      const auto [end, ec] = std::from_chars(m.data(), m.data() + m.size(), rank);
      if (ec != std::errc() || end != m.data() + m.size() || m.empty()) {
        return parseError(fmt::format("replica group {}: '{}' is not a rank", g, m));
      }
      groups.ranks[static_cast<std::size_t>(groups.count++)] = rank;
    }
  }
  return groups;
}

Status checkReplicaGroupsForm(const ReplicaGroups& groups) {
  if (groups.groupSize == 0) {
    if (groups.count != 0) {
      return invalidArgument(
          fmt::format("replica groups 'all' list {} ranks; they list none", groups.count));
    }
    return {};
  }
  if (groups.groupSize < 0 || groups.count < 1 || groups.count > ReplicaGroups::kMaxRanks ||
      groups.count % groups.groupSize != 0) {
    return invalidArgument(fmt::format(
        "replica groups of {} ranks each listing {} ranks: groups are of 1 or more ranks, {} "
        "ranks in all at most, and every group is of the one size",
        groups.groupSize, groups.count, ReplicaGroups::kMaxRanks));
  }
  std::unordered_map<std::int32_t, std::int32_t> groupOf;
  for (std::int32_t i = 0; i < groups.count; ++i) {
    const std::int32_t rank = groups.ranks[static_cast<std::size_t>(i)];
    const std::int32_t g = i / groups.groupSize;
    if (rank < 0 || rank > ReplicaGroups::kMaxRank) {
      return invalidArgument(fmt::format("replica group {} names rank {}: ranks are 0..{}", g, rank,
                                         ReplicaGroups::kMaxRank));
    }
    if (const auto [at, inserted] = groupOf.emplace(rank, g); !inserted) {
      return invalidArgument(
          at->second == g
              ? fmt::format("replica group {} names rank {} twice", g, rank)
              : fmt::format("rank {} is in replica groups {} and {}: a rank is in one group", rank,
                            at->second, g));
    }
  }
  return {};
}

Status checkReplicaGroupsCover(const ReplicaGroups& groups, std::int64_t ranks) {
  if (groups.all()) {
    return {};
  }
  std::vector<bool> seen(static_cast<std::size_t>(ranks), false);
  for (std::int32_t i = 0; i < groups.count; ++i) {
    const std::int32_t rank = groups.ranks[static_cast<std::size_t>(i)];
    if (rank >= ranks) {
      return invalidArgument(
          fmt::format("replica group {} names rank {}, but the run has {} ranks (0..{})",
                      i / groups.groupSize, rank, ranks, ranks - 1));
    }
    seen[static_cast<std::size_t>(rank)] = true;
  }
  if (const auto missing = std::find(seen.begin(), seen.end(), false); missing != seen.end()) {
    return invalidArgument(
        fmt::format("rank {} is in no replica group {} (every rank of the run's {} is in one)",
                    missing - seen.begin(), formatReplicaGroups(groups), ranks));
  }
  return {};
}

std::vector<std::int32_t> replicaGroupOf(const ReplicaGroups& groups, std::int32_t rank,
                                         std::int64_t ranks) {
  if (groups.all()) {
    std::vector<std::int32_t> every(static_cast<std::size_t>(ranks));
    std::iota(every.begin(), every.end(), 0);
    return every;
  }
  for (std::int32_t g = 0; g < groups.groupCount(); ++g) {
    const auto members = groups.group(g);
    if (std::find(members.begin(), members.end(), rank) != members.end()) {
      return {members.begin(), members.end()};
    }
  }
  return {};
}

}  // namespace trn::isa
