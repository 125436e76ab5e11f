// ConfigNode: a YAML document converted into a plain tree that remembers, for every node, the
// file and 1-based line/column it came from. It is the only place that touches the YAML library
// (libyaml, whose event parser feeds a tree built here); its errors become Status with
// file:line:column. Rejected here too: more than one document, duplicate keys, mapping keys that
// are not plain names, aliases to no anchor or to a node that contains them, nesting deeper than
// 64 levels, and documents over a size budget that counts aliases expanded (so an alias bomb is
// refused before it is expanded). Untagged plain ~, null, Null, NULL and empty values are null;
// every other scalar, quoted or not, is its text.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"

namespace trn::spec::detail {

/// 1-based position in a file; 0 when unknown. `file` names the file when the node came from
/// one included by the file being loaded (a shared costs table); null for that file itself.
struct Mark {
  int line = 0;
  int column = 0;
  const std::string* file = nullptr;
};

struct ConfigEntry;

/// One YAML node: null, scalar, sequence or mapping (entries in file order).
struct ConfigNode {
  enum class Kind { kNull, kScalar, kSequence, kMap };

  Kind kind = Kind::kNull;
  std::string scalar;
  std::vector<ConfigNode> items;
  std::vector<ConfigEntry> entries;
  Mark mark;

  /// The value of `key` in a mapping, or null.
  [[nodiscard]] const ConfigNode* find(std::string_view key) const;
  /// The entry of `key` in a mapping, or null.
  [[nodiscard]] const ConfigEntry* findEntry(std::string_view key) const;
  /// "null", "a scalar", "a list" or "a mapping", for messages.
  [[nodiscard]] std::string_view describe() const;
};

/// A key and its value; `keyMark` is where the key is written.
struct ConfigEntry {
  std::string key;
  Mark keyMark;
  ConfigNode value;
};

/// Parses YAML `text`. `file` is only used in messages ("file:line:column: ...").
/// An empty document gives a null node.
Result<ConfigNode> parseYaml(std::string_view text, std::string_view file);

}  // namespace trn::spec::detail
