// The keys of a chip's `costs` section, declared once: the fixed overheads and the cost classes
// with their conditional variants (cost_model.h evaluates them).
#include "chip_ranges.h"
#include "chip_schema.h"

namespace trn::spec::detail {
namespace {

template <typename T>
const Schema<T>& schemaOf();

template <>
const Schema<CostConditions>& schemaOf() {
  static const Schema<CostConditions> s = [] {
    Schema<CostConditions> t;
    t.leaf("engine", &CostConditions::engine, "the executing engine is this one");
    t.leaf("dtypes", &CostConditions::dtypes, "every data operand has one of these types");
    t.leaf("ops", &CostConditions::ops, "every ALU op of the instruction is one of these");
    t.leaf("op_sequence", &CostConditions::opSequence, "the ALU ops are exactly these, in order");
    t.leaf("psum_inputs", &CostConditions::psumInputs, "exactly this many inputs are in PSUM")
        .range(0, 16);
    t.leaf("all_sbuf", &CostConditions::allSbuf, "all operands are in SBUF (or not)");
    t.leaf("unit_stride", &CostConditions::unitStride, "innermost stride of every operand is 1");
    t.leaf("fill_zero", &CostConditions::fillZero, "memset writes zero");
    t.leaf("n_even", &CostConditions::nEven, "n is even");
    return t;
  }();
  return s;
}

template <>
const Schema<CostVariant>& schemaOf() {
  static const Schema<CostVariant> s = [] {
    Schema<CostVariant> t;
    t.nested("when", &CostVariant::when, schemaOf<CostConditions>(),
             "conditions; omit for the fallback variant")
        .optional();
    t.leaf("cycles", &CostVariant::cycles, "cycle formula, in cycles of the executing engine");
    return t;
  }();
  return s;
}

template <>
const Schema<CostClass>& schemaOf() {
  static const Schema<CostClass> s = [] {
    Schema<CostClass> t;
    t.leaf("instructions", &CostClass::instructions, "ISA instructions of this family");
    t.leaf("engines", &CostClass::engines, "engines that can execute them");
    t.recordMap("variants", &CostClass::variants, &CostVariant::name, schemaOf<CostVariant>(),
                "<variant>",
                "named variants; conditional ones are tried in order, then the fallback");
    return t;
  }();
  return s;
}

template <>
const Schema<CostModel>& schemaOf() {
  static const Schema<CostModel> s = [] {
    Schema<CostModel> t;
    t.leaf("min_ii", &CostModel::minIi, "minimum initiation interval MIN_II")
        .range(0, kMaxCycles).unit("cycles");
    t.leaf("static_overhead_cycles", &CostModel::staticOverheadCycles,
           "extra cost of dependent back-to-back tiny instructions")
        .range(0, kMaxCycles).unit("cycles");
    t.leaf("semaphore_overhead_cycles", &CostModel::semaphoreOverheadCycles,
           "semaphore wait and update overhead per dependent instruction")
        .range(0, kMaxCycles).unit("cycles");
    t.leaf("gpsimd_start_cycles", &CostModel::gpsimdStartCycles, "GPSIMD_START")
        .range(0, kMaxCycles).unit("cycles");
    t.leaf("dynamic_offset_cycles", &CostModel::dynamicOffsetCycles,
           "floor of a copy with dynamic source/destination offset")
        .range(0, kMaxCycles).unit("cycles");
    t.leaf("act_read_accumulator_cycles", &CostModel::actReadAccumulatorCycles,
           "ActReadAccumulator (reading ScalarE accumulators back)")
        .range(0, kMaxCycles).unit("cycles");
    t.recordMap("classes", &CostModel::classes, &CostClass::name, schemaOf<CostClass>(),
                "<class>", "cost classes, one per instruction family");
    return t;
  }();
  return s;
}

}  // namespace

const Schema<CostModel>& costModelSchema() { return schemaOf<CostModel>(); }

}  // namespace trn::spec::detail
