#include "trn/isa/instruction_stream.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <type_traits>
#include <utility>

#include "trn/base/check.h"
#include "trn/isa/field.h"
#include "trn/isa/index_pattern.h"

namespace trn::isa {
namespace {

// The packed field encoding. Integers are LEB128 varints (signed ones zigzagged, so that small
// negative strides stay short), floats their four bytes, enums and bools one byte. An access
// pattern packs its memory, dtype and how many of its free dimensions differ from the default,
// then numDims, tensor, partition fields and offset as varints, then those dimensions: a one-
// dimensional SBUF pattern takes about 12 bytes instead of 112. The encoding is only ever read
// back by this file, from bytes it wrote, so decoding does not check what it reads.

/// Writes into a buffer sized beforehand for the worst case (maxPackedBytes).
class Packer {
 public:
  explicit Packer(std::byte* at) : at_(at) {}
  void byte(std::uint8_t v) { *at_++ = static_cast<std::byte>(v); }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      byte(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    byte(static_cast<std::uint8_t>(v));
  }
  void signedVarint(std::int64_t v) {
    varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
  void raw32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) {
      byte(static_cast<std::uint8_t>(v >> (8 * i)));
    }
  }
  [[nodiscard]] std::byte* position() const { return at_; }

 private:
  std::byte* at_;
};

class Unpacker {
 public:
  explicit Unpacker(const std::byte* at) : at_(at) {}
  std::uint8_t byte() { return static_cast<std::uint8_t>(*at_++); }
  std::uint64_t varint() {
    std::uint8_t b = byte();
    if (b < 0x80) {
      return b;
    }
    std::uint64_t v = b & 0x7fU;
    int shift = 7;
    do {
      b = byte();
      v |= static_cast<std::uint64_t>(b & 0x7fU) << shift;
      shift += 7;
    } while ((b & 0x80U) != 0);
    return v;
  }
  std::int64_t signedVarint() {
    const std::uint64_t v = varint();
    return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
  }
  std::uint32_t raw32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      v |= static_cast<std::uint32_t>(byte()) << (8 * i);
    }
    return v;
  }

 private:
  const std::byte* at_;
};

void pack(bool v, Packer& p) { p.byte(static_cast<std::uint8_t>(v)); }
void unpack(Unpacker& u, bool& v) { v = u.byte() != 0; }

void pack(std::int64_t v, Packer& p) { p.signedVarint(v); }
void unpack(Unpacker& u, std::int64_t& v) { v = u.signedVarint(); }

void pack(float v, Packer& p) { p.raw32(std::bit_cast<std::uint32_t>(v)); }
void unpack(Unpacker& u, float& v) { v = std::bit_cast<float>(u.raw32()); }

template <typename E>
requires std::is_enum_v<E>
void pack(E v, Packer& p) {
  static_assert(sizeof(E) == 1);
  p.byte(static_cast<std::uint8_t>(v));
}
template <typename E>
requires std::is_enum_v<E>
void unpack(Unpacker& u, E& v) { v = static_cast<E>(u.byte()); }

/// How many leading entries of `dims` must be stored: up to the last that is not the default.
std::uint8_t storedDims(const std::array<Dim, kMaxFreeDims>& dims) {
  std::uint8_t n = kMaxFreeDims;
  while (n > 0 && dims[n - 1] == Dim{}) {
    --n;
  }
  return n;
}

void packDims(const std::array<Dim, kMaxFreeDims>& dims, std::uint8_t stored, Packer& p) {
  for (std::uint8_t d = 0; d < stored; ++d) {
    p.signedVarint(dims[d].stride);
    p.signedVarint(dims[d].count);
  }
}

void unpackDims(Unpacker& u, std::array<Dim, kMaxFreeDims>& dims, std::uint8_t stored) {
  for (std::uint8_t d = 0; d < kMaxFreeDims; ++d) {
    if (d < stored) {
      dims[d].stride = u.signedVarint();
      dims[d].count = u.signedVarint();
    } else {
      dims[d] = Dim{};
    }
  }
}

void pack(const AccessPattern& ap, Packer& p) {
  const std::uint8_t stored = storedDims(ap.dims);
  pack(ap.memory, p);
  pack(ap.dtype, p);
  p.byte(stored);
  p.signedVarint(ap.numDims);
  p.signedVarint(ap.tensor);
  p.signedVarint(ap.partitionStart);
  p.signedVarint(ap.partitionCount);
  p.signedVarint(ap.partitionStride);
  p.signedVarint(ap.offset);
  packDims(ap.dims, stored, p);
}
void unpack(Unpacker& u, AccessPattern& ap) {
  unpack(u, ap.memory);
  unpack(u, ap.dtype);
  const std::uint8_t stored = u.byte();
  ap.numDims = static_cast<std::int32_t>(u.signedVarint());
  ap.tensor = static_cast<std::int32_t>(u.signedVarint());
  ap.partitionStart = u.signedVarint();
  ap.partitionCount = u.signedVarint();
  ap.partitionStride = u.signedVarint();
  ap.offset = u.signedVarint();
  unpackDims(u, ap.dims, stored);
}

void pack(const std::optional<AccessPattern>& ap, Packer& p) {
  p.byte(static_cast<std::uint8_t>(ap.has_value()));
  if (ap) {
    pack(*ap, p);
  }
}
void unpack(Unpacker& u, std::optional<AccessPattern>& ap) {
  if (u.byte() == 0) {
    ap.reset();
    return;
  }
  if (!ap) {
    ap.emplace();
  }
  unpack(u, *ap);
}

void pack(const ScalarOperand& s, Packer& p) {
  p.byte(static_cast<std::uint8_t>(s.index()));
  if (const float* f = std::get_if<float>(&s)) {
    pack(*f, p);
  } else {
    pack(std::get<AccessPattern>(s), p);
  }
}
void unpack(Unpacker& u, ScalarOperand& s) {
  if (u.byte() == 0) {
    float f = 0;
    unpack(u, f);
    s = f;
    return;
  }
  auto* ap = std::get_if<AccessPattern>(&s);
  if (ap == nullptr) {
    ap = &s.emplace<AccessPattern>();
  }
  unpack(u, *ap);
}

template <std::size_t N>
void pack(const std::array<std::int64_t, N>& v, Packer& p) {
  for (const std::int64_t x : v) {
    p.signedVarint(x);
  }
}
template <std::size_t N>
void unpack(Unpacker& u, std::array<std::int64_t, N>& v) {
  for (std::int64_t& x : v) {
    x = u.signedVarint();
  }
}

void pack(const IndexPattern& pattern, Packer& p) {
  const std::uint8_t stored = storedDims(pattern.dims);
  p.byte(stored);
  p.signedVarint(pattern.numDims);
  packDims(pattern.dims, stored, p);
}
void unpack(Unpacker& u, IndexPattern& pattern) {
  const std::uint8_t stored = u.byte();
  pattern.numDims = static_cast<std::int32_t>(u.signedVarint());
  unpackDims(u, pattern.dims, stored);
}

// The most bytes pack() writes for a field of each type.
constexpr std::size_t kMaxVarint = 10;
constexpr std::size_t kMaxDimsBytes = 2 * kMaxFreeDims * kMaxVarint;
constexpr std::size_t kMaxPatternBytes = 3 + 6 * kMaxVarint + kMaxDimsBytes;
constexpr std::size_t maxPackedBytes(const bool*) { return 1; }
constexpr std::size_t maxPackedBytes(const std::int64_t*) { return kMaxVarint; }
constexpr std::size_t maxPackedBytes(const float*) { return 4; }
template <typename E>
requires std::is_enum_v<E>
constexpr std::size_t maxPackedBytes(const E*) { return 1; }
constexpr std::size_t maxPackedBytes(const AccessPattern*) { return kMaxPatternBytes; }
constexpr std::size_t maxPackedBytes(const std::optional<AccessPattern>*) {
  return 1 + kMaxPatternBytes;
}
constexpr std::size_t maxPackedBytes(const ScalarOperand*) { return 1 + kMaxPatternBytes; }
template <std::size_t N>
constexpr std::size_t maxPackedBytes(const std::array<std::int64_t, N>*) {
  return N * kMaxVarint;
}
constexpr std::size_t maxPackedBytes(const IndexPattern*) { return 1 + kMaxVarint + kMaxDimsBytes; }

template <typename I>
constexpr std::size_t maxBodyBytes() {
  std::size_t bytes = 0;
  forEachField<I>([&](const auto& desc) {
    using T = std::remove_cvref_t<decltype(std::declval<I>().*(desc.member))>;
    bytes += maxPackedBytes(static_cast<const T*>(nullptr));
  });
  return bytes;
}

/// The most bytes any instruction's fields pack into.
constexpr std::size_t kMaxBodyBytes = []<std::size_t... K>(std::index_sequence<K...>) {
  return std::max({maxBodyBytes<std::variant_alternative_t<K, InstructionBody>>()...});
}
(std::make_index_sequence<std::variant_size_v<InstructionBody>>());

/// Appends the packed fields of `body` to `out`.
void packBody(const InstructionBody& body, std::vector<std::byte>& out) {
  std::array<std::byte, kMaxBodyBytes> scratch;  // written before it is read
  Packer p(scratch.data());
  std::visit(
      [&](const auto& instr) {
        forEachFieldValue(instr, [&](const auto& /*desc*/, const auto& value) { pack(value, p); });
      },
      body);
  out.insert(out.end(), scratch.data(), p.position());
}

/// Decodes the fields of alternative K into `body`, reusing the alternative already there.
template <std::size_t K>
void unpackBodyAs(Unpacker& u, InstructionBody& body) {
  auto* instr = std::get_if<K>(&body);
  if (instr == nullptr) {
    instr = &body.template emplace<K>();
  }
  forEachFieldValue(*instr, [&](const auto& /*desc*/, auto& member) { unpack(u, member); });
}

using BodyUnpacker = void (*)(Unpacker&, InstructionBody&);

constexpr auto kBodyUnpackers = []<std::size_t... K>(std::index_sequence<K...>) {
  return std::array<BodyUnpacker, sizeof...(K)>{&unpackBodyAs<K>...};
}
(std::make_index_sequence<std::variant_size_v<InstructionBody>>());

constexpr auto kInfos = []<std::size_t... K>(std::index_sequence<K...>) {
  return std::array<const InstrInfo*, sizeof...(K)>{
      &std::variant_alternative_t<K, InstructionBody>::kInfo...};
}
(std::make_index_sequence<std::variant_size_v<InstructionBody>>());

template <typename T>
std::uint32_t offset32(const std::vector<T>& v) {
  TRN_CHECK(v.size() <= InstructionStream::kMaxFieldBytes)
      << "an instruction stream outgrew 32-bit offsets (" << v.size() << " entries)";
  return static_cast<std::uint32_t>(v.size());
}

}  // namespace

InstructionStream::Entry InstructionStream::pack(const Instruction& instr) {
  Entry e;
  TRN_CHECK(instr.sync.waits.size() <= kMaxSyncEntries &&
            instr.sync.updates.size() <= kMaxSyncEntries)
      << "an instruction with " << instr.sync.waits.size() << " waits and "
      << instr.sync.updates.size() << " updates cannot be packed";
  e.type = static_cast<std::uint16_t>(instr.body.index());
  e.engine = instr.engine;
  e.firstWait = offset32(waits_);
  e.waitCount = static_cast<std::uint16_t>(instr.sync.waits.size());
  waits_.insert(waits_.end(), instr.sync.waits.begin(), instr.sync.waits.end());
  e.firstUpdate = offset32(updates_);
  e.updateCount = static_cast<std::uint16_t>(instr.sync.updates.size());
  updates_.insert(updates_.end(), instr.sync.updates.begin(), instr.sync.updates.end());
  if (const auto found = fileIndex_.find(instr.location.file); found != fileIndex_.end()) {
    e.file = found->second;
  } else {
    e.file = offset32(files_);
    files_.push_back(instr.location.file);
    fileIndex_.emplace(instr.location.file, e.file);
  }
  e.line = instr.location.line;
  e.fields = offset32(fields_);
  packBody(instr.body, fields_);
  offset32(fields_);
  return e;
}

void InstructionStream::push_back(const Instruction& instr) { entries_.push_back(pack(instr)); }

void InstructionStream::set(std::size_t index, const Instruction& instr) {
  TRN_CHECK(index < entries_.size()) << "set(" << index << ") of a stream of " << entries_.size();
  entries_[index] = pack(instr);
}

void InstructionStream::reserve(std::size_t instructions) {
  // Kernel instructions pack their fields into about 40 bytes; shrinkToFit gives back the rest.
  constexpr std::size_t kTypicalFieldBytes = 40;
  entries_.reserve(instructions);
  fields_.reserve(std::min(instructions, kMaxFieldBytes / kTypicalFieldBytes) * kTypicalFieldBytes);
}

void InstructionStream::shrinkToFit() {
  entries_.shrink_to_fit();
  fields_.shrink_to_fit();
  waits_.shrink_to_fit();
  updates_.shrink_to_fit();
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
  kBodyUnpackers[e.type](unpacker, into);
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
  std::size_t bytes = entries_.capacity() * sizeof(Entry) + fields_.capacity() +
                      waits_.capacity() * sizeof(SemaphoreWait) +
                      updates_.capacity() * sizeof(SemaphoreUpdate);
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
