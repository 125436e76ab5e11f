#include "trn/isa/instruction_stream.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <type_traits>
#include <utility>

#include "packed_fields.h"
#include "trn/base/check.h"

namespace trn::isa {
namespace {

using packed::packBody;
using packed::Unpacker;

constexpr auto kInfos = []<std::size_t... K>(std::index_sequence<K...>) {
  return std::array<const InstrInfo*, sizeof...(K)>{
      &std::variant_alternative_t<K, InstructionBody>::kInfo...};
}
(std::make_index_sequence<std::variant_size_v<InstructionBody>>());

template <typename Vector>
std::uint32_t offset32(const Vector& v) {
  TRN_CHECK(v.size() <= InstructionStream::kMaxFieldBytes)
      << "an instruction stream outgrew 32-bit offsets (" << v.size() << " entries)";
  return static_cast<std::uint32_t>(v.size());
}

}  // namespace

InstructionStream::Entry InstructionStream::packShell(Engine engine, std::size_t type,
                                                      const SyncView& sync, std::string_view file,
                                                      std::int32_t line) {
  Entry e;
  TRN_CHECK(sync.waits.size() <= kMaxSyncEntries && sync.updates.size() <= kMaxSyncEntries)
      << "an instruction with " << sync.waits.size() << " waits and " << sync.updates.size()
      << " updates cannot be packed";
  e.type = static_cast<std::uint16_t>(type);
  e.engine = engine;
  e.firstWait = offset32(waits_);
  e.waitCount = static_cast<std::uint16_t>(sync.waits.size());
  waits_.insert(waits_.end(), sync.waits.begin(), sync.waits.end());
  e.firstUpdate = offset32(updates_);
  e.updateCount = static_cast<std::uint16_t>(sync.updates.size());
  updates_.insert(updates_.end(), sync.updates.begin(), sync.updates.end());
  if (!files_.empty() && files_[lastFile_] == file) {
    e.file = lastFile_;
  } else if (const auto found = fileIndex_.find(file); found != fileIndex_.end()) {
    e.file = found->second;
  } else {
    e.file = offset32(files_);
    files_.emplace_back(file);
    fileIndex_.emplace(file, e.file);
  }
  lastFile_ = e.file;
  e.line = line;
  e.fields = offset32(fields_);
  return e;
}

InstructionStream::Entry InstructionStream::pack(Engine engine, const InstructionBody& body,
                                                 const SyncView& sync, std::string_view file,
                                                 std::int32_t line) {
  const Entry e = packShell(engine, body.index(), sync, file, line);
  packBody(body, fields_);
  offset32(fields_);
  return e;
}

void InstructionStream::push_back(Engine engine, const InstructionBody& body,
                                  const SyncView& sync, std::string_view file,
                                  std::int32_t line) {
  entries_.push_back(pack(engine, body, sync, file, line));
}

void InstructionStream::pushPacked(const Instruction& instr, std::span<const std::byte> fields) {
  const Entry e = packShell(instr.engine, instr.body.index(), SyncView(instr.sync),
                            instr.location.file, instr.location.line);
  fields_.insert(fields_.end(), fields.begin(), fields.end());
  offset32(fields_);
#ifndef NDEBUG
  std::vector<std::byte> repacked;
  packBody(instr.body, repacked);
  TRN_CHECK(std::equal(repacked.begin(), repacked.end(), fields.begin(), fields.end()))
      << "pushPacked was given fields that are not the instruction's packing";
#endif
  entries_.push_back(e);
}

void InstructionStream::push_back(const Instruction& instr) {
  push_back(instr.engine, instr.body, SyncView(instr.sync), instr.location.file,
            instr.location.line);
}

void InstructionStream::set(std::size_t index, const Instruction& instr) {
  TRN_CHECK(index < entries_.size()) << "set(" << index << ") of a stream of " << entries_.size();
  entries_[index] = pack(instr.engine, instr.body, SyncView(instr.sync), instr.location.file,
                         instr.location.line);
}

void InstructionStream::reserve(std::size_t instructions, std::optional<std::size_t> fieldBytes) {
  // Kernel instructions pack their fields into about 40 bytes.
  constexpr std::size_t kTypicalFieldBytes = 40;
  entries_.reserve(instructions);
  // Most instructions wait on at most one semaphore and update at most one.
  waits_.reserve(instructions);
  updates_.reserve(instructions);
  fields_.reserve(
      std::min(kMaxFieldBytes,
               fieldBytes.value_or(std::min(instructions, kMaxFieldBytes) * kTypicalFieldBytes)));
}

void InstructionStream::clear() { *this = InstructionStream{}; }

const Instruction InstructionStream::operator[](std::size_t index) const {
  Instruction instr;
  decode(index, instr);
  return instr;
}

void InstructionStream::decode(std::size_t index, Instruction& into) const {
  const Entry& e = entries_[index];
  into.engine = e.engine;
  decodeBody(index, into.body);
  const std::span<const SemaphoreWait> w = waits(index);
  into.sync.waits.assign(w.begin(), w.end());
  const std::span<const SemaphoreUpdate> u = updates(index);
  into.sync.updates.assign(u.begin(), u.end());
  into.location.file = files_[e.file];
  into.location.line = e.line;
}

void InstructionStream::decodeBody(std::size_t index, InstructionBody& into) const {
  const Entry& e = entries_[index];
  Unpacker unpacker(fields_.data() + e.fields);
  packed::unpackBody(e.type, unpacker, into);
}

const InstrInfo& InstructionStream::info(std::size_t index) const {
  return *kInfos[entries_[index].type];
}

std::span<const SemaphoreWait> InstructionStream::waits(std::size_t index) const {
  const Entry& e = entries_[index];
  return {waits_.data() + e.firstWait, e.waitCount};
}

std::span<const SemaphoreUpdate> InstructionStream::updates(std::size_t index) const {
  const Entry& e = entries_[index];
  return {updates_.data() + e.firstUpdate, e.updateCount};
}

std::string_view InstructionStream::locationFile(std::size_t index) const {
  return files_[entries_[index].file];
}

std::size_t InstructionStream::residentBytes() const {
  std::size_t bytes = entries_.size() * sizeof(Entry) + fields_.size() +
                      waits_.size() * sizeof(SemaphoreWait) +
                      updates_.size() * sizeof(SemaphoreUpdate);
  for (const std::string& file : files_) {
    // Each name is in files_ and, as a key, in fileIndex_; count the map's nodes roughly.
    bytes += 2 * (sizeof(std::string) + file.capacity()) + 4 * sizeof(void*);
  }
  return bytes;
}

bool operator==(const InstructionStream& a, const InstructionStream& b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Instruction x = a[i];
    const Instruction y = b[i];
    if (x.engine != y.engine || x.sync != y.sync || x.location != y.location ||
        x.body.index() != y.body.index()) {
      return false;
    }
    std::vector<std::byte> xb;
    std::vector<std::byte> yb;
    packBody(x.body, xb);
    packBody(y.body, yb);
    if (xb != yb) {
      return false;
    }
  }
  return true;
}

InstructionStream::Iterator::reference InstructionStream::Iterator::operator*() const {
  if (decoded_ != index_) {
    stream_->decode(index_, current_);
    decoded_ = index_;
  }
  return current_;
}

}  // namespace trn::isa
