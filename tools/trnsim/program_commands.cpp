#include "program_commands.h"

#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <span>

#include "messages.h"
#include "run_options.h"
#include "trn/isa/program_binary.h"
#include "trn/isa/program_text.h"
#include "trn/isa/reference.h"
#include "trn/isa/verifier.h"
#include "trn/profile/report.h"
#include "trn/profile/trace.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"

namespace trn::tools {
namespace {

/// Options of `trnsim run`.
struct RunOptions {
  std::string program;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string chip = "trn2";
  std::uint64_t seed = runtime::RunOptions{}.seed;
  std::string rounding = "rne";
  bool poison = false;
  bool noPoison = false;
  std::string mode = "functional+timing";
  std::string trace;
  bool allowRaces = false;
  std::uint64_t maxInstructions = runtime::RunOptions{}.maxInstructions;
};

Status writeFile(const std::string& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) {
    return ioError(fmt::format("{}: cannot write", path));
  }
  return {};
}

Status assemble(const std::string& input, const std::string& output) {
  TRN_ASSIGN_OR_RETURN(const isa::Program program, runtime::loadProgram(input));
  const Result<std::vector<std::byte>> encoded = isa::encodeProgram(program);
  if (!encoded.ok()) {
    return encoded.status().withContext(input);
  }
  const std::vector<std::byte>& bytes = *encoded;
  return writeFile(output,
                   std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Status disassemble(const std::string& input, const std::string& output) {
  TRN_ASSIGN_OR_RETURN(const isa::Program program, runtime::loadProgram(input));
  const std::string text = isa::formatProgramText(program);
  if (output.empty() || output == "-") {
    std::fputs(text.c_str(), stdout);
    return {};
  }
  return writeFile(output, text);
}

Status runProgram(const RunOptions& options) {
  TRN_ASSIGN_OR_RETURN(const runtime::Session session, runtime::Session::open(options.chip));
  runtime::RunOptions run;
  TRN_ASSIGN_OR_RETURN(run.rounding, parseRoundingMode(options.rounding));
  TRN_ASSIGN_OR_RETURN(run.mode, core::parseRunMode(options.mode));
  run.seed = options.seed;
  run.poison = !options.noPoison;
  run.detectRaces = !options.allowRaces;
  run.record = !options.trace.empty();
  run.maxInstructions = options.maxInstructions;
  const bool data = core::hasData(run.mode);
  if (options.poison && options.noPoison) {
    return invalidArgument("--poison and --no-poison contradict each other");
  }
  if (options.poison && !data) {
    return invalidArgument("--poison needs data values: timing-only mode computes none (use "
                           "functional+timing or functional-only)");
  }
  if (!options.trace.empty() && !core::hasTiming(run.mode)) {
    return invalidArgument("--trace needs a timed mode (functional+timing or timing-only)");
  }
  if (!data && !options.outputs.empty()) {
    return invalidArgument("timing-only mode computes no values: --out cannot be written");
  }
  TRN_ASSIGN_OR_RETURN(isa::Program loaded, runtime::loadProgram(options.program));
  const auto program = std::make_shared<const isa::Program>(std::move(loaded));

  std::vector<runtime::TensorBinding> inputs;
  std::vector<runtime::TensorBinding> outputs;
  for (const std::string& text : options.inputs) {
    TRN_ASSIGN_OR_RETURN(inputs.emplace_back(), runtime::parseBinding(text));
  }
  for (const std::string& text : options.outputs) {
    TRN_ASSIGN_OR_RETURN(outputs.emplace_back(), runtime::parseBinding(text));
  }
  std::vector<std::string> boundNames;
  for (const runtime::TensorBinding& b : inputs) {
    boundNames.push_back(b.tensor);
  }
  const std::vector<std::string> unbound =
      data ? runtime::unboundInputs(*program, boundNames) : std::vector<std::string>{};
  if (!unbound.empty()) {
    return invalidArgument(fmt::format("input tensor(s) {} of {} have no --in NAME=FILE.npy",
                                       fmt::join(unbound, ", "), options.program));
  }
  for (const std::string& warning : isa::programWarnings(*program)) {
    printWarning(fmt::format("{}: {}", options.program, warning));
  }
  if (!data && !inputs.empty()) {
    printWarning("timing-only mode computes no values: the --in arrays are not read");
  }
  // Each array is read with a bound: the tensor's storage type, or float32 for a float.
  std::vector<runtime::NpyArray> arrays;
  arrays.reserve(inputs.size());
  std::vector<runtime::TensorInput> bound;
  std::vector<runtime::TensorOutput> wanted;
  using Bindings = std::span<const runtime::TensorBinding>;
  const Bindings read = data ? Bindings(inputs) : Bindings();
  for (const runtime::TensorBinding& b : read) {
    const auto index = program->findTensor(b.tensor);
    if (!index) {
      return notFound(fmt::format("--in {}: the program has no tensor '{}'", b.tensor, b.tensor));
    }
    const isa::TensorDecl& decl = program->tensors[static_cast<std::size_t>(*index)];
    const auto most = static_cast<std::uint64_t>(decl.elementCount()) *
                      static_cast<std::uint64_t>(std::max<std::int64_t>(4, byteSize(decl.dtype)));
    TRN_ASSIGN_OR_RETURN(arrays.emplace_back(), runtime::readNpy(b.path, most));
    bound.push_back({b.tensor, &arrays.back(), b.path});
  }
  for (const runtime::TensorBinding& b : outputs) {
    if (!program->findTensor(b.tensor)) {
      return notFound(fmt::format("--out {}: the program has no tensor '{}'", b.tensor, b.tensor));
    }
    wanted.push_back({b.tensor, b.hostType});
  }
  TRN_ASSIGN_OR_RETURN(runtime::RunResult result, session.run(program, bound, wanted, run));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    TRN_RETURN_IF_ERROR(runtime::writeNpy(outputs[i].path, result.outputs[i]));
  }
  const core::RunStats& stats = result.stats;
  const spec::ChipSpec* chip = &session.chip();
  std::string perEngine;
  for (const isa::Engine e : isa::kAllEngines) {
    perEngine += fmt::format(" {}={}", isa::engineName(e),
                             stats.engines[static_cast<std::size_t>(e)].instructions);
  }
  std::printf("ran %s on %s (%s): %llu instructions (%s)\n", options.program.c_str(),
              chip->name.c_str(), std::string(core::runModeName(stats.mode)).c_str(),
              static_cast<unsigned long long>(stats.instructions), perEngine.substr(1).c_str());
  if (core::hasTiming(stats.mode)) {
    std::fputs(profile::formatReport(profile::makeReport(stats, *chip)).c_str(), stdout);
  }
  if (!options.trace.empty()) {
    if (stats.unrecorded > 0) {
      printWarning(fmt::format("the trace holds the first {} instructions; {} later ones were run "
                               "but not recorded (the record limit bounds trace memory)",
                               stats.records.size(), stats.unrecorded));
    }
    TRN_RETURN_IF_ERROR(profile::writeTraceFile(options.trace, *program, stats));
    std::printf("trace: %s (open in ui.perfetto.dev or chrome://tracing)\n", options.trace.c_str());
  }
  return {};
}

/// Runs `action`, printing its error and storing the exit code.
template <typename Fn>
void report(int& exitCode, Fn&& action) {
  const Status status = action();
  if (!status.ok()) {
    printError(status.message());
    exitCode = 1;
  }
}

}  // namespace

void registerProgramCommands(CLI::App& app, int& exitCode) {
  // Option values live as long as the parsed application, shared by the callbacks.
  struct Options {
    std::string asmInput;
    std::string asmOutput;
    std::string disasmInput;
    std::string disasmOutput;
    RunOptions run;
    std::string showName;
  };
  auto o = std::make_shared<Options>();

  CLI::App* assembleCommand =
      app.add_subcommand("asm", "assemble program text into the binary form");
  assembleCommand->add_option("input", o->asmInput, "program text (.tasm)")->required();
  assembleCommand->add_option("-o,--output", o->asmOutput, "binary program to write")->required();
  assembleCommand->callback(
      [o, &exitCode] { report(exitCode, [&] { return assemble(o->asmInput, o->asmOutput); }); });

  CLI::App* disassembleCommand =
      app.add_subcommand("disasm", "print a program (binary or text) as program text");
  disassembleCommand->add_option("input", o->disasmInput, "binary program (or text)")->required();
  disassembleCommand->add_option("-o,--output", o->disasmOutput,
                                 "text file to write (default stdout)");
  disassembleCommand->callback([o, &exitCode] {
    report(exitCode, [&] { return disassemble(o->disasmInput, o->disasmOutput); });
  });

  CLI::App* runCommand =
      app.add_subcommand("run", "run a program on the core model: results, time and a report");
  runCommand->add_option("program", o->run.program, "program (.tasm text or binary)")->required();
  runCommand->add_option("--in", o->run.inputs, "input binding NAME=FILE.npy");
  runCommand->add_option("--out", o->run.outputs, "output binding NAME=FILE.npy[:fp32]");
  runCommand->add_option("--chip", o->run.chip, "chip name or YAML path (default trn2)");
  addSeedOption(runCommand, o->run.seed, "seed for stochastic rounding and the RNGs");
  addMaxInstructionsOption(runCommand, o->run.maxInstructions);
  runCommand->add_option("--rounding", o->run.rounding, "rne (default) or stochastic");
  runCommand->add_flag("--poison", o->run.poison,
                       "report reads of never-written memory (the default; an error in "
                       "timing-only mode)");
  runCommand->add_flag("--no-poison", o->run.noPoison, "do not track never-written memory");
  runCommand->add_option("--mode", o->run.mode,
                         "functional+timing (default), timing-only or functional-only");
  runCommand->add_option("--trace", o->run.trace, "write a Chrome/Perfetto trace JSON file");
  runCommand->add_flag("--allow-races", o->run.allowRaces,
                       "do not stop at a race (the result then depends on the schedule)");
  runCommand->callback([o, &exitCode] { report(exitCode, [&] { return runProgram(o->run); }); });

  CLI::App* isaCommand = app.add_subcommand("isa", "the instruction-set reference");
  isaCommand->require_subcommand(1);
  isaCommand->add_subcommand("list", "one line per instruction")->callback([] {
    std::fputs(isa::instructionCatalogue().c_str(), stdout);
  });
  CLI::App* showCommand =
      isaCommand->add_subcommand("show", "the reference page of an instruction");
  showCommand->add_option("name", o->showName, "instruction mnemonic")->required();
  showCommand->callback([o, &exitCode] {
    report(exitCode, [&]() -> Status {
      TRN_ASSIGN_OR_RETURN(const std::string page, isa::instructionPage(o->showName));
      std::fputs(page.c_str(), stdout);
      return {};
    });
  });
}

}  // namespace trn::tools
