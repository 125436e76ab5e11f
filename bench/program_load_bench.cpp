// Loading a chip program: eight cores of the generated pipelined kernel (program_generator.h),
// 10,000,000 instructions in all, saved once to a compact (version 3) TRNPROG file, then read back
// with runtime::loadChipProgram: the file read, the checked decode into packed streams (a host
// thread per core, up to the host's cores) and the form checks. Items are instructions, so
// items/s is instructions loaded per second; `file_bytes_per_instr` is the file's size and
// `resident_bytes_per_instr` the loaded program's host memory per instruction. Generating and
// saving the file is not timed; the file is removed at exit.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "program_generator.h"
#include "trn/isa/chip_program.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"
#include "trn/spec/loader.h"

namespace {

constexpr int kCores = 8;

/// The chip program file of state.range(0) instructions, written on first use; "" and `error`
/// set if it could not be made.
std::string chipProgramFile(std::int64_t instructions, std::string& error) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            fmt::format("trnsim_load_bench_{}.tprog", instructions))
                               .string();
  // Made once per process, and removed at exit: it is hundreds of megabytes.
  struct MadeFile {
    std::string path;
    ~MadeFile() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  };
  static MadeFile made;
  if (made.path == path) {
    return path;
  }
  trn::Result<trn::spec::ChipSpec> chip = trn::spec::loadChip("trn2");
  if (!chip.ok()) {
    error = chip.status().toString();
    return "";
  }
  trn::bench::GeneratorOptions options;
  options.instructions = instructions / kCores;
  trn::Result<trn::isa::Program> program =
      trn::bench::generatePipelineProgram(options, trn::runtime::coreLimits(*chip));
  if (!program.ok()) {
    error = program.status().toString();
    return "";
  }
  trn::isa::ChipProgram chipProgram;
  chipProgram.lnc = 1;
  for (int c = 0; c < kCores; ++c) {
    chipProgram.cores.push_back({c, *program});
  }
  if (const trn::Status saved = trn::runtime::saveChipProgram(chipProgram, path); !saved.ok()) {
    error = saved.toString();
    return "";
  }
  made.path = path;
  return path;
}

void BM_LoadChipProgram(benchmark::State& state) {
  std::string error;
  const std::string path = chipProgramFile(state.range(0), error);
  if (path.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  std::size_t instructions = 0;
  std::size_t resident = 0;
  for (auto _ : state) {
    trn::Result<trn::isa::ChipProgram> chip = trn::runtime::loadChipProgram(path);
    if (!chip.ok()) {
      state.SkipWithError(chip.status().toString().c_str());
      break;
    }
    state.PauseTiming();
    instructions = 0;
    resident = 0;
    for (const trn::isa::ChipProgram::Core& core : chip->cores) {
      instructions += core.program.instructionCount();
      resident += core.program.residentBytes();
    }
    chip = trn::isa::ChipProgram{};  // freed outside the timed region
    state.ResumeTiming();
  }
  const auto count = static_cast<double>(instructions);
  state.SetItemsProcessed(static_cast<std::int64_t>(instructions * state.iterations()));
  state.counters["file_bytes_per_instr"] =
      static_cast<double>(std::filesystem::file_size(path)) / count;
  state.counters["resident_bytes_per_instr"] = static_cast<double>(resident) / count;
}

BENCHMARK(BM_LoadChipProgram)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
