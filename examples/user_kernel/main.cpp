// Runs the user's kernel (scaled_relu_linear.h) on the simulated trn2 through the installed
// trnsim libraries: compiles it through runtime::Session, runs it on host arrays built here (no
// numpy), compares every output element with a float64 reference computed here, and prints the
// worst error and the simulated time. Exit status 0 when every element is within its bound, 1
// on a mismatch, 2 when the kernel fails to compile or run.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "scaled_relu_linear.h"
#include "trn/profile/report.h"
#include "trn/runtime/session.h"

namespace {

/// Values uniform in [-1, 1) from a fixed linear congruential sequence, exactly representable in
/// fp32, so host, kernel and reference see the same numbers.
std::vector<float> pseudoRandom(std::size_t count, std::uint64_t seed) {
  std::vector<float> values(count);
  std::uint64_t state = seed;
  for (float& v : values) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    v = static_cast<float>(static_cast<double>(state >> 40) / static_cast<double>(1u << 23)) - 1.0f;
  }
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  // The chip: a name from the installed configs or a YAML path (default: the installed trn2).
  const std::string chip = argc > 1 ? argv[1] : USER_KERNEL_DEFAULT_CHIP;
  constexpr long kM = 200;  // two row tiles, the second ragged
  constexpr long kK = 192;  // two K chunks, the second ragged
  constexpr long kN = 320;
  const std::vector<float> x = pseudoRandom(static_cast<std::size_t>(kM * kK), 1);
  const std::vector<float> w = pseudoRandom(static_cast<std::size_t>(kK * kN), 2);

  trn::Result<trn::runtime::Session> session = trn::runtime::Session::open(chip);
  if (!session.ok()) {
    std::fprintf(stderr, "user_kernel: %s\n", session.status().toString().c_str());
    return 2;
  }
  const std::vector<trn::kernel::TensorSpec> specs = {{"x", {kM, kK}, trn::DType::kFp32},
                                                      {"w", {kK, kN}, trn::DType::kFp32}};
  const std::vector<trn::runtime::NpyArray> inputs = {trn::runtime::floatArray({kM, kK}, x),
                                                      trn::runtime::floatArray({kK, kN}, w)};
  trn::runtime::RunOptions options;  // functional+timing, race detection and poison on
  trn::Result<trn::runtime::RunResult> run =
      session->runKernel(user_kernel::scaledReluLinear(), specs, inputs, options);
  if (!run.ok()) {
    std::fprintf(stderr, "user_kernel: %s\n", run.status().toString().c_str());
    return 2;
  }
  const std::vector<float> out = trn::runtime::floatValues(run->outputs.at(0));

  std::vector<double> bound;
  const std::vector<double> ref = user_kernel::scaledReluLinearReference(
      std::vector<double>(x.begin(), x.end()), std::vector<double>(w.begin(), w.end()), kM, kK, kN,
      &bound);
  if (out.size() != ref.size()) {
    std::fprintf(stderr, "user_kernel: %zu outputs, expected %zu\n", out.size(), ref.size());
    return 1;
  }
  double worst = 0;
  std::size_t outside = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double error = std::fabs(static_cast<double>(out[i]) - ref[i]);
    worst = std::max(worst, error);
    if (!(error <= bound[i])) {
      if (outside++ < 5) {
        std::fprintf(stderr, "user_kernel: out[%zu] = %.9g, reference %.9g (bound %.3g)\n", i,
                     static_cast<double>(out[i]), ref[i], bound[i]);
      }
    }
  }
  const trn::profile::Report report = trn::profile::makeReport(run->stats, session->chip());
  std::printf("scaled_relu_linear [%ld x %ld] @ [%ld x %ld] on %s: simulated %s\n", kM, kK, kK, kN,
              session->chip().name.c_str(), trn::profile::formatDuration(report.total).c_str());
  std::printf("max abs error vs float64 %.3g, %zu of %zu outside their bound: %s\n", worst, outside,
              out.size(), outside == 0 ? "PASS" : "FAIL");
  return outside == 0 ? 0 : 1;
}
