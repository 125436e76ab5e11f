// Per-instruction cost classes as data. Each class (one per instruction family of
// nki-reference.md §6.1) lists named variants; a variant has conditions on the instruction
// (engine, data types, ALU ops, operand placement, strides) and a cycle formula written in a
// small expression language over instruction variables (n, p, n_moving, ...) and numbers of the
// hardware description referenced by key path (costs.min_ii, core.dve.perf_mode.fast_factor).
// A timing model evaluates any class through CostClass::estimate without per-instruction code.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/ratio.h"
#include "trn/base/status.h"
#include "trn/numerics/dtype.h"
#include "trn/spec/enums.h"

namespace trn::spec {

/// Instruction quantities a cost formula may use. The timing model fills them per instruction.
enum class CostVariable {
  kN,            ///< `n`: elements per partition of the main input (free size)
  kP,            ///< `p`: partitions used
  kNStationary,  ///< `n_stationary`: free size of the matmul stationary operand
  kNMoving,      ///< `n_moving`: free size of the matmul moving operand
  kK,            ///< `k`: topk K, or elements per index for local_gather
  kIndices,      ///< `indices`: number of valid indices (local_gather)
  kDtypeBytes,   ///< `dtype_bytes`: bytes per element of the main input
  kCount,
};

/// The formula spelling of a variable, e.g. "n_moving".
std::string_view costVariableName(CostVariable variable);
/// One-line meaning of a variable, for documentation.
std::string_view costVariableDoc(CostVariable variable);
/// The variable spelled `name`, if any.
std::optional<CostVariable> parseCostVariable(std::string_view name);

/// Values of all cost variables for one instruction; unset variables are 0.
class CostVariables {
 public:
  CostVariables& set(CostVariable variable, std::int64_t value);
  [[nodiscard]] std::int64_t get(CostVariable variable) const;

 private:
  std::array<std::int64_t, static_cast<std::size_t>(CostVariable::kCount)> values_{};
};

/// A parsed cycle formula: numbers, variables, key-path references, + - * /, unary minus,
/// parentheses, max(a, b, ...), min(a, b, ...), ceil(x), floor(x). Arithmetic is exact.
class CostExpression {
 public:
  /// Parses `text`; syntax errors name the character position.
  static Result<CostExpression> parse(std::string_view text);

  /// The formula as written.
  [[nodiscard]] const std::string& text() const { return text_; }

  /// Resolves every name that is not a cost variable through `lookup` (a key path to a number
  /// of the hardware description). Fails listing the names that could not be resolved.
  Status bind(const std::function<std::optional<Ratio>(std::string_view)>& lookup);

  /// The exact value for `variables`; fails on division by zero, overflow or an unbound name.
  [[nodiscard]] Result<Ratio> evaluate(const CostVariables& variables) const;

  friend bool operator==(const CostExpression& a, const CostExpression& b) {
    return a.text_ == b.text_;
  }

  /// One node of the expression tree (public for the parser and evaluator only).
  struct Node {
    enum class Op { kNumber, kVariable, kName, kAdd, kSubtract, kMultiply, kDivide, kNegate,
                    kMax, kMin, kCeil, kFloor };
    Op op = Op::kNumber;
    Ratio value;                    ///< kNumber, and kName once bound
    CostVariable variable{};        ///< kVariable
    std::string name;               ///< kName: key path
    bool bound = false;             ///< kName: value holds the resolved number
    std::vector<std::size_t> args;  ///< operand node indices
  };

 private:
  Result<Ratio> evaluateNode(std::size_t index, const CostVariables& variables) const;

  std::string text_;
  std::vector<Node> nodes_;  ///< the root is the last node
};

/// Conditions under which a cost variant applies; an unset condition matches anything.
struct CostConditions {
  std::optional<Engine> engine;                  ///< the engine executing the instruction
  std::optional<std::vector<DType>> dtypes;          ///< every data operand's type is listed
  std::optional<std::vector<std::string>> ops;       ///< every ALU op is listed
  std::optional<std::vector<std::string>> opSequence;  ///< the ALU ops are exactly these
  std::optional<std::int64_t> psumInputs;            ///< exactly this many inputs are in PSUM
  std::optional<bool> allSbuf;                       ///< all operands are (or not) in SBUF
  std::optional<bool> unitStride;                    ///< innermost stride is 1 element on all
  std::optional<bool> fillZero;                      ///< memset of the value zero
  std::optional<bool> nEven;                         ///< n is even

  /// True when no condition is set (the fallback variant).
  [[nodiscard]] bool empty() const;
};

/// What the timing model knows about one instruction when asking for its cost.
struct CostQuery {
  Engine engine = Engine::kDve;
  std::vector<DType> dtypes;       ///< all data operands, inputs and output
  std::vector<std::string> ops;    ///< ALU ops in order (op0, op1)
  std::int64_t psumInputs = 0;
  bool allSbuf = true;
  bool unitStride = true;
  bool fillZero = false;
  CostVariables variables;
};

/// True when `query` satisfies every set condition.
bool matches(const CostConditions& conditions, const CostQuery& query);

/// One named way an instruction family can cost.
struct CostVariant {
  std::string name;
  CostConditions when;
  CostExpression cycles;  ///< in cycles of the executing engine
};

/// The cost of one instruction.
struct CostEstimate {
  std::string variant;      ///< the variant that applied
  Ratio exactCycles;        ///< the formula's exact value
  std::int64_t cycles = 0;  ///< rounded up to a whole cycle
};

/// One instruction family (nki-reference.md §6.1).
struct CostClass {
  std::string name;
  std::vector<std::string> instructions;  ///< ISA instruction names in this family
  std::vector<Engine> engines;        ///< engines that can execute it
  std::vector<CostVariant> variants;

  /// The first conditional variant (in file order) whose conditions hold, else the
  /// unconditional fallback. Null only for a class without a fallback (rejected by the loader).
  [[nodiscard]] const CostVariant* select(const CostQuery& query) const;

  /// Selects a variant and evaluates its formula.
  [[nodiscard]] Result<CostEstimate> estimate(const CostQuery& query) const;
};

/// Fixed overheads and the cost classes (YAML section `costs`).
struct CostModel {
  std::int64_t minIi = 0;                     ///< MIN_II, minimum initiation interval (cycles)
  std::int64_t staticOverheadCycles = 0;      ///< extra for dependent back-to-back tiny ops
  std::int64_t semaphoreOverheadCycles = 0;   ///< semaphore wait/update overhead
  std::int64_t gpsimdStartCycles = 0;         ///< GPSIMD_START
  std::int64_t dynamicOffsetCycles = 0;       ///< floor of dynamic-offset copies
  std::int64_t actReadAccumulatorCycles = 0;  ///< ActReadAccumulator
  std::vector<CostClass> classes;

  /// The class named `name`, or null.
  [[nodiscard]] const CostClass* find(std::string_view name) const;
};

/// The instruction families every chip description must define.
const std::vector<std::string_view>& requiredCostClasses();

}  // namespace trn::spec
