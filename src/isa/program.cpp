#include "trn/isa/program.h"

#include <fmt/format.h>

#include <limits>
#include <unordered_map>

#include "trn/base/checked.h"
#include "trn/isa/index_pattern.h"

namespace trn::isa {
namespace {

/// `text` for a message: printable ASCII as is, other bytes as \xNN, cut after 64 characters.
std::string escaped(std::string_view text) {
  constexpr std::size_t kShown = 64;
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (text.size() > kShown) {
    out += fmt::format("... ({} bytes)", text.size());
  }
  return out;
}

template <TabledEnum E>
bool isDefined(E value) {
  for (const auto& [v, name] : EnumTable<E>::kEntries) {
    if (v == value) {
      return true;
    }
  }
  return false;
}

bool isDefinedDType(DType dtype) {
  return static_cast<std::uint64_t>(dtype) < static_cast<std::uint64_t>(kNumDTypes);
}

Status checkDims(std::span<const Dim> dims, std::int32_t numDims, std::string_view what) {
  if (numDims < 1 || numDims > kMaxFreeDims) {
    return invalidArgument(fmt::format("{} has {} dimensions; it has 1 to {}", what, numDims,
                                       kMaxFreeDims));
  }
  for (std::size_t d = 0; d < static_cast<std::size_t>(numDims); ++d) {
    if (dims[d].count < 1) {
      return invalidArgument(fmt::format("{} dimension {} has count {}; counts are >= 1", what, d,
                                         dims[d].count));
    }
  }
  return {};
}

Status checkPatternForm(const AccessPattern& ap, std::size_t tensorCount) {
  if (static_cast<std::uint8_t>(ap.memory) > static_cast<std::uint8_t>(Memory::kPsum)) {
    return invalidArgument(fmt::format("memory kind {} is not defined",
                                       static_cast<int>(ap.memory)));
  }
  if (!isDefinedDType(ap.dtype)) {
    return invalidArgument(fmt::format("dtype {} is not defined", static_cast<int>(ap.dtype)));
  }
  TRN_RETURN_IF_ERROR(checkDims(ap.dims, ap.numDims, "the access pattern"));
  if (ap.memory == Memory::kHbm) {
    if (ap.tensor < 0 || static_cast<std::size_t>(ap.tensor) >= tensorCount) {
      return invalidArgument(fmt::format("HBM tensor index {} is not declared (the program "
                                         "declares {})",
                                         ap.tensor, tensorCount));
    }
    if (ap.partitionStart != 0) {
      return invalidArgument(fmt::format("an HBM operand starts at row 0, not {}",
                                         ap.partitionStart));
    }
    if (ap.partitionCount < 1) {
      return invalidArgument(fmt::format("an HBM operand has {} rows; rows are >= 1",
                                         ap.partitionCount));
    }
    return {};
  }
  if (ap.tensor != -1 || ap.partitionStride != 0) {
    return invalidArgument(fmt::format("an {} operand names no tensor and has no row stride, not "
                                       "tensor {} and row stride {}",
                                       memoryName(ap.memory), ap.tensor, ap.partitionStride));
  }
  if (ap.partitionStart < 0 || ap.partitionCount < 1 ||
      ap.partitionStart > std::numeric_limits<std::int64_t>::max() - ap.partitionCount) {
    return invalidArgument(fmt::format("partition start {} and count {} do not form a range "
                                       "[start:end] with 0 <= start < end",
                                       ap.partitionStart, ap.partitionCount));
  }
  return {};
}

/// The form of one field value, by type; values of other types (bool, int, float, int lists)
/// can take any value.
template <typename T>
Status checkValueForm(const T& value, std::size_t tensorCount) {
  if constexpr (std::is_same_v<T, AccessPattern>) {
    return checkPatternForm(value, tensorCount);
  } else if constexpr (std::is_same_v<T, std::optional<AccessPattern>>) {
    return value ? checkPatternForm(*value, tensorCount) : Status();
  } else if constexpr (std::is_same_v<T, ScalarOperand>) {
    const auto* ap = std::get_if<AccessPattern>(&value);
    return ap != nullptr ? checkPatternForm(*ap, tensorCount) : Status();
  } else if constexpr (std::is_same_v<T, IndexPattern>) {
    return checkDims(value.dims, value.numDims, "the index pattern");
  } else if constexpr (std::is_same_v<T, ReplicaGroups>) {
    return checkReplicaGroupsForm(value);
  } else if constexpr (TabledEnum<T>) {
    return isDefined(value) ? Status()
                            : invalidArgument(fmt::format("{} value {} is not defined",
                                                          EnumTable<T>::kTypeName,
                                                          static_cast<int>(value)));
  } else {
    return {};
  }
}

}  // namespace

std::int64_t TensorDecl::elementCount() const {
  Checked<std::int64_t> count = 1;
  for (const std::int64_t d : shape) {
    count *= d;
  }
  TRN_CHECK(count.valid()) << "elementCount of tensor '" << name
                           << "', whose declaration was not checked (checkTensorDecl)";
  return count.value();
}

Status checkTensorName(std::string_view name) {
  if (name.empty()) {
    return invalidArgument("a tensor name is empty");
  }
  if (name.size() > ProgramLimits::kMaxTensorNameBytes) {
    return invalidArgument(fmt::format("tensor name '{}' is longer than {} bytes", escaped(name),
                                       ProgramLimits::kMaxTensorNameBytes));
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!isTensorNameChar(name[i])) {
      return invalidArgument(fmt::format("tensor name '{}' has '{}' at byte {}; names use letters, "
                                         "digits, '_' and '.'",
                                         escaped(name), escaped(name.substr(i, 1)), i));
    }
  }
  return {};
}

Status checkTensorDecl(const TensorDecl& tensor) {
  TRN_RETURN_IF_ERROR(checkTensorName(tensor.name));
  if (!isDefined(tensor.kind)) {
    return invalidArgument(fmt::format("tensor '{}' has kind {}, which is not defined",
                                       tensor.name, static_cast<int>(tensor.kind)));
  }
  if (!isDefinedDType(tensor.dtype)) {
    return invalidArgument(fmt::format("tensor '{}' has dtype {}, which is not defined",
                                       tensor.name, static_cast<int>(tensor.dtype)));
  }
  if (tensor.shape.empty() || tensor.shape.size() > ProgramLimits::kMaxTensorRank) {
    return invalidArgument(fmt::format("tensor '{}' has rank {}; ranks are 1 to {}", tensor.name,
                                       tensor.shape.size(), ProgramLimits::kMaxTensorRank));
  }
  Checked<std::int64_t> bytes = trn::byteSize(tensor.dtype);
  for (std::size_t d = 0; d < tensor.shape.size(); ++d) {
    if (tensor.shape[d] < 1) {
      return invalidArgument(fmt::format("tensor '{}' has extent {} in dimension {}; extents are "
                                         ">= 1",
                                         tensor.name, tensor.shape[d], d));
    }
    bytes *= tensor.shape[d];
  }
  if (!bytes.valid()) {
    return outOfRange(fmt::format("tensor '{}' [{}] {} is too large: its size in bytes does not "
                                  "fit in 64 bits (at most {})",
                                  tensor.name, fmt::join(tensor.shape, ", "),
                                  dtypeName(tensor.dtype),
                                  std::numeric_limits<std::int64_t>::max()));
  }
  return {};
}

Status checkLocationFileForm(std::string_view file) {
  if (file.size() > ProgramLimits::kMaxLocationFileBytes) {
    return invalidArgument(fmt::format("source location file '{}' is longer than {} bytes",
                                       escaped(file), ProgramLimits::kMaxLocationFileBytes));
  }
  for (std::size_t i = 0; i < file.size(); ++i) {
    if (!isLocationFileChar(file[i])) {
      return invalidArgument(
          fmt::format("source location file '{}' has '{}' at byte {}; file "
                      "names are printable ASCII without spaces or '#'",
                      escaped(file), escaped(file.substr(i, 1)), i));
    }
  }
  return {};
}

Status checkInstructionFormBesidesFile(const Instruction& instr, std::size_t tensorCount) {
  const Sync& sync = instr.sync;
  if (sync.waits.size() > ProgramLimits::kMaxSyncEntries ||
      sync.updates.size() > ProgramLimits::kMaxSyncEntries) {
    return invalidArgument(fmt::format("{} semaphore waits and {} updates; an instruction has at "
                                       "most {} of each",
                                       sync.waits.size(), sync.updates.size(),
                                       ProgramLimits::kMaxSyncEntries));
  }
  for (const SemaphoreWait& w : sync.waits) {
    TRN_RETURN_IF_ERROR(checkValueForm(w.compare, tensorCount));
  }
  for (const SemaphoreUpdate& u : sync.updates) {
    TRN_RETURN_IF_ERROR(checkValueForm(u.op, tensorCount));
  }
  return std::visit(
      [&](const auto& body) {
        Status status;
        forEachFieldValue(body, [&](const auto& desc, const auto& value) {
          if (!status.ok()) {
            return;
          }
          if (Status field = checkValueForm(value, tensorCount); !field.ok()) {
            status = field.withContext(fmt::format("field '{}'", desc.name));
          }
        });
        return status;
      },
      instr.body);
}

Status checkInstructionForm(const Instruction& instr, std::size_t tensorCount) {
  TRN_RETURN_IF_ERROR(checkLocationFileForm(instr.location.file));
  return checkInstructionFormBesidesFile(instr, tensorCount);
}

Status checkProgramForm(const Program& program) {
  if (program.tensors.size() > ProgramLimits::kMaxTensors) {
    return invalidArgument(fmt::format("{} tensors; a program declares at most {}",
                                       program.tensors.size(), ProgramLimits::kMaxTensors));
  }
  std::unordered_map<std::string_view, std::size_t> names;
  names.reserve(program.tensors.size());
  for (std::size_t i = 0; i < program.tensors.size(); ++i) {
    const TensorDecl& t = program.tensors[i];
    TRN_RETURN_IF_ERROR(checkTensorDecl(t).withContext(fmt::format("tensor {}", i)));
    if (const auto [at, inserted] = names.emplace(t.name, i); !inserted) {
      return invalidArgument(fmt::format("tensors {} and {} are both named '{}'", at->second, i,
                                         t.name));
    }
  }
  if (program.instructionCount() > ProgramLimits::kMaxInstructions) {
    return invalidArgument(fmt::format("{} instructions; a program holds at most {}",
                                       program.instructionCount(),
                                       ProgramLimits::kMaxInstructions));
  }
  for (const Engine engine : kAllEngines) {
    const InstructionStream& stream = program.stream(engine);
    Instruction instr;
    for (std::size_t i = 0; i < stream.size(); ++i) {
      stream.decode(i, instr);
      const auto where = [&] {
        return fmt::format("{}#{} ({})", engineName(engine), i, info(instr.body).mnemonic);
      };
      if (instr.engine != engine) {
        return invalidArgument(fmt::format("{} is issued by engine {} but is in the {} stream",
                                           where(), static_cast<int>(instr.engine),
                                           engineName(engine)));
      }
      if (Status form = checkInstructionForm(instr, program.tensors.size()); !form.ok()) {
        return form.withContext(where());
      }
    }
  }
  return {};
}

std::optional<std::int32_t> Program::findTensor(std::string_view name) const {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == name) {
      return static_cast<std::int32_t>(i);
    }
  }
  return std::nullopt;
}

std::size_t Program::instructionCount() const {
  std::size_t count = 0;
  for (const auto& s : streams) {
    count += s.size();
  }
  return count;
}

std::size_t Program::residentBytes() const {
  std::size_t bytes = 0;
  for (const InstructionStream& s : streams) {
    bytes += s.residentBytes();
  }
  return bytes;
}

}  // namespace trn::isa
