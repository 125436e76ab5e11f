#include "trn/numerics/dtype.h"

#include <fmt/format.h>

#include <cctype>
#include <string>

namespace trn {
namespace {

constexpr bool tableIsIndexedByType() {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (static_cast<int>(kDTypeTraits[static_cast<std::size_t>(i)].type) != i) {
      return false;
    }
  }
  return true;
}
static_assert(tableIsIndexedByType(), "kDTypeTraits must be in DType order");
static_assert(static_cast<int>(DType::kUint32) + 1 == kNumDTypes);

/// Alternative spellings used by NKI (nki.language.*) and NumPy / ml_dtypes.
struct Alias {
  std::string_view name;
  DType type;
};
constexpr Alias kAliases[] = {
    {"float32", DType::kFp32},          {"tfloat32", DType::kTf32},
    {"bfloat16", DType::kBf16},         {"float16", DType::kFp16},
    {"float8_e4m3", DType::kFp8E4m3},   {"float8_e5m2", DType::kFp8E5m2},
    {"float8_e3m4", DType::kFp8E3m4},   {"float8_e4m3fn", DType::kFp8E4m3Fn},
};

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<DType> parseDType(std::string_view text) {
  for (const DTypeTraits& traits : kDTypeTraits) {
    if (equalsIgnoringCase(text, traits.name)) {
      return traits.type;
    }
  }
  for (const Alias& alias : kAliases) {
    if (equalsIgnoringCase(text, alias.name)) {
      return alias.type;
    }
  }
  std::string names;
  for (const DTypeTraits& traits : kDTypeTraits) {
    names += names.empty() ? "" : ", ";
    names += traits.name;
  }
  return invalidArgument(fmt::format(
      "unknown dtype '{}'; valid names are {} (NKI spellings such as bfloat16 or "
      "float8_e4m3 are accepted too)",
      text, names));
}

}  // namespace trn
