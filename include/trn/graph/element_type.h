// Element types of graph values: ONNX's tensor types that the graph compiler accepts, and the
// device type (numerics' DType) each maps to. int64, bool and fp64 exist in graphs (shapes,
// indices, masks) but have no device type; they must be folded or cast away before lowering.
// fp8_e4m3 (Trainium's, not ONNX's e4m3fn) is not imported: auto-cast stores weights in it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "trn/numerics/dtype.h"

namespace trn::graph {

enum class ElementType : std::uint8_t {
  kFp32,
  kFp16,
  kBf16,
  kFp8E4m3,
  kFp64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kBool,
};

/// Name as printed: trnsim's dtype names ("fp32", "bf16"), plus "fp64", "int64", "uint64", "bool".
std::string_view elementTypeName(ElementType type);

/// Bytes per element (bool: 1).
int elementByteSize(ElementType type);

/// The device dtype, or nullopt for fp64, int64, uint64 and bool.
std::optional<DType> deviceDType(ElementType type);

/// The element type a device dtype is held in, or an error for device types graphs do not use.
Result<ElementType> elementTypeOf(DType type);

/// The element type of an ONNX TensorProto.DataType code, or nullopt (string, complex, fp8, ...).
std::optional<ElementType> fromOnnxDataType(int code);

/// The ONNX TensorProto.DataType code of `type`, or nullopt for fp8_e4m3 (which ONNX lacks).
std::optional<std::int64_t> onnxDataType(ElementType type);

/// True for the integer types (not bool).
bool isInteger(ElementType type);

}  // namespace trn::graph
