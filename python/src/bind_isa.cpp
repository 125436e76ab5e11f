// trnsim.isa (NKI's nki.isa, `nisa`): one function per data instruction of the core, with the
// destination first as in the C++ tile language, NKI's argument names, and operators and
// activation functions given as NKI gives them (nl.add, np.maximum, nl.exp) or by name.
#include <pybind11/stl.h>

#include <cfloat>
#include <string>
#include <vector>

#include "bindings.h"
#include "trn/kernel/nisa.h"

namespace trn::python {
namespace {

using kernel::Tensor;
namespace nisa = kernel::nisa;
using Guard = py::call_guard<PythonCallSite>;
using isa::Engine;

nisa::Scalar scalar(const py::handle& value) {
  if (py::isinstance<Tensor>(value)) {
    return nisa::Scalar(live(value.cast<const Tensor&>()));
  }
  return nisa::Scalar(value.cast<float>());
}

std::optional<Engine> engineOf(const py::object& engine) {
  if (engine.is_none()) {
    return std::nullopt;
  }
  if (py::isinstance<Engine>(engine)) {
    return engine.cast<Engine>();
  }
  Result<Engine> parsed = spec::parseEngine(engine.cast<std::string>());
  if (!parsed.ok()) {
    throw py::value_error(parsed.status().message());
  }
  return *parsed;
}

Engine engineOr(const py::object& engine, Engine fallback) {
  return engineOf(engine).value_or(fallback);
}

std::optional<Tensor> optionalTensor(const std::optional<Tensor>& t) {
  if (t) {
    live(*t);
  }
  return t;
}

template <typename E>
E enumOf(const py::handle& value) {
  if (py::isinstance<E>(value)) {
    return value.cast<E>();
  }
  E out{};
  const std::string name = value.cast<std::string>();
  if (!isa::enumFromName(name, out)) {
    throw py::value_error("'" + name + "' is not a " + std::string(isa::EnumTable<E>::kTypeName));
  }
  return out;
}

std::vector<isa::Dim> dims(const std::vector<std::pair<std::int64_t, std::int64_t>>& pattern) {
  std::vector<isa::Dim> out;
  for (const auto& [step, count] : pattern) {
    out.push_back(isa::Dim{step, count});
  }
  return out;
}

}  // namespace

void bindIsa(py::module_& m) {
  const py::none none;
  // ---- Tensor engine ----
  m.def(
      "nc_matmul",
      [](const Tensor& dst, const Tensor& stationary, const Tensor& moving, bool accumulate,
         isa::PeTile tilePosition, isa::PeTile tileSize, const py::object& perfMode,
         bool isTranspose) {
        nisa::ncMatmul(live(dst), live(stationary), live(moving), accumulate, tilePosition,
                       tileSize, enumOf<isa::MatmulPerfMode>(perfMode), isTranspose);
      },
      py::arg("dst"), py::arg("stationary"), py::arg("moving"), py::arg("accumulate") = false,
      py::arg("tile_position") = isa::PeTile{0, 0},
      py::arg("tile_size") = isa::PeTile{isa::kPeArraySize, isa::kPeArraySize},
      py::arg("perf_mode") = "none", py::arg("is_transpose") = false, Guard());
  m.def(
      "nc_transpose",
      [](const Tensor& dst, const Tensor& data, const py::object& engine) {
        nisa::ncTranspose(live(dst), live(data), engineOf(engine));
      },
      py::arg("dst"), py::arg("data"), py::arg("engine") = none, Guard());

  // ---- Vector engine: element-wise ----
  m.def(
      "tensor_tensor",
      [](const Tensor& dst, const Tensor& data1, const Tensor& data2, const py::object& op,
         const py::object& engine) {
        nisa::tensorTensor(live(dst), live(data1), live(data2), toAluOp(op), engineOf(engine));
      },
      py::arg("dst"), py::arg("data1"), py::arg("data2"), py::arg("op"),
      py::arg("engine") = none, Guard());
  m.def(
      "tensor_copy",
      [](const Tensor& dst, const Tensor& src, const py::object& engine) {
        nisa::tensorCopy(live(dst), live(src), engineOf(engine));
      },
      py::arg("dst"), py::arg("src"), py::arg("engine") = none, Guard());
  m.def(
      "memset",
      [](const Tensor& dst, float value, const py::object& engine) {
        nisa::memset(live(dst), value, engineOf(engine));
      },
      py::arg("dst"), py::arg("value"), py::arg("engine") = none, Guard());
  m.def(
      "tensor_scalar",
      [](const Tensor& dst, const Tensor& data, const py::object& op0, const py::object& operand0,
         bool reverse0, const py::object& op1, const py::object& operand1, bool reverse1,
         const py::object& engine) {
        const isa::AluOp second = op1.is_none() ? isa::AluOp::kBypass : toAluOp(op1);
        nisa::tensorScalar(live(dst), live(data), toAluOp(op0), scalar(operand0), reverse0, second,
                           operand1.is_none() ? nisa::Scalar(0.0f) : scalar(operand1), reverse1,
                           engineOf(engine));
      },
      py::arg("dst"), py::arg("data"), py::arg("op0"), py::arg("operand0"),
      py::arg("reverse0") = false, py::arg("op1") = none, py::arg("operand1") = none,
      py::arg("reverse1") = false, py::arg("engine") = none, Guard());
  m.def(
      "scalar_tensor_tensor",
      [](const Tensor& dst, const Tensor& data, const py::object& op0, const py::object& operand0,
         const py::object& op1, const Tensor& operand1, bool reverse0, bool reverse1) {
        nisa::scalarTensorTensor(live(dst), live(data), toAluOp(op0), scalar(operand0),
                                 toAluOp(op1), live(operand1), reverse0, reverse1);
      },
      py::arg("dst"), py::arg("data"), py::arg("op0"), py::arg("operand0"), py::arg("op1"),
      py::arg("operand1"), py::arg("reverse0") = false, py::arg("reverse1") = false, Guard());
  m.def(
      "tensor_copy_predicated",
      [](const Tensor& dst, const py::object& src, const Tensor& predicate, bool reversePred) {
        nisa::tensorCopyPredicated(live(dst), scalar(src), live(predicate), reversePred);
      },
      py::arg("dst"), py::arg("src"), py::arg("predicate"), py::arg("reverse_pred") = false,
      Guard());
  m.def(
      "reciprocal",
      [](const Tensor& dst, const Tensor& data) { nisa::reciprocal(live(dst), live(data)); },
      py::arg("dst"), py::arg("data"), Guard());
  m.def(
      "dropout",
      [](const Tensor& dst, const Tensor& data, const py::object& prob) {
        nisa::dropout(live(dst), live(data), scalar(prob));
      },
      py::arg("dst"), py::arg("data"), py::arg("prob"), Guard());
  m.def(
      "rng", [](const Tensor& dst, const py::object& engine) { nisa::rng(live(dst), engineOf(engine)); },
      py::arg("dst"), py::arg("engine") = none, Guard());
  m.def(
      "set_rng_seed", [](const Tensor& seeds) { nisa::setRngSeed(live(seeds)); },
      py::arg("src_seeds"), Guard());

  // ---- Vector engine: reductions, scans, selections ----
  m.def(
      "tensor_reduce",
      [](const Tensor& dst, const Tensor& data, const py::object& op, std::int64_t axis,
         bool negate) { nisa::tensorReduce(live(dst), live(data), toAluOp(op), axis, negate); },
      py::arg("dst"), py::arg("data"), py::arg("op"), py::arg("axis") = 1,
      py::arg("negate") = false, Guard());
  m.def(
      "tensor_scalar_reduce",
      [](const Tensor& dst, const Tensor& reduceRes, const Tensor& data, const py::object& op0,
         const py::object& operand0, const py::object& reduceOp, bool reverse0,
         const py::object& reduceCmd, const py::object& reduceInit) {
        nisa::tensorScalarReduce(live(dst), live(reduceRes), live(data), toAluOp(op0),
                                 scalar(operand0), toAluOp(reduceOp), reverse0,
                                 enumOf<isa::ReduceCmd>(reduceCmd), scalar(reduceInit));
      },
      py::arg("dst"), py::arg("reduce_res"), py::arg("data"), py::arg("op0"),
      py::arg("operand0"), py::arg("reduce_op"), py::arg("reverse0") = false,
      py::arg("reduce_cmd") = "reset_reduce", py::arg("reduce_init") = 0.0f, Guard());
  m.def(
      "tensor_tensor_scan",
      [](const Tensor& dst, const Tensor& data0, const Tensor& data1, const py::object& initial,
         const py::object& op0, const py::object& op1, bool reverse0, bool reverse1) {
        nisa::tensorTensorScan(live(dst), live(data0), live(data1), scalar(initial), toAluOp(op0),
                               toAluOp(op1), reverse0, reverse1);
      },
      py::arg("dst"), py::arg("data0"), py::arg("data1"), py::arg("initial"), py::arg("op0"),
      py::arg("op1"), py::arg("reverse0") = false, py::arg("reverse1") = false, Guard());
  m.def(
      "tensor_scalar_cumulative",
      [](const Tensor& dst, const Tensor& src, const py::object& op0, const py::object& op1,
         const py::object& imm0, const py::object& imm1, const py::object& reduceCmd,
         bool reverse0) {
        nisa::tensorScalarCumulative(live(dst), live(src), toAluOp(op0), toAluOp(op1),
                                     scalar(imm0), scalar(imm1), enumOf<isa::ReduceCmd>(reduceCmd),
                                     reverse0);
      },
      py::arg("dst"), py::arg("src"), py::arg("op0"), py::arg("op1"), py::arg("imm0"),
      py::arg("imm1") = 0.0f, py::arg("reduce_cmd") = "reset_reduce", py::arg("reverse0") = false,
      Guard());
  m.def(
      "range_select",
      [](const Tensor& dst, const Tensor& onTrue, const Tensor& bound0, const Tensor& bound1,
         const py::object& comp0, const py::object& comp1, const py::object& reduceCmd,
         const std::optional<Tensor>& reduceRes, const py::object& reduceOp,
         std::int64_t rangeStart, float onFalse) {
        nisa::rangeSelect(live(dst), live(onTrue), live(bound0), live(bound1), toAluOp(comp0),
                          toAluOp(comp1), enumOf<isa::ReduceCmd>(reduceCmd),
                          optionalTensor(reduceRes), toAluOp(reduceOp), rangeStart, onFalse);
      },
      py::arg("dst"), py::arg("on_true_tile"), py::arg("bound0"), py::arg("bound1"),
      py::arg("comp_op0"), py::arg("comp_op1"), py::arg("reduce_cmd") = "reset_reduce",
      py::arg("reduce_res") = none, py::arg("reduce_op") = "max", py::arg("range_start") = 0,
      py::arg("on_false_value") = -FLT_MAX, Guard());
  m.def(
      "select_reduce",
      [](const Tensor& dst, const Tensor& predicate, const Tensor& onTrue,
         const py::object& onFalse, const std::optional<Tensor>& reduceRes,
         const py::object& reduceCmd, const py::object& reduceOp, bool reversePred) {
        nisa::selectReduce(live(dst), live(predicate), live(onTrue), scalar(onFalse),
                           optionalTensor(reduceRes), enumOf<isa::ReduceCmd>(reduceCmd),
                           toAluOp(reduceOp), reversePred);
      },
      py::arg("dst"), py::arg("predicate"), py::arg("on_true"), py::arg("on_false"),
      py::arg("reduce_res") = none, py::arg("reduce_cmd") = "idle", py::arg("reduce_op") = "max",
      py::arg("reverse_pred") = false, Guard());

  // ---- Vector engine: special-purpose ----
  m.def(
      "bn_stats", [](const Tensor& dst, const Tensor& data) { nisa::bnStats(live(dst), live(data)); },
      py::arg("dst"), py::arg("data"), Guard());
  m.def(
      "bn_aggr", [](const Tensor& dst, const Tensor& data) { nisa::bnAggr(live(dst), live(data)); },
      py::arg("dst"), py::arg("data"), Guard());
  m.def(
      "max8", [](const Tensor& dst, const Tensor& src) { nisa::max8(live(dst), live(src)); },
      py::arg("dst"), py::arg("src"), Guard());
  m.def(
      "nc_find_index8",
      [](const Tensor& dst, const Tensor& data, const Tensor& vals) {
        nisa::ncFindIndex8(live(dst), live(data), live(vals));
      },
      py::arg("dst"), py::arg("data"), py::arg("vals"), Guard());
  m.def(
      "nc_match_replace8",
      [](const Tensor& dst, const Tensor& data, const Tensor& vals, float imm,
         const std::optional<Tensor>& dstIdx) {
        nisa::ncMatchReplace8(live(dst), live(data), live(vals), imm, optionalTensor(dstIdx));
      },
      py::arg("dst"), py::arg("data"), py::arg("vals"), py::arg("imm"),
      py::arg("dst_idx") = none, Guard());
  m.def(
      "nc_stream_shuffle",
      [](const Tensor& dst, const Tensor& src, const std::vector<std::int64_t>& mask) {
        nisa::ncStreamShuffle(live(dst), live(src), mask);
      },
      py::arg("dst"), py::arg("src"), py::arg("shuffle_mask"), Guard());

  // ---- Scalar engine ----
  m.def(
      "activation",
      [](const Tensor& dst, const Tensor& data, const py::object& op, const py::object& bias,
         const py::object& scale, const py::object& reduceOp,
         const std::optional<Tensor>& reduceRes, const py::object& reduceCmd) {
        nisa::activation(live(dst), live(data), toActivation(op), scalar(bias), scalar(scale),
                         toAluOp(reduceOp), optionalTensor(reduceRes),
                         enumOf<isa::ReduceCmd>(reduceCmd));
      },
      py::arg("dst"), py::arg("data"), py::arg("op"), py::arg("bias") = 0.0f,
      py::arg("scale") = 1.0f, py::arg("reduce_op") = "add", py::arg("reduce_res") = none,
      py::arg("reduce_cmd") = "idle", Guard());
  m.def(
      "activation_reduce",
      [](const Tensor& dst, const Tensor& reduceRes, const Tensor& data, const py::object& op,
         const py::object& bias, const py::object& scale, const py::object& reduceOp) {
        nisa::activationReduce(live(dst), live(reduceRes), live(data), toActivation(op),
                               scalar(bias), scalar(scale), toAluOp(reduceOp));
      },
      py::arg("dst"), py::arg("reduce_res"), py::arg("data"), py::arg("op"),
      py::arg("bias") = 0.0f, py::arg("scale") = 1.0f, py::arg("reduce_op") = "add", Guard());

  // ---- GpSimd engine ----
  m.def(
      "iota",
      [](const Tensor& dst, const std::vector<std::pair<std::int64_t, std::int64_t>>& pattern,
         std::int64_t offset, std::int64_t channelMultiplier) {
        nisa::iota(live(dst), dims(pattern), offset, channelMultiplier);
      },
      py::arg("dst"), py::arg("pattern"), py::arg("offset") = 0,
      py::arg("channel_multiplier") = 0, Guard());
  m.def(
      "affine_select",
      [](const Tensor& dst, const Tensor& onTrue,
         const std::vector<std::pair<std::int64_t, std::int64_t>>& pattern,
         std::int64_t channelMultiplier, float onFalse, const py::object& cmpOp,
         std::int64_t offset) {
        nisa::affineSelect(live(dst), live(onTrue), dims(pattern), channelMultiplier, onFalse,
                           toAluOp(cmpOp), offset);
      },
      py::arg("dst"), py::arg("on_true_tile"), py::arg("pattern"), py::arg("channel_multiplier"),
      py::arg("on_false_value"), py::arg("cmp_op") = "equal", py::arg("offset") = 0, Guard());
  m.def(
      "tensor_partition_reduce",
      [](const Tensor& dst, const Tensor& data, const py::object& op) {
        nisa::tensorPartitionReduce(live(dst), live(data), enumOf<isa::PartitionReduceOp>(op));
      },
      py::arg("dst"), py::arg("data"), py::arg("op"), Guard());
  m.def(
      "local_gather",
      [](const Tensor& dst, const Tensor& src, const Tensor& index, std::int64_t perIdx,
         std::int64_t valid) { nisa::localGather(live(dst), live(src), live(index), perIdx, valid); },
      py::arg("dst"), py::arg("src_buffer"), py::arg("index"), py::arg("num_elem_per_idx") = 1,
      py::arg("num_valid_indices") = 0, Guard());
  m.def(
      "nc_n_gather",
      [](const Tensor& dst, const Tensor& data, const Tensor& indices) {
        nisa::ncNGather(live(dst), live(data), live(indices));
      },
      py::arg("dst"), py::arg("data"), py::arg("indices"), Guard());

  // ---- DMA ----
  m.def(
      "dma_copy",
      [](const Tensor& dst, const Tensor& src, const std::optional<Tensor>& dstIndex,
         const std::optional<Tensor>& srcIndex, const py::object& oobMode,
         const py::object& engine) {
        nisa::dmaCopy(live(dst), live(src), optionalTensor(dstIndex), optionalTensor(srcIndex),
                      enumOf<isa::DmaOobMode>(oobMode), engineOf(engine));
      },
      py::arg("dst"), py::arg("src"), py::arg("dst_index") = none, py::arg("src_index") = none,
      py::arg("oob_mode") = "error", py::arg("engine") = none, Guard());
  m.def(
      "dma_transpose",
      [](const Tensor& dst, const Tensor& src, const py::object& engine) {
        nisa::dmaTranspose(live(dst), live(src), engineOf(engine));
      },
      py::arg("dst"), py::arg("src"), py::arg("engine") = none, Guard());
  m.def(
      "dma_compute",
      [](const Tensor& dst, const std::vector<Tensor>& srcs, const py::object& reduceOp,
         const std::vector<float>& scales, const py::object& engine) {
        for (const Tensor& s : srcs) {
          live(s);
        }
        nisa::dmaCompute(live(dst), srcs, toAluOp(reduceOp), scales, engineOf(engine));
      },
      py::arg("dst"), py::arg("srcs"), py::arg("reduce_op") = "add",
      py::arg("scales") = std::vector<float>{}, py::arg("engine") = none, Guard());

  // ---- Cores of a logical core, ranks of a system ----
  m.def(
      "core_barrier",
      [](const Tensor& data, const py::object& engine) {
        nisa::coreBarrier(live(data), engineOr(engine, Engine::kPool));
      },
      py::arg("data"), py::arg("engine") = none, Guard());
  m.def(
      "sendrecv",
      [](const Tensor& dst, const Tensor& src, const py::object& engine) {
        nisa::sendrecv(live(dst), live(src), engineOr(engine, Engine::kPool));
      },
      py::arg("dst"), py::arg("src"), py::arg("engine") = none, Guard());
  m.def(
      "collective",
      [](const py::object& op, const Tensor& dst, const Tensor& src, const py::object& reduce,
         const py::object& engine, const std::vector<std::vector<int>>& replicaGroups) {
        nisa::collective(enumOf<isa::CollectiveOp>(op), live(dst), live(src), toAluOp(reduce),
                         engineOr(engine, Engine::kPool), replicaGroups);
      },
      py::arg("op"), py::arg("dst"), py::arg("src"), py::arg("reduce") = "add",
      py::arg("engine") = none, py::arg("replica_groups") = std::vector<std::vector<int>>{},
      Guard());
  m.def(
      "all_to_all_v",
      [](const Tensor& dst, const Tensor& src, const Tensor& counts, const py::object& engine,
         const std::vector<std::vector<int>>& replicaGroups) {
        nisa::allToAllV(live(dst), live(src), live(counts), engineOr(engine, Engine::kPool),
                        replicaGroups);
      },
      py::arg("dst"), py::arg("src"), py::arg("counts"), py::arg("engine") = none,
      py::arg("replica_groups") = std::vector<std::vector<int>>{}, Guard());
}

}  // namespace trn::python
