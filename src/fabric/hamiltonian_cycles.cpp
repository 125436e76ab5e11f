// Two edge-disjoint Hamiltonian cycles through a group's chips, for the KangaRing: on the 4 x 4
// torus of a trn2.48xlarge every link is in one of them (R2), so that rings over both, in both
// directions, keep every link busy. Found by a bounded, deterministic depth-first search.
#include <algorithm>
#include <set>
#include <utility>

#include "ring_steps.h"

namespace trn::fabric::detail {
namespace {

/// Search steps (vertices tried) before giving up on a second cycle.
constexpr std::int64_t kSearchBudget = 20'000;

using Edge = std::pair<std::size_t, std::size_t>;

Edge edgeOf(std::size_t a, std::size_t b) { return {std::min(a, b), std::max(a, b)}; }

/// Depth-first search for a Hamiltonian cycle of the graph `neighbours` without the edges in
/// `banned`, from vertex 0, trying first the neighbour with the fewest free neighbours (then the
/// lowest). `accept` is asked about each cycle found; the search goes on while it says no.
class CycleSearch {
 public:
  CycleSearch(const std::vector<std::vector<std::size_t>>& neighbours, const std::set<Edge>& banned,
              std::int64_t& budget)
      : neighbours_(neighbours), banned_(banned), budget_(budget), used_(neighbours.size()) {}

  template <typename Accept>
  bool run(Accept accept) {
    path_ = {0};
    used_.assign(neighbours_.size(), false);
    used_[0] = true;
    return extend(accept);
  }

  [[nodiscard]] const std::vector<std::size_t>& cycle() const { return path_; }

 private:
  [[nodiscard]] bool usable(std::size_t from, std::size_t to) const {
    return !used_[to] && banned_.count(edgeOf(from, to)) == 0;
  }
  [[nodiscard]] std::size_t freeNeighbours(std::size_t v) const {
    return static_cast<std::size_t>(std::count_if(neighbours_[v].begin(), neighbours_[v].end(),
                                                  [&](std::size_t w) { return usable(v, w); }));
  }

  template <typename Accept>
  bool extend(Accept& accept) {
    if (--budget_ < 0) {
      return false;
    }
    const std::size_t v = path_.back();
    if (path_.size() == neighbours_.size()) {
      const bool closes =
          std::find(neighbours_[v].begin(), neighbours_[v].end(), 0) != neighbours_[v].end() &&
          banned_.count(edgeOf(v, 0)) == 0;
      return closes && accept(path_);
    }
    std::vector<std::size_t> next;
    for (const std::size_t w : neighbours_[v]) {
      if (usable(v, w)) {
        next.push_back(w);
      }
    }
    std::stable_sort(next.begin(), next.end(), [&](std::size_t a, std::size_t b) {
      return std::pair(freeNeighbours(a), a) < std::pair(freeNeighbours(b), b);
    });
    for (const std::size_t w : next) {
      used_[w] = true;
      path_.push_back(w);
      if (extend(accept)) {
        return true;
      }
      path_.pop_back();
      used_[w] = false;
    }
    return false;
  }

  const std::vector<std::vector<std::size_t>>& neighbours_;
  const std::set<Edge>& banned_;
  std::int64_t& budget_;
  std::vector<std::size_t> path_;
  std::vector<bool> used_;
};

std::set<Edge> edgesOf(const std::vector<std::size_t>& cycle) {
  std::set<Edge> edges;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    edges.insert(edgeOf(cycle[i], cycle[(i + 1) % cycle.size()]));
  }
  return edges;
}

}  // namespace

std::vector<std::vector<std::int64_t>> disjointCycles(const Topology& topology,
                                                      std::span<const std::int64_t> chips) {
  const std::vector<std::int64_t> snake = snakeOrder(topology, chips);
  const std::size_t n = snake.size();
  // Neighbours: one step along a ring of at least 3 chips or a line (a ring of 2 has one
  // neighbour, over both its links; a switch is not a cycle's edge).
  std::vector<std::vector<std::size_t>> neighbours(n);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) {
      std::size_t differing = 0;
      bool adjacent = false;
      for (std::size_t d = 0; d < topology.dimensions().size(); ++d) {
        const spec::Dimension& dim = topology.dimensions()[d];
        const std::int64_t x = topology.coordinate(snake[a], d);
        const std::int64_t y = topology.coordinate(snake[b], d);
        if (x == y) {
          continue;
        }
        ++differing;
        const std::int64_t step = (y - x + dim.size) % dim.size;
        adjacent = (dim.kind == spec::DimensionKind::kRing && dim.size >= 3 &&
                    (step == 1 || step == dim.size - 1)) ||
                   (dim.kind == spec::DimensionKind::kLine && (y - x == 1 || x - y == 1));
      }
      if (differing == 1 && adjacent) {
        neighbours[a].push_back(b);
      }
    }
  }
  std::int64_t budget = kSearchBudget;
  const std::set<Edge> none;
  std::vector<std::size_t> first;
  std::vector<std::size_t> second;
  CycleSearch outer(neighbours, none, budget);
  const bool found = n >= 3 && outer.run([&](const std::vector<std::size_t>& cycle) {
    const std::set<Edge> taken = edgesOf(cycle);
    CycleSearch inner(neighbours, taken, budget);
    if (!inner.run([](const std::vector<std::size_t>&) { return true; })) {
      return false;
    }
    first = cycle;
    second = inner.cycle();
    return true;
  });
  if (!found) {
    return {snake};
  }
  std::vector<std::vector<std::int64_t>> cycles(2);
  for (const std::size_t v : first) {
    cycles[0].push_back(snake[v]);
  }
  for (const std::size_t v : second) {
    cycles[1].push_back(snake[v]);
  }
  return cycles;
}

}  // namespace trn::fabric::detail
