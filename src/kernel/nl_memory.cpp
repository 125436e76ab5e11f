// nl-level memory and creation functions (nl.h), and the helpers shared by the nl files.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nl_util.h"
#include "trn/kernel/nisa.h"
#include "trn/kernel/nl.h"

namespace trn::kernel::nl {

namespace detail {

std::string shapeText(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

void fail(const Tensor& any, std::string_view function, const std::string& message,
          std::source_location loc) {
  any.kernel().fail(fmt::format("nl.{}: {}", function, message), loc);
}

void requireOnChip(const Tensor& t, std::string_view function, std::string_view operand,
                   std::source_location loc) {
  if (!t.valid()) {
    throw TraceError{Status(ErrorCode::kInvalidArgument,
                            fmt::format("{}: nl.{}: operand '{}' is not a declared tensor",
                                        formatLocation(toLocation(loc)), function, operand))};
  }
  if (!t.onChip()) {
    fail(t, function,
         fmt::format("operand '{}' must be an on-chip tile, not {}", operand, t.describe()), loc);
  }
}

DType promote(DType a, DType b) {
  if (a == b) {
    return a;
  }
  if (isFloat(a) != isFloat(b)) {
    return isFloat(a) ? a : b;
  }
  return DType::kFp32;
}

DType resultDType(DType in, const OptDType& requested) { return requested.value_or(in); }

Tensor newTile(const Tensor& like, const std::vector<std::int64_t>& shape, DType dtype,
               std::string_view name, std::source_location loc) {
  return like.kernel().sbuf(shape, dtype, std::string(name), std::nullopt, loc);
}

Tensor fp32Column(const Tensor& column, std::source_location loc) {
  if (column.dtype() == DType::kFp32) {
    return column;
  }
  Tensor out = newTile(column, {column.partitions(), 1}, DType::kFp32, "column", loc);
  nisa::tensorCopy(out, column.reshape({column.partitions(), 1}, loc), std::nullopt, loc);
  return out;
}

bool isColumn(const Tensor& t) { return t.freeSize() == 1; }

}  // namespace detail

// ---- Memory -----------------------------------------------------------------------------------

Tensor load(const Tensor& src, OptDType dtype, Loc loc) {
  if (!src.valid()) {
    throw TraceError{Status(ErrorCode::kInvalidArgument,
                            fmt::format("{}: nl.load: operand 'src' is not a declared tensor",
                                        formatLocation(toLocation(loc))))};
  }
  if (src.onChip()) {
    detail::fail(src, "load",
                 fmt::format("operand 'src' must be an HBM view, not {}", src.describe()), loc);
  }
  const std::int64_t partitions = src.kernel().limits().partitions;
  std::vector<std::int64_t> shape = src.shape();
  if (shape.size() == 1) {
    shape.push_back(1);
  }
  if (shape[0] > partitions) {
    detail::fail(src, "load",
                 fmt::format("{} has {} rows; a tile holds at most {} partitions", src.describe(),
                             shape[0], partitions),
                 loc);
  }
  Tensor tile = detail::newTile(src, shape, dtype.value_or(src.dtype()), "load", loc);
  nisa::dmaCopy(tile, src, std::nullopt, std::nullopt, nisa::DmaOobMode::kError, std::nullopt, loc);
  return tile;
}

void store(const Tensor& dst, const Tensor& tile, Loc loc) {
  detail::requireOnChip(tile, "store", "tile", loc);
  if (!dst.valid() || dst.onChip()) {
    detail::fail(tile, "store",
                 fmt::format("operand 'dst' must be an HBM view, not {}",
                             dst.valid() ? dst.describe() : std::string("an undeclared tensor")),
                 loc);
  }
  if (dst.partitions() != tile.partitions() || dst.freeSize() != tile.freeSize()) {
    detail::fail(tile, "store",
                 fmt::format("dst {} and tile {} differ in shape ({} x {} vs {} x {} elements)",
                             detail::shapeText(dst.shape()), detail::shapeText(tile.shape()),
                             dst.partitions(), dst.freeSize(), tile.partitions(), tile.freeSize()),
                 loc);
  }
  Tensor src = tile;
  if (tile.memory() == isa::Memory::kPsum) {
    src = copy(tile, std::nullopt, loc);
  }
  nisa::dmaCopy(dst, src, std::nullopt, std::nullopt, nisa::DmaOobMode::kError, std::nullopt, loc);
}

Tensor copy(const Tensor& tile, OptDType dtype, Loc loc) {
  detail::requireOnChip(tile, "copy", "tile", loc);
  Tensor out =
      detail::newTile(tile, tile.shape(), detail::resultDType(tile.dtype(), dtype), "copy", loc);
  nisa::tensorCopy(out, tile, std::nullopt, loc);
  return out;
}

// ---- Creation ---------------------------------------------------------------------------------

Tensor full(Kernel& k, const std::vector<std::int64_t>& shape, DType dtype, float value, Loc loc) {
  Tensor out = k.sbuf(shape, dtype, "full", std::nullopt, loc);
  nisa::memset(out, value, std::nullopt, loc);
  return out;
}

Tensor zeros(Kernel& k, const std::vector<std::int64_t>& shape, DType dtype, Loc loc) {
  return full(k, shape, dtype, 0.0f, loc);
}

Tensor ones(Kernel& k, const std::vector<std::int64_t>& shape, DType dtype, Loc loc) {
  return full(k, shape, dtype, 1.0f, loc);
}

Tensor iota(Kernel& k, const std::vector<std::int64_t>& shape, DType dtype, std::int64_t offset,
            std::int64_t channelMultiplier, std::int64_t step, Loc loc) {
  Tensor out = k.sbuf(shape, dtype, "iota", std::nullopt, loc);
  // One (step, count) pair per free dimension, outermost first, so the value is the row-major
  // free index times `step`.
  std::vector<isa::Dim> pattern(shape.size() > 1 ? shape.size() - 1 : 1, isa::Dim{step, 1});
  std::int64_t stride = step;
  for (std::size_t d = shape.size(); d-- > 1;) {
    pattern[d - 1] = isa::Dim{stride, shape[d]};
    stride *= shape[d];
  }
  nisa::iota(out, pattern, offset, channelMultiplier, loc);
  return out;
}

}  // namespace trn::kernel::nl
