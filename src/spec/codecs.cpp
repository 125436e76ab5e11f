#include "codecs.h"

#include <charconv>
#include <system_error>

namespace trn::spec::detail {

Status expectScalar(const ConfigNode& node, std::string_view kind) {
  if (node.kind == ConfigNode::Kind::kScalar) {
    return {};
  }
  return invalidArgument(fmt::format("expected {} (a single value), got {}", kind,
                                     node.describe()));
}

Result<std::int64_t> Codec<std::int64_t>::parse(const ConfigNode& node, Mark& where) {
  where = node.mark;
  TRN_RETURN_IF_ERROR(expectScalar(node, "an integer"));
  const std::string& text = node.scalar;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) {
    return outOfRange(fmt::format("'{}' is too large for an integer", text));
  }
  if (error != std::errc() || end != text.data() + text.size()) {
    return invalidArgument(fmt::format("'{}' is not an integer", text));
  }
  return value;
}

Result<bool> Codec<bool>::parse(const ConfigNode& node, Mark& where) {
  where = node.mark;
  TRN_RETURN_IF_ERROR(expectScalar(node, "true or false"));
  if (node.scalar == "true" || node.scalar == "false") {
    return node.scalar == "true";
  }
  return invalidArgument(fmt::format("'{}' is not a boolean; expected true or false",
                                     node.scalar));
}

Result<std::string> Codec<std::string>::parse(const ConfigNode& node, Mark& where) {
  where = node.mark;
  TRN_RETURN_IF_ERROR(expectScalar(node, "a text"));
  return node.scalar;
}

Result<Ratio> Codec<Ratio>::parse(const ConfigNode& node, Mark& where) {
  where = node.mark;
  TRN_RETURN_IF_ERROR(expectScalar(node, "a number"));
  return Ratio::parse(node.scalar);
}

std::string Codec<DType>::kind() {
  std::string names;
  for (const DType type : allDTypes()) {
    names += fmt::format("{}{}", names.empty() ? "" : ", ", dtypeName(type));
  }
  return fmt::format("one of {}", names);
}

Result<DType> Codec<DType>::parse(const ConfigNode& node, Mark& where) {
  where = node.mark;
  TRN_RETURN_IF_ERROR(expectScalar(node, kind()));
  return parseDType(node.scalar);
}

Result<CostExpression> Codec<CostExpression>::parse(const ConfigNode& node, Mark& where) {
  where = node.mark;
  TRN_RETURN_IF_ERROR(expectScalar(node, "a cycle formula"));
  return CostExpression::parse(node.scalar);
}

}  // namespace trn::spec::detail
