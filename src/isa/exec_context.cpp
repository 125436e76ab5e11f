#include "trn/isa/exec_context.h"

#include <vector>

namespace trn::isa {

void copyElements(ExecContext& ctx, const AccessPattern& dst, const AccessPattern& src) {
  TRN_CHECK(dst.elementCount() == src.elementCount())
      << "copy of " << src.elementCount() << " elements into " << dst.elementCount();
  const auto count = static_cast<std::size_t>(dst.elementCount());
  if (src.dtype == dst.dtype) {
    std::vector<std::byte> raw(count * static_cast<std::size_t>(byteSize(src.dtype)));
    ctx.readBytes(src, raw);
    ctx.writeBytes(dst, raw);
    return;
  }
  std::vector<float> values(count);
  ctx.readFloats(src, values);
  ctx.writeFloats(dst, values);
}

}  // namespace trn::isa
