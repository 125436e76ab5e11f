#include "trn/graph/conv_layout.h"

#include <cstring>
#include <map>
#include <memory>
#include <set>

namespace trn::graph {
namespace {

/// W [M, C, kH, kW] (kH = 1 for a rank-3 weight) as [kW, kH, C, M], any element size.
Tensor tapsFirst(const Tensor& w) {
  const std::vector<std::int64_t> s = w.shape.sizes();
  const auto m = static_cast<std::size_t>(s[0]);
  const auto c = static_cast<std::size_t>(s[1]);
  const auto kh = static_cast<std::size_t>(s.size() == 4 ? s[2] : 1);
  const auto kw = static_cast<std::size_t>(s.back());
  const auto element = static_cast<std::size_t>(elementByteSize(w.type));
  auto bytes = std::make_shared<std::vector<std::byte>>(w.data().size());
  const std::byte* src = w.data().data();
  for (std::size_t o = 0; o < m; ++o) {
    for (std::size_t i = 0; i < c; ++i) {
      for (std::size_t r = 0; r < kh; ++r) {
        for (std::size_t q = 0; q < kw; ++q) {
          const std::size_t from = ((o * c + i) * kh + r) * kw + q;
          const std::size_t to = ((q * kh + r) * c + i) * m + o;
          std::memcpy(bytes->data() + to * element, src + from * element, element);
        }
      }
    }
  }
  Tensor out = w;
  out.shape = Shape::of({s.back(), static_cast<std::int64_t>(kh), s[1], s[0]});
  out.bytes = std::move(bytes);
  return out;
}

}  // namespace

Status layOutConvWeights(Graph& graph) {
  // Weights every reader of which is a Conv (as its W), and the Convs reading each.
  std::map<std::string, std::vector<Node*>> convsOf;
  std::set<std::string> otherwiseRead;
  for (Node& node : graph.nodes) {
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.opType == "Conv" && node.domain.empty() && i == 1) {
        convsOf[node.inputs[i]].push_back(&node);
      } else {
        otherwiseRead.insert(node.inputs[i]);
      }
    }
  }
  for (const auto& [name, convs] : convsOf) {
    const Tensor* weight = graph.initializer(name);
    const std::size_t rank = weight == nullptr ? 0 : weight->shape.rank();
    if (weight == nullptr || otherwiseRead.contains(name) || (rank != 3 && rank != 4) ||
        weight->data().size() != static_cast<std::size_t>(weight->shape.elementCount().value_or(0) *
                                                          elementByteSize(weight->type))) {
      continue;  // lowering names what it cannot read
    }
    Tensor t = tapsFirst(*weight);
    graph.values[name].shape = t.shape;
    graph.initializers[name] = std::move(t);
    for (Node* conv : convs) {
      conv->attributes.push_back(Attribute{kConvWeightLayout, std::string(kConvWeightLayoutTaps)});
    }
  }
  return Status();
}

}  // namespace trn::graph
