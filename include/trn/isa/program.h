// A Program: what every front end produces and the core consumes. It declares the HBM tensors
// the kernel reads and writes, and holds one in-order instruction stream per engine; engines
// synchronise only through the semaphores attached to instructions. A Program has a readable
// text form (program_text.h) and a versioned binary form (program_binary.h) that convert into
// each other without loss.
//
// ProgramLimits are the bounds every format shares: the text parser, the binary decoder and the
// encoder enforce them identically (checkTensorDecl, checkInstructionForm, checkProgramForm), so a
// program that one of them accepts, the others accept too and text -> binary -> text round trips
// hold; the verifier (verifier.h) adds the hardware's rules on top.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/instruction_set.h"
#include "trn/isa/instruction_stream.h"

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

/// The bounds of a program that every format enforces (see the file comment). Each bounds what
/// a reader allocates for one item and keeps error messages readable; none is a hardware limit.
struct ProgramLimits {
  /// Tensors per program. Kernels declare a handful; 2^16 is what the binary format has always
  /// accepted. A tensor costs nothing per instruction, so the bound only caps the table.
  static constexpr std::size_t kMaxTensors = std::size_t{1} << 16;
  /// Bytes of a tensor name. Names are identifiers chosen by kernel authors (`q`, `out`,
  /// `wqkv`); 256 leaves room for generated names and keeps every message that quotes one short.
  static constexpr std::size_t kMaxTensorNameBytes = 256;
  /// Dimensions of a tensor (rank 1 to this): what the binary format has always accepted. An HBM
  /// operand addresses at most 5 (rows and 4 free dimensions); NumPy allows 32.
  static constexpr std::size_t kMaxTensorRank = 16;
  /// Semaphore waits, and separately updates, of one instruction: what the binary format has
  /// always accepted.
  static constexpr std::size_t kMaxSyncEntries = 64;
  /// Bytes of a source-location file name: PATH_MAX on Linux.
  static constexpr std::size_t kMaxLocationFileBytes = 4096;
  /// Instructions of a program, over all streams: 4x the 1M-instruction timing benchmark. A
  /// packed instruction (instruction_stream.h) takes about 100 bytes, so this bounds a program's
  /// host memory to about 400 MiB; the smallest encoded instruction is 19 bytes, so a corrupt
  /// file cannot claim more.
  static constexpr std::size_t kMaxInstructions = std::size_t{1} << 22;
};

/// The characters of a tensor name: ASCII letters, digits, '_' and '.', which is what an HBM
/// operand (`hbm:NAME+offset:...`, access_pattern.h) can spell.
constexpr bool isTensorNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

/// The characters of a source-location file name: printable ASCII except space and '#', so that
/// `loc=FILE:LINE` stays one program-text token and is not cut by a comment.
constexpr bool isLocationFileChar(char c) { return c > ' ' && c < 0x7f && c != '#'; }

/// An HBM tensor of the program: dense, row-major.
struct TensorDecl {
  std::string name;
  TensorKind kind = TensorKind::kInput;
  DType dtype = DType::kFp32;
  std::vector<std::int64_t> shape;

  /// Product of the shape, and that times the element size. Both assume a declaration that
  /// passed checkTensorDecl (so they fit in int64); an unchecked one that overflows is a bug.
  [[nodiscard]] std::int64_t elementCount() const;
  [[nodiscard]] std::int64_t byteSize() const { return elementCount() * trn::byteSize(dtype); }
  friend bool operator==(const TensorDecl&, const TensorDecl&) = default;
};

/// A valid tensor name: 1 to kMaxTensorNameBytes characters, each isTensorNameChar.
Status checkTensorName(std::string_view name);

/// A declaration every format can hold and the core can size: a valid name, a defined kind and
/// dtype, rank 1 to kMaxTensorRank, every extent >= 1, and elements x element bytes within int64.
/// Errors name the tensor (escaped if the name itself is at fault) and the limit.
Status checkTensorDecl(const TensorDecl& tensor);

struct Program {
  std::vector<TensorDecl> tensors;
  /// One packed stream per engine (instruction_stream.h).
  std::array<InstructionStream, kNumEngines> streams;

  /// The stream of `engine`.
  InstructionStream& stream(Engine engine) { return streams[static_cast<int>(engine)]; }
  [[nodiscard]] const InstructionStream& stream(Engine engine) const {
    return streams[static_cast<int>(engine)];
  }

  /// Index of the tensor called `name`, if any.
  [[nodiscard]] std::optional<std::int32_t> findTensor(std::string_view name) const;

  /// Total number of instructions over all streams.
  [[nodiscard]] std::size_t instructionCount() const;

  /// Host bytes the streams hold (InstructionStream::residentBytes), for memory figures.
  [[nodiscard]] std::size_t residentBytes() const;
};

/// An instruction every format can express, in a program of `tensorCount` tensors: at most
/// kMaxSyncEntries waits and updates with defined comparisons and operations, a location file of
/// isLocationFileChar characters within kMaxLocationFileBytes, and operands in the form the
/// text syntax writes — defined memories, dtypes and enums; 1 to kMaxFreeDims free dimensions and
/// index-pattern pairs with counts >= 1; on-chip operands with start partition >= 0, a positive
/// partition count, no tensor index and no row stride; HBM operands naming a declared tensor from
/// row 0 with a positive row count. (Whether the hardware can run it is the verifier's question.)
Status checkInstructionForm(const Instruction& instr, std::size_t tensorCount);

/// The parts of checkInstructionForm: a source location file name, and everything else. A
/// decoder that reads the file names from a table checks each name once, not per instruction.
Status checkLocationFileForm(std::string_view file);
Status checkInstructionFormBesidesFile(const Instruction& instr, std::size_t tensorCount);

/// The whole program within ProgramLimits: the tensor count, every checkTensorDecl, unique names,
/// the instruction count, each instruction in the stream of its own engine and of valid form.
/// encodeProgram refuses a program that fails this; errors name the tensor or the instruction.
Status checkProgramForm(const Program& program);

}  // namespace trn::isa
