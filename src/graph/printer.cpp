#include "trn/graph/printer.h"

#include <fmt/format.h>

#include "trn/graph/attribute.h"

namespace trn::graph {
namespace {

std::string typed(const Graph& graph, const std::string& name) {
  const Value* v = graph.value(name);
  std::string layout;
  if (graph.ranks > 1) {  // sharded (shard.h): the value's layout over the ranks
    layout = fmt::format(" {}", describeLayout(graph.layoutOf(name), graph.ranks));
  }
  return fmt::format("%{}: {}{}", name, v != nullptr ? describeValue(*v) : "?[?]", layout);
}

std::string withCommas(std::int64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') {
      out += ',';
    }
    out += digits[i];
  }
  return out;
}

}  // namespace

std::string formatGraph(const Graph& graph) {
  std::string out = fmt::format(
      "graph {} from {} (opset {}{}): {} inputs, {} outputs, {} nodes, {} initializers\n",
      graph.name.empty() ? "<unnamed>" : graph.name, graph.source, graph.opsetVersion,
      graph.producer.empty() ? "" : ", " + graph.producer, graph.inputs.size(),
      graph.outputs.size(), graph.nodes.size(), graph.initializers.size());
  out += fmt::format("parameters: {} ({} bytes)\n", withCommas(graph.parameterCount()),
                     withCommas(graph.parameterBytes()));
  if (graph.ranks > 1) {
    out += fmt::format("tensor parallel over {} ranks\n", graph.ranks);
  }
  out += "inputs:\n";
  for (const std::string& in : graph.inputs) {
    out += fmt::format("  {}\n", typed(graph, in));
  }
  out += "initializers:\n";
  for (const auto& [name, tensor] : graph.initializers) {
    auto layout = graph.layouts.find(name);
    out += fmt::format("  %{}: {}{}{}  ({} bytes)\n", name, elementTypeName(tensor.type),
                       tensor.shape.toString(),
                       layout == graph.layouts.end()
                           ? std::string()
                           : fmt::format(" {}", describeLayout(layout->second, graph.ranks)),
                       withCommas(static_cast<std::int64_t>(tensor.data().size())));
  }
  out += "nodes:\n";
  for (const Node& node : graph.nodes) {
    std::vector<std::string> results;
    for (const std::string& o : node.outputs) {
      results.push_back(o.empty() ? "_" : typed(graph, o));
    }
    std::vector<std::string> args;
    for (const std::string& in : node.inputs) {
      args.push_back(in.empty() ? "_" : "%" + in);
    }
    std::vector<std::string> attrs;
    for (const Attribute& a : node.attributes) {
      attrs.push_back(formatAttribute(a));
    }
    out += fmt::format(
        "  {} = {}{}({}){}  # {}\n", fmt::join(results, ", "),
        node.domain.empty() ? "" : node.domain + ".", node.opType, fmt::join(args, ", "),
        attrs.empty() ? "" : fmt::format(" {{{}}}", fmt::join(attrs, ", ")), node.name);
  }
  out += "outputs:\n";
  for (const std::string& o : graph.outputs) {
    out += fmt::format("  {}\n", typed(graph, o));
  }
  return out;
}

}  // namespace trn::graph
