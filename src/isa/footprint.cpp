#include "trn/isa/footprint.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <variant>

#include "trn/isa/field.h"

namespace trn::isa {

namespace {

/// The byte intervals `ap` touches within one partition (SBUF/PSUM) or within its HBM tensor
/// (all rows), sorted and merged. Strides may be zero or negative.
std::vector<ByteInterval> byteIntervals(const AccessPattern& ap) {
  const std::int64_t elementBytes = byteSize(ap.dtype);
  std::vector<Dim> dims(ap.dims.begin(), ap.dims.begin() + ap.numDims);
  if (ap.memory == Memory::kHbm) {
    dims.insert(dims.begin(), Dim{ap.partitionStride, ap.partitionCount});
  }
  const Dim inner = dims.back();
  const bool contiguous = inner.stride == 1;
  const std::int64_t runBytes = contiguous ? inner.count * elementBytes : elementBytes;
  std::int64_t outerCount = 1;
  for (std::size_t d = 0; d + 1 < dims.size(); ++d) {
    outerCount *= dims[d].count;
  }
  std::vector<ByteInterval> runs;
  runs.reserve(static_cast<std::size_t>(outerCount * (contiguous ? 1 : inner.count)));
  std::vector<std::int64_t> index(dims.size(), 0);
  for (std::int64_t o = 0; o < outerCount; ++o) {
    std::int64_t base = ap.offset;
    for (std::size_t d = 0; d + 1 < dims.size(); ++d) {
      base += index[d] * dims[d].stride * elementBytes;
    }
    if (contiguous) {
      runs.push_back({base, base + runBytes});
    } else {
      for (std::int64_t i = 0; i < inner.count; ++i) {
        const std::int64_t at = base + i * inner.stride * elementBytes;
        runs.push_back({at, at + elementBytes});
      }
    }
    for (std::size_t d = dims.size() - 1; d-- > 0;) {
      if (++index[d] < dims[d].count) {
        break;
      }
      index[d] = 0;
    }
  }
  std::sort(runs.begin(), runs.end(),
            [](const ByteInterval& x, const ByteInterval& y) { return x.begin < y.begin; });
  std::vector<ByteInterval> merged;
  for (const ByteInterval& r : runs) {
    if (!merged.empty() && r.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, r.end);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

/// `ap` as rows (within a partition for SBUF/PSUM, over the tensor for HBM), if it is: the
/// contiguous innermost dimensions merge into one run and at most one positive stride remains.
RowShape rowShape(const AccessPattern& ap) {
  const std::int64_t elementBytes = byteSize(ap.dtype);
  std::array<Dim, kMaxFreeDims + 1> dims{};
  int count = 0;
  if (ap.memory == Memory::kHbm && ap.partitionCount > 1) {
    dims[static_cast<std::size_t>(count++)] = {ap.partitionStride, ap.partitionCount};
  }
  for (int d = 0; d < ap.numDims; ++d) {
    if (ap.dims[static_cast<std::size_t>(d)].count > 1) {
      dims[static_cast<std::size_t>(count++)] = ap.dims[static_cast<std::size_t>(d)];
    }
  }
  std::int64_t run = 1;  // elements
  while (count > 0 && dims[static_cast<std::size_t>(count - 1)].stride == run) {
    run *= dims[static_cast<std::size_t>(--count)].count;
  }
  RowShape shape;
  shape.first = ap.offset;
  shape.length = run * elementBytes;
  if (count == 0) {
    shape.rows = 1;
    shape.stride = shape.length;
    return shape;
  }
  // One remaining dimension, or two that continue each other (outer stride = inner span).
  Dim outer = dims[static_cast<std::size_t>(count - 1)];
  if (count == 2 && dims[0].stride == outer.stride * outer.count) {
    outer = {outer.stride, outer.count * dims[0].count};
  } else if (count != 1) {
    return {};
  }
  if (outer.stride < run) {
    return {};  // overlapping, broadcast or negative rows: use the general test
  }
  shape.rows = outer.count;
  shape.stride = outer.stride * elementBytes;
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

/// Whether `a` and `b` are rows of one stride (a single run is one row of any stride), which
/// compare arithmetically: then `x` and `y` are their rows with that stride.
bool rowsOfOneStride(const Footprint& a, const Footprint& b, RowShape& x, RowShape& y) {
  if (a.rows.rows <= 0 || b.rows.rows <= 0) {
    return false;
  }
  x = a.rows;
  y = b.rows;
  x.stride = x.rows == 1 ? y.stride : x.stride;
  y.stride = y.rows == 1 ? x.stride : y.stride;
  return x.stride == y.stride && x.stride > 0;
}

/// The first bytes `a` (its offsets shifted by `shiftA`) and `b` (by `shiftB`) both touch, for
/// footprints whose bounding boxes meet.
std::optional<ByteInterval> shiftedOverlap(const Footprint& a, std::int64_t shiftA,
                                           const Footprint& b, std::int64_t shiftB) {
  RowShape x;
  RowShape y;
  if (rowsOfOneStride(a, b, x, y)) {
    x.first += shiftA;
    y.first += shiftB;
    return rowsOverlap(x, y);
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
  RowShape x;
  RowShape y;
  return !rowsOfOneStride(a, b, x, y);
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
        forEachAccessPattern(
            instr, [&](std::string_view, FieldRole role, const AccessPattern& ap) {
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
