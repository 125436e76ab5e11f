#include "schema.h"

#include <charconv>
#include <system_error>

namespace trn::spec::detail {
namespace {

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> closestKey(std::string_view key,
                                      const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t bestDistance = std::max<std::size_t>(2, key.size() / 4) + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t d = editDistance(key, candidate);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best;
}

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

Result<CostExpression> Codec<CostExpression>::parse(const ConfigNode& node, Mark& where) {
  where = node.mark;
  TRN_RETURN_IF_ERROR(expectScalar(node, "a cycle formula"));
  return CostExpression::parse(node.scalar);
}

}  // namespace trn::spec::detail
