// The isa-level API of the kernel language (NKI's nki.isa): one function per data instruction of
// the core, each recording exactly that instruction in the current kernel, and the barrier between
// the cores of a logical core. Control instructions (nop, registers, branches) are the backend's
// and have no function here.
//
// Conventions, the same for every function:
//  - parameters: the destinations first, then the tensor inputs, then the operators, scalar
//    operands, optional operands and flags in NKI's order with NKI's defaults; then `engine` for
//    the instructions that more than one engine can issue (nullopt: the engine-assignment rules
//    choose); last the call site, which errors name;
//  - every Tensor must be a declared view (valid()) of the same Kernel; the instruction is checked
//    against the hardware rules when it is recorded and a violation throws TraceError with the
//    message "file.cpp:<line>: <mnemonic>: <rule>" naming the caller's line;
//  - DMA instructions record queue 0: the backend chooses the queues.
#pragma once

#include <cfloat>
#include <cstdint>
#include <optional>
#include <source_location>
#include <variant>
#include <vector>

#include "trn/isa/instruction_set.h"
#include "trn/kernel/tensor.h"

namespace trn::kernel::nisa {

using Loc = std::source_location;
using isa::ActivationFunction;
using isa::AluOp;
using isa::DmaOobMode;
using isa::Engine;
using isa::MatmulPerfMode;
using isa::PartitionReduceOp;
using isa::PeTile;
using isa::ReduceCmd;

/// A per-partition scalar operand: an fp32 immediate or a [P, 1] tensor (isa::ScalarOperand).
/// Converts implicitly from a number and from a Tensor.
class Scalar {
 public:
  Scalar(float value) : value_(value) {}            // NOLINT(google-explicit-constructor)
  Scalar(const Tensor& tensor) : value_(tensor) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] const Tensor* tensor() const { return std::get_if<Tensor>(&value_); }
  [[nodiscard]] float immediate() const { return std::get<float>(value_); }

 private:
  std::variant<float, Tensor> value_;
};

// ---- Tensor engine --------------------------------------------------------------------------

/// dst[M, N] (+)= stationary[K, M]^T @ moving[K, N] into PSUM with fp32 accumulation;
/// `accumulate` adds to dst instead of overwriting it. With isTranspose, moving is an identity
/// and dst = stationary^T bit-exact. Unlike NKI, accumulate comes before the tiling arguments and
/// isTranspose last (ncTranspose is the usual way to transpose).
void ncMatmul(const Tensor& dst, const Tensor& stationary, const Tensor& moving,
              bool accumulate = false, PeTile tilePosition = {0, 0},
              PeTile tileSize = {isa::kPeArraySize, isa::kPeArraySize},
              MatmulPerfMode perfMode = MatmulPerfMode::kNone, bool isTranspose = false,
              Loc loc = Loc::current());

/// dst[F, P] = data[P, F]^T bit-exact: the tensor engine (<= 128x128, into PSUM) or the vector
/// engine (<= 32x32).
void ncTranspose(const Tensor& dst, const Tensor& data, std::optional<Engine> engine = std::nullopt,
                 Loc loc = Loc::current());

// ---- Vector engine: element-wise ------------------------------------------------------------

/// dst = data0 <op> data1 element by element, in fp32.
void tensorTensor(const Tensor& dst, const Tensor& data0, const Tensor& data1, AluOp op,
                  std::optional<Engine> engine = std::nullopt, Loc loc = Loc::current());

/// dst = src, cast through fp32 (bit-exact when the dtypes are equal).
void tensorCopy(const Tensor& dst, const Tensor& src, std::optional<Engine> engine = std::nullopt,
                Loc loc = Loc::current());

/// dst = value everywhere (cast to dst's dtype).
void memset(const Tensor& dst, float value, std::optional<Engine> engine = std::nullopt,
            Loc loc = Loc::current());

/// dst = (data <op0> operand0) <op1> operand1 in fp32, operands immediates or [P, 1] tensors;
/// reverse swaps a stage's operands, op1 = bypass leaves out the second stage.
void tensorScalar(const Tensor& dst, const Tensor& data, AluOp op0, const Scalar& operand0,
                  bool reverse0 = false, AluOp op1 = AluOp::kBypass, const Scalar& operand1 = 0.0f,
                  bool reverse1 = false, std::optional<Engine> engine = std::nullopt,
                  Loc loc = Loc::current());

/// dst = (data <op0> operand0) <op1> operand1, operand0 an immediate or [P, 1] tensor and
/// operand1 a full [P, F] tensor; fp32 arithmetic. The operators and operands come in NKI's
/// order (op0, operand0, op1, operand1), as in tensorScalar.
void scalarTensorTensor(const Tensor& dst, const Tensor& data, AluOp op0, const Scalar& operand0,
                        AluOp op1, const Tensor& operand1, bool reverse0 = false,
                        bool reverse1 = false, Loc loc = Loc::current());

/// dst = predicate ? src : dst element by element (where the predicate is zero with
/// reversePred); src is a tensor of dst's dtype or an immediate.
void tensorCopyPredicated(const Tensor& dst, const Scalar& src, const Tensor& predicate,
                          bool reversePred = false, Loc loc = Loc::current());

/// dst = 1 / data, a correctly rounded fp32 division.
void reciprocal(const Tensor& dst, const Tensor& data, Loc loc = Loc::current());

/// dst = data with each element zeroed with probability prob (no rescaling).
void dropout(const Tensor& dst, const Tensor& data, const Scalar& prob, Loc loc = Loc::current());

/// dst = raw 32-bit random words of the issuing engine's generator, truncated to dst's integer
/// dtype.
void rng(const Tensor& dst, std::optional<Engine> engine = std::nullopt, Loc loc = Loc::current());

/// Reseeds the vector engine's random-number generator from the [1, 1] 32-bit srcSeeds.
void setRngSeed(const Tensor& srcSeeds, Loc loc = Loc::current());

// ---- Vector engine: reductions, scans, selections -------------------------------------------

/// dst = op-reduction of data over free dimensions axis..last (1 = the first free dimension),
/// folded in order in fp32; optionally negated.
void tensorReduce(const Tensor& dst, const Tensor& data, AluOp op, std::int64_t axis,
                  bool negate = false, Loc loc = Loc::current());

/// dst = data <op0> operand0, and the free-dimension reduceOp-reduction of those values is folded
/// into the accumulators under reduceCmd; reduceRes receives the accumulators.
void tensorScalarReduce(const Tensor& dst, const Tensor& reduceRes, const Tensor& data, AluOp op0,
                        const Scalar& operand0, AluOp reduceOp, bool reverse0 = false,
                        ReduceCmd reduceCmd = ReduceCmd::kResetReduce,
                        const Scalar& reduceInit = 0.0f, Loc loc = Loc::current());

/// Scan along the free elements: r_i = op1(op0(data0_i, r_{i-1}), data1_i), r_{-1} = initial,
/// dst_i = r_i, kept in fp32.
void tensorTensorScan(const Tensor& dst, const Tensor& data0, const Tensor& data1,
                      const Scalar& initial, AluOp op0, AluOp op1, bool reverse0 = false,
                      bool reverse1 = false, Loc loc = Loc::current());

/// Prefix scan in the accumulators: reg = op1(op0(src_i, imm0), reg), dst_i = reg; reg starts
/// per reduceCmd (reset_reduce: op1's identity, load_reduce: imm1, reduce: as left).
void tensorScalarCumulative(const Tensor& dst, const Tensor& src, AluOp op0, AluOp op1,
                            const Scalar& imm0, const Scalar& imm1 = 0.0f,
                            ReduceCmd reduceCmd = ReduceCmd::kResetReduce, bool reverse0 = false,
                            Loc loc = Loc::current());

/// dst_i = onTrueTile_i where compOp0(i + rangeStart, bound0) and compOp1(i + rangeStart, bound1)
/// hold (per-partition [P, 1] bounds), else onFalseValue; the max is folded into the accumulators.
void rangeSelect(const Tensor& dst, const Tensor& onTrueTile, const Tensor& bound0,
                 const Tensor& bound1, AluOp compOp0, AluOp compOp1,
                 ReduceCmd reduceCmd = ReduceCmd::kResetReduce,
                 const std::optional<Tensor>& reduceRes = std::nullopt,
                 AluOp reduceOp = AluOp::kMax, std::int64_t rangeStart = 0,
                 float onFalseValue = -FLT_MAX, Loc loc = Loc::current());

/// dst = predicate ? onTrue : onFalse element-wise (inverted with reversePred); the max of the
/// results is folded into the accumulators under reduceCmd and written to reduceRes if given.
void selectReduce(const Tensor& dst, const Tensor& predicate, const Tensor& onTrue,
                  const Scalar& onFalse, const std::optional<Tensor>& reduceRes = std::nullopt,
                  ReduceCmd reduceCmd = ReduceCmd::kIdle, AluOp reduceOp = AluOp::kMax,
                  bool reversePred = false, Loc loc = Loc::current());

// ---- Vector engine: special-purpose ---------------------------------------------------------

/// dst[P, 6] = count, mean and M2 of data's even and of its odd flat positions, per partition.
void bnStats(const Tensor& dst, const Tensor& data, Loc loc = Loc::current());

/// dst[P, 2] = mean and variance combined from data's bn_stats records.
void bnAggr(const Tensor& dst, const Tensor& data, Loc loc = Loc::current());

/// dst[P, 8] = the 8 largest values of each partition of src, descending.
void max8(const Tensor& dst, const Tensor& src, Loc loc = Loc::current());

/// dst[p, i] = flat index of the first unclaimed occurrence of vals[p, i] in data[p, :], or all
/// ones when there is none.
void ncFindIndex8(const Tensor& dst, const Tensor& data, const Tensor& vals,
                  Loc loc = Loc::current());

/// dst = data with the first occurrence of each vals[p, i] replaced by imm; dstIdx (optional)
/// receives the matched positions.
void ncMatchReplace8(const Tensor& dst, const Tensor& data, const Tensor& vals, float imm,
                     const std::optional<Tensor>& dstIdx = std::nullopt, Loc loc = Loc::current());

/// Partition shuffle within 32-partition quadrants: dst partition q*32 + i = src partition
/// q*32 + shuffleMask[i]; a mask of exactly 32 entries, 255 (isa::kShuffleKeep) keeps dst's.
void ncStreamShuffle(const Tensor& dst, const Tensor& src,
                     const std::vector<std::int64_t>& shuffleMask, Loc loc = Loc::current());

// ---- Scalar engine --------------------------------------------------------------------------

/// dst = op(data * scale + bias) in fp32, bias and scale immediates or [P, 1] tensors; the
/// activated values' per-partition sum updates the accumulators under reduceCmd, and reduceRes
/// (if given) receives them.
void activation(const Tensor& dst, const Tensor& data, ActivationFunction op,
                const Scalar& bias = 0.0f, const Scalar& scale = 1.0f, AluOp reduceOp = AluOp::kAdd,
                const std::optional<Tensor>& reduceRes = std::nullopt,
                ReduceCmd reduceCmd = ReduceCmd::kIdle, Loc loc = Loc::current());

/// dst = op(data * scale + bias) and reduceRes[P, 1] = the per-partition fp32 sum of the
/// activated values (activation with reset_reduce).
void activationReduce(const Tensor& dst, const Tensor& reduceRes, const Tensor& data,
                      ActivationFunction op, const Scalar& bias = 0.0f, const Scalar& scale = 1.0f,
                      AluOp reduceOp = AluOp::kAdd, Loc loc = Loc::current());

// ---- GpSimd engine --------------------------------------------------------------------------

/// dst[c, i] = offset + c * channelMultiplier + pattern value i, pattern being up to four
/// (step, count) pairs, outermost first; int32 arithmetic, then cast.
void iota(const Tensor& dst, const std::vector<isa::Dim>& pattern, std::int64_t offset = 0,
          std::int64_t channelMultiplier = 0, Loc loc = Loc::current());

/// dst = cmpOp(offset + c * channelMultiplier + pattern value, 0) ? onTrueTile : onFalseValue,
/// the affine value computed as in iota (causal masks).
void affineSelect(const Tensor& dst, const Tensor& onTrueTile, const std::vector<isa::Dim>& pattern,
                  std::int64_t channelMultiplier, float onFalseValue, AluOp cmpOp = AluOp::kEqual,
                  std::int64_t offset = 0, Loc loc = Loc::current());

/// dst[0, f] = op over the partitions of data[p, f].
void tensorPartitionReduce(const Tensor& dst, const Tensor& data, PartitionReduceOp op,
                           Loc loc = Loc::current());

/// Gather within each 16-partition GpSimd core: dst[p, j*E + e] = srcBuffer[p, index_j + e] with
/// the group's shared uint16 indices read partition-first; numValidIndices 0 means all of them.
void localGather(const Tensor& dst, const Tensor& srcBuffer, const Tensor& index,
                 std::int64_t numElemPerIdx = 1, std::int64_t numValidIndices = 0,
                 Loc loc = Loc::current());

/// dst[p, i] = data[p, indices[p, i]], data's free dimensions flattened, uint32 indices.
void ncNGather(const Tensor& dst, const Tensor& data, const Tensor& indices,
               Loc loc = Loc::current());

// ---- DMA ------------------------------------------------------------------------------------

/// dst = src between HBM and SBUF, cast through fp32 when the dtypes differ. With srcIndex
/// (gather) or dstIndex (scatter), an SBUF [P, 1] int32/uint32 tensor, row r moves from/to row
/// index[r] of the HBM table; out-of-range rows are handled per oobMode.
void dmaCopy(const Tensor& dst, const Tensor& src,
             const std::optional<Tensor>& dstIndex = std::nullopt,
             const std::optional<Tensor>& srcIndex = std::nullopt,
             DmaOobMode oobMode = DmaOobMode::kError, std::optional<Engine> engine = std::nullopt,
             Loc loc = Loc::current());

/// dst[F, P] = src[P, F]^T bit-exact, HBM or SBUF into SBUF, 2- and 4-byte dtypes.
void dmaTranspose(const Tensor& dst, const Tensor& src, std::optional<Engine> engine = std::nullopt,
                  Loc loc = Loc::current());

/// dst = srcs[0] * scales[0] + srcs[1] * scales[1] + ... in fp32 in the DMA engines, for one to
/// four sources; scales default to 1.
void dmaCompute(const Tensor& dst, const std::vector<Tensor>& srcs, AluOp reduceOp = AluOp::kAdd,
                const std::vector<float>& scales = {}, std::optional<Engine> engine = std::nullopt,
                Loc loc = Loc::current());

// ---- Cores of a logical core -----------------------------------------------------------------

/// Barrier between the cores of the logical core (NKI nisa.core_barrier): every core's accesses
/// of HBM before it happen before every core's accesses of HBM after it. `data` is the HBM tensor
/// the cores exchange through (as NKI asks for it); the barrier orders all of the core's HBM
/// accesses, not only that tensor's. A kernel launched on one core passes it at once.
void coreBarrier(const Tensor& data, Engine engine = Engine::kPool, Loc loc = Loc::current());

/// Exchanges SBUF tiles with the other core of an LNC=2 pair (NKI nisa.sendrecv over the shared
/// DMA engines): `src` goes to the peer's `dst`, the peer's `src` to this core's `dst`. The k-th
/// sendrecv of one core meets the k-th of the other; a kernel issues all of its sendrecvs from
/// one engine. The tiles must hold the same number of elements of one dtype on both cores.
void sendrecv(const Tensor& dst, const Tensor& src, Engine engine = Engine::kPool,
              Loc loc = Loc::current());

/// A collective over the ranks of a system run (NKI nki.collectives on HBM tensors; rank r runs
/// on place r of the system's topology, a chip or a logical core, runtime::Session::runRanks): `op`
/// of `src` into `dst`, reducing with `reduce` (add, max or min) where it reduces. Both are
/// contiguous HBM ranges of one dtype; sizes per op as isa::Collective says (all_gather's dst is
/// the group size times src, reduce_scatter's src the group size times dst). `groups` are NKI's
/// replica groups: empty for one group of every rank, or equal-size lists of ranks that hold every
/// rank once ({{0,1,2,3},{4,5,6,7}}); each rank's collective then runs with the members of its
/// group only, in the list's order. The k-th collective of a rank meets the k-th of the other
/// members of its group; a kernel issues all of its collectives from one engine, and the kernel's
/// other engines run on while it is in flight. Malformed groups (of different sizes, a rank twice,
/// more than isa::ReplicaGroups::kMaxRanks ranks) fail here; ranks outside the run or missing from
/// every group fail when it runs.
void collective(isa::CollectiveOp op, const Tensor& dst, const Tensor& src,
                isa::AluOp reduce = isa::AluOp::kAdd, Engine engine = Engine::kPool,
                const std::vector<std::vector<int>>& groups = {}, Loc loc = Loc::current());

/// An all-to-all-v (NKI nki.collectives.all_to_all_v, MoE token dispatch) over the ranks of a
/// system run or of each rank's replica group (`groups` as collective's): each rank sends each
/// member of its group its own number of elements, as `counts` says when the collective runs.
/// `counts` is a uint32 HBM tensor of 2 to 4 rows of the group size, in elements: send counts and
/// send displacements into src per destination position, then optionally the counts expected
/// from each position (checked against what they send) and where each lands in dst (without
/// them: equal slots, position i at i x (dst elements / group size)). src and dst are
/// contiguous HBM ranges of one dtype, of any sizes the counts fit; dst elements nobody sends to
/// keep their values. Inconsistent counts fail the run naming the ranks.
void allToAllV(const Tensor& dst, const Tensor& src, const Tensor& counts,
               Engine engine = Engine::kPool, const std::vector<std::vector<int>>& groups = {},
               Loc loc = Loc::current());

}  // namespace trn::kernel::nisa
