#include "trn/spec/engine.h"

#include <fmt/format.h>

namespace trn::spec {
namespace {

/// NKI's names of the engines, in kEngineNames' order.
constexpr std::array<std::string_view, kNumEngines> kNkiNames = {"tensor", "scalar", "vector",
                                                                  "gpsimd", "sync"};

}  // namespace

std::string_view engineName(Engine engine) {
  return kEngineNames[static_cast<std::size_t>(engine)].second;
}

Result<Engine> parseEngine(std::string_view text) {
  for (std::size_t i = 0; i < kEngineNames.size(); ++i) {
    if (text == kEngineNames[i].second || text == kNkiNames[i]) {
      return kEngineNames[i].first;
    }
  }
  return invalidArgument(
      fmt::format("unknown engine '{}'; expected pe, act, dve, pool or sp (or tensor, scalar, "
                  "vector, gpsimd, sync)",
                  text));
}

std::string EngineSet::toString() const {
  std::string out;
  for (const Engine e : kAllEngines) {
    if (contains(e)) {
      out += out.empty() ? "" : "|";
      out += engineName(e);
    }
  }
  return out;
}

}  // namespace trn::spec
