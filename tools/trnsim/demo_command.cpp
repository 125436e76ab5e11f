#include "demo_command.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <random>

#include "spec_command.h"
#include "trn/core/neuron_core.h"
#include "trn/isa/program_text.h"
#include "trn/numerics/convert.h"
#include "trn/profile/report.h"
#include "trn/runtime/runner.h"
#include "trn/spec/loader.h"
#include "trn/spec/report.h"

namespace trn::tools {
namespace {

constexpr int kK = 128;
constexpr int kM = 128;
constexpr int kN = 512;

/// c = gelu(lhsT^T @ rhs): two DMA loads, one bf16 matmul into PSUM, GELU on the Scalar engine,
/// one DMA store, ordered by semaphores (the same program as examples/matmul_gelu.tasm).
constexpr std::string_view kProgram = R"(
.tensor lhsT input bf16 [128, 128]
.tensor rhs input bf16 [128, 512]
.tensor c output fp32 [128, 512]
sp:  dma_copy dst=sbuf[0:128]:bf16[[1,128]] src=hbm:lhsT:bf16[[128,128],[1,128]] queue=0 signal(s0+=1)
sp:  dma_copy dst=sbuf[0:128]+256:bf16[[1,512]] src=hbm:rhs:bf16[[512,128],[1,512]] queue=1 signal(s0+=1)
pe:  nc_matmul dst=psum[0:128]:fp32[[1,512]] stationary=sbuf[0:128]:bf16[[1,128]] moving=sbuf[0:128]+256:bf16[[1,512]] wait(s0>=2) signal(s1+=1)
act: activation dst=sbuf[0:128]+2048:fp32[[1,512]] data=psum[0:128]:fp32[[1,512]] op=gelu wait(s1>=1) signal(s2+=1)
sp:  dma_copy dst=hbm:c:fp32[[512,128],[1,512]] src=sbuf[0:128]+2048:fp32[[1,512]] queue=0 wait(s2>=1)
)";

/// Seeded values in [-1, 1) rounded to bf16, returned as fp32 values and as bf16 bytes.
std::pair<std::vector<float>, std::vector<std::byte>> bf16Input(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) {
    v = quantize(dist(rng), DType::kBf16);
  }
  std::vector<std::byte> bytes(count * 2);
  convertFromFloat(values, DType::kBf16, bytes);
  return {values, bytes};
}

void printChipSummary(const spec::ChipSpec& chip) {
  const spec::Core& core = chip.core;
  std::printf("%s: %s\n", chip.name.c_str(), chip.description.c_str());
  std::printf("  per core: PE %lldx%lld at %s, ACT %s, DVE %s, POOL %s\n",
              static_cast<long long>(core.pe.rows), static_cast<long long>(core.pe.columns),
              toString(core.pe.clock).c_str(), toString(core.act.clock).c_str(),
              toString(core.dve.clock).c_str(), toString(core.pool.clock).c_str());
  std::printf(
      "            SBUF %lld x %s, PSUM %lld banks x %s per partition, %lld DMA engines x "
      "%lld queues at %s each\n",
      static_cast<long long>(core.sbuf.partitions), toString(core.sbuf.partitionBytes).c_str(),
      static_cast<long long>(core.psum.banks), toString(core.psum.bankBytes).c_str(),
      static_cast<long long>(core.dma.enginesPerCore),
      static_cast<long long>(core.dma.queuesPerEngine), toString(core.dma.engineBandwidth).c_str());
  std::printf("  HBM %s at %s; every value and its source: trnsim spec show %s\n",
              toString(chip.hbm.capacity).c_str(), toString(chip.hbm.bandwidth).c_str(),
              chip.name.c_str());
  for (const spec::DerivedValue& d : spec::derivedValues(chip)) {
    std::printf("  %s: %s (%s)\n", d.name.c_str(), d.value.c_str(), d.formula.c_str());
  }
}

Status runDemo() {
  TRN_ASSIGN_OR_RETURN(spec::ChipSpec loaded, spec::loadChip("trn2"));
  const auto shared = std::make_shared<const spec::ChipSpec>(std::move(loaded));
  const spec::ChipSpec& chip = *shared;
  printChipSummary(chip);

  TRN_ASSIGN_OR_RETURN(isa::Program program, isa::parseProgramText(kProgram, "demo.tasm"));
  core::CoreOptions options;
  options.limits = runtime::coreLimits(chip);
  options.poison = true;
  options.chip = shared;
  options.mode = core::RunMode::kFunctionalTiming;
  TRN_ASSIGN_OR_RETURN(auto core, core::NeuronCore::create(std::move(program), options));
  const auto [lhsT, lhsTBytes] = bf16Input(std::size_t{kK} * kM, 1);
  const auto [rhs, rhsBytes] = bf16Input(std::size_t{kK} * kN, 2);
  TRN_RETURN_IF_ERROR(core->setTensor("lhsT", lhsTBytes));
  TRN_RETURN_IF_ERROR(core->setTensor("rhs", rhsBytes));
  TRN_ASSIGN_OR_RETURN(const core::RunStats stats, core->run());
  TRN_ASSIGN_OR_RETURN(const auto cBytes, core->tensorBytes("c"));
  std::vector<float> c(static_cast<std::size_t>(kM) * kN);
  std::memcpy(c.data(), cBytes.data(), cBytes.size());

  // float64 reference; the fp32 sequential sum of exact products is within K * 2^-24 * sum|p|.
  double worst = 0;
  double worstBound = 0;
  bool pass = true;
  for (int m = 0; m < kM; ++m) {
    for (int n = 0; n < kN; ++n) {
      double sum = 0;
      double magnitude = 0;
      for (int k = 0; k < kK; ++k) {
        const double p = double{lhsT[k * kM + m]} * rhs[k * kN + n];
        sum += p;
        magnitude += std::fabs(p);
      }
      const double expected = 0.5 * sum * std::erfc(-sum / std::sqrt(2.0));
      const double error = std::fabs(c[m * kN + n] - expected);
      const double bound = 1.2 * kK * 0x1p-24 * magnitude + 1e-6;
      pass = pass && error <= bound;
      if (error > worst) {
        worst = error;
        worstBound = bound;
      }
    }
  }
  std::printf("\nran c = gelu(lhsT^T @ rhs), bf16 [128,128] x [128,512] -> fp32, on one %s core:\n",
              chip.name.c_str());
  std::printf("  numerics vs float64: max |error| %.3g (bound there %.3g): %s\n\n", worst,
              worstBound, pass ? "PASS" : "FAIL");
  std::fputs(profile::formatReport(profile::makeReport(stats, chip)).c_str(), stdout);
  std::printf(
      "\nthe program: examples/matmul_gelu.tasm; run your own with `trnsim run` (add "
      "--trace t.json for a Perfetto timeline), list the instructions with `trnsim isa "
      "list`\n");
  if (!pass) {
    return failedPrecondition("the demo result is outside the float64 error bound");
  }
  return {};
}

}  // namespace

void registerDemoCommand(CLI::App& app, int& exitCode) {
  app.add_subcommand("demo", "run the built-in workload: Trn2 summary and a matmul + GELU program")
      ->callback([&exitCode] {
        const Status status = runDemo();
        if (!status.ok()) {
          printError(status.message());
          exitCode = 1;
        }
      });
}

}  // namespace trn::tools
