#include "config_tree.h"

#include <fmt/format.h>
#include <yaml.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <new>
#include <unordered_map>
#include <utility>

namespace trn::spec::detail {
namespace {

/// A chip description nests about 8 levels; the schema loaders recurse once per level.
constexpr int kMaxDepth = 64;
/// A chip description has about 2000 nodes (trn2: 1800). Counted with alias expansions and the
/// copies kept of anchored nodes, so that an alias bomb is rejected before it is expanded.
constexpr std::size_t kMaxNodes = 100'000;
/// Text of all keys and scalars, alias expansions included; as large as the largest chip file.
constexpr std::size_t kMaxScalarBytes = std::size_t{16} << 20;

int clampToInt(std::size_t value) {
  return value >= static_cast<std::size_t>(INT_MAX) ? INT_MAX : static_cast<int>(value);
}

Mark toMark(const yaml_mark_t& mark) {
  return {clampToInt(mark.line) + 1, clampToInt(mark.column) + 1};
}

/// The line and column (in characters, as libyaml counts them) of byte `offset` of `text`.
Mark markOfOffset(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 0;
  std::size_t column = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool crlf = c == '\r' && i + 1 < text.size() && text[i + 1] == '\n';
    if ((c == '\n' || c == '\r') && !crlf) {
      ++line;
      column = 0;
    } else if ((c & 0xC0) != 0x80 && !crlf) {
      ++column;
    }
  }
  return {clampToInt(line) + 1, clampToInt(column) + 1};
}

/// Owns a libyaml parser reading `text` as UTF-8.
class YamlParser {
 public:
  explicit YamlParser(std::string_view text) {
    initialised_ = yaml_parser_initialize(&parser_) != 0;
    if (initialised_) {
      yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                   text.size());
      yaml_parser_set_encoding(&parser_, YAML_UTF8_ENCODING);
    }
  }
  YamlParser(const YamlParser&) = delete;
  YamlParser& operator=(const YamlParser&) = delete;
  ~YamlParser() {
    if (initialised_) {
      yaml_parser_delete(&parser_);
    }
  }

  [[nodiscard]] bool initialised() const { return initialised_; }
  yaml_parser_t& get() { return parser_; }

 private:
  yaml_parser_t parser_{};
  bool initialised_ = false;
};

/// Owns one parsed event.
class YamlEvent {
 public:
  YamlEvent() = default;
  YamlEvent(const YamlEvent&) = delete;
  YamlEvent& operator=(const YamlEvent&) = delete;
  ~YamlEvent() {
    if (valid_) {
      yaml_event_delete(&event_);
    }
  }

  /// Parses the next event; false on a syntax error (reported by the parser).
  bool next(yaml_parser_t& parser) {
    valid_ = yaml_parser_parse(&parser, &event_) != 0;
    return valid_;
  }
  [[nodiscard]] const yaml_event_t& get() const { return event_; }

 private:
  yaml_event_t event_{};
  bool valid_ = false;
};

/// libyaml's text as a string_view ("" for null).
std::string_view text(const char* chars) {
  return chars == nullptr ? std::string_view() : std::string_view(chars);
}
std::string_view text(const yaml_char_t* chars) {
  return text(reinterpret_cast<const char*>(chars));
}
std::string_view text(const yaml_char_t* chars, std::size_t length) {
  return chars == nullptr ? std::string_view()
                          : std::string_view(reinterpret_cast<const char*>(chars), length);
}

/// How much a subtree costs: its nodes (keys count as nodes), its text and its height.
struct Extent {
  std::size_t nodes = 0;
  std::size_t bytes = 0;
  int height = 0;
};

/// An anchor by name: the node it names once complete, or still open (an alias to it would
/// make the node contain itself). `serial` orders anchors by position in the text, so that a
/// name redefined inside its own node refers to the inner, later definition.
struct Anchor {
  std::size_t serial = 0;
  bool open = true;
  std::shared_ptr<const ConfigNode> node;
  Extent extent;
};

/// A collection being built.
struct Frame {
  ConfigNode node;
  Extent extent;
  std::string anchor;  ///< "" when the collection has none
  std::size_t anchorSerial = 0;
  bool expectKey = true;  ///< mappings: the next node is a key
  std::string key;        ///< mappings: the key waiting for its value
  Mark keyMark;
  std::unordered_map<std::string, int> keyLines;  ///< mappings: line of each key, for duplicates
};

/// Builds the ConfigNode tree from libyaml's events.
class TreeBuilder {
 public:
  TreeBuilder(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  Result<ConfigNode> build() {
    YamlParser parser(text_);
    if (!parser.initialised()) {
      return error({1, 1}, "out of memory while parsing YAML");
    }
    int documents = 0;
    while (true) {
      YamlEvent event;
      if (!event.next(parser.get())) {
        return syntaxError(parser.get());
      }
      const yaml_event_t& e = event.get();
      const Mark at = toMark(e.start_mark);
      switch (e.type) {
        case YAML_STREAM_END_EVENT:
          return std::move(root_);
        case YAML_DOCUMENT_START_EVENT:
          if (++documents > 1) {
            return error(at,
                         "a second YAML document starts here; a chip description is one "
                         "document");
          }
          break;
        case YAML_SCALAR_EVENT:
          TRN_RETURN_IF_ERROR(scalar(e, at));
          break;
        case YAML_ALIAS_EVENT:
          TRN_RETURN_IF_ERROR(alias(text(e.data.alias.anchor), at));
          break;
        case YAML_SEQUENCE_START_EVENT:
          TRN_RETURN_IF_ERROR(
              startCollection(ConfigNode::Kind::kSequence, text(e.data.sequence_start.anchor), at));
          break;
        case YAML_MAPPING_START_EVENT:
          TRN_RETURN_IF_ERROR(
              startCollection(ConfigNode::Kind::kMap, text(e.data.mapping_start.anchor), at));
          break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
          TRN_RETURN_IF_ERROR(endCollection());
          break;
        default:
          break;
      }
    }
  }

 private:
  Status error(Mark mark, std::string_view message) const {
    return parseError(fmt::format("{}:{}:{}: {}", file_, std::max(mark.line, 1),
                                  std::max(mark.column, 1), message));
  }

  Status syntaxError(const yaml_parser_t& p) const {
    const std::string_view problem = p.problem == nullptr ? "malformed YAML" : text(p.problem);
    switch (p.error) {
      case YAML_MEMORY_ERROR:
        return error({1, 1}, "out of memory while parsing YAML");
      case YAML_READER_ERROR: {
        std::string value;
        if (p.problem_value >= 0) {
          value = problem.find("octet") != std::string_view::npos
                      ? fmt::format(" (byte 0x{:02X})", p.problem_value)
                      : fmt::format(" (U+{:04X})", p.problem_value);
        }
        return error(markOfOffset(text_, p.problem_offset),
                     fmt::format("YAML syntax error: {}{}", problem, value));
      }
      default: {
        std::string message = fmt::format("YAML syntax error: {}", problem);
        if (p.context != nullptr) {
          const Mark context = toMark(p.context_mark);
          const Mark problemMark = toMark(p.problem_mark);
          message += context.line == problemMark.line && context.column == problemMark.column
                         ? fmt::format(" ({})", text(p.context))
                         : fmt::format(" ({} at line {}, column {})", text(p.context), context.line,
                                       context.column);
        }
        return error(toMark(p.problem_mark), message);
      }
    }
  }

  /// Charges `extent` to the document's budget; fails when it is exceeded.
  Status charge(const Extent& extent, Mark at, std::string_view what) {
    if (extent.nodes > kMaxNodes - nodes_) {
      return error(at, fmt::format("{} more than {} YAML nodes (aliases counted expanded); a chip "
                                   "description has about 2000",
                                   what, kMaxNodes));
    }
    if (extent.bytes > kMaxScalarBytes - bytes_) {
      return error(at, fmt::format("{} more than {} bytes of keys and values (aliases counted "
                                   "expanded)",
                                   what, kMaxScalarBytes));
    }
    nodes_ += extent.nodes;
    bytes_ += extent.bytes;
    return {};
  }

  Status checkDepth(int height, Mark at) const {
    if (static_cast<int>(stack_.size()) + height > kMaxDepth) {
      return error(at, fmt::format("nested deeper than {} levels; a chip description needs "
                                   "about 8",
                                   kMaxDepth));
    }
    return {};
  }

  /// A key must be a plain name: a collection cannot start where a key is expected.
  Status checkNotKey(Mark at) const {
    if (!stack_.empty() && stack_.back().node.kind == ConfigNode::Kind::kMap &&
        stack_.back().expectKey) {
      return error(at, "mapping keys must be plain names");
    }
    return {};
  }

  Status scalar(const yaml_event_t& e, Mark at) {
    const auto& s = e.data.scalar;
    const std::string_view value = text(s.value, s.length);
    TRN_RETURN_IF_ERROR(checkDepth(0, at));
    const Extent extent{1, value.size(), 0};
    TRN_RETURN_IF_ERROR(charge(extent, at, "the document has"));
    ConfigNode node;
    node.mark = at;
    // As in the YAML core schema, an untagged plain ~, null, Null, NULL or nothing is null.
    const bool isNull =
        s.tag == nullptr && s.style == YAML_PLAIN_SCALAR_STYLE &&
        (value.empty() || value == "~" || value == "null" || value == "Null" || value == "NULL");
    if (!isNull) {
      node.kind = ConfigNode::Kind::kScalar;
      node.scalar = std::string(value);
    }
    const std::string_view anchor = text(s.anchor);
    if (!anchor.empty()) {
      TRN_RETURN_IF_ERROR(charge(extent, at, "the anchors keep"));
      anchors_[std::string(anchor)] =
          Anchor{++serial_, false, std::make_shared<const ConfigNode>(node), extent};
    }
    return add(std::move(node), extent, at);
  }

  Status alias(std::string_view name, Mark at) {
    const auto it = anchors_.find(std::string(name));
    if (it == anchors_.end()) {
      return error(at, fmt::format("alias '*{}' refers to no anchor '&{}' before it", name, name));
    }
    const Anchor& anchor = it->second;
    if (anchor.open) {
      return error(at, fmt::format("alias '*{}' is inside the node it refers to (a recursive "
                                   "alias)",
                                   name));
    }
    TRN_RETURN_IF_ERROR(checkDepth(anchor.extent.height, at));
    TRN_RETURN_IF_ERROR(
        charge(anchor.extent, at, fmt::format("alias '*{}' would make the document", name)));
    return add(ConfigNode(*anchor.node), anchor.extent, at);
  }

  Status startCollection(ConfigNode::Kind kind, std::string_view anchor, Mark at) {
    TRN_RETURN_IF_ERROR(checkNotKey(at));
    TRN_RETURN_IF_ERROR(checkDepth(0, at));
    TRN_RETURN_IF_ERROR(charge(Extent{1, 0, 0}, at, "the document has"));
    Frame frame;
    frame.node.kind = kind;
    frame.node.mark = at;
    frame.extent = Extent{1, 0, 0};
    if (!anchor.empty()) {
      frame.anchor = std::string(anchor);
      frame.anchorSerial = ++serial_;
      anchors_[frame.anchor] = Anchor{frame.anchorSerial, true, nullptr, {}};
    }
    stack_.push_back(std::move(frame));
    return {};
  }

  Status endCollection() {
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    if (!frame.anchor.empty()) {
      Anchor& anchor = anchors_[frame.anchor];
      if (anchor.serial == frame.anchorSerial) {
        TRN_RETURN_IF_ERROR(charge(frame.extent, frame.node.mark, "the anchors keep"));
        anchor = Anchor{frame.anchorSerial, false, std::make_shared<const ConfigNode>(frame.node),
                        frame.extent};
      }
    }
    const Mark start = frame.node.mark;
    return add(std::move(frame.node), frame.extent, start);
  }

  /// Places a complete node: as the root, a list item, a mapping key or a mapping value. A null
  /// node takes the position of its key (or list, or the file start), as it has no text.
  Status add(ConfigNode node, const Extent& extent, Mark at) {
    if (stack_.empty()) {
      root_ = std::move(node);
      if (root_.kind == ConfigNode::Kind::kNull) {
        root_.mark = {1, 1};
      }
      return {};
    }
    Frame& top = stack_.back();
    top.extent.nodes += extent.nodes;
    top.extent.bytes += extent.bytes;
    top.extent.height = std::max(top.extent.height, extent.height + 1);
    if (top.node.kind == ConfigNode::Kind::kSequence) {
      if (node.kind == ConfigNode::Kind::kNull) {
        node.mark = top.node.mark;
      }
      top.node.items.push_back(std::move(node));
      return {};
    }
    if (top.expectKey) {
      if (node.kind != ConfigNode::Kind::kScalar) {
        return error(node.kind == ConfigNode::Kind::kNull ? at : node.mark,
                     "mapping keys must be plain names");
      }
      const auto [previous, inserted] = top.keyLines.try_emplace(node.scalar, node.mark.line);
      if (!inserted) {
        return error(node.mark, fmt::format("duplicate key '{}' (first defined at line {})",
                                            node.scalar, previous->second));
      }
      top.key = std::move(node.scalar);
      top.keyMark = node.mark;
      top.expectKey = false;
      return {};
    }
    if (node.kind == ConfigNode::Kind::kNull) {
      node.mark = top.keyMark;
    }
    top.node.entries.push_back(ConfigEntry{std::move(top.key), top.keyMark, std::move(node)});
    top.expectKey = true;
    return {};
  }

  std::string_view text_;
  std::string_view file_;
  ConfigNode root_{ConfigNode::Kind::kNull, {}, {}, {}, Mark{1, 1}};
  std::vector<Frame> stack_;
  std::unordered_map<std::string, Anchor> anchors_;
  std::size_t serial_ = 0;
  std::size_t nodes_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace

const ConfigEntry* ConfigNode::findEntry(std::string_view key) const {
  for (const ConfigEntry& entry : entries) {
    if (entry.key == key) {
      return &entry;
    }
  }
  return nullptr;
}

const ConfigNode* ConfigNode::find(std::string_view key) const {
  const ConfigEntry* entry = findEntry(key);
  return entry == nullptr ? nullptr : &entry->value;
}

std::string_view ConfigNode::describe() const {
  switch (kind) {
    case Kind::kNull: return "nothing";
    case Kind::kScalar: return "a scalar";
    case Kind::kSequence: return "a list";
    case Kind::kMap: return "a mapping";
  }
  return "?";
}

Result<ConfigNode> parseYaml(std::string_view text, std::string_view file) {
  try {
    return TreeBuilder(text, file).build();
  } catch (const std::bad_alloc&) {
    return parseError(fmt::format("{}:1:1: out of memory while parsing YAML", file));
  }
}

}  // namespace trn::spec::detail
