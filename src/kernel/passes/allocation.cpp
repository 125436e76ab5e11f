// On-chip allocation: liveness intervals, multi-buffering by declaration site, first-fit
// placement in time order (see allocation.h for what it guarantees).
#include "passes/allocation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <tuple>

#include "passes/in_place.h"
#include "passes/operands.h"
#include "passes/spilling.h"

namespace trn::kernel {
namespace {

constexpr std::int64_t kUnused = -1;
/// Allocation passes that may plan spills before the allocation gives up: each pass but the last
/// spills the tiles it needs to; more are needed only when a rewrite changes what the allocator
/// sees (a bound on the compiler's search).
constexpr int kMaxSpillRounds = 8;

/// Which tiles may spill to make room for a tile that does not fit.
enum class SpillCandidates {
  /// Tiles unused over the whole lifetime of the tile that does not fit.
  kUnusedThroughout,
  /// Also, for a single tile, tiles unused where it starts but used again before it ends: it
  /// takes their space, and each comes back through its reload, placed (or made room for, or
  /// split again) when the allocation reaches that reload.
  kAlsoReturning,
};

/// A claim on a memory: bytes [lo, hi) of each partition during ops [first, last], for one tile
/// or for the ring of `slots` tiles declared at one line (tile k in slot k mod slots).
struct Claim {
  std::int32_t buffer;  ///< the tile, or the first tile of the ring
  std::int64_t first;
  std::int64_t last;
  std::int64_t size = 0;
  std::int64_t slots = 1;
  std::vector<std::int32_t> members;  ///< ring members in order of first use
  std::int64_t lo = 0;
  std::int64_t hi = 0;
};

std::int64_t alignUp(std::int64_t v, std::int64_t a) { return (v + a - 1) / a * a; }

/// Per buffer, when the space it is placed in is live. A tile whose space another tile takes
/// over (spaceOf, the in-place rule) has no space of its own (first is kUnused); the tile whose
/// space it is stays live until the last use of the last tile computed in place over it.
struct LiveRanges {
  std::vector<std::int64_t> first;
  std::vector<std::int64_t> last;
  std::vector<std::uint8_t> feedsPe;     ///< per buffer: an nc_matmul reads it
  std::vector<std::uint8_t> dmaTouched;  ///< per buffer: a DMA reads or writes it
  std::vector<std::int32_t> spaceOf;     ///< the tile whose space it is placed in (often itself)
  std::vector<std::int64_t> ownFirst;    ///< the tile's own first use
  std::vector<std::int64_t> ownLast;     ///< the tile's own last use
};

LiveRanges liveRanges(const KernelIR& ir) {
  LiveRanges r{std::vector<std::int64_t>(ir.buffers.size(), kUnused),
               std::vector<std::int64_t>(ir.buffers.size(), kUnused),
               std::vector<std::uint8_t>(ir.buffers.size(), 0),
               std::vector<std::uint8_t>(ir.buffers.size(), 0),
               {},
               {},
               {}};
  for (std::size_t i = 0; i < ir.ops.size(); ++i) {
    const bool matmul = std::holds_alternative<isa::NcMatmul>(ir.ops[i].instr.body);
    const bool dma = isa::info(ir.ops[i].instr.body).viaDma;
    forEachOperand(ir.ops[i].instr.body, [&](isa::FieldRole role, const isa::AccessPattern& ap) {
      const auto b = static_cast<std::size_t>(ap.tensor);
      if (matmul && role == isa::FieldRole::kInput) {
        r.feedsPe[b] = 1;
      }
      r.dmaTouched[b] |= static_cast<std::uint8_t>(dma);
      if (r.first[b] == kUnused) {
        r.first[b] = static_cast<std::int64_t>(i);
      }
      r.last[b] = static_cast<std::int64_t>(i);
    });
  }
  // An instruction in a dynamic loop runs again after the later ones of the body: tiles it
  // touches stay live over the whole loop.
  for (const DynamicLoop& loop : ir.loops) {
    for (std::size_t b = 0; b < ir.buffers.size(); ++b) {
      if (r.first[b] != kUnused && r.first[b] < loop.end && r.last[b] >= loop.begin) {
        r.first[b] = std::min(r.first[b], loop.begin);
        r.last[b] = std::max(r.last[b], loop.end - 1);
      }
    }
  }
  r.spaceOf = inPlaceSpaces(ir, r.first, r.last);
  r.ownFirst = r.first;
  r.ownLast = r.last;
  for (std::size_t b = 0; b < ir.buffers.size(); ++b) {
    const auto space = static_cast<std::size_t>(r.spaceOf[b]);
    if (space != b) {
      r.last[space] = std::max(r.last[space], r.last[b]);
      r.feedsPe[space] |= r.feedsPe[b];
      r.dmaTouched[space] |= r.dmaTouched[b];
      r.first[b] = kUnused;
    }
  }
  return r;
}

/// The number of slots a ring needs: at least bufs (or the number of tiles), and enough that
/// tile k is first used only after tile k - slots was last used; with `deep`, bufs times that
/// for a block of tiles the tensor engine reads, and one more for a ring of single tiles that DMA
/// loads and the tensor engine reads.
std::int64_t ringSlots(const std::vector<std::int32_t>& members, const LiveRanges& live, int bufs,
                       bool deep) {
  const auto count = static_cast<std::int64_t>(members.size());
  auto fits = [&](std::int64_t slots) {
    for (std::int64_t k = slots; k < count; ++k) {
      const auto tile = static_cast<std::size_t>(members[static_cast<std::size_t>(k)]);
      const auto previous = static_cast<std::size_t>(members[static_cast<std::size_t>(k - slots)]);
      if (live.first[tile] <= live.last[previous]) {
        return false;
      }
    }
    return true;
  };
  std::int64_t slots = std::min<std::int64_t>(bufs, count);
  while (!fits(slots)) {
    ++slots;
  }
  // A block of tiles live together that the tensor engine reads: bufs blocks of slots, so that
  // the next block loads while the tensor engine works through this one.
  const bool feedsPe = std::any_of(members.begin(), members.end(), [&](std::int32_t m) {
    return live.feedsPe[static_cast<std::size_t>(m)] != 0;
  });
  if (deep && slots > bufs && feedsPe) {
    slots = std::min<std::int64_t>(count, slots * bufs);
  } else if (deep && feedsPe && bufs > 1 &&  // one tile at a time, DMA-loaded: one more slot
             std::all_of(members.begin(), members.end(), [&](std::int32_t m) {
               return live.dmaTouched[static_cast<std::size_t>(m)] != 0;
             })) {
    slots = std::min<std::int64_t>(count, slots + 1);
  }
  return slots;
}

/// A tile's declaration site, memory, shape and dtype, compared in place (no copy per tile).
/// Only equal keys matter (the map is looked up, not walked), so sites compare by file index.
struct SiteKey {
  const Buffer* buffer;
  bool operator<(const SiteKey& other) const {
    const Buffer& a = *buffer;
    const Buffer& b = *other.buffer;
    return std::tie(a.site.file, a.site.line, a.memory, a.shape, a.dtype) <
           std::tie(b.site.file, b.site.line, b.memory, b.shape, b.dtype);
  }
};

/// The automatically placed, used tiles grouped by declaration site (one line, shape, dtype and
/// memory), each site's tiles in order of first use; sites in the order their first tile was
/// declared.
struct Sites {
  std::vector<std::int32_t> siteOf;  ///< per buffer; -1 for tiles of no site
  std::vector<std::vector<std::int32_t>> members;
  std::vector<isa::Memory> memory;
  std::vector<std::uint8_t> dmaTouched;  ///< a DMA loads or stores one of the site's tiles
};

Sites declarationSites(const KernelIR& ir, const LiveRanges& live) {
  std::map<SiteKey, std::size_t> index;
  Sites sites;
  sites.siteOf.assign(ir.buffers.size(), -1);
  for (std::size_t b = 0; b < ir.buffers.size(); ++b) {
    const Buffer& buf = ir.buffers[b];
    if (live.first[b] == kUnused || buf.address || buf.memory == isa::Memory::kHbm) {
      continue;
    }
    const auto [it, added] = index.emplace(SiteKey{&buf}, sites.members.size());
    if (added) {
      sites.members.emplace_back();
      sites.memory.push_back(buf.memory);
      sites.dmaTouched.push_back(0);
    }
    sites.members[it->second].push_back(static_cast<std::int32_t>(b));
    sites.siteOf[b] = static_cast<std::int32_t>(it->second);
    sites.dmaTouched[it->second] |= live.dmaTouched[b];
  }
  for (std::vector<std::int32_t>& members : sites.members) {
    std::stable_sort(members.begin(), members.end(), [&](std::int32_t a, std::int32_t b) {
      return live.first[static_cast<std::size_t>(a)] < live.first[static_cast<std::size_t>(b)];
    });
  }
  return sites;
}

/// How deep each declaration site is buffered: `bufs` for every site but the ones marked
/// single, which reuse each tile's space at once; `deep` adds the tensor engine's blocks.
struct Depths {
  int bufs = 1;
  bool deep = false;
  std::vector<std::uint8_t> single;  ///< per site
};

/// The claims of `memory`'s automatically placed tiles. The tiles of a site buffered bufs > 1
/// deep share one ring of min(bufs, tiles) slots (ringSlots) reserved from the first use of the
/// first tile to the last use of the last; every other tile is its own claim.
std::vector<Claim> automaticClaims(const KernelIR& ir, const LiveRanges& live, const Sites& sites,
                                   isa::Memory memory, const Depths& depths) {
  std::vector<Claim> claims;
  for (std::size_t s = 0; s < sites.members.size(); ++s) {
    if (sites.memory[s] != memory) {
      continue;
    }
    const std::vector<std::int32_t>& members = sites.members[s];
    if (depths.bufs == 1 || depths.single[s] != 0) {
      for (const std::int32_t id : members) {
        const auto b = static_cast<std::size_t>(id);
        claims.push_back(
            Claim{id, live.first[b], live.last[b], ir.buffers[b].partitionBytes(), 1, {id}});
      }
      continue;
    }
    Claim c{members.front(), live.first[static_cast<std::size_t>(members.front())], 0, 0, 1, {}};
    for (const std::int32_t m : members) {
      c.last = std::max(c.last, live.last[static_cast<std::size_t>(m)]);
    }
    c.slots = ringSlots(members, live, depths.bufs, depths.deep);
    c.size = alignUp(ir.buffers[static_cast<std::size_t>(c.buffer)].partitionBytes(),
                     kAllocationAlignment) *
             c.slots;
    c.members = members;
    claims.push_back(std::move(c));
  }
  std::sort(claims.begin(), claims.end(), [](const Claim& a, const Claim& b) {
    return std::tie(a.first, a.buffer) < std::tie(b.first, b.buffer);
  });
  return claims;
}

/// Heap order of claims: the one used first on top.
bool laterClaim(const Claim& a, const Claim& b) {
  return std::tie(a.first, a.buffer) > std::tie(b.first, b.buffer);
}

class Placer {
 public:
  Placer(const KernelIR& ir, isa::Memory memory, std::int64_t capacity, std::int64_t bankBytes)
      : ir_(ir), memory_(memory), capacity_(capacity), bankBytes_(bankBytes) {}

  /// After a failed run: the tile that did not fit and the tiles (first tile of a ring) that
  /// held the space it needed.
  [[nodiscard]] const std::vector<std::int32_t>& failedTiles() const { return failedTiles_; }

  /// Places every used tile of this memory; fills `placement` (byte offsets, grown for the
  /// tiles `spiller` reloads). With a spiller, a tile that does not fit makes room by spilling
  /// tiles live across it (spillFor). Times in claims are doubled op indices (spilling.h).
  Status run(const LiveRanges& live, const Sites& sites, const Depths& depths,
             std::vector<std::int64_t>& placement, std::int64_t& peak, SpillPlanner* spiller,
             SpillCandidates candidates = SpillCandidates::kUnusedThroughout) {
    spiller_ = spiller;
    candidates_ = candidates;
    std::vector<Claim> pinned;
    for (std::size_t b = 0; b < ir_.buffers.size(); ++b) {
      const Buffer& buf = ir_.buffers[b];
      if (buf.memory == memory_ && live.first[b] != kUnused && buf.address) {
        Claim c{static_cast<std::int32_t>(b),
                2 * live.first[b],
                2 * live.last[b],
                buf.partitionBytes(),
                1,
                {}};
        c.lo = buf.address->byte;
        c.hi = c.lo + c.size;
        pinned.push_back(c);
        placement[b] = c.lo;
        peak = std::max(peak, c.hi);
      }
    }
    std::vector<Claim> claims = automaticClaims(ir_, live, sites, memory_, depths);
    for (Claim& c : claims) {
      c.first *= 2;
      c.last *= 2;
    }
    const auto later = laterClaim;
    std::vector<Claim> reloads;  ///< a min-heap by first use: the spilled tiles' reloads
    std::vector<Claim> active;
    for (std::size_t next = 0; next < claims.size() || !reloads.empty();) {
      Claim c;
      if (!reloads.empty() && (next == claims.size() || later(claims[next], reloads.front()))) {
        std::pop_heap(reloads.begin(), reloads.end(), later);
        c = std::move(reloads.back());
        reloads.pop_back();
      } else {
        c = std::move(claims[next++]);
      }
      std::erase_if(active, [&](const Claim& a) { return a.last < c.first; });
      std::vector<Claim> busy = active;
      for (const Claim& p : pinned) {
        if (p.first <= c.last && c.first <= p.last) {
          busy.push_back(p);
        }
      }
      std::sort(busy.begin(), busy.end(),
                [](const Claim& a, const Claim& b) { return a.lo < b.lo; });
      const std::int64_t slot = slotBytes(c);
      c.size = slot * c.slots;
      auto lo = firstFit(busy, c.size, slot);
      if (!lo && spiller != nullptr) {
        lo = spillFor(c, busy, active, reloads, *spiller);
      }
      if (!lo) {
        return full(c, busy);
      }
      c.lo = *lo;
      c.hi = *lo + c.size;
      for (std::size_t k = 0; k < c.members.size(); ++k) {
        const auto member = static_cast<std::size_t>(c.members[k]);
        if (member >= placement.size()) {
          placement.resize(member + 1, kUnused);
        }
        placement[member] = c.lo + static_cast<std::int64_t>(k) % c.slots * slot;
      }
      peak = std::max(peak, c.hi);
      active.push_back(std::move(c));
    }
    return {};
  }

 private:
  /// The lowest legal start of `size` bytes that avoids `busy` (sorted by lo).
  [[nodiscard]] std::optional<std::int64_t> firstFit(const std::vector<Claim>& busy,
                                                     std::int64_t size, std::int64_t slot) const {
    std::int64_t at = 0;
    const std::int64_t align = bankBytes_ > 0 && slot <= bankBytes_
                                   ? std::max(slot, kAllocationAlignment)
                                   : kAllocationAlignment;
    auto legal = [&](std::int64_t v) {
      v = alignUp(v, align);
      if (bankBytes_ > 0) {
        if (size > bankBytes_) {
          v = alignUp(v, bankBytes_);
        } else if (v / bankBytes_ != (v + size - 1) / bankBytes_) {
          v = alignUp(v, bankBytes_);
        }
      }
      return v;
    };
    at = legal(at);
    for (const Claim& b : busy) {
      if (at + size <= b.lo) {
        break;
      }
      at = legal(std::max(at, b.hi));
    }
    if (at + size > capacity_) {
      return std::nullopt;
    }
    return at;
  }

  /// Bytes of one slot: aligned, and in PSUM a power of two within a bank (so no slot of a
  /// ring crosses a bank) or whole banks.
  [[nodiscard]] std::int64_t slotBytes(const Claim& c) const {
    const std::int64_t bytes =
        ir_.buffers[static_cast<std::size_t>(origin(c.buffer))].partitionBytes();
    if (bankBytes_ == 0) {
      return alignUp(bytes, kAllocationAlignment);
    }
    return bytes <= bankBytes_ ? std::max(std::bit_ceil(static_cast<std::uint64_t>(bytes)),
                                          static_cast<std::uint64_t>(kAllocationAlignment))
                               : alignUp(bytes, bankBytes_);
  }

  /// Makes room for `c` by spilling (spilling.h): first single tiles of `active` (held in
  /// `busy`) unused over c's lifetime (makeRoom); when the space they hold adds up to enough but
  /// lies scattered between tiles that stay, they are planned to spill and the run fails: the
  /// allocation runs again over the rewritten IR, where the tiles that stay are placed knowing
  /// the spilled ones end early. Else, when c is a reload, c itself is split across the latest gap
  /// between its uses that lets tiles unused until then make room for it (its next reload joins
  /// `reloads`, and it ends at the gap). Returns where `c` fits.
  std::optional<std::int64_t> spillFor(Claim& c, const std::vector<Claim>& busy,
                                       std::vector<Claim>& active, std::vector<Claim>& reloads,
                                       SpillPlanner& spiller) {
    const std::size_t planned = spiller.planned().size();
    if (auto lo = makeRoom(c, c.last, busy, active, reloads, spiller, true)) {
      return lo;
    }
    if (spiller.planned().size() > planned) {
      return std::nullopt;
    }
    if (c.slots == 1 && c.members.size() == 1 && spiller.originOf(c.buffer) != c.buffer) {
      const std::vector<std::int64_t> uses = spiller.usesOf(c.buffer);
      for (std::size_t k = uses.size(); k-- > 1;) {
        const std::int64_t end = 2 * uses[k - 1] + 1;
        if (2 * uses[k] > c.last || end < c.first) {
          continue;
        }
        const auto gap = spiller.gapAround(c.buffer, end, 2 * uses[k] - 1);
        if (!gap) {
          continue;
        }
        if (auto lo = makeRoom(c, end, busy, active, reloads, spiller, false)) {
          pushReload(c, *gap, reloads, spiller);
          c.last = end;
          return lo;
        }
      }
    }
    return std::nullopt;
  }

  /// Spills `claim` across `gap`: its reload's claim joins the heap `reloads`.
  static void pushReload(const Claim& claim, const SpillGap& gap, std::vector<Claim>& reloads,
                         SpillPlanner& spiller) {
    Claim back = claim;
    back.buffer = spiller.plan(claim.buffer, gap);
    back.members = {back.buffer};
    back.first = 2 * gap.firstAfter - 1;
    reloads.push_back(std::move(back));
    std::push_heap(reloads.begin(), reloads.end(), laterClaim);
  }

  /// Makes room for `c` over doubled times [c.first, last] by spilling single tiles of `active`
  /// unused over them (with kAlsoReturning and a single `c`, also ones unused at c.first and used
  /// again before `last`: their reloads find room when the allocation reaches them; not for a
  /// ring, which spans all its site's tiles, so a tile back within it gains nothing): the ones
  /// whose spill moves the fewest bytes first (a clean tile is reloaded with no store: half the
  /// traffic of a dirty one of its size), then the largest per partition, then the one with the
  /// longest gap; as few as let `c` fit. Each spilled tile's claim
  /// ends at its store. Returns where `c` fits; with `scattered`, when it does not (see spillFor),
  /// plans the spills anyway if they free enough bytes in all.
  std::optional<std::int64_t> makeRoom(const Claim& c, std::int64_t last,
                                       const std::vector<Claim>& busy, std::vector<Claim>& active,
                                       std::vector<Claim>& reloads, SpillPlanner& spiller,
                                       bool scattered) {
    struct Candidate {
      std::size_t active;
      SpillGap gap;
    };
    std::vector<Candidate> candidates;
    for (std::size_t a = 0; a < active.size(); ++a) {
      const Claim& claim = active[a];
      if (claim.slots != 1 || claim.members.size() != 1) {
        continue;
      }
      if (const auto gap = spiller.gapAround(claim.buffer, c.first, last)) {
        candidates.push_back(Candidate{a, *gap});
      } else if (candidates_ == SpillCandidates::kAlsoReturning && c.slots == 1 &&
                 c.members.size() == 1) {
        if (const auto returning = spiller.gapAround(claim.buffer, c.first, c.first)) {
          candidates.push_back(Candidate{a, *returning});
        }
      }
    }
    auto key = [&](const Candidate& x) {
      const Buffer& tile = ir_.buffers[static_cast<std::size_t>(origin(active[x.active].buffer))];
      const std::int64_t traffic =
          (x.gap.store ? 2 : 1) * tile.elementCount() * byteSize(tile.dtype);
      return std::make_tuple(traffic, -active[x.active].size, x.gap.lastBefore - x.gap.firstAfter,
                             x.active);
    };
    std::sort(candidates.begin(), candidates.end(),
              [&](const Candidate& x, const Candidate& y) { return key(x) < key(y); });
    const std::int64_t slot = slotBytes(c);
    auto fitsWithout = [&](const std::vector<std::uint8_t>& gone) {
      std::vector<Claim> left;
      for (const Claim& b : busy) {
        bool spilled = false;
        for (std::size_t k = 0; k < candidates.size() && !spilled; ++k) {
          spilled = gone[k] != 0 && active[candidates[k].active].buffer == b.buffer;
        }
        if (!spilled) {
          left.push_back(b);
        }
      }
      return firstFit(left, c.size, slot);
    };
    std::vector<std::uint8_t> gone(candidates.size(), 0);
    std::optional<std::int64_t> lo;
    for (std::size_t k = 0; k < candidates.size() && !lo; ++k) {
      gone[k] = 1;
      lo = fitsWithout(gone);
    }
    if (!lo) {
      if (scattered) {
        std::int64_t held = 0;
        for (const Claim& b : busy) {
          held += b.hi - b.lo;
        }
        std::size_t take = 0;
        for (; take < candidates.size() && capacity_ - held < c.size; ++take) {
          held -= active[candidates[take].active].size;
        }
        if (capacity_ - held >= c.size) {
          for (std::size_t k = 0; k < take; ++k) {
            spiller.plan(active[candidates[k].active].buffer, candidates[k].gap);
          }
        }
      }
      return std::nullopt;
    }
    // Keep the ones taken early that the later ones made unnecessary.
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      if (gone[k] == 0) {
        continue;
      }
      gone[k] = 0;
      if (const auto without = fitsWithout(gone)) {
        lo = without;
      } else {
        gone[k] = 1;
      }
    }
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      if (gone[k] != 0) {
        Claim& spilled = active[candidates[k].active];
        pushReload(spilled, candidates[k].gap, reloads, spiller);
        spilled.last = 2 * candidates[k].gap.lastBefore + 1;
      }
    }
    return lo;
  }

  /// The buffer whose uses tile `tile` takes (a tile the spiller reloads is not a buffer yet).
  [[nodiscard]] std::int32_t origin(std::int32_t tile) const {
    return spiller_ != nullptr ? spiller_->originOf(tile) : tile;
  }

  Status full(const Claim& c, const std::vector<Claim>& busy) {
    failedTiles_ = {origin(c.buffer)};
    for (const Claim& b : busy) {
      failedTiles_.push_back(origin(b.buffer));
    }
    const Buffer& buf = ir_.buffers[static_cast<std::size_t>(failedTiles_.front())];
    const std::int64_t size = c.size;
    std::vector<std::string> live;
    std::int64_t total = 0;
    for (const Claim& b : busy) {
      const Buffer& other = ir_.buffers[static_cast<std::size_t>(origin(b.buffer))];
      live.push_back(fmt::format("'{}' [{}] {}{} at bytes {}..{} ({})", other.name,
                                 fmt::join(other.shape, ", "), dtypeName(other.dtype),
                                 b.slots > 1 ? fmt::format(" x{} buffers", b.slots) : "", b.lo,
                                 b.hi, formatLocation(ir_, other.site)));
      total += b.hi - b.lo;
    }
    const std::string ring =
        c.slots > 1 ? fmt::format(" ({} buffers of the tiles declared at this line)", c.slots)
                    : std::string();
    return Status(ErrorCode::kOutOfRange,
                  fmt::format("{}: {} is full: tile '{}' [{}] {} needs {} bytes per partition{}, "
                              "and {} of the {} bytes per partition are held by {} live tiles "
                              "with no large enough gap: {}",
                              formatLocation(ir_, buf.site), isa::memoryName(memory_), buf.name,
                              fmt::join(buf.shape, ", "), dtypeName(buf.dtype), size, ring, total,
                              capacity_, live.size(), fmt::join(live, "; ")));
  }

  std::vector<std::int32_t> failedTiles_;
  const SpillPlanner* spiller_ = nullptr;
  SpillCandidates candidates_ = SpillCandidates::kUnusedThroughout;
  const KernelIR& ir_;
  isa::Memory memory_;
  std::int64_t capacity_;
  std::int64_t bankBytes_;  ///< PSUM bank size; 0 for SBUF
};

/// The next site to buffer single when every site multi-buffered does not fit: among the sites
/// of more than one tile, not yet single, that hold space where a tile did not fit (`failed`),
/// the one of the largest tiles, and among tiles of one size one no DMA touches (a loaded or
/// stored tile's second slot is what lets its transfer overlap the compute). So the small
/// per-iteration tiles keep their second slot longest. None when no such site is left.
std::optional<std::size_t> nextSingleSite(const KernelIR& ir, const Sites& sites,
                                          const Depths& depths,
                                          const std::vector<std::int32_t>& failed) {
  std::optional<std::size_t> next;
  auto key = [&](std::size_t s) {
    const auto first = static_cast<std::size_t>(sites.members[s].front());
    return std::make_tuple(-ir.buffers[first].partitionBytes(), sites.dmaTouched[s], s);
  };
  for (const std::int32_t tile : failed) {
    const std::int32_t site = sites.siteOf[static_cast<std::size_t>(tile)];
    if (site < 0) {
      continue;
    }
    const auto s = static_cast<std::size_t>(site);
    if (sites.members[s].size() > 1 && depths.single[s] == 0 && (!next || key(s) < key(*next))) {
      next = s;
    }
  }
  return next;
}

/// The allocation with spills chosen among `candidates`. When it comes to spilling, `unspilled`
/// (if given) receives the IR as it was before any spill.
Result<AllocationSummary> allocateWith(KernelIR& ir, const isa::CoreLimits& limits, int bufs,
                                       SpillCandidates candidates,
                                       std::optional<KernelIR>* unspilled) {
  TRN_CHECK(!ir.allocated) << "allocation runs once";
  LiveRanges live = liveRanges(ir);
  Sites sites = declarationSites(ir, live);
  AllocationSummary summary;
  std::vector<std::int64_t> placement(ir.buffers.size(), kUnused);
  Status status;
  // Deeper PE blocks first, then plain multi-buffering, then multi-buffering with the sites of
  // the memory that did not fit made single one at a time (nextSingleSite), then spilling with
  // the sites still multi-buffered kept so, then single buffering with spilling. A pass that
  // plans spills applies them, and the allocation runs again over the rewritten IR (the last
  // pass then places every tile with no new spill).
  Depths depths{std::max(bufs, 1), bufs > 1, std::vector<std::uint8_t>(sites.members.size(), 0)};
  bool spilling = false;
  int spillRounds = 0;
  auto keepUnspilled = [&] {
    if (unspilled != nullptr && !*unspilled) {
      *unspilled = ir;
    }
  };
  for (;;) {
    summary.sbufPeakBytes = 0;
    summary.psumPeakBytes = 0;
    Placer sbuf(ir, isa::Memory::kSbuf, limits.sbufPartitionBytes, 0);
    Placer psum(ir, isa::Memory::kPsum, limits.psumPartitionBytes(), limits.psumBankBytes);
    std::optional<SpillPlanner> spiller;
    if (spilling) {
      spiller.emplace(ir, limits.freeDimMaxCount);
    }
    status = sbuf.run(live, sites, depths, placement, summary.sbufPeakBytes,
                      spiller ? &*spiller : nullptr, candidates);
    const bool sbufFull = !status.ok();
    if (status.ok()) {
      status = psum.run(live, sites, depths, placement, summary.psumPeakBytes, nullptr);
    }
    if (spiller && !spiller->planned().empty() && spillRounds < kMaxSpillRounds) {
      ++spillRounds;
      const std::vector<PlannedSpill> planned = spiller->planned();
      spiller.reset();
      const SpillTraffic traffic = applySpills(ir, planned);
      summary.spills += traffic.spills;
      summary.spillBytes += traffic.bytes;
      live = liveRanges(ir);
      sites = declarationSites(ir, live);
      // A reloaded tile is of its tile's site, which stays single as it was when spilled.
      // Sites keep their indices (numbered in buffer order; the spills only append buffers).
      std::vector<std::uint8_t> single(sites.members.size(), depths.bufs == 1 ? 1 : 0);
      std::copy_n(depths.single.begin(), std::min(depths.single.size(), single.size()),
                  single.begin());
      for (const PlannedSpill& s : planned) {
        const std::int32_t site = sites.siteOf[static_cast<std::size_t>(s.reload)];
        if (site >= 0) {
          single[static_cast<std::size_t>(site)] = 1;
        }
      }
      depths.single = std::move(single);
      placement.assign(ir.buffers.size(), kUnused);
      continue;
    }
    if (status.ok()) {
      break;
    }
    if (depths.deep) {
      depths.deep = false;
      continue;
    }
    if (depths.bufs > 1) {
      const auto site = nextSingleSite(ir, sites, depths, (sbufFull ? sbuf : psum).failedTiles());
      if (site) {
        depths.single[*site] = 1;
      } else if (sbufFull && !spilling) {
        spilling = true;
        keepUnspilled();
      } else {
        depths.bufs = 1;
      }
      continue;
    }
    if (sbufFull && !spilling) {
      spilling = true;
      keepUnspilled();
      continue;
    }
    break;
  }
  summary.bufs = depths.bufs;
  if (depths.bufs > 1) {
    summary.singleSites =
        static_cast<int>(std::count(depths.single.begin(), depths.single.end(), 1));
  }
  TRN_RETURN_IF_ERROR(status);
  for (std::size_t b = 0; b < ir.buffers.size(); ++b) {
    Buffer& buf = ir.buffers[b];
    const std::int64_t at = placement[static_cast<std::size_t>(live.spaceOf[b])];
    if (live.ownFirst[b] != kUnused && at != kUnused) {
      buf.placement = Address{buf.address ? buf.address->partition : 0, at};
      summary.tiles.push_back(TilePlacement{static_cast<std::int32_t>(b), *buf.placement,
                                            buf.partitionBytes(), live.ownFirst[b],
                                            live.ownLast[b]});
    }
  }
  for (Op& op : ir.ops) {
    forEachOperand(op.instr.body, [&](isa::FieldRole, isa::AccessPattern& ap) {
      const Buffer& buf = ir.buffers[static_cast<std::size_t>(ap.tensor)];
      if (buf.memory != isa::Memory::kHbm) {
        ap.partitionStart += buf.placement->partition;
        ap.offset += buf.placement->byte;
      }
    });
  }
  ir.allocated = true;
  return summary;
}

}  // namespace

Result<AllocationSummary> allocateOnChip(KernelIR& ir, const isa::CoreLimits& limits, int bufs) {
  std::optional<KernelIR> unspilled;
  Result<AllocationSummary> throughout =
      allocateWith(ir, limits, bufs, SpillCandidates::kUnusedThroughout, &unspilled);
  if (!unspilled) {
    return throughout;
  }
  // The spills of each candidate rule, planned greedily tile by tile, may cost more in all: the
  // program keeps the plan whose stores and reloads move fewer bytes (the first on a tie).
  Result<AllocationSummary> returning =
      allocateWith(*unspilled, limits, bufs, SpillCandidates::kAlsoReturning, nullptr);
  if (returning.ok() && (!throughout.ok() || returning->spillBytes < throughout->spillBytes)) {
    ir = std::move(*unspilled);
    return returning;
  }
  return throughout;
}

}  // namespace trn::kernel
