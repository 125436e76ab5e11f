#include "trn/graph/model_file.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "trn/base/file_reader.h"
#include "trn/isa/chip_program.h"
#include "trn/runtime/npy.h"

namespace trn::graph {
namespace {

using Json = nlohmann::json;

constexpr char kMagic[8] = {'T', 'R', 'N', 'X', 'M', 'O', 'D', 'L'};
constexpr std::size_t kHeaderBytes = 24;  // magic, version, zero, manifest length
/// A manifest larger than this is not one trnsim wrote (a 32-layer model's is about 0.5 MB).
constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{256} << 20;

Json valueJson(const Graph& graph, const std::string& name) {
  const Value* v = graph.value(name);
  TRN_CHECK(v != nullptr && v->type && v->shape) << "value '" << name << "' has no type and shape";
  return {{"name", name},
          {"type", std::string(elementTypeName(*v->type))},
          {"shape", v->shape->sizes()}};
}

Json tensorsJson(const std::vector<ModelTensor>& tensors) {
  Json out = Json::array();
  for (const ModelTensor& t : tensors) {
    out.push_back({{"value", t.value},
                   {"tensor", t.spec.name},
                   {"shape", t.spec.shape},
                   {"dtype", std::string(dtypeName(t.spec.dtype))}});
  }
  return out;
}

void appendU32(std::vector<std::byte>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) {
    out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
  }
}

void appendU64(std::vector<std::byte>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
  }
}

std::uint64_t readU64(std::span<const std::byte> bytes) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) {
    v = (v << 8) | static_cast<std::uint64_t>(bytes[static_cast<std::size_t>(i)]);
  }
  return v;
}

}  // namespace

Status saveModel(const CompiledModel& model, const std::string& chip, const std::string& path) {
  const Graph& g = *model.graph;
  std::vector<std::vector<std::byte>> blobs;
  Json manifest;
  manifest["chip"] = chip;
  manifest["lnc"] = model.lnc;
  manifest["source"] = g.source;
  Json graph;
  graph["inputs"] = Json::array();
  for (const std::string& in : g.inputs) {
    graph["inputs"].push_back(valueJson(g, in));
  }
  graph["outputs"] = Json::array();
  for (const std::string& out : g.outputs) {
    graph["outputs"].push_back(valueJson(g, out));
  }
  graph["nodes"] = Json::array();
  for (const Node& node : g.nodes) {
    graph["nodes"].push_back({node.name, node.opType});
  }
  manifest["graph"] = std::move(graph);
  manifest["kernels"] = Json::array();
  manifest["parts"] = Json::array();
  for (const ModelPart& part : model.parts) {
    if (part.kernelIndex == manifest["kernels"].size()) {
      TRN_ASSIGN_OR_RETURN(std::vector<std::byte> program,
                           isa::encodeChipProgram(part.launch.chipProgram()));
      const kernel::CompileSummary& s = part.kernel().summary;
      manifest["kernels"].push_back({{"blob", blobs.size()},
                                     {"name", part.kernel().name},
                                     {"sbuf_peak_bytes", s.sbufPeakBytes},
                                     {"psum_peak_bytes", s.psumPeakBytes}});
      blobs.push_back(std::move(program));
    }
    manifest["parts"].push_back({{"name", part.name},
                                 {"nodes", {part.nodes.first, part.nodes.count}},
                                 {"compiled_for", {part.compiledFor.first, part.compiledFor.count}},
                                 {"kernel", part.kernelIndex},
                                 {"inputs", tensorsJson(part.lowered.inputs)},
                                 {"outputs", tensorsJson(part.lowered.outputs)},
                                 {"graph_inputs", part.lowered.graph->inputs},
                                 {"lowerings", part.lowered.nodeLowerings}});
  }
  manifest["outputs"] = tensorsJson(model.outputs);
  manifest["weights"] = Json::array();
  for (const auto& [value, array] : model.weights) {
    TRN_ASSIGN_OR_RETURN(std::vector<std::byte> npy, runtime::serializeNpy(array));
    manifest["weights"].push_back({{"value", value}, {"blob", blobs.size()}});
    blobs.push_back(std::move(npy));
  }
  manifest["blobs"] = Json::array();
  std::uint64_t offset = 0;
  for (const std::vector<std::byte>& blob : blobs) {
    manifest["blobs"].push_back({{"offset", offset}, {"length", blob.size()}});
    offset += blob.size();
  }
  const std::string text = manifest.dump();
  std::vector<std::byte> header;
  for (const char c : kMagic) {
    header.push_back(static_cast<std::byte>(c));
  }
  appendU32(header, kModelFileVersion);
  appendU32(header, 0);
  appendU64(header, text.size());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(header.data()),
            static_cast<std::streamsize>(header.size()));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const std::vector<std::byte>& blob : blobs) {
    out.write(reinterpret_cast<const char*>(blob.data()),
              static_cast<std::streamsize>(blob.size()));
  }
  out.close();
  if (!out) {
    return ioError(fmt::format("{}: cannot write the model file", path));
  }
  return {};
}

namespace {

/// Reads the manifest's parts into a CompiledModel, checking each field as it goes; errors are
/// prefixed with the file by the caller.
class ManifestReader {
 public:
  ManifestReader(const ByteSource& file, std::uint64_t blobBase) : file_(file), base_(blobBase) {}

  Result<LoadedModel> read(const Json& m) {
    LoadedModel loaded;
    CompiledModel& model = loaded.model;
    TRN_ASSIGN_OR_RETURN(loaded.chip, field<std::string>(m, "chip"));
    TRN_ASSIGN_OR_RETURN(model.lnc, field<int>(m, "lnc"));
    if (model.lnc < 1 || model.lnc > static_cast<int>(isa::kMaxLogicalCoreSize)) {
      return invalidArgument(fmt::format("lnc {} is not a logical-core size", model.lnc));
    }
    TRN_RETURN_IF_ERROR(readBlobs(m));
    auto graph = std::make_shared<Graph>();
    TRN_ASSIGN_OR_RETURN(graph->source, field<std::string>(m, "source"));
    const Json& g = m.at("graph");
    TRN_RETURN_IF_ERROR(readValues(g.at("inputs"), *graph, graph->inputs));
    TRN_RETURN_IF_ERROR(readValues(g.at("outputs"), *graph, graph->outputs));
    for (const Json& node : g.at("nodes")) {
      graph->nodes.push_back(Node{});
      graph->nodes.back().name = node.at(0).get<std::string>();
      graph->nodes.back().opType = node.at(1).get<std::string>();
    }
    model.graph = graph;
    for (const Json& w : m.at("weights")) {
      FileBytes buffer;
      TRN_ASSIGN_OR_RETURN(std::span<const std::byte> bytes,
                           blob(w.at("blob").get<std::size_t>(), buffer));
      const std::string value = w.at("value").get<std::string>();
      TRN_ASSIGN_OR_RETURN(runtime::NpyArray array,
                           runtime::parseNpy(bytes, fmt::format("weight '{}'", value)));
      model.weights.emplace(value, std::move(array));
    }
    for (const Json& k : m.at("kernels")) {
      FileBytes buffer;
      TRN_ASSIGN_OR_RETURN(std::span<const std::byte> bytes,
                           blob(k.at("blob").get<std::size_t>(), buffer));
      TRN_ASSIGN_OR_RETURN(isa::ChipProgram chip, isa::decodeChipProgram(bytes, "kernel"));
      if (chip.lnc != model.lnc || chip.cores.size() != static_cast<std::size_t>(model.lnc)) {
        return invalidArgument(
            fmt::format("kernel {} has {} core(s) at LNC {}; the model is "
                        "compiled for LNC {}",
                        kernels_.size(), chip.cores.size(), chip.lnc, model.lnc));
      }
      runtime::CompiledLaunch launch;
      for (isa::ChipProgram::Core& core : chip.cores) {
        auto compiled = std::make_shared<kernel::CompiledKernel>();
        compiled->name = k.at("name").get<std::string>();
        compiled->summary.instructions = static_cast<std::int64_t>(core.program.instructionCount());
        compiled->summary.sbufPeakBytes = k.at("sbuf_peak_bytes").get<std::int64_t>();
        compiled->summary.psumPeakBytes = k.at("psum_peak_bytes").get<std::int64_t>();
        compiled->program = std::move(core.program);
        for (const isa::TensorDecl& t : compiled->program.tensors) {
          const kernel::TensorSpec spec{t.name, t.shape, t.dtype};
          if (t.kind == isa::TensorKind::kInput) {
            compiled->inputs.push_back(spec);
          } else if (t.kind == isa::TensorKind::kOutput) {
            compiled->outputs.push_back(spec);
          }
        }
        launch.cores.push_back(std::move(compiled));
      }
      kernels_.push_back(std::move(launch));
    }
    std::set<std::string> available(graph->inputs.begin(), graph->inputs.end());
    for (const auto& [value, array] : model.weights) {
      available.insert(value);
    }
    for (const Json& p : m.at("parts")) {
      TRN_ASSIGN_OR_RETURN(ModelPart part, readPart(p, *graph, available));
      model.parts.push_back(std::move(part));
    }
    model.kernels = kernels_.size();
    TRN_ASSIGN_OR_RETURN(model.outputs, readTensors(m.at("outputs")));
    for (const std::string& out : graph->outputs) {
      if (!available.contains(out)) {
        return invalidArgument(fmt::format("graph output '{}' is computed by no launch", out));
      }
    }
    if (model.outputs.size() != graph->outputs.size()) {
      return invalidArgument("the outputs do not match the graph's");
    }
    return loaded;
  }

 private:
  template <typename T>
  static Result<T> field(const Json& j, const char* name) {
    if (!j.contains(name)) {
      return invalidArgument(fmt::format("the manifest has no '{}'", name));
    }
    return j.at(name).get<T>();
  }

  Status readBlobs(const Json& m) {
    for (const Json& b : m.at("blobs")) {
      const auto offset = b.at("offset").get<std::uint64_t>();
      const auto length = b.at("length").get<std::uint64_t>();
      if (offset > file_.size() || length > file_.size() - offset ||
          base_ > file_.size() - offset - length) {
        return invalidArgument(
            fmt::format("blob {} ({} bytes at {}) lies beyond the end of the file ({} bytes)",
                        blobs_.size(), length, offset, file_.size()));
      }
      blobs_.emplace_back(base_ + offset, length);
    }
    return {};
  }

  /// Blob `index`, read into `buffer` (which the caller drops once it has decoded the bytes).
  Result<std::span<const std::byte>> blob(std::size_t index, FileBytes& buffer) const {
    if (index >= blobs_.size()) {
      return invalidArgument(
          fmt::format("blob {} does not exist ({} blobs)", index, blobs_.size()));
    }
    return file_.read(blobs_[index].first, blobs_[index].second, buffer);
  }

  static Status readValues(const Json& list, Graph& graph, std::vector<std::string>& names) {
    for (const Json& v : list) {
      Value value;
      value.name = v.at("name").get<std::string>();
      const std::string type = v.at("type").get<std::string>();
      for (int t = 0; t <= static_cast<int>(ElementType::kBool); ++t) {
        if (elementTypeName(static_cast<ElementType>(t)) == type) {
          value.type = static_cast<ElementType>(t);
        }
      }
      if (!value.type) {
        return invalidArgument(
            fmt::format("value '{}' has the unknown type '{}'", value.name, type));
      }
      value.shape = Shape::of(v.at("shape").get<std::vector<std::int64_t>>());
      if (!value.shape->isStatic() || !value.shape->elementCount()) {
        return invalidArgument(
            fmt::format("value '{}' has the shape {}", value.name, value.shape->toString()));
      }
      names.push_back(value.name);
      graph.values[value.name] = std::move(value);
    }
    return {};
  }

  static Result<std::vector<ModelTensor>> readTensors(const Json& list) {
    std::vector<ModelTensor> tensors;
    for (const Json& t : list) {
      ModelTensor tensor;
      tensor.value = t.at("value").get<std::string>();
      tensor.spec.name = t.at("tensor").get<std::string>();
      tensor.spec.shape = t.at("shape").get<std::vector<std::int64_t>>();
      TRN_ASSIGN_OR_RETURN(tensor.spec.dtype, parseDType(t.at("dtype").get<std::string>()));
      tensors.push_back(std::move(tensor));
    }
    return tensors;
  }

  /// Tensors `tensors` must be the program's tensors of `kind` (inputs or outputs), in order,
  /// with their element counts and types (not names: the launches of a shared kernel bind it by
  /// position; not shapes: a library kernel's result may be declared 2-D).
  static Status matchProgram(const std::vector<ModelTensor>& tensors, const isa::Program& program,
                             isa::TensorKind kind, const char* role) {
    std::vector<const isa::TensorDecl*> declared;
    for (const isa::TensorDecl& t : program.tensors) {
      if (t.kind == kind) {
        declared.push_back(&t);
      }
    }
    if (declared.size() != tensors.size()) {
      return invalidArgument(fmt::format("{} {}s are listed for a kernel of {}", tensors.size(),
                                         role, declared.size()));
    }
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const std::optional<std::int64_t> count = Shape::of(tensors[i].spec.shape).elementCount();
      if (!count || declared[i]->elementCount() != *count ||
          declared[i]->dtype != tensors[i].spec.dtype) {
        return invalidArgument(fmt::format("{} {} ('{}') is not {} {} of its kernel ('{}')", role,
                                           i, tensors[i].value, role, i, declared[i]->name));
      }
    }
    return {};
  }

  Result<ModelPart> readPart(const Json& p, const Graph& graph, std::set<std::string>& available) {
    ModelPart part;
    part.name = p.at("name").get<std::string>();
    part.nodes = {p.at("nodes").at(0).get<std::size_t>(), p.at("nodes").at(1).get<std::size_t>()};
    part.compiledFor = {p.at("compiled_for").at(0).get<std::size_t>(),
                        p.at("compiled_for").at(1).get<std::size_t>()};
    const std::size_t nodes = graph.nodes.size();
    for (const NodeRange& r : {part.nodes, part.compiledFor}) {
      if (r.first > nodes || r.count > nodes - r.first || r.count != part.nodes.count) {
        return invalidArgument(
            fmt::format("launch '{}' names nodes outside the model's {}", part.name, nodes));
      }
    }
    part.kernelIndex = p.at("kernel").get<std::size_t>();
    if (part.kernelIndex >= kernels_.size()) {
      return invalidArgument(fmt::format("launch '{}' runs kernel {} of {}", part.name,
                                         part.kernelIndex, kernels_.size()));
    }
    part.launch = kernels_[part.kernelIndex];
    auto lowered = std::make_shared<Graph>();
    lowered->inputs = p.at("graph_inputs").get<std::vector<std::string>>();
    part.lowered.graph = lowered;
    part.lowered.firstNode = part.nodes.first;
    TRN_ASSIGN_OR_RETURN(part.lowered.inputs, readTensors(p.at("inputs")));
    TRN_ASSIGN_OR_RETURN(part.lowered.outputs, readTensors(p.at("outputs")));
    part.lowered.nodeLowerings = p.at("lowerings").get<std::vector<std::string>>();
    if (part.lowered.nodeLowerings.size() != part.nodes.count) {
      return invalidArgument(fmt::format("launch '{}' has {} lowerings for {} nodes", part.name,
                                         part.lowered.nodeLowerings.size(), part.nodes.count));
    }
    for (std::size_t n = 0; n < part.nodes.count; ++n) {
      part.lowered.nodeNames.push_back(graph.nodes[part.nodes.first + n].name);
    }
    for (const ModelTensor& in : part.lowered.inputs) {
      if (!available.contains(in.value)) {
        return invalidArgument(
            fmt::format("launch '{}' reads '{}', which neither the graph "
                        "inputs, the weights nor an earlier launch provide",
                        part.name, in.value));
      }
    }
    for (const auto& core : part.launch.cores) {
      TRN_RETURN_IF_ERROR(
          matchProgram(part.lowered.inputs, core->program, isa::TensorKind::kInput, "input"));
      TRN_RETURN_IF_ERROR(
          matchProgram(part.lowered.outputs, core->program, isa::TensorKind::kOutput, "output"));
    }
    for (const ModelTensor& out : part.lowered.outputs) {
      available.insert(out.value);
    }
    return part;
  }

  const ByteSource& file_;
  std::uint64_t base_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> blobs_;  ///< absolute offset, length
  std::vector<runtime::CompiledLaunch> kernels_;
};

}  // namespace

Result<LoadedModel> loadModel(const std::string& path, std::uint64_t maxBytes) {
  TRN_ASSIGN_OR_RETURN(std::unique_ptr<BoundedFile> file,
                       BoundedFile::open(path, maxBytes, "model file"));
  auto fail = [&](const std::string& message) {
    return invalidArgument(fmt::format("{}: {}", path, message));
  };
  if (file->size() < kHeaderBytes) {
    return fail("not a trnsim model file (shorter than its 24-byte header)");
  }
  FileBytes headerBuffer;
  TRN_ASSIGN_OR_RETURN(std::span<const std::byte> header,
                       file->read(0, kHeaderBytes, headerBuffer));
  if (std::memcmp(header.data(), kMagic, sizeof(kMagic)) != 0) {
    return fail("not a trnsim model file (no TRNXMODL magic; a .tprog is run with 'trnsim run')");
  }
  const std::uint64_t versionWord = readU64(header.subspan(8));  // the version, then a zero u32
  const std::uint64_t version = versionWord & 0xffffffffu;
  if (version != kModelFileVersion || (versionWord >> 32) != 0) {
    return fail(
        fmt::format("format version {} (this build reads version {})", version, kModelFileVersion));
  }
  const std::uint64_t manifestBytes = readU64(header.subspan(16));
  if (manifestBytes > kMaxManifestBytes || manifestBytes > file->size() - kHeaderBytes) {
    return fail(fmt::format("the manifest length {} exceeds the file", manifestBytes));
  }
  FileBytes manifestBuffer;
  TRN_ASSIGN_OR_RETURN(std::span<const std::byte> text,
                       file->read(kHeaderBytes, manifestBytes, manifestBuffer));
  const Json manifest =
      Json::parse(reinterpret_cast<const char*>(text.data()),
                  reinterpret_cast<const char*>(text.data()) + text.size(), nullptr, false);
  if (manifest.is_discarded() || !manifest.is_object()) {
    return fail("the manifest is not a JSON object");
  }
  try {
    ManifestReader reader(*file, kHeaderBytes + manifestBytes);
    Result<LoadedModel> loaded = reader.read(manifest);
    if (!loaded.ok()) {
      return loaded.status().withContext(path);
    }
    return loaded;
  } catch (const Json::exception& e) {
    return fail(fmt::format("the manifest is malformed: {}", e.what()));
  }
}

}  // namespace trn::graph
