#include "trn/graph/fold_batchnorm.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>

namespace trn::graph {
namespace {

/// The elements of an fp32 initializer of `count` elements, or nothing.
std::optional<std::vector<double>> fp32Values(const Graph& graph, const std::string& name,
                                              std::size_t count) {
  const Tensor* t = graph.initializer(name);
  if (t == nullptr || t->type != ElementType::kFp32 || t->data().size() != count * sizeof(float)) {
    return std::nullopt;
  }
  std::vector<float> floats(count);
  std::memcpy(floats.data(), t->data().data(), count * sizeof(float));
  return std::vector<double>(floats.begin(), floats.end());
}

/// A value name not yet used in `graph`, from `base`.
std::string unusedName(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int n = 1; graph.values.contains(name) || graph.initializers.contains(name); ++n) {
    name = fmt::format("{}_{}", base, n);
  }
  return name;
}

/// Adds an fp32 initializer of `shape` holding `values` rounded once; returns its name.
std::string addWeight(Graph& graph, const std::string& base, const Shape& shape,
                      const std::vector<double>& values) {
  const std::string name = unusedName(graph, base);
  auto bytes = std::make_shared<std::vector<std::byte>>(values.size() * sizeof(float));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto f = static_cast<float>(values[i]);
    std::memcpy(bytes->data() + i * sizeof(float), &f, sizeof(float));
  }
  graph.initializers[name] = Tensor{name, ElementType::kFp32, shape, std::move(bytes)};
  graph.values[name] = Value{name, ElementType::kFp32, shape};
  return name;
}

/// Folds BatchNormalization `bn` into Conv `conv` when every parameter is a known fp32 tensor;
/// false (nothing changed) otherwise.
bool foldInto(Graph& graph, Node& conv, const Node& bn) {
  const Tensor* w = graph.initializer(conv.inputs[1]);
  if (w == nullptr || w->shape.rank() < 3) {
    return false;
  }
  const std::int64_t m = w->shape.dims[0].value;
  const std::optional<std::int64_t> total = w->shape.elementCount();
  if (!total || m <= 0) {
    return false;
  }
  const auto channels = static_cast<std::size_t>(m);
  const auto perChannel = static_cast<std::size_t>(*total / m);
  std::optional<std::vector<double>> weight =
      fp32Values(graph, conv.inputs[1], channels * perChannel);
  std::optional<std::vector<double>> bias = conv.hasInput(2)
                                                ? fp32Values(graph, conv.inputs[2], channels)
                                                : std::optional(std::vector<double>(channels, 0.0));
  std::optional<std::vector<double>> params[4];
  for (std::size_t i = 0; i < 4; ++i) {
    params[i] = fp32Values(graph, bn.inputs[i + 1], channels);
  }
  if (!weight || !bias || !params[0] || !params[1] || !params[2] || !params[3]) {
    return false;
  }
  const double eps = bn.floatAttribute("epsilon").value_or(1e-5f);
  const std::vector<double>& scale = *params[0];
  const std::vector<double>& beta = *params[1];
  const std::vector<double>& mean = *params[2];
  const std::vector<double>& var = *params[3];
  for (std::size_t o = 0; o < channels; ++o) {
    const double s = scale[o] / std::sqrt(var[o] + eps);
    for (std::size_t i = 0; i < perChannel; ++i) {
      (*weight)[o * perChannel + i] *= s;
    }
    (*bias)[o] = ((*bias)[o] - mean[o]) * s + beta[o];
  }
  const std::string& y = bn.outputs[0];
  const std::string newWeight = addWeight(graph, y + "_folded_W", w->shape, *weight);
  const std::string newBias = addWeight(graph, y + "_folded_B", Shape::of({m}), *bias);
  graph.values.erase(conv.outputs[0]);
  conv.inputs.resize(3);
  conv.inputs[1] = newWeight;
  conv.inputs[2] = newBias;
  conv.outputs = {y};
  return true;
}

}  // namespace

Result<int> foldBatchNorms(Graph& graph) {
  std::map<std::string, std::size_t> producer;
  std::map<std::string, int> readers;
  for (std::size_t n = 0; n < graph.nodes.size(); ++n) {
    for (const std::string& out : graph.nodes[n].outputs) {
      producer[out] = n;
    }
    for (const std::string& in : graph.nodes[n].inputs) {
      ++readers[in];
    }
  }
  for (const std::string& out : graph.outputs) {
    ++readers[out];
  }
  std::vector<bool> folded(graph.nodes.size(), false);
  int count = 0;
  for (std::size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& bn = graph.nodes[n];
    if (bn.opType != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() != 5 ||
        bn.outputs.size() != 1) {
      continue;
    }
    auto from = producer.find(bn.inputs[0]);
    if (from == producer.end() || readers[bn.inputs[0]] != 1) {
      continue;
    }
    Node& conv = graph.nodes[from->second];
    if (conv.opType != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1 ||
        !conv.hasInput(1)) {
      continue;
    }
    if (foldInto(graph, conv, bn)) {
      folded[n] = true;
      ++count;
    }
  }
  std::vector<Node> kept;
  for (std::size_t n = 0; n < graph.nodes.size(); ++n) {
    if (!folded[n]) {
      kept.push_back(std::move(graph.nodes[n]));
    }
  }
  graph.nodes = std::move(kept);
  // Initializers that were read before and are not now (the folded Convs' former weights and
  // biases, the statistics) go.
  std::set<std::string> unread;
  for (const auto& [name, reads] : readers) {
    if (graph.initializers.contains(name)) {
      unread.insert(name);
    }
  }
  dropUnread(graph, std::move(unread));
  return count;
}

}  // namespace trn::graph
