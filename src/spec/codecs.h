// Codecs: how each C++ value type of the hardware description is parsed from a YAML node and
// rendered back (integers, booleans, strings, exact ratios, unit quantities, enums, cost
// formulas, and lists/optionals of those), plus the helpers the schema uses to range-check the
// elements of lists and optionals.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "config_tree.h"
#include "trn/base/ratio.h"
#include "trn/base/units.h"
#include "trn/numerics/dtype.h"
#include "trn/spec/cost_model.h"
#include "trn/spec/enums.h"

namespace trn::spec::detail {

/// Fails unless `node` is a scalar; `kind` names what was expected.
Status expectScalar(const ConfigNode& node, std::string_view kind);

template <typename T>
struct Codec;

template <>
struct Codec<std::int64_t> {
  static std::string kind() { return "integer"; }
  static Result<std::int64_t> parse(const ConfigNode& node, Mark& where);
  static std::string render(std::int64_t v) { return std::to_string(v); }
  static std::optional<Ratio> number(std::int64_t v) { return Ratio(v); }
};

template <>
struct Codec<bool> {
  static std::string kind() { return "boolean (true, false)"; }
  static Result<bool> parse(const ConfigNode& node, Mark& where);
  static std::string render(bool v) { return v ? "true" : "false"; }
};

template <>
struct Codec<std::string> {
  static std::string kind() { return "string"; }
  static Result<std::string> parse(const ConfigNode& node, Mark& where);
  static std::string render(const std::string& v) { return v; }
};

template <>
struct Codec<Ratio> {
  static std::string kind() { return "number (e.g. 0.9, 90%, 13/3)"; }
  static Result<Ratio> parse(const ConfigNode& node, Mark& where);
  static std::string render(const Ratio& v) { return v.toString(); }
  static std::optional<Ratio> number(const Ratio& v) { return v; }
};

/// Quantities of base/units.h.
template <typename Tag>
struct Codec<Quantity<Tag>> {
  using Q = Quantity<Tag>;
  static std::string kind() {
    if constexpr (std::is_same_v<Q, Picoseconds>) {
      return "time (ps, ns, us, ms, s)";
    } else if constexpr (std::is_same_v<Q, Bytes>) {
      return "size (B, KB, MB, GB, KiB, MiB, GiB, ...)";
    } else if constexpr (std::is_same_v<Q, Hertz>) {
      return "frequency (Hz, kHz, MHz, GHz)";
    } else {
      return "bandwidth (GB/s, GiB/s, B/ns, Gbps, ...)";
    }
  }
  static Result<Q> parse(const ConfigNode& node, Mark& where) {
    where = node.mark;
    TRN_RETURN_IF_ERROR(expectScalar(node, kind()));
    if constexpr (std::is_same_v<Q, Picoseconds>) {
      return parseTime(node.scalar);
    } else if constexpr (std::is_same_v<Q, Bytes>) {
      return parseBytes(node.scalar);
    } else if constexpr (std::is_same_v<Q, Hertz>) {
      return parseFrequency(node.scalar);
    } else {
      return parseBandwidth(node.scalar);
    }
  }
  static std::string render(const Q& v) { return toString(v); }
};

template <NamedEnum E>
struct Codec<E> {
  static std::string kind() { return fmt::format("one of {}", enumSpellings<E>()); }
  static Result<E> parse(const ConfigNode& node, Mark& where) {
    where = node.mark;
    TRN_RETURN_IF_ERROR(expectScalar(node, kind()));
    if (const auto value = parseEnum<E>(node.scalar)) {
      return *value;
    }
    return invalidArgument(fmt::format("'{}' is not {}", node.scalar, kind()));
  }
  static std::string render(E v) { return std::string(enumName(v)); }
};

/// Data types: the canonical names of numerics/dtype.h (parseDType also takes NKI spellings).
template <>
struct Codec<DType> {
  static std::string kind();
  static Result<DType> parse(const ConfigNode& node, Mark& where);
  static std::string render(DType v) { return std::string(dtypeName(v)); }
};

template <>
struct Codec<CostExpression> {
  static std::string kind() { return "cycle formula"; }
  static Result<CostExpression> parse(const ConfigNode& node, Mark& where);
  static std::string render(const CostExpression& v) { return v.text(); }
};

template <typename T>
struct Codec<std::vector<T>> {
  static std::string kind() { return fmt::format("list of {}", Codec<T>::kind()); }
  static Result<std::vector<T>> parse(const ConfigNode& node, Mark& where) {
    where = node.mark;
    if (node.kind != ConfigNode::Kind::kSequence) {
      return invalidArgument(fmt::format("expected a {}, got {}", kind(), node.describe()));
    }
    std::vector<T> out;
    for (std::size_t i = 0; i < node.items.size(); ++i) {
      Result<T> item = Codec<T>::parse(node.items[i], where);
      if (!item.ok()) {
        return item.status().withContext(fmt::format("item {}", i));
      }
      out.push_back(std::move(item).value());
    }
    return out;
  }
  static std::string render(const std::vector<T>& v) {
    std::string out = "[";
    for (const T& item : v) {
      out += fmt::format("{}{}", out.size() > 1 ? ", " : "", Codec<T>::render(item));
    }
    return out + "]";
  }
};

template <typename T>
struct Codec<std::optional<T>> {
  static std::string kind() { return Codec<T>::kind(); }
  static Result<std::optional<T>> parse(const ConfigNode& node, Mark& where) {
    Result<T> value = Codec<T>::parse(node, where);
    if (!value.ok()) {
      return value.status();
    }
    return std::optional<T>(std::move(value).value());
  }
  static std::string render(const std::optional<T>& v) { return Codec<T>::render(*v); }
};

/// The element type a range applies to: T itself, or the item of a list/optional.
template <typename T>
struct ElementOf {
  using Type = T;
  template <typename F>
  static void forEach(const T& v, F&& f) {
    f(v);
  }
};
template <typename T>
struct ElementOf<std::vector<T>> {
  using Type = T;
  template <typename F>
  static void forEach(const std::vector<T>& v, F&& f) {
    std::for_each(v.begin(), v.end(), f);
  }
};
template <typename T>
struct ElementOf<std::optional<T>> {
  using Type = T;
  template <typename F>
  static void forEach(const std::optional<T>& v, F&& f) {
    if (v) {
      f(*v);
    }
  }
};

template <typename T>
inline constexpr bool kIsOptional = false;
template <typename T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

}  // namespace trn::spec::detail
