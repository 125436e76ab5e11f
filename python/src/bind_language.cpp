// trnsim.language (NKI's nki.language, `nl`): the nl-level functions of the C++ tile language
// with NKI's names and keyword arguments, tensor creation (nl.ndarray and its buffers), and the
// SPMD queries. Every function records its call site from the Python caller.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "trn/kernel/nl.h"

namespace trn::python {
namespace {

using kernel::Tensor;
namespace nl = kernel::nl;
using Guard = py::call_guard<PythonCallSite>;
using OptDType = std::optional<py::object>;

std::optional<DType> optionalDType(const OptDType& dtype) {
  if (!dtype || dtype->is_none()) {
    return std::nullopt;
  }
  return toDType(*dtype);
}

nl::Operand operand(const py::handle& value) {
  if (py::isinstance<Tensor>(value)) {
    return nl::Operand(live(value.cast<const Tensor&>()));
  }
  return nl::Operand(value.cast<float>());
}

/// NKI's reduction axis: an int or a sequence of the trailing free dimensions; our functions take
/// the first reduced dimension (all later ones are reduced too).
int reductionAxis(const py::handle& axis) {
  if (PyIndex_Check(axis.ptr()) != 0) {
    return axis.cast<int>();
  }
  std::vector<int> axes = axis.cast<std::vector<int>>();
  if (axes.empty()) {
    throw py::value_error("a reduction needs at least one axis");
  }
  std::sort(axes.begin(), axes.end());
  for (std::size_t i = 1; i < axes.size(); ++i) {
    if (axes[i] != axes[i - 1] + 1) {
      throw py::value_error("reduction axes must be consecutive trailing free dimensions");
    }
  }
  return axes.front();
}

using Binary = Tensor (*)(const Tensor&, const nl::Operand&, nl::OptDType, nl::Loc);
using BinaryReversed = Tensor (*)(float, const Tensor&, nl::OptDType, nl::Loc);

void defBinary(py::module_& m, const char* name, Binary f, BinaryReversed reversed) {
  m.def(
      name,
      [f, reversed](const py::object& x, const py::object& y, const OptDType& dtype) {
        if (!py::isinstance<Tensor>(x)) {
          if (!py::isinstance<Tensor>(y)) {
            throw py::type_error("at least one operand must be a tile");
          }
          return reversed(x.cast<float>(), live(y.cast<const Tensor&>()), optionalDType(dtype),
                          nl::Loc::current());
        }
        return f(live(x.cast<const Tensor&>()), operand(y), optionalDType(dtype),
                 nl::Loc::current());
      },
      py::arg("x"), py::arg("y"), py::arg("dtype") = py::none(), Guard());
}

using Unary = Tensor (*)(const Tensor&, nl::OptDType, nl::Loc);

void defUnary(py::module_& m, const char* name, Unary f) {
  m.def(
      name,
      [f](const Tensor& x, const OptDType& dtype) {
        return f(live(x), optionalDType(dtype), nl::Loc::current());
      },
      py::arg("x"), py::arg("dtype") = py::none(), Guard());
}

using Reduction = Tensor (*)(const Tensor&, int, bool, nl::OptDType, nl::Loc);

void defReduction(py::module_& m, const char* name, Reduction f) {
  m.def(
      name,
      [f](const Tensor& x, const py::object& axis, bool keepdims, const OptDType& dtype) {
        return f(live(x), reductionAxis(axis), keepdims, optionalDType(dtype),
                 nl::Loc::current());
      },
      py::arg("x"), py::arg("axis") = 1, py::arg("keepdims") = false,
      py::arg("dtype") = py::none(), Guard());
}

}  // namespace

void bindLanguage(py::module_& m) {
  // ---- Creation ----
  m.def(
      "ndarray",
      [](std::vector<std::int64_t> shape, const py::object& dtype, const std::string& buffer,
         std::optional<std::string> name) -> Tensor {
        kernel::Kernel& k = currentKernel("nl.ndarray");
        const DType d = toDType(dtype);
        if (buffer == "sbuf") {
          return k.sbuf(std::move(shape), d, name.value_or(""));
        }
        if (buffer == "psum") {
          return k.psum(std::move(shape), d, name.value_or(""));
        }
        if (buffer == "shared_hbm") {
          return k.output(name ? *name : nextOutputName(), std::move(shape), d);
        }
        if (buffer == "hbm" || buffer == "private_hbm") {
          return k.hbmScratch(name ? *name : nextScratchName(), std::move(shape), d);
        }
        throw py::value_error("unknown buffer '" + buffer +
                              "': nl.sbuf, nl.psum, nl.shared_hbm or nl.hbm");
      },
      py::arg("shape"), py::arg("dtype"), py::arg("buffer") = "sbuf",
      py::arg("name") = py::none(), Guard());
  m.def(
      "full",
      [](const std::vector<std::int64_t>& shape, float value, const py::object& dtype) {
        return nl::full(currentKernel("nl.full"), shape, toDType(dtype), value);
      },
      py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = DType::kFp32, Guard());
  m.def(
      "zeros",
      [](const std::vector<std::int64_t>& shape, const py::object& dtype) {
        return nl::zeros(currentKernel("nl.zeros"), shape, toDType(dtype));
      },
      py::arg("shape"), py::arg("dtype") = DType::kFp32, Guard());
  m.def(
      "ones",
      [](const std::vector<std::int64_t>& shape, const py::object& dtype) {
        return nl::ones(currentKernel("nl.ones"), shape, toDType(dtype));
      },
      py::arg("shape"), py::arg("dtype") = DType::kFp32, Guard());
  m.def(
      "iota",
      [](const std::vector<std::int64_t>& shape, const py::object& dtype, std::int64_t offset,
         std::int64_t channelMultiplier, std::int64_t step) {
        return nl::iota(currentKernel("nl.iota"), shape, toDType(dtype), offset,
                        channelMultiplier, step);
      },
      py::arg("shape"), py::arg("dtype") = DType::kInt32, py::arg("offset") = 0,
      py::arg("channel_multiplier") = 0, py::arg("step") = 1, Guard());

  // ---- Memory ----
  m.def(
      "load",
      [](const Tensor& src, const OptDType& dtype) {
        return nl::load(live(src), optionalDType(dtype));
      },
      py::arg("src"), py::arg("dtype") = py::none(), Guard());
  m.def(
      "store", [](const Tensor& dst, const Tensor& value) { nl::store(live(dst), live(value)); },
      py::arg("dst"), py::arg("value"), Guard());
  m.def(
      "copy",
      [](const Tensor& x, const OptDType& dtype) { return nl::copy(live(x), optionalDType(dtype)); },
      py::arg("x"), py::arg("dtype") = py::none(), Guard());

  // ---- Element-wise ----
  defBinary(m, "add", nl::add, nl::add);
  defBinary(m, "subtract", nl::subtract, nl::subtract);
  defBinary(m, "multiply", nl::multiply, nl::multiply);
  defBinary(m, "divide", nl::divide, nl::divide);
  defBinary(m, "maximum", nl::maximum, nl::maximum);
  defBinary(m, "minimum", nl::minimum, nl::minimum);
  defBinary(m, "power", nl::power, nl::power);
  defBinary(m, "equal", nl::equal, nl::equal);
  defBinary(m, "not_equal", nl::notEqual, nl::notEqual);
  defBinary(m, "less", nl::less, nl::less);
  defBinary(m, "less_equal", nl::lessEqual, nl::lessEqual);
  defBinary(m, "greater", nl::greater, nl::greater);
  defBinary(m, "greater_equal", nl::greaterEqual, nl::greaterEqual);
  m.def(
      "where",
      [](const Tensor& cond, const py::object& x, const py::object& y, const OptDType& dtype) {
        return nl::where(live(cond), operand(x), operand(y), optionalDType(dtype));
      },
      py::arg("condition"), py::arg("x"), py::arg("y"), py::arg("dtype") = py::none(), Guard());
  defUnary(m, "negative", nl::negative);
  defUnary(m, "reciprocal", nl::reciprocal);
  defUnary(m, "abs", nl::abs);
  defUnary(m, "square", nl::square);
  defUnary(m, "exp", nl::exp);
  defUnary(m, "log", nl::log);
  defUnary(m, "sqrt", nl::sqrt);
  defUnary(m, "rsqrt", nl::rsqrt);
  defUnary(m, "tanh", nl::tanh);
  defUnary(m, "sigmoid", nl::sigmoid);
  defUnary(m, "relu", nl::relu);
  defUnary(m, "gelu", nl::gelu);
  defUnary(m, "silu", nl::silu);
  defUnary(m, "sin", nl::sin);
  defUnary(m, "erf", nl::erf);
  defUnary(m, "softplus", nl::softplus);

  // ---- Reductions ----
  defReduction(m, "sum", nl::sum);
  defReduction(m, "max", nl::max);
  defReduction(m, "min", nl::min);
  defReduction(m, "prod", nl::prod);
  defReduction(m, "mean", nl::mean);
  m.def(
      "var", [](const Tensor& x, const OptDType& dtype) {
        return nl::var(live(x), optionalDType(dtype));
      },
      py::arg("x"), py::arg("dtype") = py::none(), Guard());

  // ---- Tensor engine and composites ----
  m.def(
      "matmul",
      [](const Tensor& x, const Tensor& y, bool transposeX) {
        return nl::matmul(live(x), live(y), transposeX);
      },
      py::arg("x"), py::arg("y"), py::arg("transpose_x") = false, Guard());
  m.def(
      "matmul_accumulate",
      [](const Tensor& dst, const Tensor& x, const Tensor& y, bool accumulate, bool transposeX) {
        nl::matmulAccumulate(live(dst), live(x), live(y), accumulate, transposeX);
      },
      py::arg("dst"), py::arg("x"), py::arg("y"), py::arg("accumulate"),
      py::arg("transpose_x") = false, Guard());
  m.def(
      "transpose", [](const Tensor& x) { return nl::transpose(live(x)); }, py::arg("x"), Guard());
  m.def(
      "softmax",
      [](const Tensor& x, const OptDType& dtype) {
        return nl::softmax(live(x), optionalDType(dtype));
      },
      py::arg("x"), py::arg("dtype") = py::none(), Guard());
  m.def(
      "rms_norm",
      [](const Tensor& x, const Tensor& weight, float eps, const OptDType& dtype) {
        return nl::rmsNorm(live(x), live(weight), eps, optionalDType(dtype));
      },
      py::arg("x"), py::arg("weight"), py::arg("eps") = 1e-6f, py::arg("dtype") = py::none(),
      Guard());
  m.def(
      "layer_norm",
      [](const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
         const OptDType& dtype) {
        return nl::layerNorm(live(x), live(gamma), live(beta), eps, optionalDType(dtype));
      },
      py::arg("x"), py::arg("gamma"), py::arg("beta"), py::arg("eps") = 1e-5f,
      py::arg("dtype") = py::none(), Guard());
  m.def(
      "broadcast_partitions",
      [](const Tensor& row, std::int64_t partitions) {
        return nl::broadcastPartitions(live(row), partitions);
      },
      py::arg("row"), py::arg("partitions"), Guard());

  // ---- SPMD and loops ----
  m.def(
      "program_id", [](int axis) { return currentKernel("nl.program_id").programId(axis); },
      py::arg("axis") = 0, Guard());
  m.def(
      "num_programs", [](int axis) { return currentKernel("nl.num_programs").numPrograms(axis); },
      py::arg("axis") = 0, Guard());
  m.def(
      "program_ndim", []() { return currentKernel("nl.program_ndim").programNdim(); }, Guard());
  m.def(
      "dynamic_loop",
      [](std::int64_t trips, const std::function<void()>& body) {
        currentKernel("nl.dynamic_loop").dynamicLoop(trips, body);
      },
      py::arg("trips"), py::arg("body"), Guard(),
      "Runs body() `trips` times on the hardware without unrolling it (traced once).");
}

}  // namespace trn::python
