// Enumerations used by the hardware description (engines, DMA and topology kinds), each with
// one table of YAML spellings from which parsing and printing are both derived. Data types are
// trn::DType (numerics/dtype.h), spelled by its canonical names.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "trn/spec/engine.h"

namespace trn::spec {

/// Ordering guarantee of DMA writes (hardware-trn2.md §1 "DMA barriers").
enum class DmaOrdering {
  kWriteAfterWrite,
  kStrongOrderWrite,
};

/// How a dimension of a system joins its chips (system_spec.h).
enum class DimensionKind {
  kRing,    ///< each chip to its two neighbours, the last to the first
  kLine,    ///< the same without the link from the last chip to the first
  kSwitch,  ///< each chip to a non-blocking switch
};

/// How a DMA engine picks among its queues (§9).
enum class QueueScheduling {
  kRoundRobin,
  kQos,
};

/// Shape of a chip-to-chip network.
enum class TopologyKind {
  kNone,      ///< no such level (e.g. no UltraServer for Trn1)
  kTorus,     ///< direct links, wrap-around in every dimension
  kSwitched,  ///< all-to-all through switches
};

/// How a documented link bandwidth is counted.
enum class BandwidthCounting {
  kPerDirection,        ///< the figure is available in each direction
  kBidirectionalTotal,  ///< the figure is the sum of both directions
};

/// Spelling tables; specialised below for each enum.
template <typename E>
struct EnumTraits;

template <>
struct EnumTraits<Engine> {
  static constexpr auto kNames = kEngineNames;
};

template <>
struct EnumTraits<DmaOrdering> {
  static constexpr std::array<std::pair<DmaOrdering, std::string_view>, 2> kNames = {{
      {DmaOrdering::kWriteAfterWrite, "write_after_write"},
      {DmaOrdering::kStrongOrderWrite, "strong_order_write"},
  }};
};

template <>
struct EnumTraits<QueueScheduling> {
  static constexpr std::array<std::pair<QueueScheduling, std::string_view>, 2> kNames = {{
      {QueueScheduling::kRoundRobin, "round_robin"},
      {QueueScheduling::kQos, "qos"},
  }};
};

template <>
struct EnumTraits<TopologyKind> {
  static constexpr std::array<std::pair<TopologyKind, std::string_view>, 3> kNames = {{
      {TopologyKind::kNone, "none"},
      {TopologyKind::kTorus, "torus"},
      {TopologyKind::kSwitched, "switched"},
  }};
};

template <>
struct EnumTraits<DimensionKind> {
  static constexpr std::array<std::pair<DimensionKind, std::string_view>, 3> kNames = {{
      {DimensionKind::kRing, "ring"},
      {DimensionKind::kLine, "line"},
      {DimensionKind::kSwitch, "switch"},
  }};
};

template <>
struct EnumTraits<BandwidthCounting> {
  static constexpr std::array<std::pair<BandwidthCounting, std::string_view>, 2> kNames = {{
      {BandwidthCounting::kPerDirection, "per_direction"},
      {BandwidthCounting::kBidirectionalTotal, "bidirectional_total"},
  }};
};

/// True for enums that have a spelling table.
template <typename E>
concept NamedEnum = requires { EnumTraits<E>::kNames; };

/// The YAML spelling of `value`.
template <NamedEnum E>
constexpr std::string_view enumName(E value) {
  for (const auto& [e, name] : EnumTraits<E>::kNames) {
    if (e == value) {
      return name;
    }
  }
  return "?";
}

/// The enumerator spelled `name`, if any.
template <NamedEnum E>
constexpr std::optional<E> parseEnum(std::string_view name) {
  for (const auto& [e, spelling] : EnumTraits<E>::kNames) {
    if (spelling == name) {
      return e;
    }
  }
  return std::nullopt;
}

/// All spellings joined with ", ", for error messages and documentation.
template <NamedEnum E>
std::string enumSpellings() {
  std::string out;
  for (const auto& entry : EnumTraits<E>::kNames) {
    out += out.empty() ? "" : ", ";
    out += entry.second;
  }
  return out;
}

}  // namespace trn::spec
