#include "program_commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <memory>
#include <optional>
#include <span>

#include "exit_codes.h"
#include "json_output.h"
#include "messages.h"
#include "run_options.h"
#include "trn/isa/chip_program.h"
#include "trn/isa/program_binary.h"
#include "trn/isa/program_text.h"
#include "trn/isa/reference.h"
#include "trn/isa/verifier.h"
#include "trn/profile/chip_summary.h"
#include "trn/profile/report.h"
#include "trn/profile/report_json.h"
#include "trn/profile/trace.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"

namespace trn::tools {
namespace {

/// Options of `trnsim run`.
struct RunOptions {
  std::vector<std::string> programs;
  std::vector<int> cores;  ///< physical core of each program (default 0, 1, ...)
  std::optional<int> lnc;  ///< not given: a chip program file's, else 1
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string chip = "trn2";
  std::uint64_t seed = runtime::RunOptions{}.seed;
  std::string rounding = "rne";
  bool poison = false;
  bool noPoison = false;
  std::string mode = "functional+timing";
  std::string trace;
  std::string report;  ///< --report: the HTML report's path
  bool allowRaces = false;
  std::uint64_t maxInstructions = runtime::RunOptions{}.maxInstructions;
  bool keepStorageType = false;  ///< outputs in their storage type, not float32
  bool json = false;
};

/// A contradiction between options: a usage error (exit status 2), like CLI11's own.
[[noreturn]] void usageError(const std::string& message) { throw CLI::ValidationError(message); }

Status writeFile(const std::string& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) {
    return ioError(fmt::format("{}: cannot write", path));
  }
  return {};
}

/// Options of `trnsim asm`.
struct AsmOptions {
  std::vector<std::string> inputs;
  std::vector<int> cores;
  int lnc = 1;
  std::uint32_t formatVersion = isa::kProgramFormatVersion;
  std::string output;
};

Status assemble(const AsmOptions& options) {
  if (!options.cores.empty() && options.cores.size() != options.inputs.size()) {
    return invalidArgument(fmt::format("--cores names {} physical cores for {} programs",
                                       options.cores.size(), options.inputs.size()));
  }
  isa::ChipProgram chip;
  chip.lnc = options.lnc;
  chip.programVersion = options.formatVersion;
  for (std::size_t i = 0; i < options.inputs.size(); ++i) {
    TRN_ASSIGN_OR_RETURN(isa::Program program, runtime::loadProgram(options.inputs[i]));
    chip.cores.push_back(
        {options.cores.empty() ? static_cast<int>(i) : options.cores[i], std::move(program)});
  }
  if (Status saved = runtime::saveChipProgram(chip, options.output); !saved.ok()) {
    return saved.withContext(fmt::format("{}", fmt::join(options.inputs, ", ")));
  }
  return {};
}

Status disassemble(const std::string& input, const std::string& output) {
  TRN_ASSIGN_OR_RETURN(const isa::ChipProgram chip, runtime::loadChipProgram(input));
  std::string text;
  if (chip.cores.size() == 1 && chip.cores[0].physicalCore == 0 && chip.lnc == 1) {
    text = isa::formatProgramText(chip.cores[0].program);
  } else {
    if (!output.empty() && output != "-") {
      return invalidArgument(fmt::format(
          "{} is a chip program of {} cores, which has no single text form: disassemble it to "
          "the standard output (one program per core, each after a '# physical core N' line)",
          input, chip.cores.size()));
    }
    text = fmt::format("# chip program: {} cores at LNC={}\n", chip.cores.size(), chip.lnc);
    for (const isa::ChipProgram::Core& core : chip.cores) {
      text += fmt::format("\n# physical core {}\n{}", core.physicalCore,
                          isa::formatProgramText(core.program));
    }
  }
  if (output.empty() || output == "-") {
    std::fputs(text.c_str(), stdout);
    return {};
  }
  return writeFile(output, text);
}

/// `trnsim run --json`: per core its program, instruction counts and report; the chip summary
/// for several cores; the outputs written and the trace.
void printRunJson(const RunOptions& options, const spec::ChipSpec& chip,
                  const std::vector<std::string>& names,
                  const std::vector<runtime::CoreProgram>& programs,
                  const std::vector<runtime::TensorBinding>& outputs,
                  const runtime::RunResult& result) {
  nlohmann::json cores = nlohmann::json::array();
  for (std::size_t i = 0; i < programs.size(); ++i) {
    const core::RunStats& stats = result.cores[i];
    nlohmann::json perEngine = nlohmann::json::object();
    for (const isa::Engine e : isa::kAllEngines) {
      perEngine[std::string(isa::engineName(e))] =
          stats.engines[static_cast<std::size_t>(e)].instructions;
    }
    cores.push_back({{"program", names[i]},
                     {"physical_core", programs[i].physicalCore},
                     {"instructions", stats.instructions},
                     {"engine_instructions", std::move(perEngine)},
                     {"report", core::hasTiming(stats.mode)
                                    ? profile::reportToJson(profile::makeReport(stats, chip))
                                    : nlohmann::json(nullptr)}});
  }
  nlohmann::json written = nlohmann::json::array();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const runtime::NpyArray& array = result.outputs[i];
    written.push_back({{"tensor", outputs[i].tensor},
                       {"path", outputs[i].path},
                       {"npy_type", std::string(runtime::npyDescr(array.type))},
                       {"shape", array.shape}});
  }
  nlohmann::json doc = jsonDocument("run");
  doc["chip"] = chip.name;
  doc["mode"] = std::string(core::runModeName(result.stats.mode));
  doc["cores"] = std::move(cores);
  doc["chip_summary"] = programs.size() > 1 ? profile::chipSummaryToJson(profile::makeChipSummary(
                                                  result.cores, result.physicalCores, chip))
                                            : nlohmann::json(nullptr);
  doc["outputs"] = std::move(written);
  doc["trace"] = options.trace.empty() ? nlohmann::json(nullptr) : nlohmann::json(options.trace);
  printJson(std::move(doc), kExitOk);
}

Status runProgram(const RunOptions& options) {
  TRN_ASSIGN_OR_RETURN(const runtime::Session session, runtime::Session::open(options.chip));
  runtime::RunOptions run;
  TRN_ASSIGN_OR_RETURN(run.rounding, parseRoundingMode(options.rounding));
  TRN_ASSIGN_OR_RETURN(run.mode, core::parseRunMode(options.mode));
  run.seed = options.seed;
  run.poison = !options.noPoison;
  run.detectRaces = !options.allowRaces;
  run.record = !options.trace.empty() || !options.report.empty();
  run.maxInstructions = options.maxInstructions;
  const bool data = core::hasData(run.mode);
  if (options.poison && options.noPoison) {
    usageError("--poison and --no-poison contradict each other");
  }
  if (options.poison && !data) {
    usageError(
        "--poison needs data values: timing-only mode computes none (use "
        "functional+timing or functional-only)");
  }
  if (!options.trace.empty() && !core::hasTiming(run.mode)) {
    usageError("--trace needs a timed mode (functional+timing or timing-only)");
  }
  if (!options.report.empty() && !core::hasTiming(run.mode)) {
    return invalidArgument("--report needs a timed mode (functional+timing or timing-only)");
  }
  if (!data && !options.outputs.empty()) {
    usageError("timing-only mode computes no values: --out cannot be written");
  }
  if (!options.cores.empty() && options.cores.size() != options.programs.size()) {
    usageError(fmt::format("--cores names {} physical cores for {} programs", options.cores.size(),
                           options.programs.size()));
  }
  std::vector<runtime::CoreProgram> programs;
  std::vector<std::string> names;  ///< of each core's program, for messages
  run.lnc = options.lnc.value_or(1);
  for (std::size_t i = 0; i < options.programs.size(); ++i) {
    const std::string& path = options.programs[i];
    TRN_ASSIGN_OR_RETURN(isa::ChipProgram loaded, runtime::loadChipProgram(path));
    const bool multi =
        loaded.cores.size() > 1 || loaded.lnc != 1 || loaded.cores.front().physicalCore != 0;
    if (multi && (options.programs.size() > 1 || !options.cores.empty())) {
      return invalidArgument(fmt::format(
          "{} is a chip program (its cores are in the file): run it alone, without --cores", path));
    }
    if (multi && options.lnc && *options.lnc != loaded.lnc) {
      return invalidArgument(fmt::format("{} was assembled for LNC={}; --lnc {} contradicts it",
                                         path, loaded.lnc, *options.lnc));
    }
    if (multi) {
      run.lnc = loaded.lnc;
    }
    for (isa::ChipProgram::Core& core : loaded.cores) {
      const std::string name = multi ? fmt::format("{} (core {})", path, core.physicalCore) : path;
      for (const std::string& warning : isa::programWarnings(core.program)) {
        printWarning(fmt::format("{}: {}", name, warning));
      }
      const int physical = multi                   ? core.physicalCore
                           : options.cores.empty() ? static_cast<int>(i)
                                                   : options.cores[i];
      programs.push_back({std::make_shared<const isa::Program>(std::move(core.program)), physical});
      names.push_back(name);
    }
  }
  // A tensor's declaration: in the first program that declares it.
  auto declOf = [&](const std::string& name) -> const isa::TensorDecl* {
    for (const runtime::CoreProgram& p : programs) {
      if (const auto index = p.program->findTensor(name)) {
        return &p.program->tensors[static_cast<std::size_t>(*index)];
      }
    }
    return nullptr;
  };
  const std::string programNames = fmt::format("{}", fmt::join(options.programs, ", "));
  const bool multi = programs.size() > 1;

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
  for (std::size_t i = 0; data && i < programs.size(); ++i) {
    const std::vector<std::string> unbound =
        runtime::unboundInputs(*programs[i].program, boundNames);
    if (!unbound.empty()) {
      return invalidArgument(fmt::format("input tensor(s) {} of {} have no --in NAME=FILE.npy",
                                         fmt::join(unbound, ", "), names[i]));
    }
  }
  if (!data && !inputs.empty()) {
    printWarning("timing-only mode computes no values: the --in arrays are not read");
  }
  // Each array is read with a bound: the tensor's storage type, or float64 for a float.
  std::vector<runtime::NpyArray> arrays;
  arrays.reserve(inputs.size());
  std::vector<runtime::TensorInput> bound;
  std::vector<runtime::TensorOutput> wanted;
  using Bindings = std::span<const runtime::TensorBinding>;
  const Bindings read = data ? Bindings(inputs) : Bindings();
  for (const runtime::TensorBinding& b : read) {
    const isa::TensorDecl* decl = declOf(b.tensor);
    if (decl == nullptr) {
      return notFound(
          fmt::format("--in {}: {} has no tensor '{}'", b.tensor, programNames, b.tensor));
    }
    const auto most = static_cast<std::uint64_t>(decl->elementCount()) *
                      static_cast<std::uint64_t>(std::max<std::int64_t>(8, byteSize(decl->dtype)));
    TRN_ASSIGN_OR_RETURN(arrays.emplace_back(), runtime::readNpy(b.path, most));
    bound.push_back({b.tensor, &arrays.back(), b.path});
  }
  for (const runtime::TensorBinding& b : outputs) {
    const isa::TensorDecl* decl = declOf(b.tensor);
    if (decl == nullptr) {
      return notFound(
          fmt::format("--out {}: {} has no tensor '{}'", b.tensor, programNames, b.tensor));
    }
    const std::optional<DType> hostType =
        options.keepStorageType ? std::nullopt : runtime::defaultHostType(decl->dtype);
    wanted.push_back({b.tensor, b.hostType ? b.hostType : hostType});
  }
  TRN_ASSIGN_OR_RETURN(runtime::RunResult result, session.runCores(programs, bound, wanted, run));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    TRN_RETURN_IF_ERROR(runtime::writeNpy(outputs[i].path, result.outputs[i]));
  }
  const spec::ChipSpec& chip = session.chip();
  if (!options.trace.empty()) {
    std::vector<profile::TraceSegment> segments;
    for (std::size_t i = 0; i < programs.size(); ++i) {
      const core::RunStats& stats = result.cores[i];
      if (stats.unrecorded > 0) {
        printWarning(
            fmt::format("the trace holds the first {} instructions of {}; {} later ones "
                        "were run but not recorded (the record limit bounds trace "
                        "memory)",
                        stats.records.size(), names[i], stats.unrecorded));
      }
      segments.push_back(
          {fmt::format("core {}", programs[i].physicalCore), programs[i].program.get(), &stats});
    }
    TRN_RETURN_IF_ERROR(profile::writeCoresTraceFile(options.trace, segments));
  }
  auto writeHtmlReport = [&](bool announce) -> Status {
    if (options.report.empty()) {
      return {};
    }
    std::vector<profile::PageRun> runs;
    for (std::size_t i = 0; i < programs.size(); ++i) {
      const std::string core = fmt::format("core {}", programs[i].physicalCore);
      runs.push_back({core, core, programs[i].program.get(), &result.cores[i], {}});
    }
    return writeReport(options.report, runs, chip, fmt::format("trnsim run {}", programNames),
                       announce);
  };
  if (options.json) {
    TRN_RETURN_IF_ERROR(writeHtmlReport(/*announce=*/false));
    printRunJson(options, chip, names, programs, outputs, result);
    return {};
  }
  for (std::size_t i = 0; i < programs.size(); ++i) {
    const core::RunStats& stats = result.cores[i];
    std::string perEngine;
    for (const isa::Engine e : isa::kAllEngines) {
      perEngine += fmt::format(" {}={}", isa::engineName(e),
                               stats.engines[static_cast<std::size_t>(e)].instructions);
    }
    const std::string where =
        multi ? fmt::format(" core {}", programs[i].physicalCore) : std::string();
    std::printf("ran %s on %s%s (%s): %llu instructions (%s)\n", names[i].c_str(),
                chip.name.c_str(), where.c_str(),
                std::string(core::runModeName(stats.mode)).c_str(),
                static_cast<unsigned long long>(stats.instructions), perEngine.substr(1).c_str());
    if (core::hasTiming(stats.mode)) {
      std::fputs(profile::formatReport(profile::makeReport(stats, chip)).c_str(), stdout);
    }
  }
  if (programs.size() > 1) {
    std::fputs(profile::formatChipSummary(
                   profile::makeChipSummary(result.cores, result.physicalCores, chip))
                   .c_str(),
               stdout);
  }
  if (!options.trace.empty()) {
    std::printf("trace: %s (open in ui.perfetto.dev or chrome://tracing)\n", options.trace.c_str());
  }
  return writeHtmlReport(/*announce=*/true);
}

/// Runs `action`, printing its error and storing the exit code.
template <typename Fn>
void report(int& exitCode, Fn&& action) {
  const Status status = action();
  exitCode = status.ok() ? kExitOk : reportError(status);
}

}  // namespace

void registerProgramCommands(CLI::App& app, int& exitCode) {
  // Option values live as long as the parsed application, shared by the callbacks.
  struct Options {
    AsmOptions assemble;
    std::string disasmInput;
    std::string disasmOutput;
    RunOptions run;
    std::string showName;
  };
  auto o = std::make_shared<Options>();

  CLI::App* assembleCommand =
      app.add_subcommand("asm", "assemble program text into the binary form");
  assembleCommand
      ->add_option("inputs", o->assemble.inputs,
                   "program text (.tasm); several make a chip program, one per physical core")
      ->required();
  assembleCommand->add_option("--cores", o->assemble.cores, "physical core of each program")
      ->delimiter(',');
  assembleCommand->add_option("--lnc", o->assemble.lnc, "physical cores per logical core")
      ->capture_default_str();
  assembleCommand
      ->add_option("--format-version", o->assemble.formatVersion,
                   "program format: 3 (compact) or 1 (every field at full width, for older "
                   "readers)")
      ->check(CLI::IsMember({isa::kCompactProgramFormatVersion, isa::kFixedProgramFormatVersion}))
      ->capture_default_str();
  assembleCommand->add_option("-o,--output", o->assemble.output, "binary program to write")
      ->required();
  assembleCommand->callback(
      [o, &exitCode] { report(exitCode, [&] { return assemble(o->assemble); }); });

  CLI::App* disassembleCommand =
      app.add_subcommand("disasm", "print a program (binary or text) as program text");
  disassembleCommand->add_option("input", o->disasmInput, "binary program (or text)")->required();
  disassembleCommand->add_option("-o,--output", o->disasmOutput,
                                 "text file to write (default stdout)");
  disassembleCommand->callback([o, &exitCode] {
    report(exitCode, [&] { return disassemble(o->disasmInput, o->disasmOutput); });
  });

  CLI::App* runCommand = app.add_subcommand(
      "run", "run programs on the chip model, one per physical core: results, time and reports");
  runCommand
      ->add_option("programs", o->run.programs,
                   "programs (.tasm text or binary), on physical cores 0, 1, ... unless --cores "
                   "says; tensors of the same name are shared")
      ->required();
  runCommand->add_option("--cores", o->run.cores, "physical core of each program")->delimiter(',');
  runCommand->add_option("--lnc", o->run.lnc,
                         "physical cores per logical core (1 or 2): cores 2i and 2i+1 meet at "
                         "core barriers at 2 (default 1, or a chip program's)");
  runCommand->add_option("--in", o->run.inputs,
                         "input binding NAME=FILE.npy: the tensor's storage type, or float32 or "
                         "float64 for a float tensor (rounded with --rounding)");
  runCommand->add_option("--out", o->run.outputs,
                         "output binding NAME=FILE.npy[:DTYPE]: float32 for bf16, fp8 and tf32 "
                         "tensors, else the storage type; :fp32 or the tensor's own dtype "
                         "chooses");
  runCommand->add_option("--chip", o->run.chip, "chip name or YAML path (default trn2)");
  addSeedOption(runCommand, o->run.seed, "seed for stochastic rounding and the RNGs");
  addMaxInstructionsOption(runCommand, o->run.maxInstructions);
  runCommand->add_option("--rounding", o->run.rounding,
                         "rne (default), stochastic or rtz: the engines' and the inputs' rounding");
  runCommand->add_flag("--poison", o->run.poison,
                       "report reads of never-written memory (the default; an error in "
                       "timing-only mode)");
  runCommand->add_flag("--no-poison", o->run.noPoison, "do not track never-written memory");
  runCommand->add_option("--mode", o->run.mode,
                         "functional+timing (default), timing-only or functional-only");
  runCommand->add_option("--trace", o->run.trace, "write a Chrome/Perfetto trace JSON file");
  addReportOption(runCommand, o->run.report);
  runCommand->add_flag("--allow-races", o->run.allowRaces,
                       "do not stop at a race (the result then depends on the schedule)");
  runCommand->add_flag("--keep-storage-type", o->run.keepStorageType,
                       "write bf16, fp8 and tf32 outputs in their storage type (raw uint16, "
                       "uint8, float32 bits) instead of float32");
  runCommand->add_flag("--json", o->run.json,
                       "print one JSON document (docs/cli.md) instead of the text report");
  runCommand->callback([o, &exitCode] {
    const Status status = runProgram(o->run);
    exitCode = status.ok()   ? kExitOk
               : o->run.json ? reportJsonError("run", status)
                             : reportError(status);
  });

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
