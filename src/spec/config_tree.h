// ConfigNode: a YAML document converted into a plain tree that remembers, for every node, the
// file and 1-based line/column it came from. It is the only place that touches yaml-cpp, whose
// exceptions are caught at this boundary and turned into Status with file:line:column. Duplicate
// keys, cyclic aliases and alias bombs are rejected here too.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"

namespace trn::spec::detail {

/// 1-based position in a file; 0 when unknown.
struct Mark {
  int line = 0;
  int column = 0;
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
