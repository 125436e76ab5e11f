// Tests of the SPMD splits of the reference kernels (KernelEntry::spmd in registry.h): every
// kernel marked spmd, compiled with launch grids of one, two and three program instances and run
// on one trn2 core (functional+timing, race detection and poison on), gives outputs that are
// bit-identical across the grids and within the entry's tolerance of its float64 reference, at
// its default inputs and at shapes whose split is uneven; an instance without a share emits
// nothing; each instance alone, as it will run on its own core, takes less time than the whole
// kernel; and a launch in which an instance skips its share is caught by these comparisons.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "registered_kernel_util.h"
#include "trn/harness/check.h"
#include "trn/isa/program_text.h"
#include "trn/kernels/registry.h"
#include "trn/runtime/session.h"

namespace trn::kernels {
namespace {

using kernel::Grid;
using kernel::TensorSpec;
using kernel::testutil::trn2Session;
using testutil::describeSpecs;
using testutil::entryNamed;

/// The registered kernels marked spmd, in name order.
std::vector<std::string> spmdKernelNames() {
  std::vector<std::string> names;
  for (const KernelEntry& entry : referenceKernels()) {
    if (entry.spmd) {
      names.push_back(entry.name);
    }
  }
  return names;
}

/// Shapes of one spmd kernel besides its defaults: `uneven` ones, whose work splits unevenly
/// over two or three instances or across a tile boundary, and a shape with a single unit of
/// work (one row tile, column block, head, ...), which only the first instance takes.
struct SplitShapes {
  std::string kernel;
  std::vector<std::vector<TensorSpec>> uneven;
  std::vector<TensorSpec> oneUnit;
};

std::vector<TensorSpec> attentionSpecs(std::int64_t hq, std::int64_t hkv, std::int64_t s,
                                       std::int64_t d) {
  return {{"q", {hq, s, d}, DType::kBf16},
          {"k", {hkv, s, d}, DType::kBf16},
          {"v", {hkv, s, d}, DType::kBf16}};
}

std::vector<TensorSpec> normSpecs(std::int64_t n, std::int64_t d, DType dtype, int params) {
  std::vector<TensorSpec> specs = {{"x", {n, d}, dtype}};
  const char* names[] = {"gamma", "beta"};
  for (int i = 0; i < params; ++i) {
    specs.push_back({params == 1 ? "w" : names[i], {d}, dtype});
  }
  return specs;
}

std::vector<TensorSpec> ropeSpecs(std::int64_t h, std::int64_t s) {
  return {{"x", {h, s, 64}, DType::kBf16},
          {"cos", {s, 32}, DType::kFp32},
          {"sin", {s, 32}, DType::kFp32}};
}

std::vector<TensorSpec> matmulSpecs(std::int64_t k, std::int64_t m, std::int64_t n) {
  return {{"lhsT", {k, m}, DType::kBf16}, {"rhs", {k, n}, DType::kBf16}};
}

std::vector<TensorSpec> linearSpecs(std::int64_t s, std::int64_t k, std::int64_t n, bool residual,
                                    DType dtype = DType::kBf16) {
  std::vector<TensorSpec> specs = {{"x", {s, k}, dtype}, {"w", {k, n}, dtype}};
  if (residual) {
    specs.push_back({"r", {s, n}, dtype});
  }
  return specs;
}

std::vector<TensorSpec> mlpSpecs(std::int64_t s, std::int64_t h, std::int64_t f) {
  return {{"x", {s, h}, DType::kBf16},
          {"wg", {h, f}, DType::kBf16},
          {"wu", {h, f}, DType::kBf16},
          {"wd", {f, h}, DType::kBf16},
          {"r", {s, h}, DType::kBf16}};
}

const std::vector<SplitShapes>& splitShapes() {
  static const std::vector<SplitShapes> shapes = {
      // 3 query heads on 2 instances (2 + 1), one kv head shared; 6 heads of 2 kv heads at
      // D = 128 on 3 instances (2 + 2 + 2), so the second instance reads both kv heads.
      {"flash_attention",
       {attentionSpecs(3, 1, 200, 64), attentionSpecs(6, 2, 130, 128)},
       attentionSpecs(1, 1, 200, 64)},
      {"flash_attention_full", {attentionSpecs(3, 1, 200, 64)}, attentionSpecs(1, 1, 136, 64)},
      // 300 rows: tiles of 128, 128 and 44 rows.
      {"layernorm", {normSpecs(300, 640, DType::kFp32, 2)}, normSpecs(100, 64, DType::kFp32, 2)},
      {"layernorm_bn", {normSpecs(300, 640, DType::kFp32, 2)}, normSpecs(100, 64, DType::kFp32, 2)},
      // N = 600: five 128-column units (3 + 2 on two instances); also fp32, two token blocks.
      {"linear",
       {linearSpecs(200, 320, 600, false), linearSpecs(600, 256, 300, false, DType::kFp32)},
       linearSpecs(64, 256, 100, false)},
      {"linear_residual", {linearSpecs(200, 320, 600, true)}, linearSpecs(64, 256, 100, true)},
      {"matmul_basic", {matmulSpecs(100, 60, 300)}, matmulSpecs(128, 128, 512)},
      // M = 300: three 128-row tiles; the blocked kernel's blocks are cut from each share.
      {"matmul_blocked", {matmulSpecs(200, 300, 700)}, matmulSpecs(200, 100, 700)},
      {"matmul_hoisted", {matmulSpecs(200, 300, 700)}, matmulSpecs(200, 100, 700)},
      // N = 1300: three 512-column tiles; instance 0 takes a whole 1024-column N block.
      {"matmul_optimised", {matmulSpecs(200, 300, 1300)}, matmulSpecs(200, 300, 400)},
      {"matmul_tiled", {matmulSpecs(200, 300, 700)}, matmulSpecs(200, 100, 700)},
      {"rmsnorm", {normSpecs(300, 192, DType::kBf16, 1)}, normSpecs(100, 64, DType::kBf16, 1)},
      // [5, 384, 64]: three tiles (2 + 1); [5, 2048, 64]: ten tiles over two chunks of the
      // cos/sin tables, so a later instance starts in the second chunk.
      {"rope", {ropeSpecs(5, 384), ropeSpecs(5, 2048)}, ropeSpecs(2, 256)},
      {"softmax", {normSpecs(300, 256, DType::kBf16, 0)}, normSpecs(100, 256, DType::kBf16, 0)},
      // 300 tokens: token tiles of 128, 128 and 44.
      {"swiglu_mlp", {mlpSpecs(300, 256, 384)}, mlpSpecs(100, 256, 384)},
  };
  return shapes;
}

const SplitShapes* shapesFor(const std::string& kernel) {
  for (const SplitShapes& s : splitShapes()) {
    if (s.kernel == kernel) {
      return &s;
    }
  }
  return nullptr;
}

/// `def` compiled at `specs` for `grid` on one trn2 core.
Result<kernel::CompiledKernel> compileAt(const kernel::KernelDef& def,
                                         const std::vector<TensorSpec>& specs, const Grid& grid) {
  return kernel::compile(def, specs, trn2Session().coreLimits(), {}, grid);
}

/// Compiles `def` for `grid` and runs it on `inputs` in `mode` (race detection and poison on).
Result<runtime::RunResult> runAt(const kernel::KernelDef& def, const std::vector<TensorSpec>& specs,
                                 std::span<const runtime::NpyArray> inputs, const Grid& grid,
                                 core::RunMode mode = core::RunMode::kFunctionalTiming) {
  TRN_ASSIGN_OR_RETURN(kernel::CompiledKernel compiled, compileAt(def, specs, grid));
  runtime::RunOptions options;
  options.mode = mode;
  return trn2Session().runKernel(compiled, inputs, options);
}

/// `def` with only program instance `keep` traced: the others emit nothing and return nothing,
/// so the program is that instance's share alone, as one core of a multi-core launch runs it.
kernel::KernelDef onlyInstance(const kernel::KernelDef& def, std::int64_t keep) {
  return {def.name + "_instance" + std::to_string(keep),
          [body = def.body, keep](kernel::Kernel& k, std::span<const kernel::Tensor> args) {
            return k.programId(0) == keep ? body(k, args) : std::vector<kernel::Tensor>{};
          }};
}

/// "" when `a` and `b` hold the same bits, else how many float32 elements differ and the first.
std::string difference(const runtime::NpyArray& a, const runtime::NpyArray& b) {
  if (a.shape != b.shape || a.type != b.type) {
    return fmt::format("shapes [{}] and [{}] or types differ", fmt::join(a.shape, ", "),
                       fmt::join(b.shape, ", "));
  }
  if (a.data == b.data) {
    return "";
  }
  const std::vector<float> x = runtime::floatValues(a);
  const std::vector<float> y = runtime::floatValues(b);
  std::int64_t count = 0;
  std::size_t first = x.size();
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::memcmp(&x[i], &y[i], sizeof(float)) != 0) {
      first = std::min(first, i);
      ++count;
    }
  }
  return fmt::format("{} of {} elements differ; the first, element {}, is {} against {}", count,
                     x.size(), first, x[first], y[first]);
}

/// The inputs the entry's checks use at `specs`.
std::vector<HostTensor> inputsFor(const KernelEntry& entry, const std::vector<TensorSpec>& specs) {
  constexpr std::uint64_t kSeed = 7;
  return entry.inputs ? entry.inputs(specs, kSeed) : randomInputs(specs, kSeed);
}

/// Expects every output within `tolerance` of the reference.
void expectWithinReference(const std::vector<runtime::NpyArray>& outputs,
                           const std::vector<HostTensor>& reference, Tolerance tolerance,
                           const std::string& what) {
  ASSERT_EQ(outputs.size(), reference.size()) << what;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const Comparison c = compare(harness::fromNpy(outputs[o]), reference[o], tolerance);
    EXPECT_TRUE(c.pass) << what << ", output " << o << ": " << c.failures
                        << " elements outside the tolerance; max abs error " << c.maxAbsError
                        << ", max rel error " << c.maxRelError << ", worst element "
                        << c.worstElement;
  }
}

TEST(SpmdSplit, RegistryMarksTheDecoderLayerKernelsAndTheMatmuls) {
  const std::vector<std::string> expected = {"flash_attention",
                                             "flash_attention_full",
                                             "layernorm",
                                             "layernorm_bn",
                                             "linear",
                                             "linear_residual",
                                             "matmul_basic",
                                             "matmul_blocked",
                                             "matmul_hoisted",
                                             "matmul_optimised",
                                             "matmul_tiled",
                                             "rmsnorm",
                                             "rope",
                                             "softmax",
                                             "swiglu_mlp"};
  EXPECT_EQ(spmdKernelNames(), expected);
  for (const std::string& name : spmdKernelNames()) {
    EXPECT_NE(shapesFor(name), nullptr) << name << " is marked spmd but has no split shapes here";
  }
}

class SpmdSplit : public ::testing::TestWithParam<std::string> {};

TEST_P(SpmdSplit, GridsAgreeBitForBitAndWithTheReference) {
  const KernelEntry& entry = entryNamed(GetParam());
  const SplitShapes* extra = shapesFor(entry.name);
  ASSERT_NE(extra, nullptr);
  std::vector<std::vector<TensorSpec>> shapes = {entry.defaultInputs};
  shapes.insert(shapes.end(), extra->uneven.begin(), extra->uneven.end());
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    const std::vector<TensorSpec>& specs = shapes[s];
    SCOPED_TRACE(entry.name + " at " + describeSpecs(specs));
    const std::vector<HostTensor> inputs = inputsFor(entry, specs);
    std::vector<runtime::NpyArray> arrays;
    for (const HostTensor& input : inputs) {
      arrays.push_back(harness::toNpy(input));
    }
    const std::vector<HostTensor> reference = entry.reference(inputs);
    const Tolerance tolerance = entry.toleranceAt(specs);
    auto one = runAt(entry.def, specs, arrays, Grid{{1}});
    ASSERT_TRUE(one.ok()) << one.status().toString();
    expectWithinReference(one->outputs, reference, tolerance, "grid [1]");
    // The defaults at two instances (LNC=2); the small uneven shapes at three as well.
    const std::vector<std::int64_t> grids =
        s == 0 ? std::vector<std::int64_t>{2} : std::vector<std::int64_t>{2, 3};
    for (const std::int64_t programs : grids) {
      const std::string what = fmt::format("grid [{}]", programs);
      auto many = runAt(entry.def, specs, arrays, Grid{{programs}});
      ASSERT_TRUE(many.ok()) << what << ": " << many.status().toString();
      ASSERT_EQ(many->outputs.size(), one->outputs.size()) << what;
      for (std::size_t o = 0; o < one->outputs.size(); ++o) {
        EXPECT_EQ(difference(many->outputs[o], one->outputs[o]), "")
            << what << " against grid [1], output " << o;
      }
      expectWithinReference(many->outputs, reference, tolerance, what);
    }
  }
}

TEST_P(SpmdSplit, AnInstanceWithoutAShareEmitsNothing) {
  // A single unit of work: the first instance takes it, so the programs of grids [1], [2] and
  // [3] are the same instructions.
  const KernelEntry& entry = entryNamed(GetParam());
  const SplitShapes* extra = shapesFor(entry.name);
  ASSERT_NE(extra, nullptr);
  SCOPED_TRACE(entry.name + " at " + describeSpecs(extra->oneUnit));
  auto one = compileAt(entry.def, extra->oneUnit, Grid{{1}});
  ASSERT_TRUE(one.ok()) << one.status().toString();
  for (const std::int64_t programs : {2, 3}) {
    auto many = compileAt(entry.def, extra->oneUnit, Grid{{programs}});
    ASSERT_TRUE(many.ok()) << many.status().toString();
    EXPECT_EQ(isa::formatProgramText(many->program), isa::formatProgramText(one->program))
        << "grid [" << programs << "]";
  }
}

TEST_P(SpmdSplit, EachInstanceAloneTakesLessTimeThanTheWhole) {
  // Timing-only at the defaults: each instance's share alone, as one core of an LNC=2 launch
  // runs it (with the HBM to itself), against the whole kernel on one core.
  const KernelEntry& entry = entryNamed(GetParam());
  const std::vector<TensorSpec>& specs = entry.defaultInputs;
  auto whole = runAt(entry.def, specs, {}, Grid{{1}}, core::RunMode::kTimingOnly);
  ASSERT_TRUE(whole.ok()) << whole.status().toString();
  const std::int64_t wholePs = whole->stats.total.count();
  std::vector<kernel::CompiledKernel> instances;
  for (const std::int64_t keep : {0, 1}) {
    auto compiled = compileAt(onlyInstance(entry.def, keep), specs, Grid{{2}});
    ASSERT_TRUE(compiled.ok()) << compiled.status().toString();
    instances.push_back(*std::move(compiled));
  }
  // One unit of work at the defaults (matmul_basic): the first instance does all of it.
  const bool split = instances[1].summary.instructions > 0;
  std::string figures = fmt::format("{}: grid [1] {:.2f} us", entry.name, wholePs * 1e-6);
  for (std::size_t i = 0; i < instances.size(); ++i) {
    if (instances[i].summary.instructions == 0) {
      figures += fmt::format(", instance {} of 2 has no share", i);
      continue;
    }
    runtime::RunOptions options;
    options.mode = core::RunMode::kTimingOnly;
    auto alone = trn2Session().runKernel(instances[i], {}, options);
    ASSERT_TRUE(alone.ok()) << alone.status().toString();
    const std::int64_t ps = alone->stats.total.count();
    figures += fmt::format(", instance {} of 2 alone {:.2f} us", i, ps * 1e-6);
    if (split) {
      EXPECT_LT(ps, wholePs) << "instance " << i << " of 2 alone";
    } else {
      EXPECT_EQ(ps, wholePs) << "instance " << i << " of 2 alone, the only one with a share";
    }
  }
  std::cout << figures << "\n";
}

INSTANTIATE_TEST_SUITE_P(MarkedKernels, SpmdSplit, ::testing::ValuesIn(spmdKernelNames()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

TEST(SpmdSplit, ASkippedShareIsCaught) {
  // Instance 1 of 2 skips its share: its rows of the shared output are never written, and the
  // comparisons the tests above make fail.
  for (const char* name : {"rmsnorm", "flash_attention", "linear"}) {
    const KernelEntry& entry = entryNamed(name);
    const std::vector<TensorSpec>& specs = shapesFor(name)->uneven.front();
    SCOPED_TRACE(std::string(name) + " at " + describeSpecs(specs));
    const std::vector<HostTensor> inputs = inputsFor(entry, specs);
    std::vector<runtime::NpyArray> arrays;
    for (const HostTensor& input : inputs) {
      arrays.push_back(harness::toNpy(input));
    }
    auto one = runAt(entry.def, specs, arrays, Grid{{1}});
    auto skipped = runAt(onlyInstance(entry.def, 0), specs, arrays, Grid{{2}});
    ASSERT_TRUE(one.ok()) << one.status().toString();
    ASSERT_TRUE(skipped.ok()) << skipped.status().toString();
    EXPECT_NE(difference(skipped->outputs[0], one->outputs[0]), "");
    const Comparison c = compare(harness::fromNpy(skipped->outputs[0]), entry.reference(inputs)[0],
                                 entry.toleranceAt(specs));
    EXPECT_FALSE(c.pass);
    EXPECT_GT(c.failures, 0);
  }
}

}  // namespace
}  // namespace trn::kernels
