// Collectives on data. The plan an algorithm builds for timing (collective.h) also says which
// elements each of its operations moves or reduces (plan.h DataMove); executing those moves on the
// ranks' buffers in their chips' HBM (core/device_memory.h) gives the collective's result, so the
// numbers a user gets come from the schedule that was timed.
//
// The reduction order is the schedule's (docs/collectives.md, "Functional collectives"): a
// reduction reads its destination and each staged input in the order the plan lists them,
// combines them in fp32 and rounds once to the data type (nearest even). A ring thus rounds a
// bf16 partial sum after every step, a mesh once for all ranks. Operations run in plan order, a
// topological order of the schedule; checkPlanOrder shows it is the only order that matters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/core/device_memory.h"
#include "trn/fabric/collective.h"
#include "trn/fabric/plan.h"
#include "trn/numerics/dtype.h"
#include "trn/spec/chip_spec.h"

namespace trn::fabric {

/// How a reduction combines values. Max and min give NaN when either value is NaN.
enum class ReduceOp : std::uint8_t { kSum, kMax, kMin };

std::string_view reduceOpName(ReduceOp op);  ///< "sum", "max", "min"
Result<ReduceOp> parseReduceOp(std::string_view name);

/// Whether the collective cores reduce in `dtype` (fp32 and bf16); any type can be moved.
bool reducesIn(DType dtype);

/// Where a rank's buffers sit in its chip's HBM: device addresses of the request's element count
/// each. `receive` is used by an all-to-all and a permute only.
struct RankMemory {
  core::DeviceMemory* hbm = nullptr;
  std::int64_t buffer = 0;
  std::int64_t receive = 0;
};

/// Fails, naming the two operations, when two of `plan`'s data moves touch the same elements of
/// one chip (one of them writing) and neither follows the other through the plan's dependencies:
/// the result would then depend on timing. Costs the square of the operations; for test-sized
/// plans (fails above kMaxCheckedOperations).
Status checkPlanOrder(const Plan& plan);
inline constexpr std::size_t kMaxCheckedOperations = 20'000;

/// Executes `plan`'s data moves in plan order on the ranks of `group` (ranks[i] belongs to chip
/// group[i]), elements of `dtype`; staged data goes into freshly allocated HBM of the receiving
/// chip. Fails on a plan with a timing-only operation that moves bytes, a reduction in a type
/// that is not reduced in, or buffers outside their device.
Status executePlan(const Plan& plan, std::span<const std::int64_t> group, DType dtype,
                   ReduceOp reduce, std::span<const RankMemory> ranks);

/// Bytes of a rank's input and output for `request`: its chunk of an all-gather and of a
/// reduce-scatter's output, the whole buffer otherwise.
std::int64_t inputBytes(const CollectiveRequest& request);
std::int64_t outputBytes(const CollectiveRequest& request);

struct DataCollectiveResult {
  CollectiveResult timing;                      ///< the algorithm run and its time
  std::vector<std::vector<std::byte>> outputs;  ///< per rank
};

/// Runs `request` on data: each rank's input (inputBytes, little-endian `dtype` elements; the
/// request's elementBytes is the type's) is written to a buffer in its own chip's HBM (a device
/// of `chip`'s geometry), the algorithm the model picks (or `algorithm`) is executed on it, and
/// each rank's output is read back: the buffer of an all-reduce and a broadcast, the rank's chunk
/// of a reduce-scatter, the gathered buffer of an all-gather, the receive buffer of an all-to-all
/// (chunk j from rank j) and of a permute (rank i's buffer from rank i - 1).
Result<DataCollectiveResult> runCollectiveOnData(const Topology& topology,
                                                 const spec::ChipSpec& chip,
                                                 const CollectiveRequest& request, DType dtype,
                                                 ReduceOp reduce,
                                                 std::span<const std::vector<std::byte>> inputs,
                                                 std::optional<Algorithm> algorithm = std::nullopt);

/// How far a collective's outputs are from its float64 reference.
struct ReferenceCheck {
  std::int64_t elements = 0;    ///< output elements compared, over all ranks
  std::int64_t mismatches = 0;  ///< of exact results (data movement, max, min) that differ
  double maxError = 0;          ///< sums: the largest |output - float64 sum|
  double maxRelative = 0;       ///< sums: the largest error / (sum of |inputs| at the element)
};

/// Compares `outputs` of `request` on `inputs` (as runCollectiveOnData takes and gives them) with
/// the float64 reference: sums in float64, and max, min and every data movement exactly.
Result<ReferenceCheck> checkAgainstFloat64(const CollectiveRequest& request, DType dtype,
                                           ReduceOp reduce,
                                           std::span<const std::vector<std::byte>> inputs,
                                           std::span<const std::vector<std::byte>> outputs);

}  // namespace trn::fabric
