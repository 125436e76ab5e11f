#include "trn/isa/instrs/dma.h"

#include <fmt/format.h>

#include <vector>

#include "trn/isa/verifier.h"

namespace trn::isa {

Status DmaCopy::verify(const VerifyContext& ctx) const {
  if (queue < 0 || queue >= ctx.limits.dmaQueues) {
    return failedPrecondition(fmt::format("DMA queue {} does not exist (0..{})", queue,
                                          ctx.limits.dmaQueues - 1));
  }
  if (dst.elementCount() != src.elementCount()) {
    return failedPrecondition(fmt::format("dst has {} elements but src has {}; a DMA copy moves "
                                          "equal counts",
                                          dst.elementCount(), src.elementCount()));
  }
  return {};
}

Status DmaCopy::execute(ExecContext& ctx) const {
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

}  // namespace trn::isa
