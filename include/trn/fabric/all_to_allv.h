// All-to-all-v: every pair of ranks exchanges its own number of elements (MoE token dispatch), as
// MPI_Alltoallv and NKI's all_to_all_v do. A rank states its part the way NKI's metadata tensor
// does (a row of send counts, a row of send displacements and, optionally, the counts it expects
// from each rank and where it puts them); the command line gives one matrix of counts, packed in
// order. Both become a VariableCounts (collective.h), which the mesh moves (mesh.cpp): one
// message per pair with a non-zero count. Inconsistent counts are errors naming the ranks.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/fabric/collective.h"

namespace trn::fabric {

/// One rank's part of an all-to-all-v, per position j of its group (NKI's metadata rows 0-3).
struct RankCounts {
  std::vector<std::int64_t> sendCounts;      ///< elements to rank j
  std::vector<std::int64_t> sendOffsets;     ///< where they start in this rank's buffer
  std::vector<std::int64_t> receiveCounts;   ///< elements expected from rank j; empty: not given
  std::vector<std::int64_t> receiveOffsets;  ///< where rank j's land; empty: equal slots
};

/// The exchange the ranks state (ranks[i] is rank i's part), into receive buffers of
/// `receiveElements` each. Without receive offsets, what rank i sends lands at i x slot, a slot
/// being receiveElements / n (NKI's all_gather_v rule; its all_to_all_v page does not say), and
/// must fit its slot. Fails naming the ranks when a row has not n entries, a rank expects from
/// another a count other than what that one sends, or a count overflows its slot.
Result<VariableCounts> variableCountsFromRanks(std::span<const RankCounts> ranks,
                                               std::int64_t receiveElements);

/// The exchange where rank i sends sends[i][j] elements to rank j, packed in order: rank i's
/// sends to 0, 1, ... one after another in its buffer, and what rank j receives from 0, 1, ... one
/// after another in its receive buffer. `expected`, when given, is what each rank expects:
/// expected[j][i] from rank i, which must be what rank i sends. Fails unless the matrices are
/// square with no negative count, naming the ranks whose counts disagree.
Result<VariableCounts> packedVariableCounts(
    std::span<const std::vector<std::int64_t>> sends,
    std::span<const std::vector<std::int64_t>> expected = {});

/// Each of `n` ranks sending floor(min(sendElements, receiveElements) / n) elements to each, in
/// equal slots: the exchange a timing-only kernel run assumes, its counts being data it does not
/// have.
VariableCounts evenVariableCounts(std::int64_t n, std::int64_t sendElements,
                                  std::int64_t receiveElements);

/// The fewest elements a rank's buffer and receive buffer need for `v`: the furthest any range
/// reaches.
std::int64_t variableExtent(const VariableCounts& v);

/// An error unless `v` is an exchange among `n` ranks whose ranges lie within buffers of
/// `sendElements` and receive buffers of `receiveElements`: n x n entries, no negative count or
/// offset, and no two ranges a rank receives overlapping (the result would depend on timing).
Status checkVariableCounts(const VariableCounts& v, std::int64_t n, std::int64_t sendElements,
                           std::int64_t receiveElements);

/// Elements rank `rank` sends in all (over its row), and receives in all (over its column).
std::int64_t sentBy(const VariableCounts& v, std::int64_t n, std::int64_t rank);
std::int64_t receivedBy(const VariableCounts& v, std::int64_t n, std::int64_t rank);

/// A count matrix from text: rows separated by '/', counts by ',' (no shell quoting needed), each
/// a whole number of elements with an optional K, M or G (powers of 1024): "0,512/1K,0". Fails
/// naming the row and column of what it cannot read.
Result<std::vector<std::vector<std::int64_t>>> parseCountMatrix(std::string_view text);

}  // namespace trn::fabric
