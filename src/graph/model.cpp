#include "trn/graph/model.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "trn/core/timeline.h"

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

/// A weight of the graph as the host array the runtime fills its tensor from.
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
    case ElementType::kBf16: {
      array.type = runtime::NpyType::kFloat32;
      array.data.resize(data.size() * 2);
      for (std::size_t i = 0; i * 2 < data.size(); ++i) {
        std::uint32_t bits = 0;
        std::uint16_t half = 0;
        std::memcpy(&half, data.data() + i * 2, 2);
        bits = static_cast<std::uint32_t>(half) << 16;
        std::memcpy(array.data.data() + i * 4, &bits, 4);
      }
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

}  // namespace

Result<CompiledModel> compileModel(const runtime::Session& session, const std::string& path,
                                   const PipelineOptions& pipeline,
                                   const kernel::CompileOptions& compile) {
  if (!pipeline.stopAfter.empty()) {
    return invalidArgument("compileModel runs every pass; stopAfter must be empty");
  }
  // Under auto-cast the products read their weights in bf16: store them so (layout.h).
  PipelineOptions passes = pipeline;
  passes.layout.bf16Weights = compile.autoCast == kernel::AutoCast::kMatmult;
  TRN_ASSIGN_OR_RETURN(Graph graph, runPipeline(path, passes));
  return compileGraph(session, std::move(graph), compile);
}

Result<CompiledModel> compileGraph(const runtime::Session& session, Graph graph,
                                   const kernel::CompileOptions& compile) {
  CompiledModel model;
  TRN_ASSIGN_OR_RETURN(model.lowered, lowerGraph(std::move(graph)));
  std::vector<kernel::TensorSpec> specs;
  for (const ModelTensor& t : model.lowered.inputs) {
    specs.push_back(t.spec);
  }
  TRN_ASSIGN_OR_RETURN(model.kernel, session.compile(model.lowered.kernel, specs, compile));
  const Graph& compiled = *model.lowered.graph;
  for (std::size_t i = compiled.inputs.size(); i < model.lowered.inputs.size(); ++i) {
    TRN_ASSIGN_OR_RETURN(runtime::NpyArray w,
                         weightArray(*compiled.initializer(model.lowered.inputs[i].value)));
    model.weights.push_back(std::move(w));
  }
  return model;
}

Result<runtime::RunResult> runModel(const runtime::Session& session, const CompiledModel& model,
                                    std::span<const runtime::NpyArray> inputs,
                                    const runtime::RunOptions& options) {
  const LoweredModel& lowered = model.lowered;
  const Graph& graph = *lowered.graph;
  std::vector<runtime::NpyArray> arrays;  // the graph inputs, flattened
  std::vector<const runtime::NpyArray*> bound;
  if (core::hasData(options.mode)) {
    if (inputs.size() != graph.inputs.size()) {
      return invalidArgument(fmt::format("{}: the model has {} inputs ({}); {} arrays were given",
                                         graph.source, graph.inputs.size(),
                                         fmt::join(graph.inputs, ", "), inputs.size()));
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const ModelTensor& t = lowered.inputs[i];
      const std::vector<std::int64_t> expected = graph.value(t.value)->shape->sizes();
      if (inputs[i].shape != expected) {
        return invalidArgument(fmt::format(
            "{}: input '{}' has shape [{}]; the model (at the given --dim sizes) takes [{}]",
            graph.source, t.value, fmt::join(inputs[i].shape, ", "), fmt::join(expected, ", ")));
      }
      runtime::NpyArray flat = inputs[i];
      flat.shape = t.spec.shape;
      if (flat.type == runtime::NpyType::kInt64 && t.spec.dtype == DType::kInt32) {
        TRN_ASSIGN_OR_RETURN(flat.data,
                             narrowToInt32(inputs[i].data.data(), inputs[i].data.size() / 8,
                                           fmt::format("{}: input '{}'", graph.source, t.value)));
        flat.type = runtime::NpyType::kInt32;
      }
      arrays.push_back(std::move(flat));
    }
    for (const runtime::NpyArray& array : arrays) {
      bound.push_back(&array);
    }
    for (const runtime::NpyArray& weight : model.weights) {
      bound.push_back(&weight);
    }
  }
  runtime::CompiledLaunch launch;
  launch.cores.push_back(model.kernel);
  runtime::RunOptions one = options;
  one.lnc = 1;  // the model kernel is one core's program
  TRN_ASSIGN_OR_RETURN(
      runtime::RunResult result,
      session.runLaunch(launch, std::span<const runtime::NpyArray* const>(bound), one));
  for (std::size_t i = 0; i < result.outputs.size() && i < lowered.outputs.size(); ++i) {
    const Value* v = graph.value(lowered.outputs[i].value);
    result.outputs[i].shape = v->shape->sizes();
  }
  return result;
}

}  // namespace trn::graph
