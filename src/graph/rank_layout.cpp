#include "trn/graph/rank_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace trn::graph {

std::string describeLayout(const RankLayout& layout, int ranks) {
  switch (layout.kind) {
    case RankLayout::Kind::kReplicated:
      return "replicated";
    case RankLayout::Kind::kFirstRank:
      return "rank 0";
    case RankLayout::Kind::kPartial:
      return "partial sum";
    case RankLayout::Kind::kSplit:
      break;
  }
  return layout.outer == 1
             ? fmt::format("split({})/{}", layout.axis, ranks)
             : fmt::format("split({}, outer {})/{}", layout.axis, layout.outer, ranks);
}

std::vector<std::int64_t> localSizes(const std::vector<std::int64_t>& sizes,
                                     const RankLayout& layout, int ranks) {
  std::vector<std::int64_t> local = sizes;
  if (layout.isSplit()) {
    local.at(static_cast<std::size_t>(layout.axis)) /= ranks;
  }
  return local;
}

std::vector<std::byte> rankShare(std::span<const std::byte> data,
                                 const std::vector<std::int64_t>& sizes, std::size_t elementBytes,
                                 const RankLayout& layout, int rank, int ranks) {
  if (layout.kind == RankLayout::Kind::kReplicated || layout.kind == RankLayout::Kind::kPartial) {
    return {data.begin(), data.end()};
  }
  if (layout.kind == RankLayout::Kind::kFirstRank) {
    return rank == 0 ? std::vector<std::byte>(data.begin(), data.end())
                     : std::vector<std::byte>(data.size(), std::byte{0});
  }
  const auto axis = static_cast<std::size_t>(layout.axis);
  std::int64_t pre = 1;
  std::int64_t post = 1;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    (d < axis ? pre : post) *= d == axis ? 1 : sizes[d];
  }
  const std::int64_t n = sizes[axis];
  const std::int64_t inner = n / (layout.outer * ranks);
  const auto chunk = static_cast<std::size_t>(inner * post) * elementBytes;
  std::vector<std::byte> out;
  out.reserve(data.size() / static_cast<std::size_t>(ranks));
  for (std::int64_t p = 0; p < pre; ++p) {
    for (std::int64_t o = 0; o < layout.outer; ++o) {
      const std::int64_t first = (p * n + (o * ranks + rank) * inner) * post;
      const std::byte* from = data.data() + static_cast<std::size_t>(first) * elementBytes;
      out.insert(out.end(), from, from + chunk);
    }
  }
  return out;
}

}  // namespace trn::graph
