#include "trn/graph/onnx_import.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <cstring>
#include <set>

#include "trn/base/checked.h"
#include "trn/base/file_reader.h"

namespace trn::graph {
namespace {

/// Appends `value` to `out` as `size` little-endian bytes.
template <typename T>
void appendBytes(std::vector<std::byte>& out, T value) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

Result<Shape> tensorShape(const onnx::TensorProto& proto, const std::string& where) {
  Shape shape;
  for (std::int64_t d : proto.dims()) {
    if (d < 0) {
      return invalidArgument(fmt::format("{}: negative dimension {}", where, d));
    }
    shape.dims.push_back(Dim::known(d));
  }
  if (!shape.elementCount()) {
    return outOfRange(
        fmt::format("{}: the element count of {} overflows", where, shape.toString()));
  }
  return shape;
}

/// The tensor's bytes, copied once from raw_data or the typed repeated fields.
Result<Tensor> convertTensor(const onnx::TensorProto& proto, const std::string& where) {
  Tensor tensor;
  tensor.name = proto.name();
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return unsupported(
        fmt::format("{}: tensor '{}' keeps its data in an external file, which is "
                    "not supported yet",
                    where, proto.name()));
  }
  const std::optional<ElementType> type = fromOnnxDataType(proto.data_type());
  if (!type) {
    return unsupported(
        fmt::format("{}: tensor '{}' has the ONNX data type {}, which trnsim does "
                    "not support",
                    where, proto.name(), proto.data_type()));
  }
  tensor.type = *type;
  TRN_ASSIGN_OR_RETURN(tensor.shape,
                       tensorShape(proto, fmt::format("{}: tensor '{}'", where, proto.name())));
  const std::int64_t count = *tensor.shape.elementCount();
  const std::optional<std::int64_t> bytes = (Checked(count) * elementByteSize(*type)).get();
  if (!bytes) {
    return outOfRange(fmt::format("{}: tensor '{}' of {} is too large", where, proto.name(),
                                  tensor.shape.toString()));
  }
  auto data = std::make_shared<std::vector<std::byte>>();
  auto mismatch = [&](std::size_t found) {
    return invalidArgument(fmt::format("{}: tensor '{}' of {}{} needs {} elements but holds {}",
                                       where, proto.name(), elementTypeName(*type),
                                       tensor.shape.toString(), count, found));
  };
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != static_cast<std::uint64_t>(*bytes)) {
      return invalidArgument(fmt::format("{}: tensor '{}' of {}{} needs {} bytes but holds {}",
                                         where, proto.name(), elementTypeName(*type),
                                         tensor.shape.toString(), *bytes, proto.raw_data().size()));
    }
    const auto* p = reinterpret_cast<const std::byte*>(proto.raw_data().data());
    data->assign(p, p + proto.raw_data().size());
  } else {
    data->reserve(static_cast<std::size_t>(*bytes));
    auto expect = [&](int found) -> Status {
      return found == count ? Status() : mismatch(static_cast<std::size_t>(found));
    };
    switch (*type) {
      case ElementType::kFp32:
        TRN_RETURN_IF_ERROR(expect(proto.float_data_size()));
        for (float v : proto.float_data()) {
          appendBytes(*data, v);
        }
        break;
      case ElementType::kFp64:
        TRN_RETURN_IF_ERROR(expect(proto.double_data_size()));
        for (double v : proto.double_data()) {
          appendBytes(*data, v);
        }
        break;
      case ElementType::kInt64:
        TRN_RETURN_IF_ERROR(expect(proto.int64_data_size()));
        for (std::int64_t v : proto.int64_data()) {
          appendBytes(*data, v);
        }
        break;
      case ElementType::kUint32:
        TRN_RETURN_IF_ERROR(expect(proto.uint64_data_size()));
        for (std::uint64_t v : proto.uint64_data()) {
          appendBytes(*data, static_cast<std::uint32_t>(v));
        }
        break;
      case ElementType::kUint64:
        TRN_RETURN_IF_ERROR(expect(proto.uint64_data_size()));
        for (std::uint64_t v : proto.uint64_data()) {
          appendBytes(*data, v);
        }
        break;
      case ElementType::kInt32:
        TRN_RETURN_IF_ERROR(expect(proto.int32_data_size()));
        for (std::int32_t v : proto.int32_data()) {
          appendBytes(*data, v);
        }
        break;
      case ElementType::kInt16:
      case ElementType::kUint16:
      case ElementType::kFp16:
      case ElementType::kBf16:
        TRN_RETURN_IF_ERROR(expect(proto.int32_data_size()));
        for (std::int32_t v : proto.int32_data()) {
          appendBytes(*data, static_cast<std::uint16_t>(v));
        }
        break;
      case ElementType::kInt8:
      case ElementType::kUint8:
      case ElementType::kBool:
      case ElementType::kFp8E4m3:  // never imported: fromOnnxDataType has no fp8
        TRN_RETURN_IF_ERROR(expect(proto.int32_data_size()));
        for (std::int32_t v : proto.int32_data()) {
          appendBytes(*data, static_cast<std::uint8_t>(v));
        }
        break;
    }
  }
  tensor.bytes = std::move(data);
  return tensor;
}

Result<Value> convertValueInfo(const onnx::ValueInfoProto& info, const std::string& where) {
  Value value;
  value.name = info.name();
  if (!info.has_type()) {
    return value;
  }
  if (!info.type().has_tensor_type()) {
    return unsupported(
        fmt::format("{}: value '{}' is not a tensor (sequences, maps and optionals "
                    "are not supported)",
                    where, info.name()));
  }
  const onnx::TypeProto_Tensor& t = info.type().tensor_type();
  if (t.elem_type() != 0) {
    value.type = fromOnnxDataType(t.elem_type());
    if (!value.type) {
      return unsupported(
          fmt::format("{}: value '{}' has the ONNX data type {}, which trnsim does "
                      "not support",
                      where, info.name(), t.elem_type()));
    }
  }
  if (t.has_shape()) {
    Shape shape;
    for (int i = 0; i < t.shape().dim_size(); ++i) {
      const onnx::TensorShapeProto_Dimension& d = t.shape().dim(i);
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) {
          return invalidArgument(fmt::format("{}: value '{}' has the negative dimension {}", where,
                                             info.name(), d.dim_value()));
        }
        shape.dims.push_back(Dim::known(d.dim_value()));
      } else {
        shape.dims.push_back(Dim::symbolic(d.has_dim_param() && !d.dim_param().empty()
                                               ? d.dim_param()
                                               : fmt::format("{}.{}", info.name(), i)));
      }
    }
    value.shape = std::move(shape);
  }
  return value;
}

Result<Attribute> convertAttribute(const onnx::AttributeProto& proto, const std::string& where) {
  Attribute a;
  a.name = proto.name();
  switch (proto.type()) {
    case onnx::AttributeProto::INT:
      a.value = proto.i();
      break;
    case onnx::AttributeProto::FLOAT:
      a.value = proto.f();
      break;
    case onnx::AttributeProto::STRING:
      a.value = proto.s();
      break;
    case onnx::AttributeProto::TENSOR: {
      TRN_ASSIGN_OR_RETURN(Tensor t, convertTensor(proto.t(), where));
      a.value = std::move(t);
      break;
    }
    case onnx::AttributeProto::INTS:
      a.value = std::vector<std::int64_t>(proto.ints().begin(), proto.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      a.value = std::vector<float>(proto.floats().begin(), proto.floats().end());
      break;
    case onnx::AttributeProto::STRINGS:
      a.value = std::vector<std::string>(proto.strings().begin(), proto.strings().end());
      break;
    default:
      return unsupported(
          fmt::format("{}: attribute '{}' has the ONNX attribute type {}, which is "
                      "not supported (subgraphs, sparse tensors, type protos)",
                      where, proto.name(), static_cast<int>(proto.type())));
  }
  return a;
}

Result<Graph> convertModel(const onnx::ModelProto& model, const std::string& source) {
  if (!model.has_graph()) {
    return parseError(fmt::format("{}: the model has no graph", source));
  }
  const onnx::GraphProto& g = model.graph();
  Graph graph;
  graph.name = g.name();
  graph.source = source;
  graph.producer = model.producer_name() +
                   (model.producer_version().empty() ? "" : " " + model.producer_version());
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      graph.opsetVersion = opset.version();
    }
  }
  for (const onnx::TensorProto& init : g.initializer()) {
    TRN_ASSIGN_OR_RETURN(Tensor t, convertTensor(init, source));
    if (t.name.empty() || graph.initializers.contains(t.name)) {
      return invalidArgument(
          fmt::format("{}: initializer '{}' is unnamed or defined twice", source, t.name));
    }
    graph.values[t.name] = Value{t.name, t.type, t.shape};
    graph.initializers.emplace(t.name, std::move(t));
  }
  for (const onnx::ValueInfoProto& in : g.input()) {
    TRN_ASSIGN_OR_RETURN(Value v, convertValueInfo(in, fmt::format("{}: graph input", source)));
    if (graph.initializers.contains(v.name)) {
      continue;  // an initializer listed as an input too (older exporters): the weight wins
    }
    graph.inputs.push_back(v.name);
    graph.values[v.name] = std::move(v);
  }
  // value_info and outputs give shapes for values the nodes define; keep them as hints.
  std::map<std::string, Value> hints;
  for (const auto* list : {&g.value_info(), &g.output()}) {
    for (const onnx::ValueInfoProto& info : *list) {
      TRN_ASSIGN_OR_RETURN(Value v, convertValueInfo(info, source));
      hints[v.name] = std::move(v);
    }
  }
  std::set<std::string> nodeNames;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& proto = g.node(i);
    Node node;
    node.opType = proto.op_type();
    node.domain = proto.domain() == "ai.onnx" ? "" : proto.domain();
    node.name = proto.name().empty() ? fmt::format("{}_{}", proto.op_type(), i) : proto.name();
    if (!nodeNames.insert(node.name).second) {
      node.name = fmt::format("{}#{}", node.name, i);
    }
    node.inputs.assign(proto.input().begin(), proto.input().end());
    node.outputs.assign(proto.output().begin(), proto.output().end());
    const std::string where = fmt::format("{}: node '{}' ({})", source, node.name, node.opType);
    for (const onnx::AttributeProto& a : proto.attribute()) {
      TRN_ASSIGN_OR_RETURN(Attribute attribute, convertAttribute(a, where));
      node.attributes.push_back(std::move(attribute));
    }
    for (const std::string& in : node.inputs) {
      if (!in.empty() && !graph.values.contains(in)) {
        return notFound(
            fmt::format("{}: {}: input '{}' is not a graph input, an initializer or "
                        "the output of an earlier node",
                        source, describeNode(graph, node), in));
      }
    }
    for (const std::string& out : node.outputs) {
      if (out.empty()) {
        continue;
      }
      if (graph.values.contains(out)) {
        return invalidArgument(fmt::format("{}: {}: output '{}' is defined twice", source,
                                           describeNode(graph, node), out));
      }
      auto hint = hints.find(out);
      graph.values[out] = hint != hints.end() ? hint->second : Value{out, {}, {}};
    }
    graph.nodes.push_back(std::move(node));
  }
  for (const onnx::ValueInfoProto& out : g.output()) {
    if (!graph.values.contains(out.name())) {
      return notFound(
          fmt::format("{}: graph output '{}' is defined by no node, input or "
                      "initializer",
                      source, out.name()));
    }
    graph.outputs.push_back(out.name());
  }
  return graph;
}

}  // namespace

Result<Graph> importOnnxBytes(std::span<const std::byte> bytes, const std::string& source) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    return outOfRange(
        fmt::format("{}: {} bytes is more than protobuf can parse (2 GiB)", source, bytes.size()));
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return parseError(
        fmt::format("{}: not a valid ONNX model (the protobuf message does not "
                    "parse: the file is truncated, corrupt or not ONNX)",
                    source));
  }
  return convertModel(model, source);
}

Result<Graph> importOnnx(const std::string& path, const ImportOptions& options) {
  TRN_ASSIGN_OR_RETURN(FileBytes bytes, readFileBounded(path, options.maxFileBytes, "ONNX model"));
  return importOnnxBytes(std::span<const std::byte>(bytes.data(), bytes.size()), path);
}

}  // namespace trn::graph
