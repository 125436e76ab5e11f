#include "compact_streams.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>

#include "packed_fields.h"

namespace trn::isa::compact {
namespace {

using packed::appendPacked;
using packed::CheckedUnpacker;
using packed::Packer;

/// Opcode, engine, wait and update counts, file index and line, one byte each at the least.
constexpr std::size_t kMinInstructionBytes = 6;
/// The most bytes of an instruction's head (opcode, engine, a count) and of one semaphore entry.
constexpr std::size_t kMaxHeadBytes = 3 + 1 + 10;
constexpr std::size_t kMaxSyncEntryBytes = 10 + 1 + 10;

constexpr auto kOpcodes = []<std::size_t... K>(std::index_sequence<K...>) {
  return std::array<std::uint16_t, sizeof...(K)>{
      std::variant_alternative_t<K, InstructionBody>::kInfo.opcode...};
}
(std::make_index_sequence<std::variant_size_v<InstructionBody>>());

/// Opcodes are below this (an engine group in the high byte, as instruction_set.h assigns them).
constexpr std::size_t kOpcodeLimit = 0x1000;
constexpr std::uint8_t kNoType = 0xff;
static_assert(kOpcodes.size() < kNoType && std::ranges::max(kOpcodes) < kOpcodeLimit);

/// The InstructionBody alternative of each opcode, or kNoType.
constexpr auto kTypeOfOpcode = [] {
  std::array<std::uint8_t, kOpcodeLimit> types{};
  types.fill(kNoType);
  for (std::size_t k = 0; k < kOpcodes.size(); ++k) {
    types[kOpcodes[k]] = static_cast<std::uint8_t>(k);
  }
  return types;
}();

template <typename Entry>
void appendSync(std::span<const Entry> entries, std::vector<std::byte>& out) {
  appendPacked<10>(out, [&](Packer& p) { p.varint(entries.size()); });
  for (const Entry& e : entries) {
    appendPacked<kMaxSyncEntryBytes>(out, [&](Packer& p) {
      p.signedVarint(e.semaphore);
      if constexpr (std::is_same_v<Entry, SemaphoreWait>) {
        packed::pack(e.compare, p);
      } else {
        packed::pack(e.op, p);
      }
      p.signedVarint(e.value);
    });
  }
}

}  // namespace

void encodeStreams(const Program& program, std::vector<std::byte>& out) {
  codec::Writer w(out);
  std::vector<std::string_view> files;
  std::unordered_map<std::string_view, std::uint32_t> fileIndex;
  for (const InstructionStream& stream : program.streams) {
    for (std::size_t i = 0; i < stream.size(); ++i) {
      const std::string_view file = stream.locationFile(i);
      if (fileIndex.emplace(file, static_cast<std::uint32_t>(files.size())).second) {
        files.push_back(file);
      }
    }
  }
  w.put(static_cast<std::uint32_t>(files.size()));
  for (const std::string_view file : files) {
    w.putString(file);
  }
  for (const InstructionStream& stream : program.streams) {
    w.put(static_cast<std::uint64_t>(stream.size()));
  }
  InstructionBody body;
  for (const InstructionStream& stream : program.streams) {
    for (std::size_t i = 0; i < stream.size(); ++i) {
      appendPacked<kMaxHeadBytes>(out, [&](Packer& p) {
        p.varint(stream.info(i).opcode);
        packed::pack(stream.engine(i), p);
      });
      appendSync(stream.waits(i), out);
      appendSync(stream.updates(i), out);
      appendPacked<20>(out, [&](Packer& p) {
        p.varint(fileIndex.at(stream.locationFile(i)));
        p.signedVarint(stream.locationLine(i));
      });
      stream.decodeBody(i, body);
      packed::packBody(body, out, /*fileForm=*/true);
    }
  }
}

namespace {

/// Reads a wait or update list into `entries`; false (with the problem in `u`) if it is longer
/// than the format allows.
template <typename Entry>
bool unpackSync(CheckedUnpacker& u, std::vector<Entry>& entries, std::size_t& count) {
  count = static_cast<std::size_t>(u.varint());
  if (count > ProgramLimits::kMaxSyncEntries) {
    return false;
  }
  entries.resize(count);
  for (Entry& e : entries) {
    e.semaphore = u.int32();
    if constexpr (std::is_same_v<Entry, SemaphoreWait>) {
      packed::unpack(u, e.compare);
    } else {
      packed::unpack(u, e.op);
    }
    e.value = u.int32();
  }
  return true;
}

}  // namespace

Status decodeStreams(codec::Reader& r, Program& program, InstructionBudget* budget) {
  std::uint32_t fileCount = 0;
  TRN_RETURN_IF_ERROR(r.get(fileCount));
  if (fileCount > r.remaining() / 4) {
    return r.error(fmt::format("{} source location files do not fit in the {} bytes left",
                               fileCount, r.remaining()));
  }
  // The encoder lists each file once, in the order instructions first use it, so that every
  // program has one encoding: the decoder holds the table to the same rule.
  std::vector<std::string> files(fileCount);
  std::unordered_map<std::string_view, std::size_t> seen;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const std::size_t nameAt = r.position();
    TRN_RETURN_IF_ERROR(
        r.getString(files[f], ProgramLimits::kMaxLocationFileBytes, "source location file name"));
    if (const auto [at, inserted] = seen.emplace(files[f], f); !inserted) {
      return r.error(fmt::format("source location files {} and {} are the same", at->second, f));
    }
    if (const Status form = checkLocationFileForm(files[f]); !form.ok()) {
      return r.errorAt(nameAt, form.message());
    }
  }
  std::size_t firstUnused = 0;
  std::array<std::uint64_t, kNumEngines> counts{};
  std::uint64_t total = 0;
  for (std::uint64_t& count : counts) {
    TRN_RETURN_IF_ERROR(r.get(count));
    if (count > ProgramLimits::kMaxInstructions - total) {
      return r.error(fmt::format("more than {} instructions; a program holds at most {}",
                                 ProgramLimits::kMaxInstructions, ProgramLimits::kMaxInstructions));
    }
    total += count;
  }
  if (total > r.remaining() / kMinInstructionBytes) {
    return r.error(
        fmt::format("{} instructions do not fit in the {} bytes left", total, r.remaining()));
  }
  if (budget != nullptr && !budget->take(static_cast<std::size_t>(total))) {
    return r.error(
        fmt::format("the programs hold more than {} instructions together", budget->limit()));
  }
  const std::size_t base = r.position();
  TRN_ASSIGN_OR_RETURN(const std::span<const std::byte> rest, r.take(r.remaining()));
  CheckedUnpacker u(rest);
  Instruction instr;
  std::uint64_t lastFile = files.size();  // none yet: instr.location.file is not any table entry
  for (const Engine engine : kAllEngines) {
    InstructionStream& stream = program.stream(engine);
    const auto count = static_cast<std::size_t>(counts[static_cast<std::size_t>(engine)]);
    stream.reserve(count, rest.size());  // the fields are within the bytes left
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t at = u.position();
      const auto fail = [&](std::string_view what) {
        return r.errorAt(base + (u.failed() ? u.problemAt() : at),
                         u.failed() ? std::string_view(u.problem()) : what);
      };
      const std::uint64_t opcode = u.varint();
      const std::uint8_t type = opcode < kOpcodeLimit ? kTypeOfOpcode[opcode] : kNoType;
      if (u.failed() || type == kNoType) {
        return fail(fmt::format("unknown opcode 0x{:04x}", opcode));
      }
      const std::uint8_t issuer = u.byte();
      if (!u.failed() && issuer != static_cast<std::uint8_t>(engine)) {
        return fail(fmt::format("an instruction of engine {} in the {} stream", issuer,
                                engineName(engine)));
      }
      instr.engine = engine;
      std::size_t syncCount = 0;
      if (!unpackSync(u, instr.sync.waits, syncCount) ||
          !unpackSync(u, instr.sync.updates, syncCount)) {
        return fail(
            fmt::format("{} semaphore entries; an instruction has at most {} waits and {} "
                        "updates",
                        syncCount, ProgramLimits::kMaxSyncEntries, ProgramLimits::kMaxSyncEntries));
      }
      const std::uint64_t file = u.varint();
      if (!u.failed() && (file >= files.size() || file > firstUnused)) {
        return fail(fmt::format("source location file {} where {} is the next new one (of {})",
                                file, firstUnused, files.size()));
      }
      firstUnused += file == firstUnused ? 1 : 0;
      instr.location.line = u.int32();
      const std::size_t fieldsAt = u.position();
      packed::unpackBody(type, u, instr.body);
      if (u.failed()) {
        return fail("");
      }
      if (file != lastFile) {
        instr.location.file = files[file];
        lastFile = file;
      }
      if (const Status form = checkInstructionFormBesidesFile(instr, program.tensors.size());
          !form.ok()) {
        return r.errorAt(base + at,
                         fmt::format("{}: {}", info(instr.body).mnemonic, form.message()));
      }
      // The fields are canonical (the unpacker refuses any other encoding): keep their bytes.
      stream.pushPacked(instr, rest.subspan(fieldsAt, u.position() - fieldsAt));
    }
  }
  if (firstUnused != files.size()) {
    return r.errorAt(base, fmt::format("source location file {} is never used", firstUnused));
  }
  if (u.position() != rest.size()) {
    return r.errorAt(base + u.position(), "trailing bytes after the last instruction");
  }
  return {};
}

}  // namespace trn::isa::compact
