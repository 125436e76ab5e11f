#include "tile_util.h"

#include "trn/base/check.h"
#include "trn/kernel/nisa.h"
#include "trn/kernels/reference.h"

namespace trn::kernels::detail {

ProgramShare programShare(const kernel::Kernel& k, std::int64_t n, std::int64_t unit) {
  TRN_CHECK(n >= 0 && unit >= 1) << "programShare needs n >= 0 items in units of at least 1";
  const std::int64_t programs = k.numPrograms(0);
  const std::int64_t id = k.programId(0);
  const std::int64_t units = (n + unit - 1) / unit;
  const std::int64_t base = units / programs;
  const std::int64_t longer = units % programs;  // the first `longer` runs take base + 1 units
  const std::int64_t first = id * base + std::min(id, longer);
  const std::int64_t taken = base + (id < longer ? 1 : 0);
  const std::int64_t begin = std::min(first * unit, n);
  return {begin, std::min((first + taken) * unit, n) - begin};
}

bool isFloat16Or32(DType dtype) {
  return dtype == DType::kFp32 || dtype == DType::kBf16 || dtype == DType::kFp16;
}

void requireRank(kernel::Kernel& k, const kernel::Tensor& t, int rank,
                 const std::string& kernelName, const std::string& what, std::source_location loc) {
  if (t.rank() != rank) {
    k.fail(kernelName + ": " + what + " must be " + std::to_string(rank) + "-D, not " +
               formatShape(t.shape()),
           loc);
  }
}

void requireFloat(kernel::Kernel& k, const kernel::Tensor& t, const std::string& kernelName,
                  const std::string& what, std::source_location loc) {
  if (!isFloat16Or32(t.dtype())) {
    k.fail(kernelName + ": " + what + " must be fp32, bf16 or fp16", loc);
  }
}

kernel::Tensor broadcastOnChip(kernel::Kernel& k, const kernel::Tensor& vec,
                               std::int64_t partitions, const char* name,
                               std::source_location loc) {
  const std::int64_t d = vec.shape(0);
  kernel::Tensor row = k.sbuf({1, d}, vec.dtype(), "bcast_row", std::nullopt, loc);
  kernel::nisa::dmaCopy(row, vec.reshape({1, d}, loc), std::nullopt, std::nullopt,
                        isa::DmaOobMode::kError, std::nullopt, loc);
  // A matmul operand of fp32 class needs an fp32 partner, so the ones take the vector's dtype.
  kernel::Tensor ones = k.sbuf({1, partitions}, vec.dtype(), "bcast_ones", std::nullopt, loc);
  kernel::nisa::memset(ones, 1.0f, std::nullopt, loc);
  kernel::Tensor tile = k.sbuf({partitions, d}, vec.dtype(), name, std::nullopt, loc);
  constexpr std::int64_t kChunk = 512;
  for (std::int64_t c = 0; c < d; c += kChunk) {
    const std::int64_t n = clip(kChunk, c, d);
    kernel::Tensor ps = k.psum({partitions, n}, DType::kFp32, "bcast_psum", std::nullopt, loc);
    kernel::nisa::ncMatmul(ps, ones, row(kernel::all, kernel::ds(c, n), loc), false, {0, 0},
                           {isa::kPeArraySize, isa::kPeArraySize}, isa::MatmulPerfMode::kNone,
                           false, loc);
    kernel::nisa::tensorCopy(tile(kernel::all, kernel::ds(c, n), loc), ps, isa::Engine::kAct, loc);
  }
  return tile;
}

TilePrefetcher::TilePrefetcher(std::int64_t count, std::int64_t depth, LoadFn load,
                               std::source_location site)
    : count_(count), depth_(std::max<std::int64_t>(depth, 0)), load_(std::move(load)),
      site_(site) {
  for (; next_ < std::min(count_, depth_); ++next_) {
    loaded_.push_back(load_(next_, site_));
  }
}

kernel::Tensor TilePrefetcher::take() {
  if (loaded_.empty()) {  // depth 0: the tile is loaded when it is taken
    loaded_.push_back(load_(next_++, site_));
  }
  kernel::Tensor tile = loaded_.front();
  loaded_.pop_front();
  if (depth_ > 0 && next_ < count_) {
    loaded_.push_back(load_(next_++, site_));
  }
  return tile;
}

}  // namespace trn::kernels::detail
