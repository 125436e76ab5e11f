#include "trn/isa/instrs/vector_engine.h"

#include <fmt/format.h>

#include <vector>

#include "trn/isa/alu.h"
#include "trn/isa/verifier.h"

namespace trn::isa {

Status TensorTensor::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("data0", data0, "data1", data1));
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "data0", data0));
  if (data0.memory == Memory::kPsum && data1.memory == Memory::kPsum) {
    return failedPrecondition("operands 'data0' and 'data1' are both in PSUM; at most one input "
                              "of tensor_tensor may be");
  }
  for (const auto& [name, ap] : {std::pair{"dst", &dst}, {"data0", &data0}, {"data1", &data1}}) {
    TRN_RETURN_IF_ERROR(requireComputeTileSize(name, *ap, ctx.limits));
  }
  return {};
}

Status TensorTensor::execute(ExecContext& ctx) const {
  const auto count = static_cast<std::size_t>(dst.elementCount());
  std::vector<float> a(count);
  std::vector<float> b(count);
  ctx.readFloats(data0, a);
  ctx.readFloats(data1, b);
  for (std::size_t i = 0; i < count; ++i) {
    a[i] = applyAlu(op, a[i], b[i]);
  }
  ctx.writeFloats(dst, a);
  return {};
}

Status TensorCopy::verify(const VerifyContext& ctx) const {
  TRN_RETURN_IF_ERROR(requireSameShape("dst", dst, "src", src));
  TRN_RETURN_IF_ERROR(requireComputeTileSize("dst", dst, ctx.limits));
  return requireComputeTileSize("src", src, ctx.limits);
}

Status TensorCopy::execute(ExecContext& ctx) const {
  const auto count = static_cast<std::size_t>(dst.elementCount());
  if (src.dtype == dst.dtype) {
    std::vector<std::byte> raw(count * static_cast<std::size_t>(byteSize(src.dtype)));
    ctx.readBytes(src, raw);
    ctx.writeBytes(dst, raw);
    return {};
  }
  std::vector<float> values(count);
  ctx.readFloats(src, values);
  ctx.writeFloats(dst, values);
  return {};
}

Status Memset::verify(const VerifyContext& ctx) const {
  return requireComputeTileSize("dst", dst, ctx.limits);
}

Status Memset::execute(ExecContext& ctx) const {
  const std::vector<float> values(static_cast<std::size_t>(dst.elementCount()), value);
  ctx.writeFloats(dst, values);
  return {};
}

}  // namespace trn::isa
