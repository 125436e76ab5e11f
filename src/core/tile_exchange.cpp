#include "tile_exchange.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace trn::core {

Status checkExchangeTiles(const isa::SendRecv& first, const isa::SendRecv& second) {
  if (first.src.dtype == second.dst.dtype &&
      first.src.elementCount() == second.dst.elementCount() &&
      second.src.dtype == first.dst.dtype &&
      second.src.elementCount() == first.dst.elementCount()) {
    return {};
  }
  return failedPrecondition(fmt::format(
      "sendrecv tiles do not match between the cores: {} {} elements go to {} {} elements and "
      "{} {} to {} {}",
      first.src.elementCount(), dtypeName(first.src.dtype), second.dst.elementCount(),
      dtypeName(second.dst.dtype), second.src.elementCount(), dtypeName(second.src.dtype),
      first.dst.elementCount(), dtypeName(first.dst.dtype)));
}

std::int64_t exchangeCrossingTime(const isa::SendRecv& first, const isa::SendRecv& second,
                                  const spec::ChipSpec& chip, const DmaModel& dma) {
  const std::int64_t maxBuffer = chip.core.dma.descriptors.maxBufferBytes.count();
  std::int64_t crossing = 0;
  for (const auto& [from, to] : {std::pair(&first, &second), std::pair(&second, &first)}) {
    isa::DmaCopy copy;
    copy.dst = to->dst;
    copy.src = from->src;
    crossing = std::max(crossing, dma.aloneTime(transferShape(isa::InstructionBody(copy), maxBuffer,
                                                              chip.core.dma)));
  }
  return crossing;
}

Status swapTiles(const std::array<ExchangeEnd, 2>& ends,
                 const std::function<std::string(std::size_t)>& describe) {
  std::array<std::vector<std::byte>, 2> tiles;
  for (std::size_t i = 0; i < 2; ++i) {
    const ExchangeEnd& e = ends[i];
    const isa::AccessPattern& src = e.instr->src;
    tiles[i].resize(static_cast<std::size_t>(src.elementCount() * byteSize(src.dtype)));
    if (Status s = e.core->readTile(e.engine, *e.seq, src, tiles[i]); !s.ok()) {
      return s.withContext(describe(i));
    }
  }
  for (std::size_t i = 0; i < 2; ++i) {
    const ExchangeEnd& e = ends[i];
    if (Status s = e.core->writeTile(e.engine, *e.seq, e.instr->dst, tiles[1 - i]); !s.ok()) {
      return s.withContext(describe(i));
    }
  }
  return {};
}

}  // namespace trn::core
