#include "trn/graph/element_type.h"

#include <fmt/format.h>

namespace trn::graph {

std::string_view elementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kFp32:
      return "fp32";
    case ElementType::kFp16:
      return "fp16";
    case ElementType::kBf16:
      return "bf16";
    case ElementType::kFp8E4m3:
      return "fp8_e4m3";
    case ElementType::kFp64:
      return "fp64";
    case ElementType::kInt8:
      return "int8";
    case ElementType::kInt16:
      return "int16";
    case ElementType::kInt32:
      return "int32";
    case ElementType::kInt64:
      return "int64";
    case ElementType::kUint8:
      return "uint8";
    case ElementType::kUint16:
      return "uint16";
    case ElementType::kUint32:
      return "uint32";
    case ElementType::kUint64:
      return "uint64";
    case ElementType::kBool:
      return "bool";
  }
  return "?";
}

int elementByteSize(ElementType type) {
  switch (type) {
    case ElementType::kFp8E4m3:
    case ElementType::kInt8:
    case ElementType::kUint8:
    case ElementType::kBool:
      return 1;
    case ElementType::kFp16:
    case ElementType::kBf16:
    case ElementType::kInt16:
    case ElementType::kUint16:
      return 2;
    case ElementType::kFp32:
    case ElementType::kInt32:
    case ElementType::kUint32:
      return 4;
    case ElementType::kFp64:
    case ElementType::kInt64:
    case ElementType::kUint64:
      return 8;
  }
  return 1;
}

std::optional<DType> deviceDType(ElementType type) {
  switch (type) {
    case ElementType::kFp32:
      return DType::kFp32;
    case ElementType::kFp16:
      return DType::kFp16;
    case ElementType::kBf16:
      return DType::kBf16;
    case ElementType::kFp8E4m3:
      return DType::kFp8E4m3;
    case ElementType::kInt8:
      return DType::kInt8;
    case ElementType::kInt16:
      return DType::kInt16;
    case ElementType::kInt32:
      return DType::kInt32;
    case ElementType::kUint8:
      return DType::kUint8;
    case ElementType::kUint16:
      return DType::kUint16;
    case ElementType::kUint32:
      return DType::kUint32;
    case ElementType::kBool:
      return DType::kUint8;  // a byte of 0 or 1, as ONNX stores it
    case ElementType::kFp64:
    case ElementType::kInt64:
    case ElementType::kUint64:
      return std::nullopt;
  }
  return std::nullopt;
}

Result<ElementType> elementTypeOf(DType type) {
  for (const ElementType e :
       {ElementType::kFp32, ElementType::kFp16, ElementType::kBf16, ElementType::kFp8E4m3,
        ElementType::kInt8, ElementType::kInt16, ElementType::kInt32, ElementType::kUint8,
        ElementType::kUint16, ElementType::kUint32}) {
    if (deviceDType(e) == type) {
      return e;
    }
  }
  return Status(ErrorCode::kUnsupported, fmt::format("graphs hold no {} values", dtypeName(type)));
}

std::optional<ElementType> fromOnnxDataType(int code) {
  // TensorProto.DataType in onnx.proto.
  switch (code) {
    case 1:
      return ElementType::kFp32;
    case 2:
      return ElementType::kUint8;
    case 3:
      return ElementType::kInt8;
    case 4:
      return ElementType::kUint16;
    case 5:
      return ElementType::kInt16;
    case 6:
      return ElementType::kInt32;
    case 7:
      return ElementType::kInt64;
    case 9:
      return ElementType::kBool;
    case 10:
      return ElementType::kFp16;
    case 11:
      return ElementType::kFp64;
    case 12:
      return ElementType::kUint32;
    case 13:
      return ElementType::kUint64;
    case 16:
      return ElementType::kBf16;
    default:
      return std::nullopt;
  }
}

std::optional<std::int64_t> onnxDataType(ElementType type) {
  for (int code = 0; code <= 16; ++code) {
    if (fromOnnxDataType(code) == type) {
      return code;
    }
  }
  return std::nullopt;
}

bool isInteger(ElementType type) {
  switch (type) {
    case ElementType::kInt8:
    case ElementType::kInt16:
    case ElementType::kInt32:
    case ElementType::kInt64:
    case ElementType::kUint8:
    case ElementType::kUint16:
    case ElementType::kUint32:
    case ElementType::kUint64:
      return true;
    default:
      return false;
  }
}

}  // namespace trn::graph
