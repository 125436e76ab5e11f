#include "trn/isa/chip_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <set>
#include <thread>

#include "field_codec.h"
#include "trn/base/file_reader.h"
#include "trn/isa/program_binary.h"

namespace trn::isa {
namespace {

/// Why `chip` cannot be a chip program, or OK.
Status checkChip(const ChipProgram& chip) {
  if (chip.cores.empty() || chip.cores.size() > kMaxChipProgramCores) {
    return invalidArgument(fmt::format("a chip program has 1 to {} cores; this one has {}",
                                       kMaxChipProgramCores, chip.cores.size()));
  }
  if (chip.lnc < 1 || static_cast<std::uint32_t>(chip.lnc) > kMaxLogicalCoreSize) {
    return invalidArgument(fmt::format("a logical core has 1 to {} physical cores; LNC {} given",
                                       kMaxLogicalCoreSize, chip.lnc));
  }
  std::set<int> seen;
  std::size_t instructions = 0;
  for (const ChipProgram::Core& core : chip.cores) {
    if (core.physicalCore < 0 ||
        static_cast<std::size_t>(core.physicalCore) >= kMaxChipProgramCores) {
      return invalidArgument(fmt::format("physical core {} is outside 0..{}", core.physicalCore,
                                         kMaxChipProgramCores - 1));
    }
    if (!seen.insert(core.physicalCore).second) {
      return invalidArgument(fmt::format("physical core {} has two programs", core.physicalCore));
    }
    instructions += core.program.instructionCount();
    if (instructions > kMaxChipProgramInstructions) {
      return invalidArgument(fmt::format("the programs hold more than {} instructions together",
                                         kMaxChipProgramInstructions));
    }
  }
  return {};
}

}  // namespace

Result<std::vector<std::byte>> encodeChipProgram(const ChipProgram& chip) {
  TRN_RETURN_IF_ERROR(checkChip(chip));
  if (chip.cores.size() == 1 && chip.cores.front().physicalCore == 0 && chip.lnc == 1) {
    return encodeProgram(chip.cores.front().program, chip.programVersion);
  }
  std::vector<std::byte> out;
  codec::Writer w(out);
  codec::writeHeader(w, kChipProgramFormatVersion);
  w.put(static_cast<std::uint32_t>(chip.lnc));
  w.put(static_cast<std::uint32_t>(chip.cores.size()));
  for (const ChipProgram::Core& core : chip.cores) {
    TRN_ASSIGN_OR_RETURN(const std::vector<std::byte> program,
                         encodeProgram(core.program, chip.programVersion));
    w.put(static_cast<std::uint32_t>(core.physicalCore));
    w.put(static_cast<std::uint64_t>(program.size()));
    out.insert(out.end(), program.begin(), program.end());
  }
  return out;
}

Result<ChipProgram> decodeChipProgram(std::span<const std::byte> bytes, std::string_view name) {
  return decodeChipProgram(MemoryByteSource(bytes), name);
}

Result<ChipProgram> decodeChipProgram(const ByteSource& source, std::string_view name) {
  // The head (magic, version, LNC, core count) and each core's record (physical core, length)
  // are read by range, at most as many bytes as the source holds, each through a Reader placed
  // at its offset so that errors give the byte of the whole file.
  FileBytes buffer;
  const std::uint64_t size = source.size();
  const auto readAt = [&](std::uint64_t offset, std::size_t want) {
    return source.read(
        offset, static_cast<std::size_t>(std::min<std::uint64_t>(want, size - offset)), buffer);
  };
  constexpr std::size_t kHeadBytes = codec::kProgramMagic.size() + 3 * sizeof(std::uint32_t);
  TRN_ASSIGN_OR_RETURN(const std::span<const std::byte> head, readAt(0, kHeadBytes));
  codec::Reader r(head, name);
  TRN_ASSIGN_OR_RETURN(const std::uint32_t version, codec::readHeader(r, name));
  ChipProgram chip;
  if (version == kFixedProgramFormatVersion || version == kCompactProgramFormatVersion) {
    TRN_ASSIGN_OR_RETURN(const std::span<const std::byte> whole, readAt(0, size));
    TRN_ASSIGN_OR_RETURN(Program program, decodeProgram(whole, name));
    chip.cores.push_back({0, std::move(program)});
    chip.programVersion = version;
    return chip;
  }
  if (version != kChipProgramFormatVersion) {
    return unsupported(
        fmt::format("{}: program format version {} is not supported (this trnsim "
                    "reads versions {}, {} and {})",
                    name, version, kFixedProgramFormatVersion, kChipProgramFormatVersion,
                    kCompactProgramFormatVersion));
  }
  std::uint32_t lnc = 0;
  std::uint32_t count = 0;
  TRN_RETURN_IF_ERROR(r.get(lnc));
  if (lnc < 1 || lnc > kMaxLogicalCoreSize) {
    return r.error(
        fmt::format("LNC {}; a logical core has 1 to {} physical cores", lnc, kMaxLogicalCoreSize));
  }
  TRN_RETURN_IF_ERROR(r.get(count));
  if (count < 1 || count > kMaxChipProgramCores) {
    return r.error(
        fmt::format("{} cores; a chip program has 1 to {}", count, kMaxChipProgramCores));
  }
  chip.lnc = static_cast<int>(lnc);
  // The core records are read first; the programs are then read and decoded on a thread each (up
  // to the host's cores), against one instruction budget, and their errors reported in core
  // order. A file is never held whole: each thread reads the programs it decodes.
  struct Embedded {
    int physical;
    std::uint64_t at;
    std::size_t length;
    std::string name;
  };
  std::vector<Embedded> embedded;
  std::optional<std::uint32_t> firstVersion;
  std::uint64_t offset = r.position();
  for (std::uint32_t i = 0; i < count; ++i) {
    TRN_ASSIGN_OR_RETURN(const std::span<const std::byte> recordBytes,
                         readAt(offset, sizeof(std::uint32_t) + sizeof(std::uint64_t)));
    codec::Reader record(recordBytes, name, offset);
    std::uint32_t physical = 0;
    std::uint64_t length = 0;
    TRN_RETURN_IF_ERROR(record.get(physical));
    if (physical >= kMaxChipProgramCores) {
      return record.error(
          fmt::format("physical core {}; cores are 0 to {}", physical, kMaxChipProgramCores - 1));
    }
    for (const Embedded& earlier : embedded) {
      if (earlier.physical == static_cast<int>(physical)) {
        return record.error(fmt::format("physical core {} has two programs", physical));
      }
    }
    TRN_RETURN_IF_ERROR(record.get(length));
    const std::uint64_t at = offset + record.position();
    if (length > size - at) {
      return record.error(
          fmt::format("the program of physical core {} claims {} bytes; {} are left", physical,
                      length, size - at));
    }
    // All cores' programs share one format version, so that the chip re-encodes as it was read.
    TRN_ASSIGN_OR_RETURN(const std::span<const std::byte> programHead,
                         readAt(at, std::min<std::uint64_t>(length, kHeadBytes)));
    codec::Reader header(programHead, name);
    // (A version no reader knows is the embedded decoder's to report.)
    if (const Result<std::uint32_t> embeddedVersion = codec::readHeader(header, name);
        embeddedVersion.ok() && (*embeddedVersion == kFixedProgramFormatVersion ||
                                 *embeddedVersion == kCompactProgramFormatVersion)) {
      if (!firstVersion) {
        firstVersion = *embeddedVersion;
        chip.programVersion = *embeddedVersion;
      } else if (*embeddedVersion != chip.programVersion) {
        return record.errorAt(record.position(),
                              fmt::format("the program of physical core {} is format version {}, "
                                          "an earlier core's {}; a chip program uses one",
                                          physical, *embeddedVersion, chip.programVersion));
      }
    }
    embedded.push_back({static_cast<int>(physical), at, static_cast<std::size_t>(length),
                        fmt::format("{} (core {} at byte {})", name, physical, at)});
    offset = at + length;
  }
  if (offset != size) {
    return codec::Reader({}, name, offset)
        .error(fmt::format("{} bytes after the last core's program", size - offset));
  }
  InstructionBudget budget(kMaxChipProgramInstructions);
  std::vector<std::optional<Result<Program>>> programs(embedded.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    FileBytes programBytes;  // reused for each program this thread reads
    for (std::size_t c = next++; c < embedded.size(); c = next++) {
      const Embedded& core = embedded[c];
      if (budget.exceeded()) {
        programs[c].emplace(outOfRange("over the instruction budget"));
        continue;
      }
      const Result<std::span<const std::byte>> bytes =
          source.read(core.at, core.length, programBytes);
      programs[c].emplace(bytes.ok() ? decodeProgram(*bytes, core.name, &budget)
                                     : Result<Program>(bytes.status()));
    }
  };
  {
    const std::size_t threads =
        std::min<std::size_t>(embedded.size(), std::max(1U, std::thread::hardware_concurrency()));
    std::vector<std::jthread> pool;
    for (std::size_t t = 1; t < threads; ++t) {
      pool.emplace_back(work);
    }
    work();
  }
  if (budget.exceeded()) {
    return invalidArgument(fmt::format("{}: the programs hold more than {} instructions together",
                                       name, kMaxChipProgramInstructions));
  }
  for (std::size_t c = 0; c < embedded.size(); ++c) {
    if (!programs[c]->ok()) {
      return programs[c]->status();
    }
    chip.cores.push_back({embedded[c].physical, std::move(*programs[c]).value()});
  }
  return chip;
}

}  // namespace trn::isa
