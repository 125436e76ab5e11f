#include "trn/graph/lowering.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "lowering_context.h"
#include "shape_rules.h"
#include "trn/base/check.h"
#include "trn/graph/fold.h"
#include "trn/kernel/call_site.h"
#include "trn/kernel/nisa.h"
#include "trn/numerics/convert.h"

namespace trn::graph {
namespace detail {

Sizes contiguousStrides(const Sizes& sizes) {
  Sizes strides(sizes.size(), 1);
  for (std::size_t d = sizes.size(); d-- > 1;) {
    strides[d - 1] = strides[d] * sizes[d];
  }
  return strides;
}

Sizes broadcastStrides(const Sizes& sizes, const Sizes& out) {
  Sizes padded(out.size() - std::min(out.size(), sizes.size()), 1);
  padded.insert(padded.end(), sizes.begin(), sizes.end());
  Sizes strides = contiguousStrides(padded);
  for (std::size_t d = 0; d < out.size(); ++d) {
    if (padded[d] == 1 && out[d] != 1) {
      strides[d] = 0;
    }
  }
  return strides;
}

std::int64_t elementCount(const Sizes& sizes, std::size_t begin, std::size_t end) {
  return product(sizes, begin, end).value();
}

bool nextIndex(std::vector<std::int64_t>& index, const Sizes& sizes) {
  for (std::size_t d = index.size(); d-- > 0;) {
    if (++index[d] < sizes[d]) {
      return true;
    }
    index[d] = 0;
  }
  return false;
}

void LoweringContext::fail(const std::string& message) const {
  k_.fail(ErrorCode::kInvalidArgument, fmt::format("{}: {}", describeNode(graph_, *node_), message),
          std::source_location::current());
}

void LoweringContext::unsupported(const std::string& message) const {
  k_.fail(ErrorCode::kUnsupported, fmt::format("{}: {}", describeNode(graph_, *node_), message),
          std::source_location::current());
}

const DeviceValue& LoweringContext::input(std::size_t i) const {
  if (!node_->hasInput(i)) {
    fail(fmt::format("input {} is missing", i));
  }
  auto it = values_.find(node_->inputs[i]);
  if (it == values_.end()) {
    fail(
        fmt::format("input '{}' is not on the device (a value the device cannot hold: an "
                    "integer, boolean or fp64 tensor computed in the graph)",
                    node_->inputs[i]));
  }
  return it->second;
}

Sizes LoweringContext::inputSizes(std::size_t i) const {
  const Value* v = node_->hasInput(i) ? graph_.value(node_->inputs[i]) : nullptr;
  if (v == nullptr || !v->shape) {
    fail(fmt::format("input {} has no known shape", i));
  }
  return v->shape->sizes();
}

Sizes LoweringContext::outputSizes(std::size_t i) const {
  const Value* v = graph_.value(node_->outputs.at(i));
  if (v == nullptr || !v->shape) {
    fail(fmt::format("output {} has no known shape", i));
  }
  return v->shape->sizes();
}

DType LoweringContext::outputDType(std::size_t i) const {
  const Value* v = graph_.value(node_->outputs.at(i));
  const std::optional<DType> dtype = v != nullptr && v->type ? deviceDType(*v->type) : std::nullopt;
  if (!dtype) {
    unsupported(fmt::format("output '{}' is {}, which no device engine computes",
                            node_->outputs.at(i),
                            v != nullptr && v->type ? elementTypeName(*v->type) : "untyped"));
  }
  return *dtype;
}

std::optional<float> LoweringContext::scalarConstant(std::size_t i) const {
  const Tensor* t = node_->hasInput(i) ? graph_.initializer(node_->inputs[i]) : nullptr;
  if (t != nullptr && t->type == ElementType::kBf16 && t->data().size() == 2) {
    float value = 0;  // a bf16 scalar (auto-cast all) widens exactly
    convertToFloat(t->data(), DType::kBf16, std::span<float>(&value, 1));
    return value;
  }
  if (t == nullptr || t->data().size() != sizeof(float) || t->type != ElementType::kFp32) {
    return std::nullopt;
  }
  float value = 0;
  std::memcpy(&value, t->data().data(), sizeof(float));
  return value;
}

DeviceValue LoweringContext::declareOutput(std::size_t i) {
  const std::string& name = node_->outputs.at(i);
  const Sizes sizes = outputSizes(i);
  const DType dtype = outputDType(i);
  const std::int64_t n = std::max<std::int64_t>(elementCount(sizes), 1);
  kernel::Tensor t = isGraphOutput(i) ? k_.output(programName(name), {n}, dtype)
                                      : acquireScratch(programName(name), sizes, dtype);
  DeviceValue value{t, sizes};
  values_[name] = value;
  track(name, t);
  return value;
}

LoweringContext::PoolKey LoweringContext::poolKey(const Sizes& sizes, DType dtype) {
  // Rows of the value's last dimension, so that the backend's dependency analysis buckets the
  // accesses of a model's flat values as it does those of 2-D tensors; and the shape a library
  // kernel declares for a [rows, last] result.
  const std::int64_t n = std::max<std::int64_t>(elementCount(sizes), 1);
  const std::int64_t row = sizes.empty() || sizes.back() <= 0 ? 1 : sizes.back();
  return {dtype, {n / row, row}};
}

kernel::Tensor LoweringContext::acquireScratch(const std::string& name, const Sizes& sizes,
                                               DType dtype) {
  const PoolKey key = poolKey(sizes, dtype);
  std::vector<kernel::Tensor>& free = pool_[key];
  kernel::Tensor whole = free.empty() ? k_.hbmScratch(name, key.second, dtype) : free.back();
  if (!free.empty()) {
    free.pop_back();
  }
  recyclable_[whole.buffer()] = {whole, -1};
  return whole.reshape({key.second[0] * key.second[1]});
}

void LoweringContext::track(const std::string& name, const kernel::Tensor& flat) {
  auto it = recyclable_.find(flat.buffer());
  if (it == recyclable_.end()) {
    return;
  }
  auto use = lastUses_.find(name);
  const std::int64_t last = use == lastUses_.end() ? nodeIndex_ : use->second;
  it->second.lastUse = std::max({it->second.lastUse, last, nodeIndex_});
}

void LoweringContext::releaseDeadScratch() {
  for (auto it = recyclable_.begin(); it != recyclable_.end();) {
    if (it->second.lastUse <= nodeIndex_) {
      const kernel::Tensor& whole = it->second.whole;
      pool_[{whole.dtype(), whole.shape()}].push_back(whole);
      it = recyclable_.erase(it);
    } else {
      ++it;
    }
  }
}

bool LoweringContext::takeUnit() {
  const std::int64_t cores = k_.numPrograms(0);
  return cores <= 1 || unit_++ % cores == k_.programId(0);
}

std::vector<std::size_t> LoweringContext::fusedGroup() const {
  const auto self = static_cast<std::size_t>(nodeIndex_);
  if (fusion_ != nullptr) {
    auto group = fusion_->groups.find(self);
    if (group != fusion_->groups.end()) {
      return group->second;
    }
  }
  return {self};
}

bool LoweringContext::isGraphOutput(std::size_t i) const {
  const std::string& name = node_->outputs.at(i);
  return std::find(graph_.outputs.begin(), graph_.outputs.end(), name) != graph_.outputs.end();
}

std::vector<kernel::OutputRedirect> LoweringContext::outputRedirects() {
  std::vector<kernel::OutputRedirect> redirects;
  offered_.clear();
  for (std::size_t i = 0; i < node_->outputs.size(); ++i) {
    kernel::OutputRedirect r{programName(node_->outputs[i]), !isGraphOutput(i), std::nullopt};
    if (r.scratch) {
      std::vector<kernel::Tensor>& free = pool_[poolKey(outputSizes(i), outputDType(i))];
      if (!free.empty()) {
        r.reuse = free.back();
        offered_[i] = free.back();
        free.pop_back();
      }
    }
    redirects.push_back(std::move(r));
  }
  return redirects;
}

void LoweringContext::bind(std::size_t i, DeviceValue value) {
  const std::string& name = node_->outputs.at(i);
  auto offer = offered_.find(i);
  const bool isNew = !recyclable_.contains(value.flat.buffer()) && !isGraphOutput(i) &&
                     k_.ir().buffers[static_cast<std::size_t>(value.flat.buffer())].hbmKind ==
                         isa::TensorKind::kScratch;
  if (offer != offered_.end()) {
    if (offer->second.buffer() != value.flat.buffer()) {
      pool_[{offer->second.dtype(), offer->second.shape()}].push_back(offer->second);
    }
    offered_.erase(offer);
  }
  if (isNew) {
    // A library kernel's result (its own declared scratch): recyclable once dead, as a whole.
    const kernel::Buffer& buffer = k_.ir().buffers[static_cast<std::size_t>(value.flat.buffer())];
    const PoolKey key = poolKey(value.sizes, buffer.dtype);
    if (buffer.shape == key.second) {
      recyclable_[value.flat.buffer()] = {value.flat.reshape(key.second), -1};
    }
  }
  values_[name] = value;
  track(name, value.flat);
}

std::string LoweringContext::programName(const std::string& name) const {
  auto it = programNames_.find(name);
  return it == programNames_.end() ? name : it->second;
}

kernel::Tensor stridedView(const kernel::Tensor& flat, std::int64_t offset, std::int64_t rowStride,
                           std::int64_t rows, std::int64_t colStride, std::int64_t cols) {
  return stridedView(flat, offset, rowStride, rows, {isa::Dim{colStride, cols}});
}

kernel::Tensor stridedView(const kernel::Tensor& flat, std::int64_t offset, std::int64_t rowStride,
                           std::int64_t rows, std::vector<isa::Dim> free) {
  const std::int64_t n = flat.shape(0);
  // A base view whose row stride is rowStride: strides of contiguous tensors, their slices and
  // permutations are products of trailing sizes, so a non-zero row stride divides the count.
  kernel::Tensor base = rowStride == 0 ? flat.reshape({1, n}).broadcast(0, rows)
                                       : flat.reshape({n / rowStride, rowStride});
  return base.pattern(rows, std::move(free), offset);
}

void meetOtherCores(LoweringContext& ctx) {
  const Node& node = ctx.node();
  const DeviceValue* result = ctx.find(node.outputs.at(0));
  TRN_CHECK(result != nullptr) << "node '" << node.name << "' bound no result";
  for (const std::string& in : node.inputs) {
    const DeviceValue* input = in.empty() ? nullptr : ctx.find(in);
    if (input != nullptr && input->flat.buffer() == result->flat.buffer()) {
      return;  // a view of its input: nothing was computed
    }
  }
  kernel::nisa::coreBarrier(result->flat);
}

void meetBetweenStages(LoweringContext& ctx, const kernel::Tensor& written) {
  if (ctx.kernel().numPrograms(0) > 1) {
    kernel::nisa::coreBarrier(written);
  }
}

std::string loweringKey(const Node& node) {
  return node.domain.empty() ? node.opType : node.domain + "." + node.opType;
}

const OpLowerings& opLowerings() {
  static const OpLowerings table = [] {
    OpLowerings t;
    addElementwiseLowerings(t);
    addMovementLowerings(t);
    addLibraryLowerings(t);
    addConvLowerings(t);
    addPoolLowerings(t);
    addBatchNormLowerings(t);
    addCollectiveLowerings(t);
    return t;
  }();
  return table;
}

}  // namespace detail

namespace {

/// Program tensor names for the graph's values: invalid characters become '_', and collisions
/// get a numeric suffix.
std::map<std::string, std::string> programNames(const Graph& graph) {
  std::map<std::string, std::string> names;
  std::set<std::string> taken;
  auto add = [&](const std::string& value) {
    if (names.contains(value)) {
      return;
    }
    std::string name;
    for (const char c : value) {
      name.push_back(isa::isTensorNameChar(c) ? c : '_');
    }
    name = name.substr(0, 200);
    if (name.empty() || name.find_first_not_of('_') == std::string::npos) {
      name = "v" + name;
    }
    std::string unique = name;
    for (int n = 1; taken.contains(unique); ++n) {
      unique = fmt::format("{}_{}", name, n);
    }
    taken.insert(unique);
    names[value] = unique;
  };
  for (const auto& [name, value] : graph.values) {
    add(name);
  }
  for (const auto& [name, tensor] : graph.initializers) {
    add(name);
  }
  return names;
}

Result<kernel::TensorSpec> specOf(const Graph& graph, const std::string& value,
                                  const std::string& programName, const char* role) {
  const Value* v = graph.value(value);
  const Tensor* init = graph.initializer(value);
  std::optional<ElementType> type =
      init != nullptr ? std::optional(init->type) : (v != nullptr ? v->type : std::nullopt);
  std::optional<Shape> shape =
      init != nullptr ? std::optional(init->shape) : (v != nullptr ? v->shape : std::nullopt);
  if (!type || !shape || !shape->isStatic()) {
    return invalidArgument(
        fmt::format("{}: {} '{}' has no static shape and type (run shape "
                    "inference first)",
                    graph.source, role, value));
  }
  // int64 inputs and weights (token ids, positions: what Gather reads) reach the device as
  // int32, narrowed on the host with a range check (model.h).
  const std::optional<DType> dtype =
      *type == ElementType::kInt64 ? std::optional(DType::kInt32) : deviceDType(*type);
  if (!dtype) {
    return unsupported(fmt::format(
        "{}: {} '{}' is {}, which the device cannot hold; only floating-point and 8- to 32-bit "
        "integer tensors reach the device (integer inputs such as token ids need a lowering of "
        "the operator that reads them)",
        graph.source, role, value, elementTypeName(*type)));
  }
  const std::optional<std::int64_t> n = shape->elementCount();
  if (!n) {
    return invalidArgument(fmt::format("{}: {} '{}' {} has more elements than fit in 64 bits",
                                       graph.source, role, value, shape->toString()));
  }
  if (*n == 0) {
    return unsupported(fmt::format("{}: {} '{}' is empty ({}); empty tensors are not supported",
                                   graph.source, role, value, shape->toString()));
  }
  return kernel::TensorSpec{programName, {std::max<std::int64_t>(*n, 1)}, *dtype};
}

}  // namespace

Result<LoweredModel> lowerGraph(Graph graph, std::size_t firstNode) {
  auto shared = std::make_shared<const Graph>(std::move(graph));
  const Graph& g = *shared;
  LoweredModel model;
  model.graph = shared;
  model.firstNode = firstNode;
  std::map<std::string, std::string> names = programNames(g);
  const detail::OpLowerings& table = detail::opLowerings();

  // The device reads the graph inputs and the initializers that are data inputs of a node.
  for (const std::string& in : g.inputs) {
    TRN_ASSIGN_OR_RETURN(kernel::TensorSpec spec, specOf(g, in, names.at(in), "graph input"));
    model.inputs.push_back({in, std::move(spec)});
  }
  auto fusion = std::make_shared<const detail::FusionPlan>(detail::planElementwiseFusion(g));
  std::set<std::string> weights;
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    auto it = table.find(detail::loweringKey(node));
    if (it == table.end()) {
      return unsupported(
          fmt::format("{}: {}: the operator '{}' has no lowering to device code "
                      "yet (docs/compiler.md lists the supported ones)",
                      g.source, describeNode(g, node), node.opType));
    }
    model.nodeNames.push_back(node.name);
    const std::size_t by = fusion->computedBy[n];
    auto group = fusion->groups.find(n);
    model.nodeLowerings.push_back(
        by != n ? fmt::format("fused into line {}", firstNode + by + 1)
        : group != fusion->groups.end()
            ? fmt::format("tile loop (fused, {} nodes)", group->second.size())
            : (it->second.describe != nullptr ? it->second.describe(g, node) : it->second.how));
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.hasInput(i) && !isShapeArgument(node.opType, i) &&
          g.initializer(node.inputs[i]) != nullptr && !weights.contains(node.inputs[i])) {
        weights.insert(node.inputs[i]);
        TRN_ASSIGN_OR_RETURN(kernel::TensorSpec spec,
                             specOf(g, node.inputs[i], names.at(node.inputs[i]), "weight"));
        model.inputs.push_back({node.inputs[i], std::move(spec)});
      }
    }
  }
  for (const std::string& out : g.outputs) {
    TRN_ASSIGN_OR_RETURN(kernel::TensorSpec spec, specOf(g, out, names.at(out), "graph output"));
    model.outputs.push_back({out, std::move(spec)});
  }

  std::vector<std::string> inputValues;
  for (const ModelTensor& t : model.inputs) {
    inputValues.push_back(t.value);
  }
  model.kernel = kernel::KernelDef{
      g.name.empty() ? "model" : g.name,
      [shared, names = std::move(names), inputValues, firstNode, fusion](
          kernel::Kernel& k, std::span<const kernel::Tensor> in) {
        const Graph& modelGraph = *shared;
        detail::LoweringContext ctx(k, modelGraph);
        ctx.setProgramNames(names);
        ctx.setFusion(fusion.get());
        // A fused node's inputs are read when its group's last node is lowered.
        std::map<std::string, std::int64_t> lastUses;
        for (std::size_t n = 0; n < modelGraph.nodes.size(); ++n) {
          for (const std::string& value : modelGraph.nodes[n].inputs) {
            lastUses[value] =
                std::max(lastUses[value], static_cast<std::int64_t>(fusion->computedBy[n]));
          }
        }
        for (const std::string& out : modelGraph.outputs) {
          lastUses[out] = std::numeric_limits<std::int64_t>::max();
        }
        ctx.setLastUses(std::move(lastUses));
        for (std::size_t i = 0; i < in.size() && i < inputValues.size(); ++i) {
          const std::string& value = inputValues[i];
          const Tensor* init = modelGraph.initializer(value);
          const Shape shape = init != nullptr ? init->shape : *modelGraph.value(value)->shape;
          ctx.bindValue(value, detail::DeviceValue{in[i], shape.sizes()});
        }
        const detail::OpLowerings& ops = detail::opLowerings();
        for (std::size_t n = 0; n < modelGraph.nodes.size(); ++n) {
          const Node& node = modelGraph.nodes[n];
          if (fusion->computedBy[n] != n) {
            continue;  // computed in the tile loop of a later node
          }
          const kernel::CallSite site(modelGraph.source,
                                      static_cast<std::int32_t>(firstNode + n + 1));
          ctx.setNode(node, static_cast<std::int64_t>(n));
          ops.at(detail::loweringKey(node)).emit(ctx);
          if (k.numPrograms(0) > 1) {
            detail::meetOtherCores(ctx);
          }
          ctx.releaseDeadScratch();
        }
        std::vector<kernel::Tensor> outputs;
        for (const std::string& out : modelGraph.outputs) {
          const detail::DeviceValue* value = ctx.find(out);
          if (value == nullptr) {
            k.fail(ErrorCode::kUnsupported,
                   fmt::format("graph output '{}' is not computed by any node (an output that "
                               "is an input or a weight is not supported)",
                               out),
                   std::source_location::current());
          }
          outputs.push_back(value->flat);
        }
        return outputs;
      }};
  return model;
}

}  // namespace trn::graph
