#include "trn/isa/engine.h"

#include <fmt/format.h>

namespace trn::isa {
namespace {

struct EngineNames {
  Engine engine;
  std::string_view name;
  std::string_view nkiName;
};

constexpr std::array<EngineNames, kNumEngines> kNames = {{
    {Engine::kPe, "pe", "tensor"},
    {Engine::kAct, "act", "scalar"},
    {Engine::kDve, "dve", "vector"},
    {Engine::kPool, "pool", "gpsimd"},
    {Engine::kSp, "sp", "sync"},
}};

}  // namespace

std::string_view engineName(Engine engine) {
  return kNames[static_cast<std::size_t>(engine)].name;
}

Result<Engine> parseEngine(std::string_view text) {
  for (const EngineNames& n : kNames) {
    if (text == n.name || text == n.nkiName) {
      return n.engine;
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

}  // namespace trn::isa
