// Tensor: a strided view of a kernel buffer, the value kernel code passes around (NKI's
// NkiTensor). Dimension 0 of an on-chip view is the partition dimension and stays first; the rest
// are free dimensions, row-major. Views are made by indexing (integers and slices), reshape,
// permute, broadcast, bitcast and raw access patterns; none copies data. A view turns into the
// instruction operand (isa::AccessPattern) the hardware sees, and every operation that cannot be
// expressed that way is an error reported at the kernel's source line.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <source_location>
#include <string>
#include <variant>
#include <vector>

#include "trn/isa/access_pattern.h"

namespace trn::kernel {

class Kernel;

/// A Python-style slice [start, stop) with a positive step; an absent stop means "to the end",
/// and negative start/stop count from the end.
struct Slice {
  std::int64_t start = 0;
  std::optional<std::int64_t> stop;
  std::int64_t step = 1;
};

/// The whole dimension (Python's `:`).
inline constexpr Slice all{};

/// [start, start + size): NKI's `nl.ds(start, size)`.
inline Slice ds(std::int64_t start, std::int64_t size) { return Slice{start, start + size, 1}; }

/// One index of a view: an integer selects one position, a slice a range.
using Index = std::variant<std::int64_t, Slice>;

/// Views have at most a partition (or row) dimension and four free dimensions.
inline constexpr int kMaxRank = 1 + isa::kMaxFreeDims;

class Tensor {
 public:
  using Loc = std::source_location;

  Tensor() = default;

  [[nodiscard]] Kernel& kernel() const { return *kernel_; }
  [[nodiscard]] bool valid() const { return kernel_ != nullptr; }
  [[nodiscard]] std::int32_t buffer() const { return ap_.tensor; }
  [[nodiscard]] isa::Memory memory() const { return ap_.memory; }
  [[nodiscard]] bool onChip() const { return ap_.memory != isa::Memory::kHbm; }
  [[nodiscard]] DType dtype() const { return ap_.dtype; }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] std::int64_t shape(int dim) const;
  [[nodiscard]] std::vector<std::int64_t> shape() const;
  /// shape(0): partitions (on chip) or rows (HBM).
  [[nodiscard]] std::int64_t partitions() const { return dims_[0].count; }
  /// Elements per partition (or row): the product of the free dimensions.
  [[nodiscard]] std::int64_t freeSize() const;
  [[nodiscard]] std::int64_t elementCount() const { return partitions() * freeSize(); }
  /// The view as an instruction operand, relative to its buffer (kernel_ir.h).
  [[nodiscard]] const isa::AccessPattern& ap() const { return ap_; }
  /// "sbuf tile 'x' [128, 512] bf16" for messages.
  [[nodiscard]] std::string describe() const;

  /// Indexing, one Index per leading dimension (the rest are kept whole). An integer on the
  /// partition dimension keeps it with size 1; an integer on any other dimension drops it,
  /// unless an on-chip view would fall below two dimensions.
  Tensor operator()(Index i0, Loc loc = Loc::current()) const { return index({i0}, loc); }
  Tensor operator()(Index i0, Index i1, Loc loc = Loc::current()) const {
    return index({i0, i1}, loc);
  }
  Tensor operator()(Index i0, Index i1, Index i2, Loc loc = Loc::current()) const {
    return index({i0, i1, i2}, loc);
  }
  Tensor operator()(Index i0, Index i1, Index i2, Index i3, Loc loc = Loc::current()) const {
    return index({i0, i1, i2, i3}, loc);
  }
  Tensor operator()(Index i0, Index i1, Index i2, Index i3, Index i4,
                    Loc loc = Loc::current()) const {
    return index({i0, i1, i2, i3, i4}, loc);
  }
  Tensor index(std::initializer_list<Index> indices, Loc loc = Loc::current()) const {
    return index(std::span<const Index>(indices.begin(), indices.size()), loc);
  }
  /// The same for any number of indices (front ends in other languages).
  Tensor index(std::span<const Index> indices, Loc loc = Loc::current()) const;

  /// The same elements with another shape; the view must be contiguous where dimensions merge or
  /// split. On chip the partition dimension must stay the same.
  [[nodiscard]] Tensor reshape(std::vector<std::int64_t> shape, Loc loc = Loc::current()) const;
  /// Dimensions reordered: result dim d is this view's dim order[d]. On chip, dim 0 stays first.
  [[nodiscard]] Tensor permute(std::vector<int> order, Loc loc = Loc::current()) const;
  /// Dimension `dim` (of size 1) repeated `count` times with stride 0. On chip, only free
  /// dimensions broadcast (the hardware has no partition stride); HBM rows may.
  [[nodiscard]] Tensor broadcast(int dim, std::int64_t count, Loc loc = Loc::current()) const;
  /// A new dimension of size 1 inserted before `dim`.
  [[nodiscard]] Tensor expandDim(int dim, Loc loc = Loc::current()) const;
  /// The same bytes as another dtype of the same size (NKI `view(dtype)`).
  [[nodiscard]] Tensor bitcast(DType dtype, Loc loc = Loc::current()) const;
  /// A raw access pattern on this view's buffer (NKI `.ap()`): `partitions` partitions (rows)
  /// from this view's first one, free dims given as (stride, count) in elements, starting
  /// `offset` elements after this view's first element. Checked against the buffer's bounds.
  [[nodiscard]] Tensor pattern(std::int64_t partitions, std::vector<isa::Dim> free,
                               std::int64_t offset = 0, Loc loc = Loc::current()) const;
  /// True when the free elements of each partition are contiguous and in order.
  [[nodiscard]] bool isContiguous() const;

 private:
  friend class Kernel;
  Tensor(Kernel* kernel, const isa::AccessPattern& base, std::span<const std::int64_t> shape);

  /// Rebuilds ap_ from dims_/rank_ (the partition dim and free dims); fails at `loc` when the
  /// view needs more free dimensions than the hardware has.
  void syncPattern(Loc loc);

  Kernel* kernel_ = nullptr;
  isa::AccessPattern ap_;
  /// dims_[0]: partitions (stride unused on chip) or rows (stride = row stride); then free dims.
  std::array<isa::Dim, kMaxRank + 1> dims_{};
  int rank_ = 0;
  std::int64_t offsetElements_ = 0;  ///< of element 0 from the buffer start (within a partition)
};

}  // namespace trn::kernel
