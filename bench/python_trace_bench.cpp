// Tracing speed of a kernel written in Python against the same kernel written in C++, in one run:
// the tiled matmul of kernel_compile_bench (per 512-column tile: two loads, a bf16 matmul into
// PSUM, GELU from PSUM to SBUF, a store), traced into kernel IR without the backend passes. The
// Python kernel runs in an interpreter embedded here, importing the trnsim package from the build
// tree. Items are instructions, so the two items/s figures compare directly; the goal is Python
// at no more than 2x the C++ time.
#include <benchmark/benchmark.h>
#include <pybind11/embed.h>

#include <cstdint>

#include "trn/kernel/compiler.h"
#include "trn/kernel/nisa.h"
#include "tiled_matmul_kernel.h"

namespace {

namespace py = pybind11;
using namespace trn::kernel;  // NOLINT(google-build-using-namespace)

using trn::bench::tiledMatmul;
constexpr std::int64_t kInstructionsPerTile = trn::bench::kTiledMatmulInstructionsPerTile;
constexpr std::int64_t kTiles = 4000;

constexpr const char* kPythonKernel = R"(
import trnsim
import trnsim.isa as nisa
import trnsim.language as nl

def tiled_matmul(x, w):
    tiles = x.shape[1] // 512
    out = nl.ndarray((128, x.shape[1]), dtype=nl.bfloat16, buffer=nl.shared_hbm, name="out")
    for t in range(tiles):
        xs = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf, name="x")
        ws = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf, name="w")
        nisa.dma_copy(xs, x[:, nl.ds(t * 512, 512)])
        nisa.dma_copy(ws, w[:, nl.ds(t % 8 * 128, 128)])
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum, name="acc")
        nisa.nc_matmul(acc, ws, xs)
        y = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf, name="y")
        nisa.activation(y, acc, op=nl.gelu)
        nisa.dma_copy(out[:, nl.ds(t * 512, 512)], y)
    return out

session = trnsim.Session("trn2")
specs = [("x", (128, TILES * 512), nl.bfloat16), ("w", (128, 8 * 128), nl.bfloat16)]

def trace():
    return session.trace("tiled_matmul", tiled_matmul, specs)
)";

void BM_TraceCpp(benchmark::State& state) {
  const std::vector<TensorSpec> inputs = {{"x", {128, kTiles * 512}, trn::DType::kBf16},
                                          {"w", {128, 8 * 128}, trn::DType::kBf16}};
  const KernelDef kernel = makeKernel("tiled_matmul", tiledMatmul);
  for (auto _ : state) {
    auto ir = trace(kernel, inputs, trn::isa::CoreLimits{});
    if (!ir.ok()) {
      state.SkipWithError(ir.status().toString().c_str());
      return;
    }
    benchmark::DoNotOptimize(ir->ops.data());
  }
  state.SetItemsProcessed(state.iterations() * kTiles * kInstructionsPerTile);
}
BENCHMARK(BM_TraceCpp)->Unit(benchmark::kMillisecond);

void BM_TracePython(benchmark::State& state) {
  py::module_::import("sys").attr("path").attr("insert")(0, TRN_PYTHON_BUILD_DIR);
  py::dict scope;
  scope["TILES"] = kTiles;
  py::exec(kPythonKernel, scope);
  const py::object traceOnce = scope["trace"];
  for (auto _ : state) {
    const auto ops = traceOnce().cast<std::int64_t>();
    if (ops != kTiles * kInstructionsPerTile) {
      state.SkipWithError("the Python kernel traced a different number of operations");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations() * kTiles * kInstructionsPerTile);
}
BENCHMARK(BM_TracePython)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  const py::scoped_interpreter interpreter;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
