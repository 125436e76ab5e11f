// Fuzz target: the `trnsim kernels bench` input options. The input is lines of text: the first
// names a registered kernel, each further line is "shape VALUE" or "dtype VALUE" as --shape and
// --dtype take them. The options are applied with kernels::benchInputs and, when the inputs are
// small enough to trace quickly, the kernel is compiled for trn2's limits and its program
// verified. Contract: a Status or a verified Program; never a crash, an abort or a hang.
#include <string>
#include <vector>

#include "fuzz_target.h"
#include "trn/base/checked.h"
#include "trn/isa/verifier.h"
#include "trn/kernel/compiler.h"
#include "trn/kernels/bench_inputs.h"

namespace {

/// Inputs up to this many elements in all are compiled; larger ones only parsed. Under ASan with
/// the per-pass IR verifier a compile costs about 0.5 ms per instruction: selective_scan at
/// 5 x [256, 256] (about 400k elements, 8,576 instructions) took 4.7 s and timed out on a loaded
/// machine, so the bound keeps compiles to a few thousand instructions.
constexpr std::int64_t kMaxCompiledElements = std::int64_t{1} << 17;

std::vector<std::string> splitLines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    lines.emplace_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> lines = splitLines(trn::fuzz::asText(data, size));
  const trn::kernels::KernelEntry* entry = trn::kernels::findKernel(lines.front());
  if (entry == nullptr) {
    return 0;
  }
  std::vector<std::string> shapes;
  std::vector<std::string> dtypes;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.starts_with("shape ")) {
      shapes.emplace_back(line.substr(6));
    } else if (line.starts_with("dtype ")) {
      dtypes.emplace_back(line.substr(6));
    }
  }
  const trn::Result<std::vector<trn::kernel::TensorSpec>> specs =
      trn::kernels::benchInputs(*entry, shapes, dtypes);
  if (!specs.ok()) {
    TRN_CHECK(!specs.status().message().empty());
    return 0;
  }
  trn::Checked<std::int64_t> elements = 0;
  for (const trn::kernel::TensorSpec& spec : *specs) {
    trn::Checked<std::int64_t> count = 1;
    for (const std::int64_t d : spec.shape) {
      TRN_CHECK(d > 0) << "benchInputs accepted a non-positive extent";
      count *= d;
    }
    elements += count;
  }
  if (!elements.valid() || elements.value() > kMaxCompiledElements) {
    return 0;
  }
  const trn::isa::CoreLimits limits;
  const trn::Result<trn::kernel::CompiledKernel> compiled =
      trn::kernel::compile(entry->def, *specs, limits, {});
  if (compiled.ok()) {
    const trn::Status verified = trn::isa::verifyProgram(compiled->program, limits);
    TRN_CHECK(verified.ok()) << "the compiler produced a program the verifier rejects: "
                             << verified.toString();
  }
  return 0;
}
