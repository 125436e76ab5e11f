#include "trn/graph/conv_layout.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>

namespace trn::graph {
namespace {

/// W [M, C, kH, kW] (or [M, C, kW]) in the blocked layout of conv_layout.h, any element size.
Tensor blocked(const Tensor& w, std::int64_t groups) {
  const std::vector<std::int64_t> s = w.shape.sizes();
  const std::int64_t m = s[0];
  const std::int64_t c = s[1];
  std::int64_t taps = 1;
  for (std::size_t d = 2; d < s.size(); ++d) {
    taps *= s[d];
  }
  const std::int64_t packed = packedTaps(c, taps);
  const std::int64_t perGroup = m / groups;
  const auto element = static_cast<std::size_t>(elementByteSize(w.type));
  auto bytes = std::make_shared<std::vector<std::byte>>(w.data().size());
  const std::byte* src = w.data().data();
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t o0 = 0; o0 < perGroup; o0 += kConvOutputBlock) {
      const std::int64_t os = std::min(kConvOutputBlock, perGroup - o0);
      const std::int64_t first = g * perGroup + o0;
      const std::int64_t base = c * taps * first;
      for (std::int64_t o = 0; o < os; ++o) {
        for (std::int64_t i = 0; i < c; ++i) {
          for (std::int64_t t = 0; t < taps; ++t) {
            const std::int64_t from = ((first + o) * c + i) * taps + t;
            const std::int64_t to =
                base + (packed > 1 ? (t * c + i) * os + o : (i * taps + t) * os + o);
            std::memcpy(bytes->data() + static_cast<std::size_t>(to) * element,
                        src + static_cast<std::size_t>(from) * element, element);
          }
        }
      }
    }
  }
  Tensor out = w;
  out.shape = Shape::of({m * c * taps});
  out.bytes = std::move(bytes);
  return out;
}

}  // namespace

std::int64_t packedTaps(std::int64_t channelsPerGroup, std::int64_t taps) {
  constexpr std::int64_t kPartitions = 128;
  const std::int64_t fit = channelsPerGroup > 0 ? kPartitions / channelsPerGroup : 0;
  return taps > 1 && fit >= 4 ? std::min(fit, taps) : 1;
}

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
    const std::int64_t groups = convs[0]->intAttribute("group").value_or(1);
    const bool sameGroups = std::all_of(convs.begin(), convs.end(), [&](const Node* n) {
      return n->intAttribute("group").value_or(1) == groups;
    });
    if (weight == nullptr || otherwiseRead.contains(name) || (rank != 3 && rank != 4) ||
        !sameGroups || groups < 1 || weight->shape.dims[0].value % groups != 0 ||
        weight->data().size() != static_cast<std::size_t>(weight->shape.elementCount().value_or(0) *
                                                          elementByteSize(weight->type))) {
      continue;  // lowering names what it cannot read
    }
    const std::vector<std::int64_t> sizes = weight->shape.sizes();
    const std::vector<std::int64_t> kernel(sizes.begin() + 2, sizes.end());
    Tensor t = blocked(*weight, groups);
    graph.values[name].shape = t.shape;
    graph.initializers[name] = std::move(t);
    for (Node* conv : convs) {
      conv->attributes.push_back(
          Attribute{kConvWeightLayout, std::string(kConvWeightLayoutBlocked)});
      if (conv->attribute("kernel_shape") == nullptr) {
        conv->attributes.push_back(Attribute{"kernel_shape", kernel});
      }
    }
  }
  return Status();
}

}  // namespace trn::graph
