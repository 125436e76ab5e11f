// Internal to the fusion passes (fuse_attention.cpp, fuse_linear.cpp, fuse_rms_norm.cpp,
// fuse_rope.cpp): who produces and who reads each value, the static facts a match checks (sizes,
// element types, one-element constants), the rewrite that puts each match's fused nodes where its
// last node was and drops the values nothing reads any more, and the loop that runs a pass's
// matcher over the graph.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trn/graph/graph.h"

namespace trn::graph::detail {

/// Who produces and who reads each value of a graph (as it was when built).
struct Uses {
  std::map<std::string, std::size_t> producer;
  std::map<std::string, std::vector<std::size_t>> readers;
  std::set<std::string> outputs;  ///< graph outputs: never removed

  explicit Uses(const Graph& graph);

  /// The node producing `value` when its op type is `opType` (default domain), else nullopt.
  [[nodiscard]] std::optional<std::size_t> producedBy(const Graph& graph, const std::string& value,
                                                      const char* opType) const;

  /// True when node `reader` is the only one reading `value` and it is not a graph output.
  [[nodiscard]] bool onlyReader(const std::string& value, std::size_t reader) const;

  /// The one node reading `value` when it is not a graph output, else nullopt.
  [[nodiscard]] std::optional<std::size_t> soleReader(const std::string& value) const;

  /// soleReader(value) when it is a node of `opType` (default domain) with one output.
  [[nodiscard]] std::optional<std::size_t> soleReaderOp(const Graph& graph,
                                                        const std::string& value,
                                                        const char* opType) const;
};

/// The operand of the two-input `node` that is not `value`; nullopt when `value` is neither.
std::optional<std::string> otherOperand(const Node& node, const std::string& value);

/// The sizes of `name` when its shape is static.
std::optional<std::vector<std::int64_t>> staticSizes(const Graph& graph, const std::string& name);

/// The element type of `name`, when known.
std::optional<ElementType> typeOf(const Graph& graph, const std::string& name);

/// The value of a one-element fp32 initializer.
std::optional<float> scalarWeight(const Graph& graph, const std::string& name);

/// "/layers.0/" for "/layers.0/Softmax"; "" for a name without a module path.
std::string moduleOf(const std::string& nodeName);

/// `base`, or `base_N` for the first N that no value or initializer of `graph` has.
std::string unusedName(const Graph& graph, const std::string& base);

/// One match of a fusion pass: the nodes it replaces and what takes their place.
struct Replacement {
  std::set<std::size_t> removed;  ///< indices of the replaced nodes
  std::size_t at = 0;             ///< one of them: where `nodes` go (the last one computed)
  std::vector<Node> nodes;        ///< the fused node, after any node it needs
  std::vector<Value> values;      ///< new values the nodes produce
};

/// The matches of one pass, applied together: a match that overlaps one claimed before is
/// skipped.
class Rewrite {
 public:
  /// Takes `r` unless one of its nodes belongs to an earlier match; true when taken.
  bool claim(Replacement r);

  /// Rebuilds `graph` with every claimed match in place (a fused node whose name another node
  /// has gets "_1", "_2", ...); returns how many there were.
  int apply(Graph& graph);

 private:
  std::vector<Replacement> matches_;
  std::set<std::size_t> claimed_;
};

/// Runs a pass's `Matcher` (made from the graph and its uses; `match(n)` gives the replacement
/// of a match ending at node n, or nullopt) over every node in order and applies the matches it
/// could claim; returns how many there were.
template <typename Matcher>
int fuseMatches(Graph& graph) {
  const Uses uses(graph);
  Matcher matcher(graph, uses);
  Rewrite rewrite;
  for (std::size_t n = 0; n < graph.nodes.size(); ++n) {
    if (std::optional<Replacement> r = matcher.match(n)) {
      rewrite.claim(std::move(*r));
    }
  }
  return rewrite.apply(graph);
}

}  // namespace trn::graph::detail
