// The packed encoding of instruction fields, shared by the in-memory InstructionStream and the
// compact binary program format (program_binary.h). Internal to the isa module.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "trn/isa/field.h"
#include "trn/isa/index_pattern.h"
#include "trn/isa/instruction_set.h"
#include "trn/isa/replica_groups.h"

namespace trn::isa::packed {

// The packed field encoding. Integers are LEB128 varints (signed ones zigzagged, so that small
// negative strides stay short), floats their four bytes, enums and bools one byte. An access
// pattern packs its memory, dtype and how many of its free dimensions differ from the default,
// then numDims, tensor, partition fields and offset as varints, then those dimensions: a one-
// dimensional SBUF pattern takes about 12 bytes instead of 112. The encoding is only ever read
// Two readers share the decoders: Unpacker trusts its bytes (an InstructionStream reads only what
// it wrote), CheckedUnpacker bounds every read and rejects overlong varints, out-of-range values
// and bool bytes other than 0 and 1 (the binary program format, program_binary.h, stores fields in
// this encoding too). Enum values and pattern forms are checkInstructionForm's to judge.

/// The bytes of the longest varint, a 64-bit value.
constexpr std::size_t kMaxVarint = 10;

/// Writes into a buffer sized beforehand for the worst case (maxPackedBytes). In file form (the
/// compact program format) a pattern's dimensions past its numDims are left out, as the fixed
/// format and the text leave them out; in memory every field is kept, so that an instruction,
/// even an unverified one, reads back as it was built.
class Packer {
 public:
  explicit Packer(std::byte* at, bool fileForm = false) : at_(at), fileForm_(fileForm) {}
  [[nodiscard]] bool fileForm() const { return fileForm_; }
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
  bool fileForm_;
};

class Unpacker {
 public:
  explicit Unpacker(const std::byte* at) : at_(at) {}
  std::uint8_t byte() { return static_cast<std::uint8_t>(*at_++); }
  bool boolean() { return byte() != 0; }
  std::int32_t int32() { return static_cast<std::int32_t>(signedVarint()); }
  /// A count of at most `max` (trusted here; CheckedUnpacker checks it).
  std::uint8_t count(std::uint8_t /*max*/, const char* /*what*/ = nullptr) { return byte(); }
  void checkStoredDims(const std::array<Dim, kMaxFreeDims>& /*dims*/, std::uint8_t /*stored*/,
                       std::int32_t /*numDims*/) {}
  [[gnu::always_inline]] std::uint64_t varint() {
    // Most values take one byte and most of the rest two: those without a loop.
    const auto b0 = static_cast<std::uint8_t>(at_[0]);
    if (b0 < 0x80) {
      ++at_;
      return b0;
    }
    const auto b1 = static_cast<std::uint8_t>(at_[1]);
    if (b1 < 0x80) {
      at_ += 2;
      return (b0 & 0x7fU) | (static_cast<std::uint64_t>(b1) << 7);
    }
    const LongVarint read = longVarint(at_);
    at_ = read.end;
    return read.value;
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
  struct LongVarint {
    std::uint64_t value;
    const std::byte* end;
  };
  /// A varint of three bytes or more at `at`, and where it ends. Static (the position goes in and
  /// out in registers), so that no reader's address is taken and a reader copied into a local
  /// keeps its position in a register (unpack of an AccessPattern).
  [[gnu::noinline]] static LongVarint longVarint(const std::byte* at) {
    std::uint64_t v = 0;
    int shift = 0;
    std::uint8_t b = 0;
    do {
      b = static_cast<std::uint8_t>(*at++);
      v |= static_cast<std::uint64_t>(b & 0x7fU) << shift;
      shift += 7;
    } while ((b & 0x80U) != 0);
    return {v, at};
  }

  const std::byte* at_;
};

/// Reads untrusted bytes: every read is bounded, and the first problem stops the reading (later
/// reads return zeros) and is kept with its byte position for the caller's message. Loading a
/// program spends most of its time here, so the common cases (a byte, a one-byte varint) are
/// inlined and the rest is out of line.
class CheckedUnpacker {
 public:
  explicit CheckedUnpacker(std::span<const std::byte> bytes)
      : begin_(bytes.data()), at_(bytes.data()), end_(bytes.data() + bytes.size()) {}
  [[gnu::always_inline]] std::uint8_t byte() {
    if (at_ == end_) [[unlikely]] {
      fail("the data ends inside an instruction");
      return 0;
    }
    return static_cast<std::uint8_t>(*at_++);
  }
  [[gnu::always_inline]] bool boolean() {
    const std::uint8_t b = byte();
    if (b > 1) [[unlikely]] {
      fail("a bool byte other than 0 or 1");
    }
    return b == 1;
  }
  [[gnu::always_inline]] std::uint64_t varint() {
    // Most values take one byte, and most of the rest two (a last byte of 0 is redundant).
    if (end_ - at_ >= 2) [[likely]] {
      const auto b0 = static_cast<std::uint8_t>(at_[0]);
      if (b0 < 0x80) {
        ++at_;
        return b0;
      }
      const auto b1 = static_cast<std::uint8_t>(at_[1]);
      if (b1 != 0 && b1 < 0x80) {
        at_ += 2;
        return (b0 & 0x7fU) | (static_cast<std::uint64_t>(b1) << 7);
      }
    }
    return longVarint();
  }
  [[gnu::always_inline]] std::int64_t signedVarint() {
    const std::uint64_t v = varint();
    return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
  }
  [[gnu::always_inline]] std::int32_t int32() {
    const std::int64_t v = signedVarint();
    if (v < std::numeric_limits<std::int32_t>::min() ||
        v > std::numeric_limits<std::int32_t>::max()) [[unlikely]] {
      fail("a 32-bit field out of range");
      return 0;
    }
    return static_cast<std::int32_t>(v);
  }
  std::uint32_t raw32() {
    if (end_ - at_ < 4) [[unlikely]] {
      at_ = end_;  // where byte() would have found the end
      fail("the data ends inside an instruction");
      return 0;
    }
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      v |= static_cast<std::uint32_t>(at_[i]) << (8 * i);
    }
    at_ += 4;
    return v;
  }
  [[gnu::always_inline]] std::uint8_t count(
      std::uint8_t max, const char* what = "a dimension count beyond the pattern's four") {
    const std::uint8_t n = byte();
    if (n > max) [[unlikely]] {
      fail(what);
      return 0;
    }
    return n;
  }

  /// The file encoder stores the dimensions up to the last that is not the default and none past
  /// numDims, no more.
  void checkStoredDims(const std::array<Dim, kMaxFreeDims>& dims, std::uint8_t stored,
                       std::int32_t numDims) {
    if (stored > 0 && dims[stored - 1] == Dim{}) [[unlikely]] {
      fail("a stored dimension that is the default, which the encoder leaves out");
    } else if (stored > numDims) [[unlikely]] {
      fail("a stored dimension past the pattern's dimensions, which the encoder leaves out");
    }
  }

  [[nodiscard]] bool failed() const { return problem_ != nullptr; }
  /// What went wrong first, and where (offset from the start of the bytes).
  [[nodiscard]] const char* problem() const { return problem_; }
  [[nodiscard]] std::size_t problemAt() const { return problemAt_; }
  [[nodiscard]] std::size_t position() const { return static_cast<std::size_t>(at_ - begin_); }

 private:
  /// A varint of more than two bytes, or one near the end of the data.
  [[gnu::noinline]] std::uint64_t longVarint() {
    const auto available = std::min(kMaxVarint, static_cast<std::size_t>(end_ - at_));
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < available; ++i) {
      const auto b = static_cast<std::uint64_t>(at_[i]);
      v |= (b & 0x7fU) << (7 * i);
      if (b < 0x80) {  // the last byte
        at_ += i + 1;  // errors are placed after the varint
        if (i == kMaxVarint - 1 && b > 1) {
          fail("a varint larger than 64 bits");
        } else if (i > 0 && b == 0) {
          fail("a varint with a redundant last byte");  // the encoder writes each value one way
        }
        return v;
      }
    }
    at_ += available;
    fail(available < kMaxVarint ? "the data ends inside an instruction"
                                : "a varint longer than 10 bytes");
    return 0;
  }
  [[gnu::noinline, gnu::cold]] void fail(const char* what) {
    if (problem_ == nullptr) {
      problem_ = what;
      problemAt_ = position();
    }
    at_ = end_;
  }
  const std::byte* begin_;
  const std::byte* at_;
  const std::byte* end_;
  const char* problem_ = nullptr;
  std::size_t problemAt_ = 0;
};

inline void pack(bool v, Packer& p) { p.byte(static_cast<std::uint8_t>(v)); }
template <typename U>
void unpack(U& u, bool& v) {
  v = u.boolean();
}

inline void pack(std::int64_t v, Packer& p) { p.signedVarint(v); }
template <typename U>
void unpack(U& u, std::int64_t& v) {
  v = u.signedVarint();
}

inline void pack(float v, Packer& p) { p.raw32(std::bit_cast<std::uint32_t>(v)); }
template <typename U>
void unpack(U& u, float& v) {
  v = std::bit_cast<float>(u.raw32());
}

template <typename E>
requires std::is_enum_v<E>
void pack(E v, Packer& p) {
  static_assert(sizeof(E) == 1);
  p.byte(static_cast<std::uint8_t>(v));
}
template <typename U, typename E>
requires std::is_enum_v<E>
void unpack(U& u, E& v) { v = static_cast<E>(u.byte()); }

/// How many leading entries of `dims` `p` stores: up to the last that is not the default, and in
/// file form none past the first `numDims`.
inline std::uint8_t storedDims(const std::array<Dim, kMaxFreeDims>& dims, std::int32_t numDims,
                               const Packer& p) {
  auto n = static_cast<std::uint8_t>(
      p.fileForm() ? std::clamp<std::int32_t>(numDims, 0, kMaxFreeDims) : kMaxFreeDims);
  while (n > 0 && dims[n - 1] == Dim{}) {
    --n;
  }
  return n;
}

inline void packDims(const std::array<Dim, kMaxFreeDims>& dims, std::uint8_t stored, Packer& p) {
  for (std::uint8_t d = 0; d < stored; ++d) {
    p.signedVarint(dims[d].stride);
    p.signedVarint(dims[d].count);
  }
}

template <typename U>
void unpackDims(U& u, std::array<Dim, kMaxFreeDims>& dims, std::uint8_t stored,
                std::int32_t numDims) {
  for (std::uint8_t d = 0; d < kMaxFreeDims; ++d) {
    if (d < stored) {
      dims[d].stride = u.signedVarint();
      dims[d].count = u.signedVarint();
    } else {
      dims[d] = Dim{};
    }
  }
  u.checkStoredDims(dims, stored, numDims);
}

inline void pack(const AccessPattern& ap, Packer& p) {
  const std::uint8_t stored = storedDims(ap.dims, ap.numDims, p);
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
/// The fields of an access pattern (inlined into unpack, so that a local reader stays local).
template <typename U>
[[gnu::always_inline]] inline void unpackPattern(U& u, AccessPattern& ap) {
  unpack(u, ap.memory);
  unpack(u, ap.dtype);
  const std::uint8_t stored = u.count(kMaxFreeDims);
  ap.numDims = u.int32();
  ap.tensor = u.int32();
  ap.partitionStart = u.signedVarint();
  ap.partitionCount = u.signedVarint();
  ap.partitionStride = u.signedVarint();
  ap.offset = u.signedVarint();
  unpackDims(u, ap.dims, stored, ap.numDims);
}
template <typename U>
void unpack(U& u, AccessPattern& ap) {
  if constexpr (std::is_same_v<U, Unpacker>) {
    // A local copy of the trusted reader: its position stays in a register instead of being
    // stored back through `u` after every value (a timing-only run unpacks 4 patterns an
    // instruction).
    Unpacker local = u;
    unpackPattern(local, ap);
    u = local;
  } else {
    unpackPattern(u, ap);
  }
}

inline void pack(const std::optional<AccessPattern>& ap, Packer& p) {
  p.byte(static_cast<std::uint8_t>(ap.has_value()));
  if (ap) {
    pack(*ap, p);
  }
}
template <typename U>
void unpack(U& u, std::optional<AccessPattern>& ap) {
  if (!u.boolean()) {
    ap.reset();
    return;
  }
  if (!ap) {
    ap.emplace();
  }
  unpack(u, *ap);
}

inline void pack(const ScalarOperand& s, Packer& p) {
  p.byte(static_cast<std::uint8_t>(s.index()));
  if (const float* f = std::get_if<float>(&s)) {
    pack(*f, p);
  } else {
    pack(std::get<AccessPattern>(s), p);
  }
}
template <typename U>
void unpack(U& u, ScalarOperand& s) {
  if (!u.boolean()) {
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
template <typename U, std::size_t N>
void unpack(U& u, std::array<std::int64_t, N>& v) {
  for (std::int64_t& x : v) {
    x = u.signedVarint();
  }
}

inline void pack(const IndexPattern& pattern, Packer& p) {
  const std::uint8_t stored = storedDims(pattern.dims, pattern.numDims, p);
  p.byte(stored);
  p.signedVarint(pattern.numDims);
  packDims(pattern.dims, stored, p);
}
template <typename U>
void unpack(U& u, IndexPattern& pattern) {
  const std::uint8_t stored = u.count(kMaxFreeDims);
  pattern.numDims = u.int32();
  unpackDims(u, pattern.dims, stored, pattern.numDims);
}

// Replica groups: the group size (zigzag varint), the rank count (one byte, 0..kMaxRanks), then
// the listed ranks (zigzag varints).
inline void pack(const ReplicaGroups& g, Packer& p) {
  p.signedVarint(g.groupSize);
  const std::span<const std::int32_t> listed = g.listed();
  p.byte(static_cast<std::uint8_t>(listed.size()));
  for (const std::int32_t rank : listed) {
    p.signedVarint(rank);
  }
}
template <typename U>
void unpack(U& u, ReplicaGroups& g) {
  g.groupSize = u.int32();
  g.count = u.count(static_cast<std::uint8_t>(ReplicaGroups::kMaxRanks),
                    "replica groups of more than 64 ranks");
  std::fill(g.ranks.begin(), g.ranks.end(), 0);
  for (std::int32_t i = 0; i < g.count; ++i) {
    g.ranks[static_cast<std::size_t>(i)] = u.int32();
  }
}

// The most bytes pack() writes for a field of each type.
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
constexpr std::size_t maxPackedBytes(const ReplicaGroups*) {
  return kMaxVarint + 1 + ReplicaGroups::kMaxRanks * kMaxVarint;
}

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

/// Appends the packed fields of `body` to `out` (a vector of bytes), in file form or in memory
/// (Packer).
template <typename Bytes>
void packBody(const InstructionBody& body, Bytes& out, bool fileForm = false) {
  std::array<std::byte, kMaxBodyBytes> scratch;  // written before it is read
  Packer p(scratch.data(), fileForm);
  std::visit(
      [&](const auto& instr) {
        forEachFieldValue(instr, [&](const auto& /*desc*/, const auto& value) { pack(value, p); });
      },
      body);
  out.insert(out.end(), scratch.data(), p.position());
}

/// Decodes the fields of alternative K into `body`, reusing the alternative already there.
template <typename U, std::size_t K>
void unpackBodyAs(U& u, InstructionBody& body) {
  auto* instr = std::get_if<K>(&body);
  if (instr == nullptr) {
    instr = &body.template emplace<K>();
  }
  forEachFieldValue(*instr, [&](const auto& /*desc*/, auto& member) { unpack(u, member); });
}

template <typename U>
using BodyUnpacker = void (*)(U&, InstructionBody&);

/// unpackBodyAs<U, K> for every alternative K.
template <typename U>
inline constexpr auto kBodyUnpackers = []<std::size_t... K>(std::index_sequence<K...>) {
  return std::array<BodyUnpacker<U>, sizeof...(K)>{&unpackBodyAs<U, K>...};
}
(std::make_index_sequence<std::variant_size_v<InstructionBody>>());

/// Decodes the fields of an instruction of type `type` (an InstructionBody alternative, which the
/// caller has checked) into `body`.
template <typename U>
void unpackBody(std::size_t type, U& u, InstructionBody& body) {
  kBodyUnpackers<U>[type](u, body);
}

/// Appends what `fn(Packer&)` writes, at most N bytes, to `out`.
template <std::size_t N, typename Fn>
void appendPacked(std::vector<std::byte>& out, Fn&& fn) {
  std::array<std::byte, N> scratch;  // written before it is read
  Packer p(scratch.data());
  fn(p);
  out.insert(out.end(), scratch.data(), p.position());
}

}  // namespace trn::isa::packed
