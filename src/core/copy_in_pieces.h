// Internal to the core model: copying small structs that the simulator copies for most
// instructions (completions, vector clocks, race-check cells) without GCC's `rep movs`.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace trn::core {

/// `to = from` for a small trivially copyable struct, in 16-byte pieces. GCC copies structs of 64
/// bytes and more with `rep movs`, whose start-up costs more than the copy.
template <typename T>
void copyInPieces(T& to, const T& from) {
  static_assert(std::is_trivially_copyable_v<T>);
  constexpr std::size_t kPiece = 16;
  auto* out = reinterpret_cast<std::byte*>(&to);
  const auto* in = reinterpret_cast<const std::byte*>(&from);
  std::size_t at = 0;
  for (; at + kPiece <= sizeof(T); at += kPiece) {
    std::memcpy(out + at, in + at, kPiece);
  }
  if constexpr (sizeof(T) % kPiece != 0) {
    std::memcpy(out + at, in + at, sizeof(T) % kPiece);
  }
}

}  // namespace trn::core
