// Internal to the norm fusions (fuse_layer_norm.cpp, fuse_rms_norm.cpp): the pieces both match
// in a norm written out as PyTorch exports it — a ReduceMean over the last axis, the square of a
// value, and a value divided by the square root of a mean square plus epsilon.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "fuse_pattern.h"

namespace trn::graph::detail {

/// True when `node` is a ReduceMean (default domain, keepdims) over the last axis alone of a
/// rank-`rank` tensor.
bool meanOverLastAxis(const Graph& graph, const Node& node, std::size_t rank);

/// v when `squares` is Pow(v, 2) or Mul(v, v) and node `mean` alone reads it; that node joins
/// `r`.
std::optional<std::string> squaredValue(const Graph& graph, const Uses& uses, Replacement& r,
                                        const std::string& squares, std::size_t mean);

/// A value normalised by a root mean square: its name and the epsilon added under the root.
struct Normalized {
  std::string value;
  float epsilon = 0;
};

/// v / sqrt(`meanSquare` + eps) for a one-element fp32 constant eps: Add(., eps) or Add(eps, .),
/// Sqrt, then Div(v, root), or Mul(v, .) or Mul(., v) of Div(1, root) or Reciprocal(root), each
/// intermediate read by the next node alone. Its nodes join `r`.
std::optional<Normalized> normalizedBy(const Graph& graph, const Uses& uses, Replacement& r,
                                       const std::string& v, const std::string& meanSquare);

/// A per-column operand applied to a value, and the result.
struct ColumnOperand {
  std::string operand;
  std::string result;
};

/// The node of `opType` (Mul for a norm's weight, Add for its bias) that alone reads `value`,
/// when its other operand has the last of `sizes` elements and it, the result and `value`'s
/// `type` agree and the result is of `sizes`. The node joins `r` and is where its nodes go.
std::optional<ColumnOperand> perColumn(const Graph& graph, const Uses& uses, Replacement& r,
                                       const std::string& value, const char* opType,
                                       const std::vector<std::int64_t>& sizes,
                                       std::optional<ElementType> type);

}  // namespace trn::graph::detail
