// ONNX import: reads a ModelProto (Debian's onnx_proto + protobuf) into the graph IR. The file
// size is bounded before it is read, every tensor's size is computed with checked arithmetic and
// matched against its data, and every error names the file and, where there is one, the node,
// its op type and its inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "trn/base/status.h"
#include "trn/graph/graph.h"

namespace trn::graph {

struct ImportOptions {
  /// Largest model file accepted (protobuf messages are limited to 2 GiB; external data is not
  /// supported yet).
  std::uint64_t maxFileBytes = std::uint64_t{2} << 30;
};

/// Imports the ONNX model at `path`.
Result<Graph> importOnnx(const std::string& path, const ImportOptions& options = {});

/// Imports a serialised ModelProto; `source` names it in messages.
Result<Graph> importOnnxBytes(std::span<const std::byte> bytes, const std::string& source);

}  // namespace trn::graph
