#include "trn/core/footprint.h"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "trn/isa/field.h"

namespace trn::core {

using isa::AccessPattern;
using isa::Memory;

namespace {

/// The byte intervals `ap` touches within one partition (SBUF/PSUM) or within its HBM tensor
/// (all rows), sorted and merged. Strides may be zero or negative.
std::vector<ByteInterval> byteIntervals(const AccessPattern& ap) {
  const std::int64_t elementBytes = byteSize(ap.dtype);
  std::vector<isa::Dim> dims(ap.dims.begin(), ap.dims.begin() + ap.numDims);
  if (ap.memory == Memory::kHbm) {
    dims.insert(dims.begin(), isa::Dim{ap.partitionStride, ap.partitionCount});
  }
  const isa::Dim inner = dims.back();
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
  f.pattern = ap;
  f.write = write;
  return f;
}

bool boxesOverlap(const Footprint& a, const Footprint& b) {
  return a.memory == b.memory && a.tensor == b.tensor && a.firstPartition < b.endPartition &&
         b.firstPartition < a.endPartition && a.bytes.begin < b.bytes.end &&
         b.bytes.begin < a.bytes.end;
}

std::optional<ByteInterval> firstOverlap(const Footprint& a, const Footprint& b) {
  if (!boxesOverlap(a, b)) {
    return std::nullopt;
  }
  const std::vector<ByteInterval> x = byteIntervals(a.pattern);
  const std::vector<ByteInterval> y = byteIntervals(b.pattern);
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < x.size() && j < y.size()) {
    const std::int64_t begin = std::max(x[i].begin, y[j].begin);
    const std::int64_t end = std::min(x[i].end, y[j].end);
    if (begin < end) {
      return ByteInterval{begin, end};
    }
    if (x[i].end <= y[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return std::nullopt;
}

void operandFootprints(const isa::InstructionBody& body, std::vector<Footprint>& out) {
  out.clear();
  std::visit(
      [&](const auto& instr) {
        isa::forEachAccessPattern(instr, [&](std::string_view, isa::FieldRole role,
                                             const AccessPattern& ap) {
          out.push_back(Footprint::of(ap, role == isa::FieldRole::kOutput));
        });
      },
      body);
}

std::string describeRange(const Footprint& f, ByteInterval bytes, std::int64_t firstPartition,
                          std::int64_t endPartition, const std::string& tensorName) {
  if (f.memory == Memory::kHbm) {
    return fmt::format("hbm tensor '{}' bytes {}..{}", tensorName, bytes.begin, bytes.end - 1);
  }
  return fmt::format("{} partitions {}..{} bytes {}..{}", isa::memoryName(f.memory),
                     firstPartition, endPartition - 1, bytes.begin, bytes.end - 1);
}

}  // namespace trn::core
