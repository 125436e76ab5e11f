// A constant tensor of a graph: an initializer (a weight) or a Constant node's value. Its bytes
// are copied once from the model file into memory the tensor shares (copies of a Tensor share
// them), little-endian, densely packed in row-major order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "trn/graph/element_type.h"
#include "trn/graph/shape.h"

namespace trn::graph {

struct Tensor {
  std::string name;
  ElementType type = ElementType::kFp32;
  Shape shape;  ///< always static
  std::shared_ptr<const std::vector<std::byte>> bytes;

  [[nodiscard]] std::span<const std::byte> data() const {
    return bytes ? std::span<const std::byte>(*bytes) : std::span<const std::byte>();
  }
  /// The elements as int64 for an integer tensor (int8..uint64); nullopt for other types.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> toInt64() const;
};

}  // namespace trn::graph
