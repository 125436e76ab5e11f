// A Program: what every front end produces and the core consumes. It declares the HBM tensors
// the kernel reads and writes, and holds one in-order instruction stream per engine; engines
// synchronise only through the semaphores attached to instructions. A Program has a readable
// text form (program_text.h) and a versioned binary form (program_binary.h) that convert into
// each other without loss.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trn/isa/instruction_set.h"

namespace trn::isa {

/// How a program uses an HBM tensor.
enum class TensorKind : std::uint8_t {
  kInput,    ///< filled by the caller before the run
  kOutput,   ///< read back by the caller after the run
  kScratch,  ///< internal; starts uninitialised
};

template <>
struct EnumTable<TensorKind> {
  static constexpr std::string_view kTypeName = "tensor_kind";
  static constexpr std::array<std::pair<TensorKind, std::string_view>, 3> kEntries = {{
      {TensorKind::kInput, "input"}, {TensorKind::kOutput, "output"},
      {TensorKind::kScratch, "scratch"},
  }};
};

/// An HBM tensor of the program: dense, row-major.
struct TensorDecl {
  std::string name;
  TensorKind kind = TensorKind::kInput;
  DType dtype = DType::kFp32;
  std::vector<std::int64_t> shape;

  [[nodiscard]] std::int64_t elementCount() const;
  [[nodiscard]] std::int64_t byteSize() const { return elementCount() * trn::byteSize(dtype); }
  friend bool operator==(const TensorDecl&, const TensorDecl&) = default;
};

struct Program {
  std::vector<TensorDecl> tensors;
  std::array<std::vector<Instruction>, kNumEngines> streams;

  /// The stream of `engine`.
  std::vector<Instruction>& stream(Engine engine) { return streams[static_cast<int>(engine)]; }
  [[nodiscard]] const std::vector<Instruction>& stream(Engine engine) const {
    return streams[static_cast<int>(engine)];
  }

  /// Index of the tensor called `name`, if any.
  [[nodiscard]] std::optional<std::int32_t> findTensor(std::string_view name) const;

  /// Total number of instructions over all streams.
  [[nodiscard]] std::size_t instructionCount() const;
};

}  // namespace trn::isa
