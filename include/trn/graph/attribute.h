// Node attributes as ONNX stores them: one of an integer, a float, a string, a tensor, or lists
// of integers, floats or strings. Graph-valued attributes (If, Loop, Scan) are not supported.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "trn/graph/tensor.h"

namespace trn::graph {

using AttributeValue =
    std::variant<std::int64_t, float, std::string, Tensor, std::vector<std::int64_t>,
                 std::vector<float>, std::vector<std::string>>;

/// A named attribute of a node.
struct Attribute {
  std::string name;
  AttributeValue value;
};

/// "axis=1", "perm=[0, 2, 1]", "value=tensor fp32[2]".
std::string formatAttribute(const Attribute& attribute);

}  // namespace trn::graph
