#include "trn/core/host_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace trn::core {
namespace {

constexpr std::uint64_t kPageBytes = 4096;

/// The span [begin, end) of bytes touched in one memory, grown access by access.
struct Span {
  std::int64_t begin = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = 0;

  void add(isa::AccessPattern::ByteRange range) {
    begin = std::min(begin, range.begin);
    end = std::max(end, range.end);
  }
  [[nodiscard]] std::uint64_t bytes() const {
    return end > begin ? static_cast<std::uint64_t>(end - begin) : 0;
  }
};

std::uint64_t roundUpToPages(std::uint64_t bytes) {
  return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
}

double gib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1u << 30); }

}  // namespace

HostMemoryNeed hostMemoryNeeded(const isa::Program& program, const isa::CoreLimits& limits,
                                bool poison) {
  std::vector<Span> tensors(program.tensors.size());
  Span sbuf;
  Span psum;
  std::int64_t sbufPartitions = 0;
  std::int64_t psumPartitions = 0;
  HostMemoryNeed need;
  for (const auto& stream : program.streams) {
    for (const isa::Instruction& instr : stream) {
      std::uint64_t staging = 0;
      std::visit(
          [&](const auto& body) {
            isa::forEachAccessPattern(body, [&](std::string_view, isa::FieldRole,
                                                const isa::AccessPattern& ap) {
              staging += static_cast<std::uint64_t>(ap.elementCount()) * sizeof(float);
              const isa::AccessPattern::ByteRange range = ap.byteRange();
              const std::int64_t partitionEnd = ap.partitionStart + ap.partitionCount;
              switch (ap.memory) {
                case isa::Memory::kHbm:
                  tensors[static_cast<std::size_t>(ap.tensor)].add(range);
                  break;
                case isa::Memory::kSbuf:
                  sbuf.add(range);
                  sbufPartitions = std::max(sbufPartitions, partitionEnd);
                  break;
                case isa::Memory::kPsum:
                  psum.add(range);
                  psumPartitions = std::max(psumPartitions, partitionEnd);
                  break;
              }
            });
          },
          instr.body);
      need.staging = std::max(need.staging, staging);
    }
  }
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const isa::TensorDecl& decl = program.tensors[t];
    const auto size = static_cast<std::uint64_t>(decl.byteSize());
    // Inputs are written in full before the run; outputs are read in full after it.
    const bool whole = decl.kind != isa::TensorKind::kScratch;
    need.hbm += whole ? size : std::min(size, roundUpToPages(tensors[t].bytes()) + kPageBytes);
  }
  const auto onChip = [](const Span& span, std::int64_t partitions, std::int64_t partitionBytes) {
    return static_cast<std::uint64_t>(partitions) *
           std::min(static_cast<std::uint64_t>(partitionBytes),
                    roundUpToPages(span.bytes()) + kPageBytes);
  };
  need.onChip = onChip(sbuf, sbufPartitions, limits.sbufPartitionBytes) +
                onChip(psum, psumPartitions, limits.psumPartitionBytes());
  need.shadow = poison ? need.hbm + need.onChip : 0;
  return need;
}

std::optional<std::uint64_t> availableHostMemory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t value = 0;
  std::string unit;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemAvailable:") {
      return value * 1024;  // the file counts kB
    }
  }
  return std::nullopt;
}

Status checkHostMemory(const isa::Program& program, const isa::CoreLimits& limits, bool poison) {
  const std::optional<std::uint64_t> available = availableHostMemory();
  if (!available) {
    return {};
  }
  const HostMemoryNeed need = hostMemoryNeeded(program, limits, poison);
  if (need.total() <= *available) {
    return {};
  }
  return outOfRange(fmt::format(
      "this functional run needs up to {:.3g} GiB of host memory (HBM tensors {:.3g} GiB, SBUF "
      "and PSUM {:.3g} GiB, poison shadow {:.3g} GiB, one instruction's operands {:.3g} GiB) but "
      "the host has {:.3g} GiB available; --mode timing-only computes no values and needs none",
      gib(need.total()), gib(need.hbm), gib(need.onChip), gib(need.shadow), gib(need.staging),
      gib(*available)));
}

}  // namespace trn::core
