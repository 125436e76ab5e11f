// Internal to the scheduler (simulation.cpp): race detection between the cores of one run, on
// the device memory they share. Within a core the hazard detector (hazard_detector.h) orders
// accesses by vector clocks over the core's agents; between cores the only order is the core
// barrier (core_barrier, docs/chip.md). The last slot of every core clock counts the barriers
// it has seen complete (kBarrierSlot), so an access after barrier g carries g; the clock of each
// core's k-th barrier arrival says which of its earlier accesses precede barrier k. An access X
// on core A therefore happens before an access Y on core B != A exactly when some barrier k <= g(Y)
// has an arrival on A that X precedes.
//
// Accesses are found by device address: HBM is cut into 4 KiB granules, and each granule keeps,
// per core, the last access and the last write there (TSan's shadow cells, one per core). A new
// access is tested against the other cores' entries in the granules it touches: exactly (element
// runs) when they meet, and against the happens-before rule above. Keeping only the latest entry
// per core and granule can miss a race that an older access would show, but never reports a
// false one. Without barriers nothing is ever ordered, so entries live for the whole run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "trn/base/status.h"
#include "trn/core/hazard_detector.h"
#include "trn/core/neuron_core.h"
#include "trn/isa/footprint.h"

namespace trn::core {

class CrossCoreRaces {
 public:
  /// `cores` run together (and outlive the checker); only cores on the same device memory can
  /// conflict. `describe(core, owner)` renders an instruction of core `core`, for messages.
  CrossCoreRaces(std::vector<const NeuronCore*> cores,
                 std::function<std::string(std::uint32_t, AccessOwner)> describe);

  /// Per core and HBM tensor, whether its accesses can conflict with another core's: one of the
  /// other cores' tensors overlaps it in the same device memory, and one of the two is written.
  static std::vector<std::vector<std::uint8_t>> checkedTensors(
      std::span<const NeuronCore* const> cores);

  /// Core `core` arrived at its next barrier with clock `arrival`.
  void arrive(std::uint32_t core, const VectorClock& arrival) {
    arrivals_[core].push_back(arrival);
  }

  /// Checks the HBM operands among `operands`, accessed by `agent` of core `core` with clock
  /// `clock`, against the other cores' accesses and records them. Operands of tensors not marked
  /// in `checked` (no other core's tensor overlaps them with a write on either side) are
  /// skipped. Returns the first race found.
  Status access(std::uint32_t core, int agent, AccessOwner owner, const VectorClock& clock,
                std::span<const Operand> operands, std::span<const std::uint8_t> checked);

 private:
  static constexpr int kGranuleShift = 12;
  static constexpr int kPageShift = 10;  ///< granules per page of slots: 4 MiB of HBM
  static constexpr std::uint32_t kNone = 0;

  struct Entry {
    /// Its pattern pointer is cleared once the access is recorded (its instruction's storage is
    /// reused); the exact test decodes the pattern again (`ordinal`) when the shape needs it.
    isa::Footprint footprint;
    std::int64_t base = 0;  ///< device address of the footprint's tensor
    std::uint32_t core = 0;
    std::uint32_t epoch = 0;
    std::int32_t agent = 0;
    AccessOwner owner;
    std::uint8_t ordinal = 0;
    /// The first barrier the access precedes on its core (0: none known yet, after checking the
    /// first `checkedArrivals` arrivals).
    std::uint32_t firstBarrier = 0;
    std::uint32_t checkedArrivals = 0;
  };

  /// Whether entry `e` happens before an access that has seen `barriers` barriers complete.
  bool precedes(Entry& e, std::uint32_t barriers);
  /// The race between entry `earlier` and the new access `entry` when they conflict; OK if not.
  Status test(std::uint32_t earlier, const Entry& entry, std::uint32_t barriers);
  /// Calls fn(granule) for every granule `f` (at `base`) touches.
  template <typename Fn>
  static void forEachGranule(const isa::Footprint& f, std::int64_t base, Fn&& fn);
  /// The slots of `granule`: per core, the last access and the last write (kNone: none).
  std::uint32_t* slotsOf(std::int64_t granule);

  std::vector<const NeuronCore*> cores_;
  std::vector<std::vector<VectorClock>> arrivals_;  ///< per core, the clock of each arrival
  std::vector<Entry> entries_;                      ///< entries_[0] unused
  /// Pages of granule slots, allocated when first touched; the last page used is kept at hand
  /// (an access's granules are mostly on one page).
  std::unordered_map<std::int64_t, std::unique_ptr<std::uint32_t[]>> pages_;
  std::int64_t lastPage_ = -1;
  std::uint32_t* lastPageSlots_ = nullptr;
  std::function<std::string(std::uint32_t, AccessOwner)> describe_;
  /// The instruction being checked, decoded again for its operands' patterns.
  isa::InstructionBody body_;
};

}  // namespace trn::core
