#include "trn/kernel/tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "trn/kernel/kernel.h"

namespace trn::kernel {

Tensor::Tensor(Kernel* kernel, const isa::AccessPattern& base, std::span<const std::int64_t> shape)
    : kernel_(kernel), ap_(base), rank_(static_cast<int>(shape.size())) {
  // Row-major strides; on chip the partition dimension has no element stride.
  std::int64_t stride = 1;
  for (int d = rank_ - 1; d >= 0; --d) {
    dims_[static_cast<std::size_t>(d)] = isa::Dim{stride, shape[static_cast<std::size_t>(d)]};
    stride *= shape[static_cast<std::size_t>(d)];
  }
  if (onChip()) {
    dims_[0].stride = 0;
  }
  syncPattern(std::source_location::current());
}

std::int64_t Tensor::shape(int dim) const { return dims_[static_cast<std::size_t>(dim)].count; }

std::vector<std::int64_t> Tensor::shape() const {
  std::vector<std::int64_t> out;
  for (int d = 0; d < rank_; ++d) {
    out.push_back(shape(d));
  }
  return out;
}

std::int64_t Tensor::freeSize() const {
  std::int64_t n = 1;
  for (int d = 1; d < rank_; ++d) {
    n *= shape(d);
  }
  return n;
}

std::string Tensor::describe() const {
  const Buffer& b = kernel_->ir().buffers[static_cast<std::size_t>(ap_.tensor)];
  return fmt::format("{} tensor '{}' view [{}] {}", isa::memoryName(ap_.memory), b.name,
                     fmt::join(shape(), ", "), dtypeName(ap_.dtype));
}

void Tensor::syncPattern(Loc loc) {
  const int freeDims = std::max(rank_ - 1, 1);
  if (freeDims > isa::kMaxFreeDims) {
    kernel_->fail(fmt::format("a view of {} needs {} free dimensions; access patterns have at "
                              "most {}",
                              isa::memoryName(ap_.memory), rank_ - 1, isa::kMaxFreeDims),
                  loc);
  }
  const std::int64_t elementBytes = byteSize(ap_.dtype);
  ap_.partitionCount = dims_[0].count;
  ap_.partitionStride = onChip() ? 0 : dims_[0].stride;
  ap_.offset = offsetElements_ * elementBytes;
  ap_.numDims = freeDims;
  ap_.dims = {};
  if (rank_ == 1) {
    ap_.dims[0] = isa::Dim{1, 1};
  }
  for (int d = 1; d < rank_; ++d) {
    ap_.dims[static_cast<std::size_t>(d - 1)] = dims_[static_cast<std::size_t>(d)];
  }
}

Tensor Tensor::index(std::span<const Index> indices, Loc loc) const {
  if (static_cast<int>(indices.size()) > rank_) {
    kernel_->fail(fmt::format("{} indices given for {}, which has {} dimensions", indices.size(),
                              describe(), rank_),
                  loc);
  }
  Tensor out = *this;
  std::array<isa::Dim, kMaxRank + 1> dims{};
  int rank = 0;
  int d = 0;
  auto keep = [&](isa::Dim dim) { dims[static_cast<std::size_t>(rank++)] = dim; };
  for (const Index& index : indices) {
    const isa::Dim dim = dims_[static_cast<std::size_t>(d)];
    const bool partitionDim = d == 0 && onChip();
    auto position = [&](std::int64_t i) { return partitionDim ? 0 : i * dim.stride; };
    if (const auto* i = std::get_if<std::int64_t>(&index)) {
      const std::int64_t at = *i < 0 ? *i + dim.count : *i;
      if (at < 0 || at >= dim.count) {
        kernel_->fail(ErrorCode::kOutOfRange,
                      fmt::format("index {} is out of range for dimension {} (size {}) of {}", *i,
                                  d, dim.count, describe()),
                      loc);
      }
      if (partitionDim) {
        out.ap_.partitionStart += at;
        keep(isa::Dim{0, 1});
      } else {
        out.offsetElements_ += position(at);
      }
    } else {
      const Slice& s = std::get<Slice>(index);
      auto clamp = [&](std::int64_t v) { return v < 0 ? v + dim.count : v; };
      const std::int64_t start = clamp(s.start);
      const std::int64_t stop = s.stop ? clamp(*s.stop) : dim.count;
      if (s.step < 1 || start < 0 || stop > dim.count || start >= stop) {
        kernel_->fail(ErrorCode::kOutOfRange,
                      fmt::format("slice [{}:{}:{}] is empty or out of range for dimension {} "
                                  "(size {}) of {}",
                                  s.start, s.stop ? fmt::format("{}", *s.stop) : std::string(),
                                  s.step, d, dim.count, describe()),
                      loc);
      }
      const std::int64_t count = (stop - start + s.step - 1) / s.step;
      if (partitionDim) {
        if (s.step != 1) {
          kernel_->fail(
              "a step on the partition dimension cannot be expressed: partitions of "
              "an access pattern are consecutive",
              loc);
        }
        out.ap_.partitionStart += start;
        keep(isa::Dim{0, count});
      } else {
        out.offsetElements_ += position(start);
        keep(isa::Dim{dim.stride * s.step, count});
      }
    }
    ++d;
  }
  for (; d < rank_; ++d) {
    keep(dims_[static_cast<std::size_t>(d)]);
  }
  if (rank == 0) {
    keep(isa::Dim{1, 1});
  }
  while (onChip() && rank < 2) {
    keep(isa::Dim{1, 1});
  }
  out.dims_ = dims;
  out.rank_ = rank;
  out.syncPattern(loc);
  return out;
}

bool Tensor::isContiguous() const {
  std::int64_t expected = 1;
  for (int d = rank_ - 1; d >= 1; --d) {
    const isa::Dim dim = dims_[static_cast<std::size_t>(d)];
    if (dim.count != 1 && dim.stride != expected) {
      return false;
    }
    expected *= dim.count;
  }
  return true;
}

Tensor Tensor::reshape(std::vector<std::int64_t> shape, Loc loc) const {
  const std::int64_t total =
      std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
  if (shape.empty() || total != elementCount() ||
      std::any_of(shape.begin(), shape.end(), [](std::int64_t v) { return v < 1; })) {
    kernel_->fail(fmt::format("cannot reshape {} ({} elements) to [{}]", describe(), elementCount(),
                              fmt::join(shape, ", ")),
                  loc);
  }
  if (static_cast<int>(shape.size()) > kMaxRank) {
    kernel_->fail(fmt::format("reshape to [{}]: views have at most {} dimensions",
                              fmt::join(shape, ", "), kMaxRank),
                  loc);
  }
  if (onChip() && (shape[0] != partitions() || shape.size() < 2)) {
    kernel_->fail(fmt::format("reshape of {} to [{}] would change the partition dimension; on "
                              "chip only the free dimensions can be reshaped",
                              describe(), fmt::join(shape, ", ")),
                  loc);
  }
  // HBM views reshape as a whole (rows included); on chip only the free part.
  const bool wholeHbm = !onChip();
  const bool rowsDense =
      !wholeHbm || rank_ == 1 || dims_[0].count == 1 || dims_[0].stride == freeSize();
  if (!isContiguous() || !rowsDense) {
    kernel_->fail(fmt::format("cannot reshape {}: the view is not contiguous (take a contiguous "
                              "view, or use pattern() for a strided one)",
                              describe()),
                  loc);
  }
  Tensor out = *this;
  out.rank_ = static_cast<int>(shape.size());
  std::int64_t stride = 1;
  for (int d = out.rank_ - 1; d >= 0; --d) {
    out.dims_[static_cast<std::size_t>(d)] = isa::Dim{stride, shape[static_cast<std::size_t>(d)]};
    stride *= shape[static_cast<std::size_t>(d)];
  }
  if (onChip()) {
    out.dims_[0].stride = 0;
  }
  out.syncPattern(loc);
  return out;
}

Tensor Tensor::permute(std::vector<int> order, Loc loc) const {
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> identity(static_cast<std::size_t>(rank_));
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity) {
    kernel_->fail(fmt::format("permute order [{}] is not a permutation of the {} dimensions of {}",
                              fmt::join(order, ", "), rank_, describe()),
                  loc);
  }
  if (onChip() && order[0] != 0) {
    kernel_->fail(fmt::format("permute [{}] moves the partition dimension of {}; on chip that "
                              "needs a transpose instruction (nc_transpose, dma_transpose)",
                              fmt::join(order, ", "), describe()),
                  loc);
  }
  Tensor out = *this;
  for (int d = 0; d < rank_; ++d) {
    out.dims_[static_cast<std::size_t>(d)] = dims_[static_cast<std::size_t>(order[d])];
  }
  out.syncPattern(loc);
  return out;
}

Tensor Tensor::broadcast(int dim, std::int64_t count, Loc loc) const {
  if (dim < 0 || dim >= rank_ || shape(dim) != 1 || count < 1) {
    kernel_->fail(fmt::format("cannot broadcast dimension {} of {} to {}: only a dimension of "
                              "size 1 broadcasts",
                              dim, describe(), count),
                  loc);
  }
  if (dim == 0 && onChip()) {
    kernel_->fail(fmt::format("cannot broadcast the partition dimension of {}: load it with a "
                              "broadcast HBM view, or use a matmul with a ones vector",
                              describe()),
                  loc);
  }
  Tensor out = *this;
  out.dims_[static_cast<std::size_t>(dim)] = isa::Dim{0, count};
  out.syncPattern(loc);
  return out;
}

Tensor Tensor::expandDim(int dim, Loc loc) const {
  if (dim < 0 || dim > rank_ || (onChip() && dim == 0) || rank_ >= kMaxRank) {
    kernel_->fail(fmt::format("cannot insert a dimension at {} of {}", dim, describe()), loc);
  }
  Tensor out = *this;
  for (int d = rank_; d > dim; --d) {
    out.dims_[static_cast<std::size_t>(d)] = dims_[static_cast<std::size_t>(d - 1)];
  }
  out.dims_[static_cast<std::size_t>(dim)] = isa::Dim{0, 1};
  ++out.rank_;
  out.syncPattern(loc);
  return out;
}

Tensor Tensor::bitcast(DType dtype, Loc loc) const {
  if (byteSize(dtype) != byteSize(ap_.dtype)) {
    kernel_->fail(fmt::format("cannot view {} as {}: element sizes differ ({} and {} bytes)",
                              describe(), dtypeName(dtype), byteSize(ap_.dtype), byteSize(dtype)),
                  loc);
  }
  Tensor out = *this;
  out.ap_.dtype = dtype;
  return out;
}

Tensor Tensor::pattern(std::int64_t partitions, std::vector<isa::Dim> free, std::int64_t offset,
                       Loc loc) const {
  if (free.empty() || static_cast<int>(free.size()) > isa::kMaxFreeDims || partitions < 1) {
    kernel_->fail(fmt::format("an access pattern needs 1 to {} free dimensions and at least one "
                              "partition",
                              isa::kMaxFreeDims),
                  loc);
  }
  const Buffer& b = kernel_->ir().buffers[static_cast<std::size_t>(ap_.tensor)];
  Tensor out = *this;
  out.rank_ = static_cast<int>(free.size()) + 1;
  out.dims_ = {};
  out.dims_[0] = isa::Dim{onChip() ? 0 : dims_[0].stride, partitions};
  for (std::size_t d = 0; d < free.size(); ++d) {
    if (free[d].count < 1) {
      kernel_->fail(fmt::format("access pattern dimension {} has count {}", d, free[d].count), loc);
    }
    out.dims_[d + 1] = free[d];
  }
  out.offsetElements_ += offset;
  out.syncPattern(loc);
  // Every element must stay inside the buffer.
  const isa::AccessPattern::ByteRange range = out.ap_.byteRange();
  const std::int64_t limit = onChip() ? b.partitionBytes() : b.elementCount() * byteSize(b.dtype);
  const bool partitionsFit = !onChip() || out.ap_.partitionStart + partitions <= b.shape[0];
  if (range.begin < 0 || range.end > limit || !partitionsFit) {
    kernel_->fail(ErrorCode::kOutOfRange,
                  fmt::format("access pattern reaches bytes {}..{} of partitions {}..{} of '{}', "
                              "which has {} bytes{}",
                              range.begin, range.end, out.ap_.partitionStart,
                              out.ap_.partitionStart + partitions, b.name, limit,
                              onChip() ? fmt::format(" in each of {} partitions", b.shape[0])
                                       : std::string()),
                  loc);
  }
  return out;
}

}  // namespace trn::kernel
