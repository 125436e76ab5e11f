// nisa functions of the DMA instructions (nisa.h). Every transfer records queue 0; the backend
// assigns the queues.
#include <fmt/format.h>

#include <array>

#include "nisa_call.h"
#include "trn/kernel/nisa.h"

namespace trn::kernel::nisa {

void dmaCopy(const Tensor& dst, const Tensor& src, const std::optional<Tensor>& dstIndex,
             const std::optional<Tensor>& srcIndex, DmaOobMode oobMode,
             std::optional<Engine> engine, Loc loc) {
  detail::Call<isa::DmaCopy> c(loc);
  c.emit({.dst = c("dst", dst),
          .src = c("src", src),
          .queue = 0,
          .dstIndex = c("dst_index", dstIndex),
          .srcIndex = c("src_index", srcIndex),
          .oobMode = oobMode},
         engine);
}

void dmaTranspose(const Tensor& dst, const Tensor& src, std::optional<Engine> engine, Loc loc) {
  detail::Call<isa::DmaTranspose> c(loc);
  c.emit({.dst = c("dst", dst), .src = c("src", src), .queue = 0}, engine);
}

void dmaCompute(const Tensor& dst, const std::vector<Tensor>& srcs, AluOp reduceOp,
                const std::vector<float>& scales, std::optional<Engine> engine, Loc loc) {
  detail::Call<isa::DmaCompute> c(loc);
  isa::DmaCompute body;
  body.dst = c("dst", dst);
  body.reduceOp = reduceOp;
  constexpr auto kMax = static_cast<std::size_t>(isa::DmaCompute::kMaxSources);
  if (srcs.empty() || srcs.size() > kMax) {
    c.fail(fmt::format("{} sources given; dma_compute takes 1 to {}", srcs.size(), kMax));
  }
  if (!scales.empty() && scales.size() != srcs.size()) {
    c.fail(fmt::format("{} scales for {} sources; give one per source, or none for all 1",
                       scales.size(), srcs.size()));
  }
  const std::array<std::optional<isa::AccessPattern>*, kMax> sourceFields = {
      &body.src0, &body.src1, &body.src2, &body.src3};
  const std::array<float*, kMax> scaleFields = {&body.scale0, &body.scale1, &body.scale2,
                                                &body.scale3};
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    *sourceFields[i] = c(fmt::format("src{}", i), srcs[i]);
    *scaleFields[i] = scales.empty() ? 1.0f : scales[i];
  }
  c.emit(body, engine);
}

}  // namespace trn::kernel::nisa
