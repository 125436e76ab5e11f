#include "trn/graph/layout.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "trn/graph/auto_cast.h"

namespace trn::graph {
namespace {

/// How many nodes read each value.
std::map<std::string, int> readers(const Graph& graph) {
  std::map<std::string, int> count;
  for (const Node& node : graph.nodes) {
    for (const std::string& in : node.inputs) {
      ++count[in];
    }
  }
  return count;
}

/// `t` [rows, cols] transposed into [cols, rows], any element size.
Tensor transposed(const Tensor& t) {
  const std::vector<std::int64_t> sizes = t.shape.sizes();
  const std::size_t rows = static_cast<std::size_t>(sizes[0]);
  const std::size_t cols = static_cast<std::size_t>(sizes[1]);
  const std::size_t element = static_cast<std::size_t>(elementByteSize(t.type));
  auto bytes = std::make_shared<std::vector<std::byte>>(t.data().size());
  const std::byte* src = t.data().data();
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      std::memcpy(bytes->data() + (c * rows + r) * element, src + (r * cols + c) * element,
                  element);
    }
  }
  Tensor out = t;
  out.shape = Shape::of({sizes[1], sizes[0]});
  out.bytes = std::move(bytes);
  return out;
}

/// Stores in `type` the fp32 weights only a MatMul or Gemm reads, as their B operand.
void castProductWeights(Graph& graph, const std::map<std::string, int>& reads, ElementType type) {
  for (const Node& node : graph.nodes) {
    if ((node.opType != "MatMul" && node.opType != "Gemm") || !node.hasInput(1)) {
      continue;
    }
    const std::string& b = node.inputs[1];
    const Tensor* weight = graph.initializer(b);
    if (weight == nullptr || weight->type != ElementType::kFp32 || reads.at(b) != 1) {
      continue;
    }
    graph.initializers[b] = roundedTo(*weight, type);
    graph.values[b].type = type;
  }
}

}  // namespace

Status chooseLayouts(Graph& graph, const LayoutOptions& options) {
  const std::map<std::string, int> reads = readers(graph);
  for (Node& node : graph.nodes) {
    if (node.opType != "Gemm" || node.intAttribute("transB").value_or(0) == 0 ||
        node.inputs.size() < 2) {
      continue;
    }
    const std::string& b = node.inputs[1];
    const Tensor* weight = graph.initializer(b);
    if (weight == nullptr || weight->shape.rank() != 2 || reads.at(b) != 1) {
      continue;  // computed in the graph, or shared: lowering reports what it cannot do
    }
    Tensor t = transposed(*weight);
    graph.values[b].shape = t.shape;
    graph.initializers[b] = std::move(t);
    for (Attribute& a : node.attributes) {
      if (a.name == "transB") {
        a.value = std::int64_t{0};
      }
    }
  }
  if (options.productWeights) {
    castProductWeights(graph, reads, *options.productWeights);
  }
  return Status();
}

}  // namespace trn::graph
