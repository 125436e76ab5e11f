#include "trn/isa/program_text.h"

#include <fmt/format.h>

#include <charconv>
#include <unordered_map>

#include "field_codec.h"

namespace trn::isa {
namespace {

codec::TensorNameFn tensorNames(const Program& program) {
  return [&program](std::int32_t index) -> std::string_view {
    if (index >= 0 && static_cast<std::size_t>(index) < program.tensors.size()) {
      return program.tensors[static_cast<std::size_t>(index)].name;
    }
    return "?";
  };
}

std::vector<std::string_view> splitWhitespace(std::string_view line) {
  std::vector<std::string_view> tokens;
  std::size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t' || line[pos] == '\r')) {
      ++pos;
    }
    const std::size_t start = pos;
    while (pos < line.size() && line[pos] != ' ' && line[pos] != '\t' && line[pos] != '\r') {
      ++pos;
    }
    if (pos > start) {
      tokens.push_back(line.substr(start, pos - start));
    }
  }
  return tokens;
}

bool parseInt32(std::string_view text, std::int32_t& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

/// Parses "sN>=V" / "sN==V" inside wait(...).
Status parseWait(std::string_view text, SemaphoreWait& wait) {
  for (const auto& [compare, symbol] : EnumTable<WaitCompare>::kEntries) {
    const std::size_t at = text.find(symbol);
    if (at != std::string_view::npos && text.starts_with('s') &&
        parseInt32(text.substr(1, at - 1), wait.semaphore) &&
        parseInt32(text.substr(at + symbol.size()), wait.value)) {
      wait.compare = compare;
      return {};
    }
  }
  return parseError(fmt::format("bad semaphore wait 'wait({})'; expected wait(sN>=V) or wait(sN==V)",
                                text));
}

/// Parses "sN+=V" / "sN-=V" / "sN=V" inside signal(...).
Status parseUpdate(std::string_view text, SemaphoreUpdate& update) {
  for (const auto& [op, symbol] : EnumTable<SemaphoreUpdateOp>::kEntries) {
    const std::size_t at = text.find(symbol);
    if (at != std::string_view::npos && text.starts_with('s') &&
        parseInt32(text.substr(1, at - 1), update.semaphore) &&
        parseInt32(text.substr(at + symbol.size()), update.value)) {
      update.op = op;
      return {};
    }
  }
  return parseError(fmt::format(
      "bad semaphore update 'signal({})'; expected signal(sN+=V), signal(sN-=V) or signal(sN=V)",
      text));
}

/// Fills the fields of instruction type I from `key=value` tokens.
template <typename I>
Status parseFields(I& instr, const std::vector<std::pair<std::string_view, std::string_view>>& kv,
                   const codec::TensorIndexFn& tensors) {
  for (const auto& [key, value] : kv) {
    bool known = false;
    Status status;
    forEachFieldValue(instr, [&](const auto& desc, auto& member) {
      if (!known && desc.name == key) {
        known = true;
        status = codec::parse(value, member, tensors).withContext(fmt::format("field '{}'", key));
      }
    });
    if (!known) {
      std::string names;
      forEachField<I>([&](const auto& desc) {
        names += names.empty() ? "" : ", ";
        names += desc.name;
      });
      return parseError(fmt::format("{} has no field '{}'; its fields are: {}", I::kInfo.mnemonic,
                                    key, names.empty() ? "(none)" : names));
    }
    TRN_RETURN_IF_ERROR(status);
  }
  return {};
}

/// Builds the instruction body named `mnemonic`.
Result<InstructionBody> parseBody(
    std::string_view mnemonic,
    const std::vector<std::pair<std::string_view, std::string_view>>& kv,
    const codec::TensorIndexFn& tensors) {
  std::optional<Result<InstructionBody>> result;
  forEachInstructionType([&]<typename I>() {
    if (!result && I::kInfo.mnemonic == mnemonic) {
      I instr;
      const Status status = parseFields(instr, kv, tensors);
      result = status.ok() ? Result<InstructionBody>(InstructionBody(std::move(instr)))
                           : Result<InstructionBody>(status);
    }
  });
  if (!result) {
    return parseError(fmt::format("unknown instruction '{}' (see `trnsim isa list`)", mnemonic));
  }
  return std::move(*result);
}

/// Parses program text line by line into a Program, with an index from tensor name to its
/// declaration so that every lookup takes constant time.
class TextParser {
 public:
  Result<Program> parse(std::string_view text, std::string_view name) {
    while (!text.empty()) {
      ++lineNumber_;
      const std::size_t newline = text.find('\n');
      std::string_view line = text.substr(0, newline);
      text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
      if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) {
        line = line.substr(0, hash);
      }
      const std::vector<std::string_view> tokens = splitWhitespace(line);
      if (tokens.empty()) {
        continue;
      }
      const Status status = tokens[0] == ".tensor" ? parseTensorDirective(tokens, line)
                                                   : parseInstructionLine(tokens);
      if (!status.ok()) {
        return Status(status.code(), fmt::format("{}:{}: {}", name, lineNumber_, status.message()),
                      status.origin());
      }
    }
    return std::move(program_);
  }

 private:
  struct Declared {
    std::int32_t index;
    std::size_t line;
  };

  Status parseTensorDirective(const std::vector<std::string_view>& tokens, std::string_view line) {
    // .tensor NAME KIND DTYPE [d0, d1, ...]
    if (tokens.size() < 5) {
      return parseError("expected '.tensor NAME KIND DTYPE [d0, d1, ...]'");
    }
    if (program_.tensors.size() >= ProgramLimits::kMaxTensors) {
      return invalidArgument(fmt::format("more than {} tensors; a program declares at most {}",
                                         ProgramLimits::kMaxTensors, ProgramLimits::kMaxTensors));
    }
    TensorDecl decl;
    decl.name = std::string(tokens[1]);
    if (!enumFromName(tokens[2], decl.kind)) {
      return parseError(
          fmt::format("'{}' is not a tensor kind (input, output, scratch)", tokens[2]));
    }
    TRN_ASSIGN_OR_RETURN(decl.dtype, parseDType(tokens[3]));
    const std::size_t shapeStart = static_cast<std::size_t>(tokens[4].data() - line.data());
    std::string_view dims = trimmed(line.substr(shapeStart));
    if (dims.size() < 2 || dims.front() != '[' || dims.back() != ']') {
      return parseError(fmt::format("expected the shape in brackets after the dtype, e.g. [128, "
                                    "512], not '{}'",
                                    dims));
    }
    dims = dims.substr(1, dims.size() - 2);
    while (!trimmed(dims).empty()) {
      const std::size_t comma = dims.find(',');
      const std::string_view item = trimmed(dims.substr(0, comma));
      std::int64_t d = 0;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
      if (item.empty() || ec != std::errc() || end != item.data() + item.size()) {
        return parseError(fmt::format("shape entry '{}' is not an integer", item));
      }
      decl.shape.push_back(d);
      dims = comma == std::string_view::npos ? std::string_view() : dims.substr(comma + 1);
    }
    TRN_RETURN_IF_ERROR(checkTensorDecl(decl));
    const auto index = static_cast<std::int32_t>(program_.tensors.size());
    if (const auto [at, inserted] = tensors_.try_emplace(decl.name, Declared{index, lineNumber_});
        !inserted) {
      return invalidArgument(fmt::format("tensor '{}' is declared twice (first at line {})",
                                         decl.name, at->second.line));
    }
    program_.tensors.push_back(std::move(decl));
    return {};
  }

  Status parseInstructionLine(const std::vector<std::string_view>& tokens) {
    std::string_view engineToken = tokens[0];
    if (!engineToken.ends_with(':')) {
      return parseError(fmt::format("expected 'ENGINE: mnemonic ...', got '{}'", engineToken));
    }
    engineToken.remove_suffix(1);
    Instruction instr;
    TRN_ASSIGN_OR_RETURN(instr.engine, parseEngine(engineToken));
    if (tokens.size() < 2) {
      return parseError("missing the instruction mnemonic");
    }
    if (instructions_ >= ProgramLimits::kMaxInstructions) {
      return invalidArgument(fmt::format("more than {} instructions; a program holds at most {}",
                                         ProgramLimits::kMaxInstructions,
                                         ProgramLimits::kMaxInstructions));
    }
    std::vector<std::pair<std::string_view, std::string_view>> kv;
    for (std::size_t t = 2; t < tokens.size(); ++t) {
      const std::string_view token = tokens[t];
      if (token.starts_with("wait(") && token.ends_with(')')) {
        SemaphoreWait wait;
        TRN_RETURN_IF_ERROR(parseWait(token.substr(5, token.size() - 6), wait));
        instr.sync.waits.push_back(wait);
      } else if (token.starts_with("signal(") && token.ends_with(')')) {
        SemaphoreUpdate update;
        TRN_RETURN_IF_ERROR(parseUpdate(token.substr(7, token.size() - 8), update));
        instr.sync.updates.push_back(update);
      } else if (token.starts_with("loc=")) {
        const std::string_view loc = token.substr(4);
        const std::size_t colon = loc.rfind(':');
        if (colon == std::string_view::npos ||
            !parseInt32(loc.substr(colon + 1), instr.location.line)) {
          return parseError(fmt::format("bad source location '{}'; expected loc=FILE:LINE", loc));
        }
        instr.location.file = std::string(loc.substr(0, colon));
      } else if (const std::size_t eq = token.find('='); eq != std::string_view::npos && eq > 0) {
        kv.emplace_back(token.substr(0, eq), token.substr(eq + 1));
      } else {
        return parseError(fmt::format("unexpected '{}'; expected field=value, wait(...), "
                                      "signal(...) or loc=FILE:LINE",
                                      token));
      }
    }
    const codec::TensorIndexFn tensors = [this](std::string_view t) -> Result<std::int32_t> {
      if (const auto it = tensors_.find(t); it != tensors_.end()) {
        return it->second.index;
      }
      return notFound(
          fmt::format("tensor '{}' is not declared (use .tensor before its first use)", t));
    };
    TRN_ASSIGN_OR_RETURN(instr.body, parseBody(tokens[1], kv, tensors));
    TRN_RETURN_IF_ERROR(checkInstructionForm(instr, program_.tensors.size()));
    program_.stream(instr.engine).push_back(std::move(instr));
    ++instructions_;
    return {};
  }

  static std::string_view trimmed(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r')) {
      text.remove_prefix(1);
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
      text.remove_suffix(1);
    }
    return text;
  }

  /// Hashes std::string and std::string_view alike, so lookups by a token do not allocate.
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const {
      return std::hash<std::string_view>{}(text);
    }
  };

  Program program_;
  std::unordered_map<std::string, Declared, NameHash, std::equal_to<>> tensors_;
  std::size_t instructions_ = 0;
  std::size_t lineNumber_ = 0;
};

}  // namespace

std::string formatInstruction(const Instruction& instr, const Program& program, bool withEngine) {
  std::string out;
  if (withEngine) {
    out = fmt::format("{}: ", engineName(instr.engine));
  }
  const codec::TensorNameFn names = tensorNames(program);
  std::visit(
      [&](const auto& body) {
        using I = std::decay_t<decltype(body)>;
        out += I::kInfo.mnemonic;
        forEachFieldValue(body, [&](const auto& desc, const auto& value) {
          // Every rank, the default, is left out: texts written before there were groups read
          // and print as they did.
          if constexpr (std::is_same_v<std::decay_t<decltype(value)>, ReplicaGroups>) {
            if (value.all()) {
              return;
            }
          }
          // Likewise a collective's counts, which only all_to_allv has.
          if constexpr (std::is_same_v<I, Collective> &&
                        std::is_same_v<std::decay_t<decltype(value)>, std::optional<AccessPattern>>) {
            if (!value) {
              return;
            }
          }
          out += fmt::format(" {}={}", desc.name, codec::format(value, names));
        });
      },
      instr.body);
  for (const SemaphoreWait& w : instr.sync.waits) {
    out += fmt::format(" wait(s{}{}{})", w.semaphore, enumName(w.compare), w.value);
  }
  for (const SemaphoreUpdate& u : instr.sync.updates) {
    out += fmt::format(" signal(s{}{}{})", u.semaphore, enumName(u.op), u.value);
  }
  return out;
}

std::string formatProgramText(const Program& program) {
  std::string out = "# trnsim program\n";
  for (const TensorDecl& t : program.tensors) {
    out += fmt::format(".tensor {} {} {} [{}]\n", t.name, enumName(t.kind), dtypeName(t.dtype),
                       fmt::join(t.shape, ", "));
  }
  for (const Engine engine : kAllEngines) {
    for (const Instruction& instr : program.stream(engine)) {
      out += formatInstruction(instr, program);
      if (instr.location != SourceLocation{}) {
        out += fmt::format(" loc={}:{}", instr.location.file, instr.location.line);
      }
      out += '\n';
    }
  }
  return out;
}

Result<Program> parseProgramText(std::string_view text, std::string_view name) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f || c >= 0x80) {
      return parseError(fmt::format("{}: is not program text: byte {} is 0x{:02x} (program text "
                                    "is ASCII; binary programs start with TRNPROG)",
                                    name, i, c));
    }
  }
  return TextParser().parse(text, name);
}

}  // namespace trn::isa
