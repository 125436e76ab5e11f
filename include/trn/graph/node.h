// One operator application of a graph: op type and domain, named inputs and outputs (value
// names; an empty input name is an omitted optional input, as in ONNX) and attributes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trn/graph/attribute.h"

namespace trn::graph {

struct Node {
  std::string name;    ///< the node's name in the file, or "<op type>_<index>" if it had none
  std::string opType;  ///< e.g. "MatMul"
  std::string domain;  ///< "" for the default ONNX domain
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;

  [[nodiscard]] const Attribute* attribute(const std::string& attributeName) const;
  [[nodiscard]] std::optional<std::int64_t> intAttribute(const std::string& attributeName) const;
  [[nodiscard]] std::optional<float> floatAttribute(const std::string& attributeName) const;
  [[nodiscard]] std::optional<std::vector<std::int64_t>> intsAttribute(
      const std::string& attributeName) const;
  /// True if input `i` is present (exists and is not the empty name).
  [[nodiscard]] bool hasInput(std::size_t i) const {
    return i < inputs.size() && !inputs[i].empty();
  }
};

}  // namespace trn::graph
