// Tensor shapes of graph values. A dimension is a number or, until shape inference binds it, a
// symbol (ONNX's dim_param, e.g. "batch"); after inference every shape is static.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trn::graph {

/// One dimension: a non-negative size, or a named symbolic size.
struct Dim {
  std::int64_t value = 0;
  std::string symbol;  ///< non-empty for a symbolic dimension (then value is unused)

  static Dim known(std::int64_t v) { return Dim{v, {}}; }
  static Dim symbolic(std::string name) { return Dim{0, std::move(name)}; }
  [[nodiscard]] bool isStatic() const { return symbol.empty(); }
  friend bool operator==(const Dim&, const Dim&) = default;
};

/// A shape; rank 0 is a scalar.
struct Shape {
  std::vector<Dim> dims;

  static Shape of(const std::vector<std::int64_t>& sizes);
  [[nodiscard]] std::size_t rank() const { return dims.size(); }
  [[nodiscard]] bool isStatic() const;
  /// The sizes of a static shape (TRN_CHECK that it is static).
  [[nodiscard]] std::vector<std::int64_t> sizes() const;
  /// The number of elements of a static shape, or nullopt on overflow or a symbolic dim.
  [[nodiscard]] std::optional<std::int64_t> elementCount() const;
  /// "[2, 3, batch]"; a scalar is "[]".
  [[nodiscard]] std::string toString() const;
  friend bool operator==(const Shape&, const Shape&) = default;
};

}  // namespace trn::graph
