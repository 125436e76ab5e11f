#include "passes/spilling.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "passes/operands.h"

namespace trn::kernel {
namespace {

/// The whole of buffer `b` of `ir` as one pattern: its partitions (HBM: rows) times its free
/// elements in one dimension.
isa::AccessPattern wholeBuffer(const Buffer& buffer, std::int32_t b) {
  const std::int64_t free = buffer.elementCount() / buffer.shape.front();
  isa::AccessPattern ap;
  ap.memory = buffer.memory;
  ap.dtype = buffer.dtype;
  ap.tensor = b;
  ap.partitionStart = 0;
  ap.partitionCount = buffer.shape.front();
  ap.partitionStride = buffer.memory == isa::Memory::kHbm ? free : 0;
  ap.offset = 0;
  ap.dims[0] = isa::Dim{1, free};
  ap.numDims = 1;
  return ap;
}

/// Whether inserting an op before index `at` would put it strictly inside a dynamic loop.
bool insideLoop(const KernelIR& ir, std::int64_t at) {
  return std::any_of(ir.loops.begin(), ir.loops.end(),
                     [at](const DynamicLoop& loop) { return loop.begin < at && at < loop.end; });
}

/// A tile that can go, and where.
struct Candidate {
  std::int32_t buffer = -1;
  std::int64_t lastBefore = 0;  ///< its last use before the gap
  std::int64_t firstAfter = 0;  ///< its first use after it
  std::int64_t bytes = 0;
};

/// `base` + `suffix`, with a number after it when a buffer of `ir` already has that name: HBM
/// tensors of a program need distinct names, and a tile declared in a loop is one name for many
/// tiles, more than one of which may spill.
std::string unusedName(const KernelIR& ir, const std::string& base, const std::string& suffix) {
  auto taken = [&](const std::string& name) {
    return std::any_of(ir.buffers.begin(), ir.buffers.end(),
                       [&](const Buffer& b) { return b.name == name; });
  };
  std::string name = base + suffix;
  for (int n = 2; taken(name); ++n) {
    name = base + suffix + std::to_string(n);
  }
  return name;
}

/// Inserts `op` before index `at`, shifting the loops at or after it.
void insertOp(KernelIR& ir, std::int64_t at, Op op) {
  ir.ops.insert(ir.ops.begin() + at, std::move(op));
  for (DynamicLoop& loop : ir.loops) {
    if (loop.begin >= at) {
      ++loop.begin;
    }
    if (loop.end > at) {
      ++loop.end;
    }
  }
}

Op dmaOp(isa::AccessPattern dst, isa::AccessPattern src, const isa::SourceLocation& site) {
  isa::DmaCopy copy;
  copy.dst = std::move(dst);
  copy.src = std::move(src);
  Op op;
  op.instr.engine = isa::Engine::kSp;  // provisional, as for any DMA (the placement pass moves it)
  op.instr.body = copy;
  op.instr.location = site;
  op.origin = EngineOrigin::kRule;
  return op;
}

}  // namespace

bool coversWholeTile(const isa::AccessPattern& ap, const Buffer& buffer) {
  if (ap.partitionStart != 0 || ap.partitionCount != buffer.shape.front() ||
      ap.elementCount() != buffer.elementCount()) {
    return false;
  }
  for (int d = 0; d < ap.numDims; ++d) {
    if (ap.dims[static_cast<std::size_t>(d)].stride == 0) {
      return false;
    }
  }
  return true;
}

bool spillAcross(KernelIR& ir, std::int64_t first, std::int64_t last,
                 std::int64_t freeDimMaxCount) {
  const std::size_t count = ir.buffers.size();
  std::vector<std::vector<std::int64_t>> uses(count);
  std::vector<std::int64_t> firstWholeWrite(count, -1);
  for (std::size_t i = 0; i < ir.ops.size(); ++i) {
    forEachOperand(ir.ops[i].instr.body, [&](isa::FieldRole role, const isa::AccessPattern& ap) {
      const auto b = static_cast<std::size_t>(ap.tensor);
      std::vector<std::int64_t>& u = uses[b];
      if (u.empty() || u.back() != static_cast<std::int64_t>(i)) {
        u.push_back(static_cast<std::int64_t>(i));
      }
      if (role == isa::FieldRole::kOutput && firstWholeWrite[b] < 0 &&
          coversWholeTile(ap, ir.buffers[b])) {
        firstWholeWrite[b] = static_cast<std::int64_t>(i);
      }
    });
  }
  std::optional<Candidate> best;
  for (std::size_t b = 0; b < count; ++b) {
    const Buffer& buffer = ir.buffers[b];
    if (buffer.memory != isa::Memory::kSbuf || buffer.address || uses[b].size() < 2 ||
        buffer.elementCount() / buffer.shape.front() > freeDimMaxCount) {
      continue;
    }
    const std::vector<std::int64_t>& u = uses[b];
    // The gap around [first, last]: the last use before first and the first one after last.
    const auto after = std::upper_bound(u.begin(), u.end(), last);
    if (after == u.begin() || after == u.end() || *(after - 1) >= first) {
      continue;
    }
    Candidate c{static_cast<std::int32_t>(b), *(after - 1), *after, buffer.partitionBytes()};
    if (firstWholeWrite[b] < 0 || firstWholeWrite[b] > c.lastBefore ||
        insideLoop(ir, c.lastBefore + 1) || insideLoop(ir, c.firstAfter)) {
      continue;
    }
    if (!best || c.bytes > best->bytes ||
        (c.bytes == best->bytes &&
         c.firstAfter - c.lastBefore > best->firstAfter - best->lastBefore)) {
      best = c;
    }
  }
  if (!best) {
    return false;
  }
  const Buffer tile = ir.buffers[static_cast<std::size_t>(best->buffer)];
  Buffer scratch = tile;
  scratch.name = unusedName(ir, tile.name, "_spilled");
  scratch.memory = isa::Memory::kHbm;
  scratch.hbmKind = isa::TensorKind::kScratch;
  scratch.address.reset();
  scratch.placement.reset();
  Buffer reloaded = tile;
  reloaded.name = tile.name + "_reloaded";
  const auto scratchId = static_cast<std::int32_t>(ir.buffers.size());
  const auto reloadedId = scratchId + 1;
  ir.buffers.push_back(scratch);
  ir.buffers.push_back(reloaded);
  // The later instructions read (and write) the reloaded tile.
  for (std::size_t i = static_cast<std::size_t>(best->firstAfter); i < ir.ops.size(); ++i) {
    forEachOperand(ir.ops[i].instr.body, [&](isa::FieldRole, isa::AccessPattern& ap) {
      if (ap.tensor == best->buffer) {
        ap.tensor = reloadedId;
      }
    });
  }
  const isa::AccessPattern hbm =
      wholeBuffer(ir.buffers[static_cast<std::size_t>(scratchId)], scratchId);
  insertOp(ir, best->firstAfter, dmaOp(wholeBuffer(reloaded, reloadedId), hbm, tile.site));
  insertOp(ir, best->lastBefore + 1, dmaOp(hbm, wholeBuffer(tile, best->buffer), tile.site));
  return true;
}

}  // namespace trn::kernel
