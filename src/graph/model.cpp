#include "trn/graph/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include "model_ranks.h"
#include "trn/core/timeline.h"
#include "trn/fabric/topology.h"
#include "trn/graph/shard.h"
#include "trn/numerics/convert.h"
#include "trn/spec/system_loader.h"

namespace trn::graph {

namespace {

/// `count` int64 values at `data` as int32, or an error naming `what` and the first value out of
/// range.
Result<std::vector<std::byte>> narrowToInt32(const std::byte* data, std::size_t count,
                                             const std::string& what) {
  std::vector<std::byte> out(count * sizeof(std::int32_t));
  for (std::size_t i = 0; i < count; ++i) {
    std::int64_t v = 0;
    std::memcpy(&v, data + i * sizeof(v), sizeof(v));
    if (v < std::numeric_limits<std::int32_t>::min() ||
        v > std::numeric_limits<std::int32_t>::max()) {
      return invalidArgument(fmt::format(
          "{}: element {} is {}, outside the int32 range the device's indices take", what, i, v));
    }
    const auto narrow = static_cast<std::int32_t>(v);
    std::memcpy(out.data() + i * sizeof(narrow), &narrow, sizeof(narrow));
  }
  return out;
}

}  // namespace

namespace detail {

Result<runtime::NpyArray> weightArray(const Tensor& weight) {
  runtime::NpyArray array;
  const std::optional<std::int64_t> count = weight.shape.elementCount();
  array.shape = {std::max<std::int64_t>(count.value_or(0), 1)};
  const std::span<const std::byte> data = weight.data();
  auto copy = [&](runtime::NpyType type) {
    array.type = type;
    array.data.assign(data.begin(), data.end());
  };
  switch (weight.type) {
    case ElementType::kFp32:
      copy(runtime::NpyType::kFloat32);
      break;
    case ElementType::kFp16:
      copy(runtime::NpyType::kFloat16);
      break;
    case ElementType::kInt8:
      copy(runtime::NpyType::kInt8);
      break;
    case ElementType::kUint8:
    case ElementType::kBool:
      copy(runtime::NpyType::kUInt8);
      break;
    case ElementType::kInt16:
      copy(runtime::NpyType::kInt16);
      break;
    case ElementType::kUint16:
      copy(runtime::NpyType::kUInt16);
      break;
    case ElementType::kInt32:
      copy(runtime::NpyType::kInt32);
      break;
    case ElementType::kUint32:
      copy(runtime::NpyType::kUInt32);
      break;
    case ElementType::kInt64: {
      // Indices (positions, known token ids) reach the device as int32 (lowering.h).
      array.type = runtime::NpyType::kInt32;
      TRN_ASSIGN_OR_RETURN(array.data,
                           narrowToInt32(data.data(), data.size() / sizeof(std::int64_t),
                                         fmt::format("weight '{}'", weight.name)));
      break;
    }
    case ElementType::kBf16:
    case ElementType::kFp8E4m3: {  // no NumPy type: widened exactly, narrowed exactly on binding
      array.type = runtime::NpyType::kFloat32;
      std::vector<float> widened(data.size() /
                                 static_cast<std::size_t>(elementByteSize(weight.type)));
      convertToFloat(data, *deviceDType(weight.type), widened);
      array.data.resize(widened.size() * sizeof(float));
      std::memcpy(array.data.data(), widened.data(), array.data.size());
      break;
    }
    default:
      return unsupported(fmt::format("weight '{}' is {}, which the device cannot hold", weight.name,
                                     elementTypeName(weight.type)));
  }
  if (array.data.size() !=
      static_cast<std::size_t>(array.shape[0]) * runtime::npyItemSize(array.type)) {
    return invalidArgument(fmt::format("weight '{}' holds {} bytes for {} elements", weight.name,
                                       data.size(), array.shape[0]));
  }
  return array;
}

}  // namespace detail

std::int64_t ModelPart::instructions() const {
  std::int64_t total = 0;
  for (const auto& core : launch.cores) {
    total += core->summary.instructions;
  }
  return total;
}

std::int64_t CompiledModel::compiledInstructions() const {
  std::int64_t total = 0;
  std::size_t counted = 0;
  for (const ModelPart& part : parts) {
    if (part.kernelIndex == counted) {
      total += part.instructions();
      ++counted;
    }
  }
  return total;
}

std::int64_t CompiledModel::launchedInstructions() const {
  std::int64_t total = 0;
  for (const ModelPart& part : parts) {
    total += part.instructions();
  }
  return total;
}

std::span<const core::RunStats> ModelRun::coresOf(std::size_t p) const {
  return cores.empty() ? std::span(&parts.at(p), 1) : std::span(cores.at(p));
}

std::vector<std::pair<std::string, std::string>> CompiledModel::nodeLowerings() const {
  std::vector<std::pair<std::string, std::string>> nodes;
  for (const ModelPart& part : parts) {
    for (std::size_t n = 0; n < part.lowered.nodeNames.size(); ++n) {
      nodes.emplace_back(part.lowered.nodeNames[n], part.lowered.nodeLowerings[n]);
    }
  }
  return nodes;
}

Status applyAutoCast(std::string_view mode, DType type, PipelineOptions& pipeline,
                     kernel::CompileOptions& compile) {
  if (mode == "matmult") {
    compile.autoCast = {kernel::AutoCast::kMatmult, type};
  } else if (mode == "all") {
    TRN_ASSIGN_OR_RETURN(pipeline.castAll, elementTypeOf(type));
  } else if (mode != "none") {
    return invalidArgument(fmt::format("auto-cast '{}': expected none, matmult or all", mode));
  }
  return Status();
}

Result<Placement> placement(const runtime::Session& session, Partition partition, int lnc, int tp,
                            const std::string& system) {
  Placement placed{partition, lnc, nullptr};
  if (tp > 1) {
    TRN_ASSIGN_OR_RETURN(const spec::SystemSpec loaded, spec::loadSystem(system));
    TRN_ASSIGN_OR_RETURN(fabric::Topology topology,
                         fabric::Topology::create(loaded, session.chip()));
    placed.system = std::make_shared<const fabric::Topology>(std::move(topology));
  }
  return placed;
}

Result<CompiledModel> compileModel(const runtime::Session& session, const std::string& path,
                                   const PipelineOptions& pipeline,
                                   const kernel::CompileOptions& compile, Placement placement) {
  if (!pipeline.stopAfter.empty()) {
    return invalidArgument("compileModel runs every pass; stopAfter must be empty");
  }
  // Under auto-cast the products read their weights in the auto-cast type: store them so
  // (layout.h). tf32 is fp32's 4 bytes: its weights stay fp32 and the DMA rounds them on load.
  PipelineOptions passes = pipeline;
  if (compile.autoCast.mode == kernel::AutoCast::kMatmult &&
      compile.autoCast.type != DType::kTf32) {
    TRN_ASSIGN_OR_RETURN(passes.layout.productWeights, elementTypeOf(compile.autoCast.type));
  }
  TRN_ASSIGN_OR_RETURN(Graph graph, runPipeline(path, passes));
  return compileGraph(session, std::move(graph), compile, placement);
}

namespace {

/// The parts `graph` is compiled as, each with its subgraph and key: per layer when `partition`
/// asks for it, or under kAuto when two parts are the same kernel; else the whole graph.
struct PlannedPart {
  NodeRange nodes;
  Graph graph;
  std::string key;
};

std::vector<PlannedPart> planParts(const Graph& graph, Partition partition) {
  std::vector<PlannedPart> planned;
  if (partition != Partition::kOne) {
    std::set<std::string> keys;
    bool repeats = false;
    for (const NodeRange& range : layerRanges(graph)) {
      Graph part = extractPart(graph, range);
      std::string key = partKey(part);
      repeats = !keys.insert(key).second || repeats;
      planned.push_back({range, std::move(part), std::move(key)});
    }
    if (planned.size() > 1 && (repeats || partition == Partition::kPerLayer)) {
      return planned;
    }
    planned.clear();
  }
  planned.push_back({{0, graph.nodes.size()}, graph, ""});
  return planned;
}

}  // namespace

Result<CompiledModel> compileGraph(const runtime::Session& session, Graph graph,
                                   const kernel::CompileOptions& compile, Placement placement) {
  CompiledModel model;
  model.graph = std::make_shared<const Graph>(std::move(graph));
  model.lnc = placement.lnc;
  const Graph& g = *model.graph;
  // A sharded graph: every rank's graph has rank 0's shapes, so one compile serves them all.
  model.ranks = g.ranks;
  Graph rankZero;
  if (g.ranks > 1) {
    TRN_RETURN_IF_ERROR(detail::checkRanks(g, placement));
    model.system = placement.system;
    rankZero = rankGraph(g, 0);
  }
  runtime::RunOptions launchOptions;
  launchOptions.lnc = placement.lnc;
  std::map<std::string, std::size_t> compiledParts;  // key -> the part compiled for it
  std::vector<PlannedPart> planned = planParts(g.ranks > 1 ? rankZero : g, placement.partition);
  for (std::size_t p = 0; p < planned.size(); ++p) {
    PlannedPart& plan = planned[p];
    ModelPart part;
    part.nodes = plan.nodes;
    // A part is named by the layer of its first node ("layers.3", "norm").
    part.name =
        planned.size() == 1 ? std::string("model") : layerOf(g.nodes[plan.nodes.first].name);
    TRN_ASSIGN_OR_RETURN(part.lowered, lowerGraph(std::move(plan.graph), plan.nodes.first));
    auto [it, added] = compiledParts.emplace(plan.key, p);
    if (added) {
      std::vector<kernel::TensorSpec> specs;
      for (const ModelTensor& t : part.lowered.inputs) {
        specs.push_back(t.spec);
      }
      TRN_ASSIGN_OR_RETURN(
          part.launch, session.compileLaunch(part.lowered.kernel, specs, launchOptions, compile));
      part.compiledFor = part.nodes;
      part.kernelIndex = model.kernels++;
    } else {
      const ModelPart& first = model.parts[it->second];
      part.launch = first.launch;
      part.compiledFor = first.nodes;
      part.kernelIndex = first.kernelIndex;
      TRN_CHECK(part.lowered.inputs.size() == first.lowered.inputs.size() &&
                part.lowered.outputs.size() == first.lowered.outputs.size())
          << "parts with one key have different interfaces";
    }
    const Graph& lowered = *part.lowered.graph;
    for (std::size_t i = lowered.inputs.size(); i < part.lowered.inputs.size(); ++i) {
      const std::string& name = part.lowered.inputs[i].value;
      if (model.ranks > 1) {
        if (!model.rankWeights.contains(name)) {
          TRN_ASSIGN_OR_RETURN(model.rankWeights[name], detail::rankWeightArrays(g, name));
        }
      } else if (!model.weights.contains(name)) {
        TRN_ASSIGN_OR_RETURN(runtime::NpyArray w, detail::weightArray(*lowered.initializer(name)));
        model.weights.emplace(name, std::move(w));
      }
    }
    model.parts.push_back(std::move(part));
  }
  for (const std::string& out : g.outputs) {
    for (const ModelPart& part : model.parts) {
      auto t = std::find_if(part.lowered.outputs.begin(), part.lowered.outputs.end(),
                            [&](const ModelTensor& o) { return o.value == out; });
      if (t != part.lowered.outputs.end()) {
        model.outputs.push_back(*t);
        break;
      }
    }
  }
  return model;
}

namespace detail {

/// The statistics of runs one after another on one logical core: counts and busy times summed,
/// the total the sum of the totals.
core::RunStats chainStats(std::span<const core::RunStats> runs) {
  core::RunStats chained = core::mergeStats(runs);
  chained.total = Picoseconds(0);
  for (const core::RunStats& run : runs) {
    chained.total += run.total;
  }
  chained.cores = runs.empty() ? 1 : runs.front().cores;
  return chained;
}

std::vector<core::RunStats> coreTotals(std::span<const std::vector<core::RunStats>> partCores,
                                       int lnc) {
  std::vector<core::RunStats> totals;
  for (int c = 0; c < lnc && lnc > 1; ++c) {
    // Core c's run of each part, its figures without its records (mergeStats of one run).
    std::vector<core::RunStats> parts;
    for (const std::vector<core::RunStats>& cores : partCores) {
      parts.push_back(core::mergeStats(std::span(&cores.at(static_cast<std::size_t>(c)), 1)));
    }
    totals.push_back(chainStats(parts));
  }
  return totals;
}

std::map<std::string, std::size_t> lastReaders(const CompiledModel& model, const Graph& graph) {
  std::map<std::string, std::size_t> lastReader;
  for (std::size_t p = 0; p < model.parts.size(); ++p) {
    for (const std::string& in : model.parts[p].lowered.graph->inputs) {
      lastReader[in] = p;
    }
  }
  for (const std::string& out : graph.outputs) {
    lastReader[out] = model.parts.size();
  }
  return lastReader;
}

/// The graph inputs as the device takes them: flattened, int64 ones narrowed to int32; or an
/// error naming an input of the wrong count or shape.
Result<std::map<std::string, runtime::NpyArray>> deviceInputs(
    const CompiledModel& model, std::span<const runtime::NpyArray> inputs) {
  const Graph& graph = *model.graph;
  if (inputs.size() != graph.inputs.size()) {
    return invalidArgument(fmt::format("{}: the model has {} inputs ({}); {} arrays were given",
                                       graph.source, graph.inputs.size(),
                                       fmt::join(graph.inputs, ", "), inputs.size()));
  }
  std::map<std::string, runtime::NpyArray> values;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string& name = graph.inputs[i];
    const std::vector<std::int64_t> expected = graph.value(name)->shape->sizes();
    if (inputs[i].shape != expected) {
      return invalidArgument(fmt::format(
          "{}: input '{}' has shape [{}]; the model (at the given --dim sizes) takes [{}]",
          graph.source, name, fmt::join(inputs[i].shape, ", "), fmt::join(expected, ", ")));
    }
    runtime::NpyArray flat = inputs[i];
    flat.shape = {std::max<std::int64_t>(graph.value(name)->shape->elementCount().value_or(1), 1)};
    if (flat.type == runtime::NpyType::kInt64) {
      TRN_ASSIGN_OR_RETURN(flat.data,
                           narrowToInt32(inputs[i].data.data(), inputs[i].data.size() / 8,
                                         fmt::format("{}: input '{}'", graph.source, name)));
      flat.type = runtime::NpyType::kInt32;
    }
    values.emplace(name, std::move(flat));
  }
  return values;
}

}  // namespace detail

Result<ModelRun> runModel(const runtime::Session& session, const CompiledModel& model,
                          std::span<const runtime::NpyArray> inputs,
                          const runtime::RunOptions& options) {
  if (model.ranks > 1) {
    return detail::runModelOnRanks(session, model, inputs, options);
  }
  const Graph& graph = *model.graph;
  const bool data = core::hasData(options.mode);
  // The values on the host between parts: the graph inputs, then the parts' results, each
  // dropped after the last part that reads it.
  std::map<std::string, runtime::NpyArray> values;
  if (data) {
    TRN_ASSIGN_OR_RETURN(values, detail::deviceInputs(model, inputs));
  }
  const std::map<std::string, std::size_t> lastReader = detail::lastReaders(model, graph);
  ModelRun run;
  runtime::RunOptions launchOptions = options;
  launchOptions.lnc = model.lnc;
  Picoseconds start(0);
  for (std::size_t p = 0; p < model.parts.size(); ++p) {
    const ModelPart& part = model.parts[p];
    std::vector<const runtime::NpyArray*> bound;
    if (data) {
      for (const ModelTensor& t : part.lowered.inputs) {
        auto weight = model.weights.find(t.value);
        auto value = values.find(t.value);
        TRN_CHECK(weight != model.weights.end() || value != values.end())
            << part.name << " reads '" << t.value << "', which no earlier part kept";
        bound.push_back(weight != model.weights.end() ? &weight->second : &value->second);
      }
    }
    Result<runtime::RunResult> ran = session.runLaunch(
        part.launch, std::span<const runtime::NpyArray* const>(bound), launchOptions);
    if (!ran.ok()) {
      if (model.parts.size() == 1) {
        return ran.status();
      }
      const std::string lines =
          part.compiledFor.first == part.nodes.first
              ? ""
              : fmt::format("; it runs the kernel compiled for nodes {}-{}, whose lines name them",
                            part.compiledFor.first + 1,
                            part.compiledFor.first + part.compiledFor.count);
      return ran.status().withContext(
          fmt::format("{} (nodes {}-{} of {}{})", part.name, part.nodes.first + 1,
                      part.nodes.first + part.nodes.count, graph.source, lines));
    }
    for (std::size_t i = 0; i < ran->outputs.size(); ++i) {
      values[part.lowered.outputs.at(i).value] = std::move(ran->outputs[i]);
    }
    std::erase_if(values, [&](const auto& entry) {
      auto reader = lastReader.find(entry.first);
      return reader == lastReader.end() || reader->second <= p;
    });
    run.starts.push_back(start);
    start += ran->stats.total;
    run.parts.push_back(std::move(ran->stats));
    if (model.lnc > 1) {
      run.cores.push_back(std::move(ran->cores));
    }
  }
  run.stats = detail::chainStats(run.parts);
  run.coreTotals = detail::coreTotals(run.cores, model.lnc);
  if (data) {
    for (const std::string& out : graph.outputs) {
      runtime::NpyArray& array = values.at(out);
      array.shape = graph.value(out)->shape->sizes();
      run.outputs.push_back(std::move(array));
    }
  }
  return run;
}

}  // namespace trn::graph
