#include "trn/isa/footprint.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <variant>

#include "trn/isa/field.h"

namespace trn::isa {

namespace {

/// The bytes an access pattern touches as an offset and dimensions in bytes, in an order that
/// makes them easy to enumerate: dimensions of one element or stride 0 dropped (they repeat
/// bytes), negative strides turned positive (the offset moving to the lowest byte), sorted by
/// stride from the largest, and neighbours that continue each other merged. A transposed read
/// (stride 1 on the partitions of an HBM pattern) so becomes contiguous runs.
struct CanonicalPattern {
  std::int64_t offset = 0;
  std::int64_t elementBytes = 1;
  std::array<Dim, kMaxFreeDims + 1> dims{};  ///< strides in bytes
  int count = 0;
  /// Whether each dimension's stride is at least the span of the dimensions inside it, so that
  /// the row-major enumeration yields increasing, disjoint runs.
  bool nested = true;
};

CanonicalPattern canonical(const AccessPattern& ap) {
  CanonicalPattern c;
  c.offset = ap.offset;
  c.elementBytes = byteSize(ap.dtype);
  auto add = [&](Dim d) {
    if (d.count <= 1 || d.stride == 0) {
      return;
    }
    if (d.stride < 0) {
      c.offset += (d.count - 1) * d.stride * c.elementBytes;
      d.stride = -d.stride;
    }
    c.dims[static_cast<std::size_t>(c.count++)] = {d.stride * c.elementBytes, d.count};
  };
  if (ap.memory == Memory::kHbm) {
    add({ap.partitionStride, ap.partitionCount});
  }
  for (int d = 0; d < ap.numDims; ++d) {
    add(ap.dims[static_cast<std::size_t>(d)]);
  }
  // Insertion sort, stable: at most five dimensions, and no allocation (std::stable_sort's).
  for (int i = 1; i < c.count; ++i) {
    const Dim d = c.dims[static_cast<std::size_t>(i)];
    int j = i;
    for (; j > 0 && c.dims[static_cast<std::size_t>(j - 1)].stride < d.stride; --j) {
      c.dims[static_cast<std::size_t>(j)] = c.dims[static_cast<std::size_t>(j - 1)];
    }
    c.dims[static_cast<std::size_t>(j)] = d;
  }
  int merged = 0;
  for (int d = 0; d < c.count; ++d) {
    const Dim dim = c.dims[static_cast<std::size_t>(d)];
    if (merged > 0 &&
        c.dims[static_cast<std::size_t>(merged - 1)].stride == dim.stride * dim.count) {
      Dim& last = c.dims[static_cast<std::size_t>(merged - 1)];
      last = {dim.stride, last.count * dim.count};
    } else {
      c.dims[static_cast<std::size_t>(merged++)] = dim;
    }
  }
  c.count = merged;
  std::int64_t span = c.elementBytes;  // bytes from the first of a run to past its last
  for (int d = c.count; d-- > 0;) {
    const Dim dim = c.dims[static_cast<std::size_t>(d)];
    c.nested = c.nested && dim.stride >= span;
    span += (dim.count - 1) * dim.stride;
  }
  return c;
}

/// The byte intervals `ap` touches within one partition (SBUF/PSUM) or within its HBM tensor
/// (all rows), sorted and merged. Strides may be zero or negative.
std::vector<ByteInterval> byteIntervals(const AccessPattern& ap) {
  CanonicalPattern c = canonical(ap);
  // The innermost dimension, when contiguous, is one run; the rest are enumerated.
  std::int64_t runBytes = c.elementBytes;
  if (c.count > 0 && c.dims[static_cast<std::size_t>(c.count - 1)].stride == c.elementBytes) {
    runBytes *= c.dims[static_cast<std::size_t>(--c.count)].count;
  }
  std::int64_t runs = 1;
  for (int d = 0; d < c.count; ++d) {
    runs *= c.dims[static_cast<std::size_t>(d)].count;
  }
  std::vector<ByteInterval> intervals;
  intervals.reserve(static_cast<std::size_t>(runs));
  std::array<std::int64_t, kMaxFreeDims + 1> index{};
  for (std::int64_t r = 0; r < runs; ++r) {
    std::int64_t at = c.offset;
    for (int d = 0; d < c.count; ++d) {
      at += index[static_cast<std::size_t>(d)] * c.dims[static_cast<std::size_t>(d)].stride;
    }
    intervals.push_back({at, at + runBytes});
    for (int d = c.count; d-- > 0;) {
      if (++index[static_cast<std::size_t>(d)] < c.dims[static_cast<std::size_t>(d)].count) {
        break;
      }
      index[static_cast<std::size_t>(d)] = 0;
    }
  }
  if (!c.nested) {
    std::sort(intervals.begin(), intervals.end(),
              [](const ByteInterval& x, const ByteInterval& y) { return x.begin < y.begin; });
  }
  std::vector<ByteInterval> merged;
  for (const ByteInterval& r : intervals) {
    if (!merged.empty() && r.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, r.end);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

/// `ap` as rows (within a partition for SBUF/PSUM, over the tensor for HBM), if it is: the
/// contiguous innermost dimensions merge into one run and at most one stride remains.
RowShape rowShape(const AccessPattern& ap) {
  const CanonicalPattern c = canonical(ap);
  RowShape shape;
  shape.first = c.offset;
  int count = c.count;
  shape.length = c.elementBytes;
  if (count > 0 && c.dims[static_cast<std::size_t>(count - 1)].stride == c.elementBytes) {
    shape.length *= c.dims[static_cast<std::size_t>(--count)].count;
  }
  if (count == 0) {
    shape.rows = 1;
    shape.stride = shape.length;
    return shape;
  }
  const Dim outer = c.dims[0];
  if (count != 1 || outer.stride < shape.length) {
    return {};  // several strides, or overlapping rows: use the general test
  }
  shape.rows = outer.count;
  shape.stride = outer.stride;
  return shape;
}

/// The first bytes two row shapes share, if any.
std::optional<ByteInterval> rowsOverlap(const RowShape& a, const RowShape& b) {
  // Row i of a is [a.first + i*S, +La), row j of b is [b.first + j*S, +Lb); with k = j - i and
  // d = b.first - a.first they meet when -Lb < d + k*S < La.
  if (a.stride != b.stride) {
    return std::nullopt;
  }
  const std::int64_t s = a.stride;
  const std::int64_t d = b.first - a.first;
  auto floorDiv = [](std::int64_t x, std::int64_t y) {
    return x / y - ((x % y != 0) && ((x < 0) != (y < 0)) ? 1 : 0);
  };
  std::int64_t kLow = floorDiv(-b.length - d, s) + 1;
  std::int64_t kHigh = -floorDiv(-(a.length - d), s) - 1;  // ceil((La - d) / S) - 1
  kLow = std::max(kLow, -(a.rows - 1));
  kHigh = std::min(kHigh, b.rows - 1);
  if (kLow > kHigh) {
    return std::nullopt;
  }
  const std::int64_t i = std::max<std::int64_t>(0, -kLow);
  const std::int64_t rowA = a.first + i * s;
  const std::int64_t rowB = b.first + (i + kLow) * s;
  return ByteInterval{std::max(rowA, rowB), std::min(rowA + a.length, rowB + b.length)};
}

/// The first bytes two row shapes of any strides share, if any: each row of the shape with fewer
/// rows, in increasing order, against the other's rows arithmetically.
std::optional<ByteInterval> rowShapesOverlap(const RowShape& a, const RowShape& b) {
  if (a.stride == b.stride) {
    return rowsOverlap(a, b);
  }
  const bool aFewer = a.rows <= b.rows;
  const RowShape& few = aFewer ? a : b;
  const RowShape& many = aFewer ? b : a;
  for (std::int64_t i = 0; i < few.rows; ++i) {
    const RowShape row{few.first + i * few.stride, many.stride, 1, few.length};
    if (std::optional<ByteInterval> overlap = rowsOverlap(row, many)) {
      return overlap;
    }
  }
  return std::nullopt;
}

}  // namespace

Footprint Footprint::of(const AccessPattern& ap, bool write) {
  Footprint f;
  f.memory = ap.memory;
  f.tensor = ap.memory == Memory::kHbm ? ap.tensor : -1;
  if (ap.memory != Memory::kHbm) {
    f.firstPartition = ap.partitionStart;
    f.endPartition = ap.partitionStart + ap.partitionCount;
  }
  const AccessPattern::ByteRange range = ap.byteRange();
  f.bytes = {range.begin, range.end};
  f.rows = rowShape(ap);
  f.pattern = &ap;
  f.write = write;
  return f;
}

namespace {

/// The first bytes `a` (its offsets shifted by `shiftA`) and `b` (by `shiftB`) both touch, for
/// footprints whose bounding boxes meet.
std::optional<ByteInterval> shiftedOverlap(const Footprint& a, std::int64_t shiftA,
                                           const Footprint& b, std::int64_t shiftB) {
  if (a.rows.rows > 0 && b.rows.rows > 0) {
    RowShape x = a.rows;
    RowShape y = b.rows;
    x.first += shiftA;
    y.first += shiftB;
    return rowShapesOverlap(x, y);
  }
  const std::vector<ByteInterval> xs = byteIntervals(*a.pattern);
  const std::vector<ByteInterval> ys = byteIntervals(*b.pattern);
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < xs.size() && j < ys.size()) {
    const std::int64_t begin = std::max(xs[i].begin + shiftA, ys[j].begin + shiftB);
    const std::int64_t end = std::min(xs[i].end + shiftA, ys[j].end + shiftB);
    if (begin < end) {
      return ByteInterval{begin, end};
    }
    if (xs[i].end + shiftA <= ys[j].end + shiftB) {
      ++i;
    } else {
      ++j;
    }
  }
  return std::nullopt;
}

}  // namespace

bool overlapNeedsPatterns(const Footprint& a, const Footprint& b) {
  return a.rows.rows <= 0 || b.rows.rows <= 0;
}

std::optional<ByteInterval> firstOverlap(const Footprint& a, const Footprint& b) {
  if (!boxesOverlap(a, b)) {
    return std::nullopt;
  }
  return shiftedOverlap(a, 0, b, 0);
}

std::optional<ByteInterval> firstDeviceOverlap(const Footprint& a, std::int64_t baseA,
                                               const Footprint& b, std::int64_t baseB) {
  if (a.memory != Memory::kHbm || b.memory != Memory::kHbm ||
      a.bytes.begin + baseA >= b.bytes.end + baseB ||
      b.bytes.begin + baseB >= a.bytes.end + baseA) {
    return std::nullopt;
  }
  return shiftedOverlap(a, baseA, b, baseB);
}

void operandFootprints(const InstructionBody& body, std::vector<Footprint>& out) {
  out.clear();
  std::visit(
      [&](const auto& instr) {
        forEachAccessPattern(instr, [&](std::string_view, FieldRole role, const AccessPattern& ap) {
          out.push_back(Footprint::of(ap, role == FieldRole::kOutput));
        });
      },
      body);
}

std::string describeRange(const Footprint& f, ByteInterval bytes, std::int64_t firstPartition,
                          std::int64_t endPartition, const std::string& tensorName) {
  if (f.memory == Memory::kHbm) {
    return fmt::format("hbm tensor '{}' bytes {}..{}", tensorName, bytes.begin, bytes.end - 1);
  }
  return fmt::format("{} partitions {}..{} bytes {}..{}", memoryName(f.memory), firstPartition,
                     endPartition - 1, bytes.begin, bytes.end - 1);
}

}  // namespace trn::isa
