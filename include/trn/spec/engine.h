// The engines of a NeuronCore, the one enum every layer uses: five in-order sequencers
// (Tensor/PE, Scalar/ACT, Vector/DVE, GpSimd/POOL, Sync/SP), each fetching its own instruction
// stream. The chip description costs instructions per engine, the ISA names which engines may
// issue an instruction, the core runs one sequencer per engine. Names follow the Neuron profiler
// (hardware-trn2.md §3).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "trn/base/status.h"

namespace trn::spec {

/// A sequencer of the core.
enum class Engine : std::uint8_t {
  kPe,    ///< Tensor engine: matmul, transpose
  kAct,   ///< Scalar engine: activation functions
  kDve,   ///< Vector engine: element-wise, reductions, shuffles
  kPool,  ///< GpSimd engine: iota, masks, gathers, partition reductions
  kSp,    ///< Sync engine: a sequencer without a data path, used to trigger DMAs
};

inline constexpr int kNumEngines = 5;

/// All engines in a fixed order (the order used for deterministic scheduling).
inline constexpr std::array<Engine, kNumEngines> kAllEngines = {Engine::kPe, Engine::kAct,
                                                                Engine::kDve, Engine::kPool,
                                                                Engine::kSp};

/// Each engine's short lower-case name, used in program text and chip YAML.
inline constexpr std::array<std::pair<Engine, std::string_view>, kNumEngines> kEngineNames = {{
    {Engine::kPe, "pe"},
    {Engine::kAct, "act"},
    {Engine::kDve, "dve"},
    {Engine::kPool, "pool"},
    {Engine::kSp, "sp"},
}};

/// Short lower-case name used in program text: "pe", "act", "dve", "pool", "sp".
std::string_view engineName(Engine engine);

/// Parses an engine name; also accepts the NKI names tensor, scalar, vector, gpsimd, sync.
Result<Engine> parseEngine(std::string_view text);

/// A set of engines, e.g. those allowed to issue an instruction.
class EngineSet {
 public:
  constexpr EngineSet() = default;
  constexpr EngineSet(std::initializer_list<Engine> engines) {
    for (const Engine e : engines) {
      bits_ |= bit(e);
    }
  }
  [[nodiscard]] constexpr bool contains(Engine e) const { return (bits_ & bit(e)) != 0; }
  [[nodiscard]] constexpr bool empty() const { return bits_ == 0; }
  /// "pe|act" style list of the members.
  [[nodiscard]] std::string toString() const;

 private:
  static constexpr std::uint8_t bit(Engine e) {
    return static_cast<std::uint8_t>(1u << static_cast<unsigned>(e));
  }
  std::uint8_t bits_ = 0;
};

}  // namespace trn::spec
