#include "trn/graph/shape_inference.h"

#include <fmt/format.h>

#include "shape_rules.h"
#include "trn/base/checked.h"

namespace trn::graph {
namespace detail {

Status ShapeContext::error(const std::string& message) const {
  return invalidArgument(
      fmt::format("{}: {}: {}", graph_.source, describeNode(graph_, node_), message));
}

Status ShapeContext::unresolved(const std::string& message) const {
  return unsupported(
      fmt::format("{}: {}: {}", graph_.source, describeNode(graph_, node_), message));
}

Sizes ShapeContext::sizes(std::size_t i) const {
  return graph_.value(node_.inputs.at(i))->shape->sizes();
}

ElementType ShapeContext::type(std::size_t i) const {
  return *graph_.value(node_.inputs.at(i))->type;
}

Status ShapeContext::require(std::size_t i, const char* what) const {
  if (!has(i)) {
    return error(fmt::format("the input {} ({}) is required", i, what));
  }
  return Status();
}

const std::vector<std::int64_t>* ShapeContext::constant(std::size_t i) const {
  if (!has(i)) {
    return nullptr;
  }
  auto it = constants_.find(node_.inputs[i]);
  return it == constants_.end() ? nullptr : &it->second;
}

Result<std::vector<std::int64_t>> ShapeContext::requireConstant(std::size_t i,
                                                                const char* what) const {
  TRN_RETURN_IF_ERROR(require(i, what));
  const std::vector<std::int64_t>* values = constant(i);
  if (values == nullptr) {
    return unresolved(
        fmt::format("the {} ('{}') is not known at compile time, so the output "
                    "shape cannot be resolved",
                    what, node_.inputs[i]));
  }
  return *values;
}

Status ShapeContext::setOutput(std::size_t i, ElementType type, const Sizes& sizes) {
  if (i >= node_.outputs.size() || node_.outputs[i].empty()) {
    return Status();
  }
  for (std::int64_t s : sizes) {
    if (s < 0) {
      return error(
          fmt::format("output '{}' would have the negative dimension {}", node_.outputs[i], s));
    }
  }
  const Shape shape = Shape::of(sizes);
  if (!shape.elementCount()) {
    return error(fmt::format("the element count of output '{}' {} overflows", node_.outputs[i],
                             shape.toString()));
  }
  Value& value = *graph_.value(node_.outputs[i]);
  if (value.shape && value.shape->isStatic() && *value.shape != shape) {
    return error(fmt::format("output '{}' is inferred as {} but the file declares {}",
                             node_.outputs[i], shape.toString(), value.shape->toString()));
  }
  value.type = type;
  value.shape = shape;
  return Status();
}

void ShapeContext::setConstant(std::size_t i, std::vector<std::int64_t> values) {
  if (i < node_.outputs.size() && !node_.outputs[i].empty() &&
      static_cast<std::int64_t>(values.size()) <= kMaxTrackedElements) {
    constants_[node_.outputs[i]] = std::move(values);
  }
}

Result<std::int64_t> ShapeContext::axis(std::int64_t axis, std::int64_t rank,
                                        const char* what) const {
  if (axis < -rank || axis >= rank) {
    return error(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  }
  return axis < 0 ? axis + rank : axis;
}

Result<Sizes> ShapeContext::broadcast(const Sizes& a, const Sizes& b) const {
  const std::size_t rank = std::max(a.size(), b.size());
  Sizes out(rank);
  for (std::size_t k = 0; k < rank; ++k) {
    const std::int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    const std::int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return error(fmt::format("shapes {} and {} do not broadcast (dimension {}: {} vs {})",
                               Shape::of(a).toString(), Shape::of(b).toString(), k, da, db));
    }
    out[k] = da == 1 ? db : da;
  }
  return out;
}

std::optional<std::int64_t> product(const Sizes& sizes, std::size_t begin, std::size_t end) {
  Checked<std::int64_t> p = 1;
  for (std::size_t k = begin; k < end && k < sizes.size(); ++k) {
    p *= sizes[k];
  }
  return p.get();
}

namespace {

const ShapeRules& rules() {
  static const ShapeRules table = [] {
    ShapeRules r;
    addElementwiseRules(r);
    addTensorRules(r);
    addNnRules(r);
    return r;
  }();
  return table;
}

Status bindInputs(Graph& graph, const ShapeOptions& options) {
  for (const std::string& name : graph.inputs) {
    Value& v = *graph.value(name);
    if (!v.type || !v.shape) {
      return unsupported(fmt::format("{}: graph input '{}' has no {} in the file", graph.source,
                                     name, v.type ? "shape" : "element type"));
    }
    for (std::size_t k = 0; k < v.shape->dims.size(); ++k) {
      Dim& d = v.shape->dims[k];
      if (d.isStatic()) {
        continue;
      }
      auto bound = options.symbols.find(d.symbol);
      if (bound == options.symbols.end()) {
        return invalidArgument(fmt::format(
            "{}: graph input '{}' {} has the symbolic dimension '{}' (dimension {}); give it a "
            "size (--dim {}=N)",
            graph.source, name, v.shape->toString(), d.symbol, k, d.symbol));
      }
      if (bound->second < 0) {
        return invalidArgument(
            fmt::format("{}: the size of '{}' is negative", graph.source, d.symbol));
      }
      d = Dim::known(bound->second);
    }
  }
  return Status();
}

}  // namespace
}  // namespace detail

Status inferShapes(Graph& graph, const ShapeOptions& options) {
  using namespace detail;
  TRN_RETURN_IF_ERROR(bindInputs(graph, options));
  Constants constants;
  for (const auto& [name, tensor] : graph.initializers) {
    if (isInteger(tensor.type) && tensor.shape.elementCount().value_or(0) <= kMaxTrackedElements) {
      constants[name] = *tensor.toInt64();
    }
  }
  for (const Node& node : graph.nodes) {
    ShapeContext ctx(graph, node, constants);
    if (!node.domain.empty() && node.domain != "ai.onnx") {
      return ctx.error(fmt::format("the operator domain '{}' is not supported", node.domain));
    }
    auto rule = rules().find(node.opType);
    if (rule == rules().end()) {
      return unsupported(
          fmt::format("{}: {}: the operator '{}' is not supported by the graph "
                      "compiler",
                      graph.source, describeNode(graph, node), node.opType));
    }
    for (const std::string& in : node.inputs) {
      const Value* v = in.empty() ? nullptr : graph.value(in);
      if (!in.empty() && (v == nullptr || !v->type || !v->shape || !v->shape->isStatic())) {
        return ctx.unresolved(fmt::format("the shape of input '{}' is not known", in));
      }
    }
    TRN_RETURN_IF_ERROR(rule->second(ctx));
    for (const std::string& out : node.outputs) {
      const Value* v = out.empty() ? nullptr : graph.value(out);
      if (v != nullptr && (!v->type || !v->shape || !v->shape->isStatic())) {
        return ctx.unresolved(fmt::format("the shape of output '{}' could not be inferred", out));
      }
    }
  }
  for (const std::string& out : graph.outputs) {
    const Value* v = graph.value(out);
    if (!v->type || !v->shape || !v->shape->isStatic()) {
      return unsupported(
          fmt::format("{}: the shape of graph output '{}' is not known", graph.source, out));
    }
  }
  graph.knownIntegers = std::move(constants);
  return Status();
}

std::vector<std::string> supportedShapeOps() {
  std::vector<std::string> names;
  for (const auto& [name, rule] : detail::rules()) {
    names.push_back(name);
  }
  return names;
}

}  // namespace trn::graph
