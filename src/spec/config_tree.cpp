#include "config_tree.h"

#include <algorithm>
#include <exception>
#include <new>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace trn::spec::detail {
namespace {

constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxNodes = 1'000'000;

Mark toMark(const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) {
    return {};
  }
  return {mark.line + 1, mark.column + 1};
}

class Converter {
 public:
  explicit Converter(std::string_view file) : file_(file) {}

  Result<ConfigNode> convert(const YAML::Node& node, Mark fallback, int depth) {
    if (depth > kMaxDepth) {
      return error(fallback, fmt::format("nesting deeper than {} levels (a recursive alias?)",
                                         kMaxDepth));
    }
    if (++nodes_ > kMaxNodes) {
      return error(fallback, "the document is too large (too many aliases?)");
    }
    ConfigNode out;
    out.mark = toMark(node.Mark());
    if (out.mark.line == 0) {
      out.mark = fallback;
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out.kind = ConfigNode::Kind::kNull;
        out.mark = fallback.line != 0 ? fallback : out.mark;
        return out;
      case YAML::NodeType::Scalar:
        out.kind = ConfigNode::Kind::kScalar;
        out.scalar = node.Scalar();
        return out;
      case YAML::NodeType::Sequence:
        out.kind = ConfigNode::Kind::kSequence;
        for (const YAML::Node& item : node) {
          TRN_ASSIGN_OR_RETURN(ConfigNode child, convert(item, out.mark, depth + 1));
          out.items.push_back(std::move(child));
        }
        return out;
      case YAML::NodeType::Map:
        out.kind = ConfigNode::Kind::kMap;
        for (auto it = node.begin(); it != node.end(); ++it) {
          const Mark keyMark = toMark(it->first.Mark());
          if (!it->first.IsScalar()) {
            return error(keyMark.line != 0 ? keyMark : out.mark, "mapping keys must be plain names");
          }
          const std::string key = it->first.Scalar();
          if (const ConfigEntry* previous = out.findEntry(key)) {
            return error(keyMark, fmt::format("duplicate key '{}' (first defined at line {})", key,
                                              previous->keyMark.line));
          }
          TRN_ASSIGN_OR_RETURN(ConfigNode value, convert(it->second, keyMark, depth + 1));
          out.entries.push_back(ConfigEntry{key, keyMark, std::move(value)});
        }
        return out;
    }
    return error(out.mark, "unsupported YAML node");
  }

  Status error(Mark mark, std::string_view message) const {
    return parseError(fmt::format("{}:{}:{}: {}", file_, std::max(mark.line, 1),
                                  std::max(mark.column, 1), message));
  }

 private:
  std::string_view file_;
  std::size_t nodes_ = 0;
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
  Converter converter(file);
  try {
    const std::vector<YAML::Node> documents = YAML::LoadAll(std::string(text));
    if (documents.empty()) {
      ConfigNode empty;
      empty.mark = {1, 1};
      return empty;
    }
    if (documents.size() > 1) {
      return converter.error({1, 1}, fmt::format("expected one YAML document, found {}",
                                                 documents.size()));
    }
    return converter.convert(documents.front(), {1, 1}, 0);
  } catch (const YAML::Exception& e) {
    return converter.error(toMark(e.mark), fmt::format("YAML syntax error: {}", e.msg));
  } catch (const std::bad_alloc&) {
    return converter.error({1, 1}, "out of memory while parsing YAML");
  } catch (const std::exception& e) {
    return converter.error({1, 1}, fmt::format("cannot parse YAML: {}", e.what()));
  }
}

}  // namespace trn::spec::detail
