#include "trn/fabric/all_to_allv.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "trn/base/checked.h"
#include "trn/fabric/collective_bench.h"

namespace trn::fabric {
namespace {

std::size_t at(std::int64_t n, std::int64_t i, std::int64_t j) {
  return static_cast<std::size_t>(i * n + j);
}

/// An error unless `row` (of rank `rank`) has `n` entries, none negative.
Status checkRow(std::span<const std::int64_t> row, std::string_view what, std::size_t rank,
                std::int64_t n) {
  if (static_cast<std::int64_t>(row.size()) != n) {
    return invalidArgument(fmt::format("rank {} gives {} {}, one per rank of its group of {}", rank,
                                       row.size(), what, n));
  }
  for (std::size_t j = 0; j < row.size(); ++j) {
    if (row[j] < 0) {
      return invalidArgument(
          fmt::format("rank {}'s {} for rank {} is {}: negative", rank, what, j, row[j]));
    }
  }
  return {};
}

}  // namespace

Result<VariableCounts> variableCountsFromRanks(std::span<const RankCounts> ranks,
                                               std::int64_t receiveElements) {
  const auto n = static_cast<std::int64_t>(ranks.size());
  if (n == 0) {
    return invalidArgument("an all-to-all-v needs at least one rank");
  }
  const std::int64_t slot = receiveElements / n;
  VariableCounts v;
  v.counts.resize(static_cast<std::size_t>(n * n));
  v.sendOffsets.resize(v.counts.size());
  v.receiveOffsets.resize(v.counts.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    TRN_RETURN_IF_ERROR(checkRow(ranks[i].sendCounts, "send counts", i, n));
    TRN_RETURN_IF_ERROR(checkRow(ranks[i].sendOffsets, "send displacements", i, n));
    if (!ranks[i].receiveCounts.empty()) {
      TRN_RETURN_IF_ERROR(checkRow(ranks[i].receiveCounts, "receive counts", i, n));
    }
    if (!ranks[i].receiveOffsets.empty()) {
      TRN_RETURN_IF_ERROR(checkRow(ranks[i].receiveOffsets, "receive displacements", i, n));
    }
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const RankCounts& sender = ranks[static_cast<std::size_t>(i)];
    for (std::int64_t j = 0; j < n; ++j) {
      const RankCounts& receiver = ranks[static_cast<std::size_t>(j)];
      const std::int64_t count = sender.sendCounts[static_cast<std::size_t>(j)];
      if (!receiver.receiveCounts.empty() &&
          receiver.receiveCounts[static_cast<std::size_t>(i)] != count) {
        return invalidArgument(
            fmt::format("rank {} sends {} elements to rank {}, but rank {} expects {} from rank {}",
                        i, count, j, j, receiver.receiveCounts[static_cast<std::size_t>(i)], i));
      }
      if (receiver.receiveOffsets.empty() && count > slot) {
        return invalidArgument(fmt::format(
            "rank {} sends {} elements to rank {}, more than the slot of {} elements (a receive "
            "buffer of {} over {} ranks) that rank {} gives each sender when it gives no receive "
            "displacements",
            i, count, j, slot, receiveElements, n, j));
      }
      v.counts[at(n, i, j)] = count;
      v.sendOffsets[at(n, i, j)] = sender.sendOffsets[static_cast<std::size_t>(j)];
      v.receiveOffsets[at(n, i, j)] = receiver.receiveOffsets.empty()
                                          ? i * slot
                                          : receiver.receiveOffsets[static_cast<std::size_t>(i)];
    }
  }
  return v;
}

Result<VariableCounts> packedVariableCounts(std::span<const std::vector<std::int64_t>> sends,
                                            std::span<const std::vector<std::int64_t>> expected) {
  const auto n = static_cast<std::int64_t>(sends.size());
  if (n == 0) {
    return invalidArgument("an all-to-all-v needs at least one rank: the count matrix is empty");
  }
  if (!expected.empty() && static_cast<std::int64_t>(expected.size()) != n) {
    return invalidArgument(fmt::format(
        "{} ranks send but {} say what they expect: give a row per rank", n, expected.size()));
  }
  // Each row's counts one after another from element 0.
  const auto packed = [](std::span<const std::int64_t> row) -> Result<std::vector<std::int64_t>> {
    std::vector<std::int64_t> offsets;
    Checked<std::int64_t> next = 0;
    for (const std::int64_t count : row) {
      offsets.push_back(next.get().value_or(0));
      next += count;
    }
    if (!next.valid()) {
      return invalidArgument("the counts of an all-to-all-v add up to more than 2^63 elements");
    }
    return offsets;
  };
  std::vector<RankCounts> ranks(sends.size());
  for (std::size_t i = 0; i < sends.size(); ++i) {
    TRN_RETURN_IF_ERROR(checkRow(sends[i], "counts", i, n));
    ranks[i].sendCounts = sends[i];
    if (expected.empty()) {
      for (const std::vector<std::int64_t>& row : sends) {
        ranks[i].receiveCounts.push_back(row.size() > i ? row[i] : 0);
      }
    } else {
      TRN_RETURN_IF_ERROR(checkRow(expected[i], "expected counts", i, n));
      ranks[i].receiveCounts = expected[i];
    }
  }
  for (RankCounts& rank : ranks) {
    TRN_ASSIGN_OR_RETURN(rank.sendOffsets, packed(rank.sendCounts));
    TRN_ASSIGN_OR_RETURN(rank.receiveOffsets, packed(rank.receiveCounts));
  }
  return variableCountsFromRanks(ranks, std::numeric_limits<std::int64_t>::max());
}

VariableCounts evenVariableCounts(std::int64_t n, std::int64_t sendElements,
                                  std::int64_t receiveElements) {
  const std::int64_t each = std::min(sendElements, receiveElements) / std::max<std::int64_t>(n, 1);
  VariableCounts v;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      v.counts.push_back(each);
      v.sendOffsets.push_back(j * each);
      v.receiveOffsets.push_back(i * each);
    }
  }
  return v;
}

std::int64_t variableExtent(const VariableCounts& v) {
  std::int64_t extent = 0;
  for (std::size_t k = 0; k < v.counts.size(); ++k) {
    if (v.counts[k] > 0) {
      extent =
          std::max({extent, v.sendOffsets[k] + v.counts[k], v.receiveOffsets[k] + v.counts[k]});
    }
  }
  return extent;
}

Status checkVariableCounts(const VariableCounts& v, std::int64_t n, std::int64_t sendElements,
                           std::int64_t receiveElements) {
  const auto entries = static_cast<std::size_t>(n * n);
  if (v.counts.size() != entries || v.sendOffsets.size() != entries ||
      v.receiveOffsets.size() != entries) {
    return invalidArgument(fmt::format(
        "an all-to-all-v over {} ranks needs {} counts and offsets of each kind (one per pair of "
        "ranks), not {} counts, {} send and {} receive offsets",
        n, entries, v.counts.size(), v.sendOffsets.size(), v.receiveOffsets.size()));
  }
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t k = at(n, i, j);
      const std::int64_t count = v.counts[k];
      for (const auto& [offset, limit, what, owner] :
           {std::tuple{v.sendOffsets[k], sendElements, "buffer", i},
            std::tuple{v.receiveOffsets[k], receiveElements, "receive buffer", j}}) {
        const Checked<std::int64_t> end = Checked<std::int64_t>(offset) + count;
        if (count < 0 || offset < 0 || !end.valid() || end.value() > limit) {
          return invalidArgument(fmt::format(
              "rank {} sends {} elements to rank {} at element {} of rank {}'s {}, which holds {} "
              "elements",
              i, count, j, offset, owner, what, limit));
        }
      }
    }
  }
  // What a rank receives, sorted by where it lands: neighbours must not overlap.
  for (std::int64_t j = 0; j < n; ++j) {
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;  // (offset, sender)
    for (std::int64_t i = 0; i < n; ++i) {
      if (v.counts[at(n, i, j)] > 0) {
        ranges.emplace_back(v.receiveOffsets[at(n, i, j)], i);
      }
    }
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t r = 1; r < ranges.size(); ++r) {
      const auto [before, a] = ranges[r - 1];
      const auto [after, b] = ranges[r];
      const std::int64_t end = before + v.counts[at(n, a, j)];
      if (end > after) {
        return invalidArgument(fmt::format(
            "rank {} receives from ranks {} and {} into overlapping elements [{}, {}) and [{}, {}) "
            "of its receive buffer",
            j, a, b, before, end, after, after + v.counts[at(n, b, j)]));
      }
    }
  }
  return {};
}

std::int64_t sentBy(const VariableCounts& v, std::int64_t n, std::int64_t rank) {
  std::int64_t total = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    total += v.counts[at(n, rank, j)];
  }
  return total;
}

std::int64_t receivedBy(const VariableCounts& v, std::int64_t n, std::int64_t rank) {
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    total += v.counts[at(n, i, rank)];
  }
  return total;
}

Result<std::vector<std::vector<std::int64_t>>> parseCountMatrix(std::string_view text) {
  std::vector<std::vector<std::int64_t>> matrix;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t slash = std::min(text.find('/', start), text.size());
    const std::string_view row = text.substr(start, slash - start);
    std::vector<std::int64_t>& values = matrix.emplace_back();
    std::size_t from = 0;
    while (from <= row.size()) {
      const std::size_t comma = std::min(row.find(',', from), row.size());
      const std::string_view field = row.substr(from, comma - from);
      Result<std::int64_t> count = parseSize(field);
      if (!count.ok()) {
        return invalidArgument(fmt::format("counts '{}', row {}, column {}: {}", text,
                                           matrix.size() - 1, values.size(),
                                           count.status().message()));
      }
      values.push_back(*count);
      from = comma + 1;
    }
    start = slash + 1;
  }
  return matrix;
}

}  // namespace trn::fabric
