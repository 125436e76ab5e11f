// The instruction streams of a NeuronCore: five in-order sequencers (Tensor/PE, Scalar/ACT,
// Vector/DVE, GpSimd/POOL, Sync/SP), each fetching its own program, plus the DMA queues that
// transfers are issued to. Names follow the Neuron profiler (hardware-trn2.md §3).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "trn/base/status.h"

namespace trn::isa {

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

}  // namespace trn::isa
