// Sequencer control instructions: synchronisation-only no-ops, the 32-bit scalar registers with
// branches that give dynamic loops (hardware-trn2.md §3 "control instructions"), and the barrier
// between the cores of a logical core (§2).
#pragma once

#include <tuple>

#include "trn/base/status.h"
#include "trn/isa/exec_context.h"
#include "trn/isa/field.h"
#include "trn/isa/instruction.h"
#include "trn/isa/replica_groups.h"
#include "trn/isa/type_list.h"

namespace trn::isa {

/// Does nothing; carries semaphore waits and updates on its own.
struct Nop {
  static constexpr InstrInfo kInfo{
      "nop",
      0x0600,
      {Engine::kPe, Engine::kAct, Engine::kDve, Engine::kPool, Engine::kSp},
      "control",
      "no operation; used for a bare semaphore wait/update"};
  static constexpr auto fields() { return std::tuple{}; }
  [[nodiscard]] Status execute(ExecContext& /*ctx*/) const { return {}; }
};

/// reg[dst] = value.
struct RegSet {
  static constexpr InstrInfo kInfo{
      "reg_set",
      0x0601,
      {Engine::kPe, Engine::kAct, Engine::kDve, Engine::kPool, Engine::kSp},
      "control",
      "set a sequencer register to a constant"};
  std::int64_t reg = 0;
  std::int64_t value = 0;
  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"reg", &RegSet::reg, FieldRole::kImmediate, "register index"},
        FieldDesc{"value", &RegSet::value, FieldRole::kImmediate, "32-bit signed value"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// reg[dst] += value (32-bit wrap-around).
struct RegAdd {
  static constexpr InstrInfo kInfo{
      "reg_add",
      0x0602,
      {Engine::kPe, Engine::kAct, Engine::kDve, Engine::kPool, Engine::kSp},
      "control",
      "add a constant to a sequencer register"};
  std::int64_t reg = 0;
  std::int64_t value = 0;
  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"reg", &RegAdd::reg, FieldRole::kImmediate, "register index"},
        FieldDesc{"value", &RegAdd::value, FieldRole::kImmediate, "32-bit signed addend"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// If reg[reg] != 0, continue at instruction `target` of this engine's stream.
struct BranchNonZero {
  static constexpr InstrInfo kInfo{
      "branch_nz",
      0x0603,
      {Engine::kPe, Engine::kAct, Engine::kDve, Engine::kPool, Engine::kSp},
      "control",
      "jump to an instruction of this stream if a register is non-zero"};
  std::int64_t reg = 0;
  std::int64_t target = 0;
  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"reg", &BranchNonZero::reg, FieldRole::kImmediate, "register index"},
        FieldDesc{"target", &BranchNonZero::target, FieldRole::kImmediate,
                  "instruction index within this engine's stream"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& ctx) const;
};

/// Synchronises the cores of a logical core (NKI `nisa.core_barrier`, NC-v3 and later): the k-th
/// barrier a core reaches completes when every core of its logical core has reached its k-th, and
/// everything that happened before each arrival happens before everything after the barrier on
/// every core of the group. On a core that runs alone it completes at once. docs/chip.md.
struct CoreBarrier {
  static constexpr InstrInfo kInfo{
      "core_barrier",
      0x0604,
      {Engine::kPe, Engine::kAct, Engine::kDve, Engine::kPool, Engine::kSp},
      "control",
      "wait until every core of the logical core reaches its barrier"};
  static constexpr auto fields() { return std::tuple{}; }
  [[nodiscard]] Status execute(ExecContext& /*ctx*/) const { return {}; }
};

/// Exchanges SBUF tiles between the two cores of an LNC=2 pair (NKI `nisa.sendrecv` over the
/// shared DMA engines, NC-v3 and later): this core's `src` goes to the peer's `dst` and the peer's
/// `src` to this core's `dst`. The k-th sendrecv a core issues meets the peer's k-th; both complete
/// together, after the later of the two arrives and the bytes have crossed. docs/chip.md.
struct SendRecv {
  static constexpr InstrInfo kInfo{
      "sendrecv",
      0x0605,
      {Engine::kPe, Engine::kAct, Engine::kDve, Engine::kPool, Engine::kSp},
      "control",
      "exchange SBUF tiles with the other core of an LNC=2 pair"};
  AccessPattern dst;
  AccessPattern src;
  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"dst", &SendRecv::dst, FieldRole::kOutput,
                  "SBUF tile that receives the peer's src"},
        FieldDesc{"src", &SendRecv::src, FieldRole::kInput, "SBUF tile sent to the peer's dst"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& /*ctx*/) const { return {}; }  // the scheduler's
};

/// A collective over the ranks of a system run (NKI `nki.collectives` on HBM tensors; each rank
/// is one core on its own chip, rank r on chip r, runtime::Session::runRanks), or, with replica
/// `groups`, over the members of each rank's group only. The k-th collective a rank issues meets
/// the k-th of every other member of its group; the members complete together, when the fabric
/// model's time for the operation over the group's chips has passed after the last arrival, and
/// groups proceed independently. `src` and `dst` are contiguous HBM ranges of one dtype; per
/// rank, for a group of N ranks (position i of rank r being r's place in its group's list):
/// all_reduce and all_to_all take and give equal sizes, all_gather gives N times src,
/// reduce_scatter gives 1/N of src, broadcast copies the group's first rank's src to every dst,
/// permute sends src to the next member's dst. Reductions (`reduce`
/// add, max or min) are in fp32 or bf16, in the order docs/collectives.md gives. all_to_allv
/// (NKI all_to_all_v) moves per-pair counts that `counts`, a uint32 HBM tensor of 2 to 4 rows of
/// the group size (send counts, send displacements, receive counts, receive displacements, in
/// elements), gives when it runs; src and dst may then differ in size.
struct Collective {
  static constexpr InstrInfo kInfo{
      "collective",
      0x0606,
      {Engine::kPe, Engine::kAct, Engine::kDve, Engine::kPool, Engine::kSp},
      "control",
      "an all-reduce, all-gather, reduce-scatter, all-to-all (or all-to-all-v), broadcast or "
      "permute of HBM tensors over the ranks of a system run or of each rank's replica group"};
  CollectiveOp op = CollectiveOp::kAllReduce;
  AluOp reduce = AluOp::kAdd;
  AccessPattern dst;
  AccessPattern src;
  std::optional<AccessPattern> counts;  ///< all_to_allv's metadata; absent for the others
  ReplicaGroups groups;  ///< which ranks each rank's collective runs with (default: every rank)
  static constexpr auto fields() {
    return std::tuple{
        FieldDesc{"op", &Collective::op, FieldRole::kImmediate, "the collective"},
        FieldDesc{"reduce", &Collective::reduce, FieldRole::kImmediate,
                  "add, max or min (reducing collectives)"},
        FieldDesc{"dst", &Collective::dst, FieldRole::kOutput, "contiguous HBM range written"},
        FieldDesc{"src", &Collective::src, FieldRole::kInput, "contiguous HBM range read"},
        FieldDesc{"counts", &Collective::counts, FieldRole::kInput,
                  "all_to_allv: uint32 HBM rows of send counts, send displacements and "
                  "optionally receive counts and displacements, one column per group member"},
        FieldDesc{"groups", &Collective::groups, FieldRole::kImmediate,
                  "replica groups: all, or equal-size rank lists [[0,1],[2,3]] covering the run"},
    };
  }
  [[nodiscard]] Status verify(const VerifyContext& ctx) const;
  [[nodiscard]] Status execute(ExecContext& /*ctx*/) const { return {}; }  // the scheduler's
};

/// The instructions declared in this header, in opcode order.
using ControlInstructions =
    TypeList<Nop, RegSet, RegAdd, BranchNonZero, CoreBarrier, SendRecv, Collective>;

}  // namespace trn::isa
