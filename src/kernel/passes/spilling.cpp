#include "passes/spilling.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>

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

Op dmaOp(isa::AccessPattern dst, isa::AccessPattern src, Site site) {
  isa::DmaCopy copy;
  copy.dst = std::move(dst);
  copy.src = std::move(src);
  Op op;
  op.instr.engine = isa::Engine::kSp;  // provisional, as for any DMA (the placement pass moves it)
  op.instr.body = copy;
  op.site = site;
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

SpillPlanner::SpillPlanner(const KernelIR& ir, std::int64_t freeDimMaxCount)
    : ir_(ir), freeDimMaxCount_(freeDimMaxCount) {}

void SpillPlanner::index() {
  indexed_ = true;
  const std::size_t count = ir_.buffers.size();
  uses_.assign(count, {});
  writes_.assign(count, {});
  firstWholeWrite_.assign(count, -1);
  std::vector<std::int64_t> writerOps(count, 0);
  std::vector<std::int64_t> writer(count, -1);
  for (std::size_t i = 0; i < ir_.ops.size(); ++i) {
    const auto op = static_cast<std::int64_t>(i);
    forEachOperand(ir_.ops[i].instr.body, [&](isa::FieldRole role, const isa::AccessPattern& ap) {
      const auto b = static_cast<std::size_t>(ap.tensor);
      if (uses_[b].empty() || uses_[b].back() != op) {
        uses_[b].push_back(op);
        writes_[b].push_back(0);
      }
      if (role != isa::FieldRole::kOutput) {
        return;
      }
      if (writes_[b].back() == 0) {
        writes_[b].back() = 1;
        ++writerOps[b];
        writer[b] = op;
      }
      if (firstWholeWrite_[b] < 0 && coversWholeTile(ap, ir_.buffers[b])) {
        firstWholeWrite_[b] = op;
      }
    });
  }
  sourceLoad_.assign(count, -1);
  for (std::size_t b = 0; b < count; ++b) {
    if (writerOps[b] != 1) {
      continue;
    }
    const auto* load =
        std::get_if<isa::DmaCopy>(&ir_.ops[static_cast<std::size_t>(writer[b])].instr.body);
    if (load != nullptr && load->dst.tensor == static_cast<std::int32_t>(b) &&
        load->src.memory == isa::Memory::kHbm && coversWholeTile(load->dst, ir_.buffers[b])) {
      sourceLoad_[b] = writer[b];
    }
  }
  inLoop_.assign(ir_.ops.size() + 1, 0);
  for (const DynamicLoop& loop : ir_.loops) {
    for (std::int64_t at = loop.begin + 1; at < loop.end; ++at) {
      inLoop_[static_cast<std::size_t>(at)] = 1;
    }
  }
}

std::optional<SpillGap> SpillPlanner::gapAround(std::int32_t tile, std::int64_t first,
                                                std::int64_t last) {
  if (!indexed_) {
    index();
  }
  const auto buffers = static_cast<std::int32_t>(ir_.buffers.size());
  const TileUses t =
      tile < buffers ? TileUses{tile, 0} : reloaded_[static_cast<std::size_t>(tile - buffers)];
  const auto origin = static_cast<std::size_t>(t.origin);
  const Buffer& buffer = ir_.buffers[origin];
  if (buffer.memory != isa::Memory::kSbuf || buffer.address) {
    return std::nullopt;
  }
  const std::vector<std::int64_t>& uses = uses_[origin];
  const auto from = uses.begin() + static_cast<std::ptrdiff_t>(t.fromUse);
  const auto after = std::lower_bound(
      from, uses.end(), first, [](std::int64_t use, std::int64_t time) { return 2 * use < time; });
  if (after == from || after == uses.end() || 2 * *after <= last) {
    return std::nullopt;
  }
  SpillGap gap{*(after - 1), *after, false, -1};
  if (inLoop_[static_cast<std::size_t>(gap.lastBefore + 1)] != 0 ||
      inLoop_[static_cast<std::size_t>(gap.firstAfter)] != 0) {
    return std::nullopt;
  }
  const std::int64_t load = sourceLoad_[origin];
  const bool sourceHolds = load >= 0 && !writtenBetween(load, gap.firstAfter);
  const auto written = writes_[origin].begin();
  const bool clean = tile < buffers ? sourceHolds
                                    : std::none_of(written + static_cast<std::ptrdiff_t>(t.fromUse),
                                                   written + (after - uses.begin()),
                                                   [](std::uint8_t w) { return w != 0; });
  if (clean && sourceHolds) {
    gap.sourceLoad = load;
    return gap;
  }
  if (buffer.elementCount() / buffer.shape.front() > freeDimMaxCount_) {
    return std::nullopt;
  }
  if (!clean) {
    // A store of the original tile must read only written bytes; a reloaded one is whole.
    const std::int64_t whole = firstWholeWrite_[origin];
    if (tile < buffers && (whole < 0 || whole > gap.lastBefore)) {
      return std::nullopt;
    }
    gap.store = true;
  }
  return gap;
}

bool SpillPlanner::writtenBetween(std::int64_t load, std::int64_t reload) const {
  const std::int32_t source =
      std::get<isa::DmaCopy>(ir_.ops[static_cast<std::size_t>(load)].instr.body).src.tensor;
  const std::vector<std::int64_t>& uses = uses_[static_cast<std::size_t>(source)];
  const std::vector<std::uint8_t>& writes = writes_[static_cast<std::size_t>(source)];
  for (auto k = static_cast<std::size_t>(std::upper_bound(uses.begin(), uses.end(), load) -
                                         uses.begin());
       k < uses.size() && uses[k] < reload; ++k) {
    if (writes[k] != 0) {
      return true;
    }
  }
  return false;
}

std::vector<std::int64_t> SpillPlanner::usesOf(std::int32_t tile) {
  if (!indexed_) {
    index();
  }
  const auto buffers = static_cast<std::int32_t>(ir_.buffers.size());
  const std::size_t from =
      tile < buffers ? 0 : reloaded_[static_cast<std::size_t>(tile - buffers)].fromUse;
  const std::vector<std::int64_t>& uses = uses_[static_cast<std::size_t>(originOf(tile))];
  return {uses.begin() + static_cast<std::ptrdiff_t>(from), uses.end()};
}

std::int32_t SpillPlanner::originOf(std::int32_t tile) const {
  const auto buffers = static_cast<std::int32_t>(ir_.buffers.size());
  return tile < buffers ? tile : reloaded_[static_cast<std::size_t>(tile - buffers)].origin;
}

std::int32_t SpillPlanner::plan(std::int32_t tile, const SpillGap& gap) {
  const auto buffers = static_cast<std::int32_t>(ir_.buffers.size());
  const std::int32_t origin = originOf(tile);
  const std::vector<std::int64_t>& uses = uses_[static_cast<std::size_t>(origin)];
  const auto fromUse = static_cast<std::size_t>(
      std::lower_bound(uses.begin(), uses.end(), gap.firstAfter) - uses.begin());
  const auto reload = buffers + static_cast<std::int32_t>(reloaded_.size());
  reloaded_.push_back(TileUses{origin, fromUse});
  planned_.push_back(PlannedSpill{tile, reload, gap});
  return reload;
}

SpillTraffic applySpills(KernelIR& ir, const std::vector<PlannedSpill>& planned) {
  const auto buffers = static_cast<std::int32_t>(ir.buffers.size());
  SpillTraffic traffic;
  // Per spill, the buffer whose uses the spilled tile takes; per such buffer, its reloads in
  // order of first use, and the scratch tensor of the ones stored.
  std::vector<std::int32_t> originOf;
  std::map<std::int32_t, std::vector<std::pair<std::int64_t, std::int32_t>>> lineage;
  std::map<std::int32_t, std::int32_t> scratchOf;
  for (const PlannedSpill& s : planned) {
    const std::int32_t origin =
        s.tile < buffers ? s.tile : originOf[static_cast<std::size_t>(s.tile - buffers)];
    originOf.push_back(origin);
    lineage[origin].emplace_back(s.gap.firstAfter, s.reload);
    Buffer reloaded = ir.buffers[static_cast<std::size_t>(origin)];
    if (!reloaded.name.ends_with("_reloaded")) {
      reloaded.name += "_reloaded";
    }
    reloaded.placement.reset();
    ir.buffers.push_back(std::move(reloaded));
  }
  for (std::size_t k = 0; k < planned.size(); ++k) {
    const std::int32_t origin = originOf[k];
    if (planned[k].gap.sourceLoad >= 0 || scratchOf.contains(origin)) {
      continue;
    }
    const Buffer& tile = ir.buffers[static_cast<std::size_t>(origin)];
    Buffer scratch = tile;
    scratch.name = unusedName(ir, tile.name, "_spilled");
    scratch.memory = isa::Memory::kHbm;
    scratch.hbmKind = isa::TensorKind::kScratch;
    scratch.address.reset();
    scratch.placement.reset();
    scratchOf[origin] = static_cast<std::int32_t>(ir.buffers.size());
    ir.buffers.push_back(std::move(scratch));
  }
  for (auto& [origin, reloads] : lineage) {
    std::sort(reloads.begin(), reloads.end());
  }
  // The later uses read the reloaded tiles.
  for (std::size_t i = 0; i < ir.ops.size(); ++i) {
    forEachOperand(ir.ops[i].instr.body, [&](isa::FieldRole, isa::AccessPattern& ap) {
      const auto it = lineage.find(ap.tensor);
      if (it == lineage.end()) {
        return;
      }
      const auto at = std::upper_bound(
          it->second.begin(), it->second.end(),
          std::make_pair(static_cast<std::int64_t>(i), std::numeric_limits<std::int32_t>::max()));
      if (at != it->second.begin()) {
        ap.tensor = (at - 1)->second;
      }
    });
  }
  // The stores go after the last use before each gap, the reloads before the first use after.
  struct Inserted {
    std::int64_t before;
    int order;  ///< stores first
    Op op;
  };
  std::vector<Inserted> inserted;
  for (std::size_t k = 0; k < planned.size(); ++k) {
    const PlannedSpill& s = planned[k];
    const Buffer& tile = ir.buffers[static_cast<std::size_t>(originOf[k])];
    const std::int64_t bytes = tile.elementCount() * byteSize(tile.dtype);
    const Buffer& reloaded = ir.buffers[static_cast<std::size_t>(s.reload)];
    if (s.gap.sourceLoad >= 0) {
      Op load = ir.ops[static_cast<std::size_t>(s.gap.sourceLoad)];
      std::get<isa::DmaCopy>(load.instr.body).dst.tensor = s.reload;
      inserted.push_back(Inserted{s.gap.firstAfter, 1, std::move(load)});
      traffic.bytes += bytes;
      ++traffic.spills;
      continue;
    }
    const std::int32_t scratchId = scratchOf.at(originOf[k]);
    const isa::AccessPattern hbm =
        wholeBuffer(ir.buffers[static_cast<std::size_t>(scratchId)], scratchId);
    if (s.gap.store) {
      inserted.push_back(
          Inserted{s.gap.lastBefore + 1, 0, dmaOp(hbm, wholeBuffer(tile, s.tile), tile.site)});
      traffic.bytes += bytes;
    }
    inserted.push_back(
        Inserted{s.gap.firstAfter, 1, dmaOp(wholeBuffer(reloaded, s.reload), hbm, tile.site)});
    traffic.bytes += bytes;
    ++traffic.spills;
  }
  std::stable_sort(inserted.begin(), inserted.end(), [](const Inserted& a, const Inserted& b) {
    return std::tie(a.before, a.order) < std::tie(b.before, b.order);
  });
  LargeVector<Op> ops;
  ops.reserve(ir.ops.size() + inserted.size());
  std::vector<std::int64_t> newIndex(ir.ops.size());
  auto next = inserted.begin();
  for (std::size_t i = 0; i < ir.ops.size(); ++i) {
    for (; next != inserted.end() && next->before == static_cast<std::int64_t>(i); ++next) {
      ops.push_back(std::move(next->op));
    }
    newIndex[i] = static_cast<std::int64_t>(ops.size());
    ops.push_back(std::move(ir.ops[i]));
  }
  for (DynamicLoop& loop : ir.loops) {
    loop.begin = newIndex[static_cast<std::size_t>(loop.begin)];
    loop.end = newIndex[static_cast<std::size_t>(loop.end - 1)] + 1;
  }
  ir.ops = std::move(ops);
  return traffic;
}

}  // namespace trn::kernel
