#include "trn/isa/program_binary.h"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <unordered_map>

#include "compact_streams.h"
#include "field_codec.h"

namespace trn::isa {
namespace {

/// Opcode, engine, wait and update counts, location length and line: an instruction without
/// fields or synchronisation.
constexpr std::size_t kMinInstructionBytes = 2 + 1 + 4 + 4 + 4 + 4;

void encodeInstruction(const Instruction& instr, codec::Writer& w) {
  std::visit(
      [&](const auto& body) {
        using I = std::decay_t<decltype(body)>;
        w.put(I::kInfo.opcode);
        w.put(static_cast<std::uint8_t>(instr.engine));
        w.put(static_cast<std::uint32_t>(instr.sync.waits.size()));
        for (const SemaphoreWait& wait : instr.sync.waits) {
          w.put(wait.semaphore);
          codec::encode(wait.compare, w);
          w.put(wait.value);
        }
        w.put(static_cast<std::uint32_t>(instr.sync.updates.size()));
        for (const SemaphoreUpdate& update : instr.sync.updates) {
          w.put(update.semaphore);
          codec::encode(update.op, w);
          w.put(update.value);
        }
        w.putString(instr.location.file);
        w.put(instr.location.line);
        forEachFieldValue(
            body, [&](const auto& /*desc*/, const auto& value) { codec::encode(value, w); });
      },
      instr.body);
}

/// Decodes the fields of alternative K into `body`, reusing the alternative already there (every
/// field decoder overwrites its whole member).
template <std::size_t K>
Status decodeBodyAs(codec::Reader& r, InstructionBody& body) {
  auto* instr = std::get_if<K>(&body);
  if (instr == nullptr) {
    instr = &body.template emplace<K>();
  }
  Status status;
  forEachFieldValue(*instr, [&](const auto& /*desc*/, auto& member) {
    if (status.ok()) {
      status = codec::decode(r, member);
    }
  });
  return status;
}

using BodyDecoder = Status (*)(codec::Reader&, InstructionBody&);

struct OpcodeDecoder {
  std::uint16_t opcode;
  BodyDecoder decode;
};

constexpr auto kBodyDecoders = []<std::size_t... K>(std::index_sequence<K...>) {
  return std::array<OpcodeDecoder, sizeof...(K)>{OpcodeDecoder{
      std::variant_alternative_t<K, InstructionBody>::kInfo.opcode, &decodeBodyAs<K>}...};
}
(std::make_index_sequence<std::variant_size_v<InstructionBody>>());

Status decodeBody(std::uint16_t opcode, codec::Reader& r, InstructionBody& body) {
  for (const OpcodeDecoder& d : kBodyDecoders) {
    if (d.opcode == opcode) {
      return d.decode(r, body);
    }
  }
  return r.error(fmt::format("unknown opcode 0x{:04x}", opcode));
}

Status decodeInstruction(codec::Reader& r, Instruction& instr, std::size_t tensorCount) {
  std::uint16_t opcode = 0;
  std::uint8_t engine = 0;
  TRN_RETURN_IF_ERROR(r.get(opcode));
  TRN_RETURN_IF_ERROR(r.get(engine));
  if (engine >= kNumEngines) {
    return r.error(fmt::format("engine {} does not exist", engine));
  }
  instr.engine = static_cast<Engine>(engine);
  std::uint32_t count = 0;
  TRN_RETURN_IF_ERROR(r.get(count));
  if (count > ProgramLimits::kMaxSyncEntries) {
    return r.error(fmt::format("{} semaphore waits; an instruction has at most {}", count,
                               ProgramLimits::kMaxSyncEntries));
  }
  instr.sync.waits.resize(count);
  for (SemaphoreWait& wait : instr.sync.waits) {
    TRN_RETURN_IF_ERROR(r.get(wait.semaphore));
    TRN_RETURN_IF_ERROR(codec::decode(r, wait.compare));
    TRN_RETURN_IF_ERROR(r.get(wait.value));
  }
  TRN_RETURN_IF_ERROR(r.get(count));
  if (count > ProgramLimits::kMaxSyncEntries) {
    return r.error(fmt::format("{} semaphore updates; an instruction has at most {}", count,
                               ProgramLimits::kMaxSyncEntries));
  }
  instr.sync.updates.resize(count);
  for (SemaphoreUpdate& update : instr.sync.updates) {
    TRN_RETURN_IF_ERROR(r.get(update.semaphore));
    TRN_RETURN_IF_ERROR(codec::decode(r, update.op));
    TRN_RETURN_IF_ERROR(r.get(update.value));
  }
  TRN_RETURN_IF_ERROR(r.getString(instr.location.file, ProgramLimits::kMaxLocationFileBytes,
                                  "source location file name"));
  TRN_RETURN_IF_ERROR(r.get(instr.location.line));
  TRN_RETURN_IF_ERROR(decodeBody(opcode, r, instr.body));
  if (const Status form = checkInstructionForm(instr, tensorCount); !form.ok()) {
    return r.error(fmt::format("{}: {}", info(instr.body).mnemonic, form.message()));
  }
  return {};
}

}  // namespace

namespace codec {

void encode(const AccessPattern& ap, Writer& w) {
  w.put(static_cast<std::uint8_t>(ap.memory));
  w.put(static_cast<std::uint8_t>(ap.dtype));
  w.put(ap.tensor);
  w.put(ap.partitionStart);
  w.put(ap.partitionCount);
  w.put(ap.partitionStride);
  w.put(ap.offset);
  w.put(static_cast<std::uint8_t>(ap.numDims));
  for (int d = 0; d < ap.numDims; ++d) {
    w.put(ap.dims[static_cast<std::size_t>(d)].stride);
    w.put(ap.dims[static_cast<std::size_t>(d)].count);
  }
}

Status decode(Reader& r, AccessPattern& ap) {
  ap = AccessPattern{};
  std::uint8_t memory = 0;
  std::uint8_t dtype = 0;
  std::uint8_t numDims = 0;
  TRN_RETURN_IF_ERROR(r.get(memory));
  TRN_RETURN_IF_ERROR(r.get(dtype));
  if (memory > static_cast<std::uint8_t>(Memory::kPsum)) {
    return r.error(fmt::format("memory kind {}", memory));
  }
  if (dtype >= kNumDTypes) {
    return r.error(fmt::format("dtype {}", dtype));
  }
  ap.memory = static_cast<Memory>(memory);
  ap.dtype = static_cast<DType>(dtype);
  TRN_RETURN_IF_ERROR(r.get(ap.tensor));
  TRN_RETURN_IF_ERROR(r.get(ap.partitionStart));
  TRN_RETURN_IF_ERROR(r.get(ap.partitionCount));
  TRN_RETURN_IF_ERROR(r.get(ap.partitionStride));
  TRN_RETURN_IF_ERROR(r.get(ap.offset));
  TRN_RETURN_IF_ERROR(r.get(numDims));
  if (numDims < 1 || numDims > kMaxFreeDims) {
    return r.error(fmt::format("{} free dimensions", numDims));
  }
  ap.numDims = numDims;
  for (int d = 0; d < ap.numDims; ++d) {
    TRN_RETURN_IF_ERROR(r.get(ap.dims[static_cast<std::size_t>(d)].stride));
    TRN_RETURN_IF_ERROR(r.get(ap.dims[static_cast<std::size_t>(d)].count));
  }
  return {};
}

}  // namespace codec

namespace {

void encodeTensors(const Program& program, codec::Writer& w) {
  w.put(static_cast<std::uint32_t>(program.tensors.size()));
  for (const TensorDecl& t : program.tensors) {
    w.putString(t.name);
    codec::encode(t.kind, w);
    w.put(static_cast<std::uint8_t>(t.dtype));
    w.put(static_cast<std::uint32_t>(t.shape.size()));
    for (const std::int64_t d : t.shape) {
      w.put(d);
    }
  }
}

Status decodeTensors(codec::Reader& r, Program& program) {
  std::uint32_t tensorCount = 0;
  TRN_RETURN_IF_ERROR(r.get(tensorCount));
  if (tensorCount > ProgramLimits::kMaxTensors) {
    return r.error(fmt::format("{} tensors; a program declares at most {}", tensorCount,
                               ProgramLimits::kMaxTensors));
  }
  std::unordered_map<std::string_view, std::uint32_t> names;
  program.tensors.reserve(tensorCount);
  for (std::uint32_t i = 0; i < tensorCount; ++i) {
    TensorDecl t;
    TRN_RETURN_IF_ERROR(r.getString(t.name, ProgramLimits::kMaxTensorNameBytes, "tensor name"));
    TRN_RETURN_IF_ERROR(codec::decode(r, t.kind));
    std::uint8_t dtype = 0;
    TRN_RETURN_IF_ERROR(r.get(dtype));
    if (dtype >= kNumDTypes) {
      return r.error(fmt::format("dtype {}", dtype));
    }
    t.dtype = static_cast<DType>(dtype);
    std::uint32_t rank = 0;
    TRN_RETURN_IF_ERROR(r.get(rank));
    if (rank > ProgramLimits::kMaxTensorRank) {
      return r.error(
          fmt::format("tensor rank {}; ranks are 1 to {}", rank, ProgramLimits::kMaxTensorRank));
    }
    t.shape.resize(rank);
    for (std::int64_t& d : t.shape) {
      TRN_RETURN_IF_ERROR(r.get(d));
    }
    if (const Status decl = checkTensorDecl(t); !decl.ok()) {
      return r.error(fmt::format("tensor {}: {}", i, decl.message()));
    }
    // The names live in program.tensors, whose storage was reserved above and does not move.
    program.tensors.push_back(std::move(t));
    if (const auto [at, inserted] = names.emplace(program.tensors.back().name, i); !inserted) {
      return r.error(fmt::format("tensors {} and {} are both named '{}'", at->second, i,
                                 program.tensors.back().name));
    }
  }
  return {};
}

/// Reads the count of the next stream, bounded by the program limit and by the bytes left at
/// `minBytes` an instruction.
Status budgetError(const codec::Reader& r, const InstructionBudget& budget) {
  return r.error(
      fmt::format("the programs hold more than {} instructions together", budget.limit()));
}

Result<std::size_t> decodeStreamCount(codec::Reader& r, Engine engine, std::size_t& instructions,
                                      std::size_t minBytes, InstructionBudget* budget) {
  std::uint64_t count = 0;
  TRN_RETURN_IF_ERROR(r.get(count));
  if (count > ProgramLimits::kMaxInstructions - instructions) {
    return r.error(
        fmt::format("{} more instructions in the {} stream; a program holds at most "
                    "{}",
                    count, engineName(engine), ProgramLimits::kMaxInstructions));
  }
  if (count > r.remaining() / minBytes) {
    return r.error(fmt::format("{} instructions in the {} stream do not fit in the {} bytes left",
                               count, engineName(engine), r.remaining()));
  }
  instructions += static_cast<std::size_t>(count);
  if (budget != nullptr && !budget->take(static_cast<std::size_t>(count))) {
    return budgetError(r, *budget);
  }
  return static_cast<std::size_t>(count);
}

Result<Program> decodeCompact(codec::Reader& r, InstructionBudget* budget) {
  Program program;
  TRN_RETURN_IF_ERROR(decodeTensors(r, program));
  TRN_RETURN_IF_ERROR(compact::decodeStreams(r, program, budget));
  return program;
}

Result<Program> decodeFixed(codec::Reader& r, InstructionBudget* budget) {
  Program program;
  TRN_RETURN_IF_ERROR(decodeTensors(r, program));
  std::size_t instructions = 0;
  for (const Engine engine : kAllEngines) {
    TRN_ASSIGN_OR_RETURN(const std::size_t count,
                         decodeStreamCount(r, engine, instructions, kMinInstructionBytes, budget));
    InstructionStream& stream = program.stream(engine);
    stream.reserve(count, r.remaining());  // packed fields are shorter than fixed-width ones
    Instruction instr;
    for (std::size_t i = 0; i < count; ++i) {
      TRN_RETURN_IF_ERROR(decodeInstruction(r, instr, program.tensors.size()));
      if (instr.engine != engine) {
        return r.error(fmt::format("a {} instruction in the {} stream", engineName(instr.engine),
                                   engineName(engine)));
      }
      stream.push_back(instr);
    }
  }
  return program;
}

}  // namespace

Result<std::vector<std::byte>> encodeProgram(const Program& program, std::uint32_t version) {
  if (version != kFixedProgramFormatVersion && version != kCompactProgramFormatVersion) {
    return invalidArgument(
        fmt::format("program format version {} cannot be written (versions {} "
                    "and {} can)",
                    version, kFixedProgramFormatVersion, kCompactProgramFormatVersion));
  }
  if (const Status form = checkProgramForm(program); !form.ok()) {
    return Status(form.code(), fmt::format("cannot encode the program: {}", form.message()),
                  form.origin());
  }
  std::vector<std::byte> out;
  codec::Writer w(out);
  codec::writeHeader(w, version);
  encodeTensors(program, w);
  if (version == kCompactProgramFormatVersion) {
    compact::encodeStreams(program, out);
    return out;
  }
  for (const Engine engine : kAllEngines) {
    w.put(static_cast<std::uint64_t>(program.stream(engine).size()));
    for (const Instruction& instr : program.stream(engine)) {
      encodeInstruction(instr, w);
    }
  }
  return out;
}

Result<Program> decodeProgram(std::span<const std::byte> bytes, std::string_view name,
                              InstructionBudget* budget) {
  codec::Reader r(bytes, name);
  TRN_ASSIGN_OR_RETURN(const std::uint32_t version, codec::readHeader(r, name));
  if (version != kFixedProgramFormatVersion && version != kCompactProgramFormatVersion) {
    return unsupported(
        fmt::format("{}: program format version {} is not supported (this trnsim "
                    "reads versions {} and {})",
                    name, version, kFixedProgramFormatVersion, kCompactProgramFormatVersion));
  }
  Result<Program> program =
      version == kCompactProgramFormatVersion ? decodeCompact(r, budget) : decodeFixed(r, budget);
  if (program.ok() && !r.done()) {
    return r.error("trailing bytes after the last instruction");
  }
  return program;
}

}  // namespace trn::isa
