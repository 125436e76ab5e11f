#include "trn/core/instruction_cost.h"

#include <fmt/format.h>

#include <variant>

#include "trn/isa/field.h"

namespace trn::core {

using isa::AccessPattern;
using spec::CostVariable;

namespace {

// Bits of CostCalculator::Key::flags.
constexpr std::uint32_t kAllSbuf = 1u << 0;
constexpr std::uint32_t kUnitStride = 1u << 1;
constexpr std::uint32_t kFillZero = 1u << 2;
constexpr std::uint32_t kDoubleRow = 1u << 3;
constexpr std::uint32_t kTranspose = 1u << 4;
constexpr std::uint32_t kPsumInputShift = 8;  ///< bits 8..15: number of PSUM inputs

constexpr std::size_t variableSlot(CostVariable v) { return static_cast<std::size_t>(v); }

/// Fills the parts of `key` every instruction shares: operand dtypes and placement, ALU ops, and
/// n / p / dtype_bytes from the main operand (the first input, else the first output).
template <typename I>
void describeOperands(const I& instr, CostCalculator::Key& key) {
  const AccessPattern* main = nullptr;
  const AccessPattern* firstOutput = nullptr;
  std::uint32_t psumInputs = 0;
  bool allSbuf = true;
  bool unitStride = true;
  int opCount = 0;
  isa::forEachFieldValue(instr, [&](const auto& desc, const auto& value) {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, isa::AluOp>) {
      if (opCount < 4) {
        key.ops |= (static_cast<std::uint32_t>(value) + 1) << (8 * opCount++);
      }
    }
    (void)desc;
  });
  isa::forEachAccessPattern(
      instr, [&](std::string_view, isa::FieldRole role, const AccessPattern& ap) {
        key.dtypeMask |= 1u << static_cast<unsigned>(ap.dtype);
        allSbuf = allSbuf && ap.memory == isa::Memory::kSbuf;
        unitStride = unitStride && ap.dims[static_cast<std::size_t>(ap.numDims - 1)].stride == 1;
        if (role == isa::FieldRole::kInput) {
          psumInputs += ap.memory == isa::Memory::kPsum ? 1 : 0;
          main = main ? main : &ap;
        } else if (role == isa::FieldRole::kOutput) {
          firstOutput = firstOutput ? firstOutput : &ap;
        }
      });
  main = main ? main : firstOutput;
  if (main) {
    key.variables[variableSlot(CostVariable::kN)] = main->freeSize();
    key.variables[variableSlot(CostVariable::kP)] = main->partitionCount;
    key.variables[variableSlot(CostVariable::kDtypeBytes)] = byteSize(main->dtype);
  }
  key.flags |=
      (allSbuf ? kAllSbuf : 0u) | (unitStride ? kUnitStride : 0u) | (psumInputs << kPsumInputShift);
}

/// Instruction-specific cost inputs; the generic description covers the rest.
template <typename I>
void refine(const I&, CostCalculator::Key&) {}

void refine(const isa::NcMatmul& mm, CostCalculator::Key& key) {
  const bool doubleRow = mm.perfMode == isa::MatmulPerfMode::kDoubleRow;
  const std::int64_t rows = doubleRow ? 2 : 1;
  key.variables[variableSlot(CostVariable::kNStationary)] = mm.stationary.freeSize() / rows;
  key.variables[variableSlot(CostVariable::kNMoving)] = mm.moving.freeSize() / rows;
  key.flags |= (doubleRow ? kDoubleRow : 0u) | (mm.isTranspose ? kTranspose : 0u);
}

void refine(const isa::Memset& memset, CostCalculator::Key& key) {
  key.flags |= memset.value == 0.0f ? kFillZero : 0u;
}

void refine(const isa::LocalGather& gather, CostCalculator::Key& key) {
  key.variables[variableSlot(CostVariable::kK)] = gather.numElemPerIdx;
  key.variables[variableSlot(CostVariable::kIndices)] = gather.numValidIndices;
}

/// The query the cost model evaluates, rebuilt from a key.
spec::CostQuery queryOf(const CostCalculator::Key& key) {
  spec::CostQuery query;
  query.engine = static_cast<spec::Engine>(key.engine);
  for (unsigned t = 0; t < 32; ++t) {
    if ((key.dtypeMask >> t) & 1u) {
      query.dtypes.push_back(static_cast<DType>(t));
    }
  }
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t op = (key.ops >> (8 * i)) & 0xffu;
    if (op != 0) {
      query.ops.emplace_back(isa::enumName(static_cast<isa::AluOp>(op - 1)));
    }
  }
  query.psumInputs = static_cast<std::int64_t>((key.flags >> kPsumInputShift) & 0xffu);
  query.allSbuf = (key.flags & kAllSbuf) != 0;
  query.unitStride = (key.flags & kUnitStride) != 0;
  query.fillZero = (key.flags & kFillZero) != 0;
  for (std::size_t v = 0; v < key.variables.size(); ++v) {
    query.variables.set(static_cast<CostVariable>(v), key.variables[v]);
  }
  return query;
}

/// 2*K*M*N for a matmul that multiplies (not a transpose), else 0.
std::int64_t flopsOf(const CostCalculator::Key& key) {
  if ((key.flags & kTranspose) != 0 || key.variables[variableSlot(CostVariable::kNMoving)] == 0) {
    return 0;
  }
  const std::int64_t contraction =
      key.variables[variableSlot(CostVariable::kP)] * ((key.flags & kDoubleRow) != 0 ? 2 : 1);
  return 2 * contraction * key.variables[variableSlot(CostVariable::kNStationary)] *
         key.variables[variableSlot(CostVariable::kNMoving)];
}

}  // namespace

Hertz engineClock(const spec::ChipSpec& chip, isa::Engine engine) {
  switch (engine) {
    case isa::Engine::kPe:
      return chip.core.pe.clock;
    case isa::Engine::kAct:
      return chip.core.act.clock;
    case isa::Engine::kDve:
      return chip.core.dve.clock;
    case isa::Engine::kPool:
      return chip.core.pool.clock;
    case isa::Engine::kSp:
      return chip.core.sp.clock;
  }
  TRN_UNREACHABLE();
}

std::size_t CostCalculator::KeyHash::operator()(const Key& key) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  auto mix = [&](std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  mix(key.body);
  mix(key.engine);
  mix(key.dtypeMask);
  mix(key.ops);
  mix(key.flags);
  for (const std::int64_t v : key.variables) {
    mix(static_cast<std::uint64_t>(v));
  }
  return static_cast<std::size_t>(h);
}

Result<CostCalculator> CostCalculator::create(const spec::ChipSpec& chip) {
  CostCalculator calc;
  for (const isa::Engine engine : isa::kAllEngines) {
    const auto e = static_cast<std::size_t>(engine);
    calc.clocks_[e] = engineClock(chip, engine);
    calc.dispatch_[e] = {chip.costs.minIi, cyclesToTime(chip.costs.minIi, calc.clocks_[e]).count(),
                         "", 0};
  }
  std::string missing;
  isa::forEachInstructionType([&]<typename I>() {
    const spec::CostClass* cls = chip.costs.find(I::kInfo.costClass);
    if (cls == nullptr && !I::kInfo.viaDma && !I::kInfo.isControl()) {
      missing += fmt::format(" {} (class '{}')", I::kInfo.mnemonic, I::kInfo.costClass);
    }
    calc.classes_.push_back(cls);
  });
  calc.last_.resize(calc.classes_.size());
  if (!missing.empty()) {
    return failedPrecondition(
        fmt::format("chip '{}' has no cost class for:{}", chip.name, missing));
  }
  return calc;
}

Result<const InstructionCost*> CostCalculator::cost(isa::Engine engine,
                                                    const isa::InstructionBody& body) {
  const spec::CostClass* cls = classes_[body.index()];
  if (cls == nullptr) {
    return &dispatch_[static_cast<std::size_t>(engine)];
  }
  Key key;
  key.body = static_cast<std::uint32_t>(body.index());
  key.engine = static_cast<std::uint32_t>(engine);
  std::visit(
      [&](const auto& instr) {
        describeOperands(instr, key);
        refine(instr, key);
      },
      body);
  auto& last = last_[body.index()];
  if (last.second != nullptr && last.first == key) {
    return last.second;
  }
  if (const auto hit = cache_.find(key); hit != cache_.end()) {
    last = {key, &hit->second};
    return &hit->second;
  }
  TRN_ASSIGN_OR_RETURN(const spec::CostEstimate estimate, cls->estimate(queryOf(key)));
  const Hertz clock = clocks_[static_cast<std::size_t>(engine)];
  if (static_cast<double>(estimate.cycles) * 1e12 / static_cast<double>(clock.count()) >=
      static_cast<double>(kMaxSimulatedTime.count())) {
    return outOfRange(fmt::format("cost class '{}' gives {} cycles at {}, longer than the {} "
                                  "trnsim can simulate",
                                  cls->name, estimate.cycles, toString(clock),
                                  toString(kMaxSimulatedTime)));
  }
  const spec::CostVariant* variant = cls->select(queryOf(key));
  InstructionCost result{
      estimate.cycles,
      cyclesToTime(estimate.cycles, clock).count(),
      variant ? std::string_view(variant->name) : "", flopsOf(key)};
  const InstructionCost* cached = &cache_.emplace(key, result).first->second;
  last = {key, cached};
  return cached;
}

}  // namespace trn::core
