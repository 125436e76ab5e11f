// The schema machinery: each struct of the hardware description declares its fields once
// (YAML key, member pointer, unit/type, allowed range, one-line doc) in a Schema<S>; loading with
// type, unit, range, unknown-key and missing-key checks, flattening for `spec show`/`spec diff`,
// and the schema reference are all derived from that one declaration.
//
// YAML forms understood:
//   - a sourced value:  key: {value: 2.4GHz, source: "N2 engine table", alternative: "..."}
//   - a bare value:     key: 2.4GHz   (only in an overlay file, i.e. one with `base:`; its source
//                                      becomes "override in <file>"), and for meta keys
//   - a record:         a mapping of plain fields plus one `source:` (and `alternative:`) for the
//                       whole record; records live in named maps or lists (cost classes, rules)
#pragma once

#include <algorithm>
#include <charconv>
#include <concepts>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "codecs.h"
#include "config_tree.h"
#include "trn/base/units.h"
#include "trn/spec/chip_spec.h"
#include "trn/spec/report.h"

namespace trn::spec::detail {

/// How the fields of one mapping are being loaded.
struct LoadScope {
  bool overlay = false;                ///< keys optional; bare values get "override in <file>"
  const Provenance* record = nullptr;  ///< inside a record: fields are plain, share its source
};

/// Collects errors and provenance while loading one file.
class LoadContext {
 public:
  LoadContext(std::string file, ProvenanceMap& provenance)
      : file_(std::move(file)), provenance_(provenance) {}

  /// Records "file:line:column: path: message".
  void error(Mark mark, std::string_view path, std::string_view message) {
    errors_.push_back(fmt::format("{}:{}:{}: {}{}{}", fileOf(mark), std::max(mark.line, 1),
                                  std::max(mark.column, 1), path, path.empty() ? "" : ": ",
                                  message));
  }

  [[nodiscard]] const std::string& file() const { return file_; }
  /// The file `mark` is in: an included file's, or this one.
  [[nodiscard]] const std::string& fileOf(Mark mark) const {
    return mark.file != nullptr ? *mark.file : file_;
  }
  [[nodiscard]] ProvenanceMap& provenance() { return provenance_; }
  [[nodiscard]] bool failed() const { return !errors_.empty(); }
  [[nodiscard]] const std::vector<std::string>& errors() const { return errors_; }

  /// A provenance located at `mark` in this file.
  [[nodiscard]] Provenance at(Mark mark, std::string source = {},
                              std::string alternative = {}) const {
    return Provenance{std::move(source), std::move(alternative), fileOf(mark), mark.line,
                      mark.column};
  }

  /// The source given to values an overlay file sets without one.
  [[nodiscard]] std::string overrideSource() const {
    return fmt::format("override in {}", file_);
  }

 private:
  std::string file_;
  ProvenanceMap& provenance_;
  std::vector<std::string> errors_;
};

/// State while flattening a loaded description.
struct FlattenContext {
  const ProvenanceMap& provenance;
  std::vector<SpecEntry>& out;
  std::string record;  ///< innermost enclosing record path
};

inline std::string joinPath(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

/// The closest of `candidates` to `key` by edit distance, if close enough to be a typo.
std::optional<std::string> closestKey(std::string_view key,
                                      const std::vector<std::string>& candidates);

// ---- Fields -------------------------------------------------------------------------------------

/// One key of a Schema<S>.
template <typename S>
class Field {
 public:
  Field(std::string key, std::string doc) : key_(std::move(key)), doc_(std::move(doc)) {}
  Field(const Field&) = delete;
  Field& operator=(const Field&) = delete;
  virtual ~Field() = default;

  [[nodiscard]] const std::string& key() const { return key_; }
  [[nodiscard]] const std::string& doc() const { return doc_; }
  [[nodiscard]] virtual bool required() const { return true; }

  virtual void load(const ConfigNode& node, S& obj, LoadContext& ctx, const std::string& path,
                    const LoadScope& scope) const = 0;
  virtual void flatten(const S& obj, const std::string& path, FlattenContext& ctx) const = 0;
  virtual void describe(const std::string& path, bool inRecord,
                        std::vector<SchemaEntry>& out) const = 0;

 private:
  std::string key_;
  std::string doc_;
};

template <typename S>
class Schema;

/// A value: an integer, quantity, ratio, enum, string, formula, or a list/optional of those.
template <typename S, typename T>
class LeafField final : public Field<S> {
 public:
  using Element = typename ElementOf<T>::Type;

  LeafField(std::string key, T S::*member, std::string doc)
      : Field<S>(std::move(key), std::move(doc)), member_(member) {}

  /// Smallest allowed value (of each item for lists).
  LeafField& min(Element lo) {
    lo_ = std::move(lo);
    return *this;
  }
  /// Largest allowed value.
  LeafField& max(Element hi) {
    hi_ = std::move(hi);
    return *this;
  }
  LeafField& range(Element lo, Element hi) { return min(std::move(lo)).max(std::move(hi)); }
  /// An upper bound that only keeps arithmetic far from overflow: enforced, but not shown as
  /// part of the documented range.
  LeafField& limit(Element hi) {
    hiIsGuard_ = true;
    return max(std::move(hi));
  }
  /// A unit label appended to plain numbers when printed, e.g. "cycles", "TFLOPS".
  LeafField& unit(std::string label) {
    unit_ = std::move(label);
    return *this;
  }
  /// A meta key (name, description, ...): a bare value without a source.
  LeafField& plain() {
    plain_ = true;
    return *this;
  }
  /// The key may be omitted; the member keeps its default.
  LeafField& optional() {
    optional_ = true;
    return *this;
  }

  [[nodiscard]] bool required() const override { return !optional_ && !kIsOptional<T>; }

  void load(const ConfigNode& node, S& obj, LoadContext& ctx, const std::string& path,
            const LoadScope& scope) const override {
    const ConfigNode* valueNode = &node;
    Provenance provenance = ctx.at(node.mark);
    if (scope.record != nullptr) {
      provenance.source = scope.record->source;
      provenance.alternative = scope.record->alternative;
      if (node.kind == ConfigNode::Kind::kMap) {
        ctx.error(node.mark, path,
                  fmt::format("expected a {}, got a mapping (fields of a record are plain "
                              "values; the record's `source:` covers them)",
                              Codec<T>::kind()));
        return;
      }
    } else if (!plain_ && node.kind == ConfigNode::Kind::kMap) {
      valueNode = unwrapSourced(node, ctx, path, scope, provenance);
      if (valueNode == nullptr) {
        return;
      }
    } else if (!plain_) {
      if (!scope.overlay) {
        ctx.error(node.mark, path,
                  fmt::format("missing source: write {{value: {}, source: \"...\"}}; every value "
                              "cites where it comes from",
                              node.kind == ConfigNode::Kind::kScalar ? node.scalar : "..."));
        return;
      }
      provenance.source = ctx.overrideSource();
    }
    Mark where = valueNode->mark;
    Result<T> parsed = Codec<T>::parse(*valueNode, where);
    if (!parsed.ok()) {
      ctx.error(where, path, parsed.status().message());
      return;
    }
    if (const std::optional<std::string> problem = checkRange(*parsed)) {
      ctx.error(valueNode->mark, path, *problem);
      return;
    }
    obj.*member_ = std::move(parsed).value();
    provenance.line = valueNode->mark.line;
    provenance.column = valueNode->mark.column;
    ctx.provenance()[path] = std::move(provenance);
  }

  void flatten(const S& obj, const std::string& path, FlattenContext& ctx) const override {
    const T& value = obj.*member_;
    if constexpr (kIsOptional<T>) {
      if (!value) {
        return;
      }
    }
    SpecEntry entry;
    entry.path = path;
    entry.value = unit_.empty() ? Codec<T>::render(value)
                                : fmt::format("{} {}", Codec<T>::render(value), unit_);
    entry.kind = kindText();
    entry.doc = this->doc();
    entry.meta = plain_;
    entry.record = ctx.record;
    if (const auto it = ctx.provenance.find(path); it != ctx.provenance.end()) {
      entry.provenance = it->second;
    }
    if constexpr (requires { Codec<T>::number(value); }) {
      entry.number = Codec<T>::number(value);
    }
    ctx.out.push_back(std::move(entry));
  }

  void describe(const std::string& path, bool inRecord,
                std::vector<SchemaEntry>& out) const override {
    std::string rangeText;
    if constexpr (requires(Element e) { Codec<Element>::render(e); }) {
      if (lo_ && hi_ && !hiIsGuard_) {
        rangeText = fmt::format("{} .. {}", Codec<Element>::render(*lo_),
                                Codec<Element>::render(*hi_));
      } else if (lo_) {
        rangeText = fmt::format(">= {}", Codec<Element>::render(*lo_));
      } else if (hi_ && !hiIsGuard_) {
        rangeText = fmt::format("<= {}", Codec<Element>::render(*hi_));
      }
    }
    out.push_back(SchemaEntry{path, kindText(), rangeText, this->doc(), required(),
                              !plain_ && !inRecord});
  }

 private:
  std::string kindText() const {
    return unit_.empty() ? Codec<T>::kind() : fmt::format("{} ({})", Codec<T>::kind(), unit_);
  }

  /// Checks the keys of {value, source, alternative}; returns the value node or null.
  const ConfigNode* unwrapSourced(const ConfigNode& node, LoadContext& ctx,
                                  const std::string& path, const LoadScope& scope,
                                  Provenance& provenance) const {
    const ConfigNode* value = nullptr;
    bool ok = true;
    for (const ConfigEntry& entry : node.entries) {
      if (entry.key == "value") {
        value = &entry.value;
      } else if (entry.key == "source" || entry.key == "alternative") {
        if (entry.value.kind != ConfigNode::Kind::kScalar || entry.value.scalar.empty()) {
          ctx.error(entry.value.mark, path,
                    fmt::format("`{}` must be a non-empty text", entry.key));
          ok = false;
        } else {
          (entry.key == "source" ? provenance.source : provenance.alternative) =
              entry.value.scalar;
        }
      } else {
        ctx.error(entry.keyMark, path,
                  fmt::format("unknown key '{}' in a sourced value; expected value, source and "
                              "optionally alternative",
                              entry.key));
        ok = false;
      }
    }
    if (value == nullptr) {
      ctx.error(node.mark, path, "missing `value:` in {value, source}");
      return nullptr;
    }
    if (provenance.source.empty()) {
      if (!scope.overlay) {
        ctx.error(node.mark, path,
                  "missing source: add `source: \"...\"`; every value cites where it comes from");
        return nullptr;
      }
      provenance.source = ctx.overrideSource();
    }
    return ok ? value : nullptr;
  }

  std::optional<std::string> checkRange(const T& value) const {
    std::optional<std::string> problem;
    if constexpr (std::totally_ordered<Element> &&
                  requires(Element e) { Codec<Element>::render(e); }) {
      ElementOf<T>::forEach(value, [&](const Element& v) {
        if (problem) {
          return;
        }
        if (lo_ && v < *lo_) {
          problem = *lo_ == Element{}
                        ? fmt::format("'{}' is negative; expected a value >= 0",
                                      Codec<Element>::render(v))
                        : fmt::format("'{}' is out of range; expected a value {}",
                                      Codec<Element>::render(v), boundsText());
        } else if (hi_ && *hi_ < v) {
          problem = fmt::format("'{}' is out of range; expected a value {}",
                                Codec<Element>::render(v), boundsText());
        }
      });
    }
    return problem;
  }

  std::string boundsText() const {
    if (lo_ && hi_) {
      return fmt::format("in [{}, {}]", Codec<Element>::render(*lo_),
                         Codec<Element>::render(*hi_));
    }
    return lo_ ? fmt::format(">= {}", Codec<Element>::render(*lo_))
               : fmt::format("<= {}", Codec<Element>::render(*hi_));
  }

  T S::*member_;
  std::optional<Element> lo_;
  std::optional<Element> hi_;
  std::string unit_;
  bool plain_ = false;
  bool optional_ = false;
  bool hiIsGuard_ = false;
};

/// A nested struct written as a mapping.
template <typename S, typename C>
class NestedField final : public Field<S> {
 public:
  NestedField(std::string key, C S::*member, const Schema<C>& schema, std::string doc)
      : Field<S>(std::move(key), std::move(doc)), member_(member), schema_(schema) {}

  /// The mapping may be omitted; the member keeps its default.
  NestedField& optional() {
    optional_ = true;
    return *this;
  }
  [[nodiscard]] bool required() const override { return !optional_; }

  void load(const ConfigNode& node, S& obj, LoadContext& ctx, const std::string& path,
            const LoadScope& scope) const override {
    if (node.kind != ConfigNode::Kind::kMap) {
      ctx.error(node.mark, path,
                fmt::format("expected a mapping with keys {}; got {}", schema_.keyList(),
                            node.describe()));
      return;
    }
    schema_.loadMap(node, obj.*member_, ctx, path, scope, false);
  }
  void flatten(const S& obj, const std::string& path, FlattenContext& ctx) const override {
    schema_.flatten(obj.*member_, path, ctx);
  }
  void describe(const std::string& path, bool inRecord,
                std::vector<SchemaEntry>& out) const override {
    schema_.describe(path, inRecord, out);
  }

 private:
  C S::*member_;
  const Schema<C>& schema_;
  bool optional_ = false;
};

/// Loads one record (a mapping with plain fields and its own `source:`).
template <typename C>
void loadRecord(const ConfigNode& node, C& record, LoadContext& ctx, const std::string& path,
                const LoadScope& scope, bool existed, const Schema<C>& schema) {
  if (node.kind != ConfigNode::Kind::kMap) {
    ctx.error(node.mark, path,
              fmt::format("expected a record (a mapping with keys {} and source); got {}",
                          schema.keyList(), node.describe()));
    return;
  }
  Provenance provenance = ctx.at(node.mark);
  for (const char* key : {"source", "alternative"}) {
    if (const ConfigNode* text = node.find(key)) {
      if (text->kind != ConfigNode::Kind::kScalar || text->scalar.empty()) {
        ctx.error(text->mark, path, fmt::format("`{}` must be a non-empty text", key));
        return;
      }
      (std::string_view(key) == "source" ? provenance.source : provenance.alternative) =
          text->scalar;
    }
  }
  // An overlay that changes some fields of an existing record without giving a new source keeps
  // the record's provenance; only the fields it writes get "override in <file>".
  bool keepRecordProvenance = false;
  if (provenance.source.empty()) {
    if (scope.overlay && existed) {
      provenance.source = ctx.overrideSource();
      keepRecordProvenance = true;
    } else if (scope.record != nullptr) {
      provenance.source = scope.record->source;
      provenance.alternative = scope.record->alternative;
    } else if (scope.overlay) {
      provenance.source = ctx.overrideSource();
    } else {
      ctx.error(node.mark, path,
                "missing source: add `source: \"...\"` to the record; every value cites where "
                "it comes from");
      return;
    }
  }
  if (!keepRecordProvenance) {
    ctx.provenance()[path] = provenance;
  }
  const LoadScope inner{scope.overlay && existed, &provenance};
  schema.loadMap(node, record, ctx, path, inner, true);
}

/// A mapping of name -> record, kept in file order in a std::vector<C>.
template <typename S, typename C>
class RecordMapField final : public Field<S> {
 public:
  RecordMapField(std::string key, std::vector<C> S::*member, std::string C::*name,
                 const Schema<C>& schema, std::string placeholder, std::string doc)
      : Field<S>(std::move(key), std::move(doc)),
        member_(member),
        name_(name),
        schema_(schema),
        placeholder_(std::move(placeholder)) {}

  void load(const ConfigNode& node, S& obj, LoadContext& ctx, const std::string& path,
            const LoadScope& scope) const override {
    if (node.kind != ConfigNode::Kind::kMap) {
      ctx.error(node.mark, path,
                fmt::format("expected a mapping of {} to records; got {}", placeholder_,
                            node.describe()));
      return;
    }
    std::vector<C>& records = obj.*member_;
    for (const ConfigEntry& entry : node.entries) {
      const std::string childPath = joinPath(path, entry.key);
      if (entry.key.empty() || !std::all_of(entry.key.begin(), entry.key.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
          })) {
        ctx.error(entry.keyMark, childPath,
                  "names may only use lower-case letters, digits and '_'");
        continue;
      }
      auto it = std::find_if(records.begin(), records.end(),
                             [&](const C& r) { return r.*name_ == entry.key; });
      const bool existed = it != records.end();
      if (!existed) {
        records.emplace_back();
        records.back().*name_ = entry.key;
        it = records.end() - 1;
      }
      loadRecord(entry.value, *it, ctx, childPath, scope, existed, schema_);
    }
  }

  void flatten(const S& obj, const std::string& path, FlattenContext& ctx) const override {
    const std::string outer = ctx.record;
    for (const C& record : obj.*member_) {
      const std::string childPath = joinPath(path, record.*name_);
      ctx.record = childPath;
      schema_.flatten(record, childPath, ctx);
    }
    ctx.record = outer;
  }

  void describe(const std::string& path, bool /*inRecord*/,
                std::vector<SchemaEntry>& out) const override {
    out.push_back(SchemaEntry{joinPath(path, placeholder_), "record", "", this->doc(), true, true});
    schema_.describe(joinPath(path, placeholder_), true, out);
  }

 private:
  std::vector<C> S::*member_;
  std::string C::*name_;
  const Schema<C>& schema_;
  std::string placeholder_;
};

/// A list of records; an overlay file replaces the whole list.
template <typename S, typename C>
class RecordListField final : public Field<S> {
 public:
  RecordListField(std::string key, std::vector<C> S::*member, const Schema<C>& schema,
                  std::string doc)
      : Field<S>(std::move(key), std::move(doc)), member_(member), schema_(schema) {}

  void load(const ConfigNode& node, S& obj, LoadContext& ctx, const std::string& path,
            const LoadScope& scope) const override {
    if (node.kind != ConfigNode::Kind::kSequence) {
      ctx.error(node.mark, path, fmt::format("expected a list of records; got {}",
                                             node.describe()));
      return;
    }
    std::vector<C> records(node.items.size());
    for (std::size_t i = 0; i < node.items.size(); ++i) {
      loadRecord(node.items[i], records[i], ctx, fmt::format("{}[{}]", path, i), scope, false,
                 schema_);
    }
    obj.*member_ = std::move(records);
  }

  void flatten(const S& obj, const std::string& path, FlattenContext& ctx) const override {
    const std::string outer = ctx.record;
    const std::vector<C>& records = obj.*member_;
    for (std::size_t i = 0; i < records.size(); ++i) {
      ctx.record = fmt::format("{}[{}]", path, i);
      schema_.flatten(records[i], ctx.record, ctx);
    }
    ctx.record = outer;
  }

  void describe(const std::string& path, bool /*inRecord*/,
                std::vector<SchemaEntry>& out) const override {
    out.push_back(SchemaEntry{path + "[]", "list of records", "", this->doc(), true, true});
    schema_.describe(path + "[]", true, out);
  }

 private:
  std::vector<C> S::*member_;
  const Schema<C>& schema_;
};

// ---- Schema -------------------------------------------------------------------------------------

/// The declared fields of struct S, in YAML order.
template <typename S>
class Schema {
 public:
  Schema() = default;
  Schema(Schema&&) noexcept = default;
  Schema& operator=(Schema&&) noexcept = default;

  /// Declares a value. `member` may belong to a base class of S.
  template <typename T, typename Base>
    requires std::is_base_of_v<Base, S>
  LeafField<S, T>& leaf(std::string key, T Base::*member, std::string doc) {
    auto field = std::make_unique<LeafField<S, T>>(std::move(key), static_cast<T S::*>(member),
                                                   std::move(doc));
    LeafField<S, T>& ref = *field;
    fields_.push_back(std::move(field));
    return ref;
  }

  /// Declares a nested struct.
  template <typename C, typename Base>
    requires std::is_base_of_v<Base, S>
  NestedField<S, C>& nested(std::string key, C Base::*member, const Schema<C>& schema,
                            std::string doc) {
    auto field = std::make_unique<NestedField<S, C>>(std::move(key), static_cast<C S::*>(member),
                                                     schema, std::move(doc));
    NestedField<S, C>& ref = *field;
    fields_.push_back(std::move(field));
    return ref;
  }

  /// Declares a mapping of name -> record; `placeholder` names the key in docs ("<class>").
  template <typename C>
  void recordMap(std::string key, std::vector<C> S::*member, std::string C::*name,
                 const Schema<C>& schema, std::string placeholder, std::string doc) {
    fields_.push_back(std::make_unique<RecordMapField<S, C>>(
        std::move(key), member, name, schema, std::move(placeholder), std::move(doc)));
  }

  /// Declares a list of records.
  template <typename C>
  void recordList(std::string key, std::vector<C> S::*member, const Schema<C>& schema,
                  std::string doc) {
    fields_.push_back(
        std::make_unique<RecordListField<S, C>>(std::move(key), member, schema, std::move(doc)));
  }

  /// Loads the entries of mapping `node` into `obj`, rejecting unknown keys and, unless the
  /// scope is an overlay, reporting missing required keys. `isRecord` admits source/alternative.
  void loadMap(const ConfigNode& node, S& obj, LoadContext& ctx, const std::string& path,
               const LoadScope& scope, bool isRecord) const {
    for (const ConfigEntry& entry : node.entries) {
      if (isRecord && (entry.key == "source" || entry.key == "alternative")) {
        continue;
      }
      const Field<S>* field = find(entry.key);
      if (field == nullptr) {
        ctx.error(entry.keyMark, joinPath(path, entry.key), unknownKeyMessage(entry.key));
        continue;
      }
      field->load(entry.value, obj, ctx, joinPath(path, entry.key), scope);
    }
    if (scope.overlay) {
      return;
    }
    for (const auto& field : fields_) {
      if (field->required() && node.find(field->key()) == nullptr) {
        ctx.error(node.mark, joinPath(path, field->key()),
                  fmt::format("missing required key '{}' ({})", field->key(), field->doc()));
      }
    }
  }

  void flatten(const S& obj, const std::string& path, FlattenContext& ctx) const {
    for (const auto& field : fields_) {
      field->flatten(obj, joinPath(path, field->key()), ctx);
    }
  }

  void describe(const std::string& path, bool inRecord, std::vector<SchemaEntry>& out) const {
    for (const auto& field : fields_) {
      field->describe(joinPath(path, field->key()), inRecord, out);
    }
  }

  /// The declared keys joined with ", ".
  [[nodiscard]] std::string keyList() const {
    std::string out;
    for (const auto& field : fields_) {
      out += fmt::format("{}{}", out.empty() ? "" : ", ", field->key());
    }
    return out;
  }

 private:
  const Field<S>* find(std::string_view key) const {
    for (const auto& field : fields_) {
      if (field->key() == key) {
        return field.get();
      }
    }
    return nullptr;
  }

  std::string unknownKeyMessage(const std::string& key) const {
    std::vector<std::string> keys;
    for (const auto& field : fields_) {
      keys.push_back(field->key());
    }
    if (const auto guess = closestKey(key, keys)) {
      return fmt::format("unknown key '{}'; did you mean '{}'?", key, *guess);
    }
    return fmt::format("unknown key '{}'; expected one of {}", key, keyList());
  }

  std::vector<std::unique_ptr<Field<S>>> fields_;
};

}  // namespace trn::spec::detail
