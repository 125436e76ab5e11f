// trnsim.dtype and the instruction enums, and the Tensor class kernels pass around: its shape and
// dtype, indexing with integers and slices (NKI's `t[i, 0:128]`, `nl.ds`), views (reshape,
// permute, broadcast, bitcast, raw access patterns) and arithmetic operators that call nl.
#include <pybind11/stl.h>

#include <cstring>
#include <string>
#include <vector>

#include "bindings.h"
#include "trn/isa/instruction_set.h"
#include "trn/kernel/nl.h"
#include "trn/numerics/convert.h"
#include "trn/runtime/host_io.h"

namespace trn::python {
namespace {

using kernel::Tensor;
namespace nl = kernel::nl;

/// Binds enum E with the names of its EnumTable.
template <typename E>
void bindTabledEnum(py::module_& m, const char* pythonName) {
  py::enum_<E> e(m, pythonName);
  for (const auto& [value, name] : isa::EnumTable<E>::kEntries) {
    e.value(std::string(name).c_str(), value);
  }
}

/// One Python index (int, slice, Ellipsis) of a subscript, or several in a tuple, as kernel
/// indices; an Ellipsis stands for as many whole dimensions as make up the rank.
std::vector<kernel::Index> toIndices(const Tensor& t, const py::handle& key) {
  PyObject* const single = key.ptr();
  PyObject* const* items = &single;
  Py_ssize_t count = 1;
  if (PyTuple_Check(key.ptr())) {
    items = &PyTuple_GET_ITEM(key.ptr(), 0);
    count = PyTuple_GET_SIZE(key.ptr());
  }
  std::vector<kernel::Index> out;
  out.reserve(static_cast<std::size_t>(t.rank()));
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* item = items[i];
    if (item == Py_Ellipsis) {
      for (Py_ssize_t d = count - 1; d < t.rank(); ++d) {
        out.emplace_back(kernel::all);
      }
    } else if (PySlice_Check(item)) {
      Py_ssize_t start = 0;
      Py_ssize_t stop = 0;
      Py_ssize_t step = 0;
      if (PySlice_Unpack(item, &start, &stop, &step) < 0) {
        throw py::error_already_set();
      }
      kernel::Slice s;
      s.start = start;
      if (stop != PY_SSIZE_T_MAX) {
        s.stop = stop;
      }
      s.step = step;
      out.emplace_back(s);
    } else if (PyIndex_Check(item) != 0) {
      const Py_ssize_t index = PyNumber_AsSsize_t(item, PyExc_IndexError);
      if (index == -1 && PyErr_Occurred() != nullptr) {
        throw py::error_already_set();
      }
      out.emplace_back(static_cast<std::int64_t>(index));
    } else {
      throw py::type_error("a tensor index must be an integer, a slice (0:128, nl.ds(i, n)) or "
                           "..., not " +
                           py::repr(item).cast<std::string>());
    }
  }
  return out;
}

nl::Operand operand(const py::handle& value) {
  if (py::isinstance<Tensor>(value)) {
    return nl::Operand(live(value.cast<const Tensor&>()));
  }
  return nl::Operand(value.cast<float>());
}

}  // namespace

void bindTypes(py::module_& m) {
  py::enum_<DType> dtype(m, "dtype");
  for (const auto& [name, value] :
       std::vector<std::pair<const char*, DType>>{{"float32", DType::kFp32},
                                                  {"tfloat32", DType::kTf32},
                                                  {"bfloat16", DType::kBf16},
                                                  {"float16", DType::kFp16},
                                                  {"float8_e4m3", DType::kFp8E4m3},
                                                  {"float8_e5m2", DType::kFp8E5m2},
                                                  {"float8_e3m4", DType::kFp8E3m4},
                                                  {"float8_e4m3fn", DType::kFp8E4m3Fn},
                                                  {"int8", DType::kInt8},
                                                  {"int16", DType::kInt16},
                                                  {"int32", DType::kInt32},
                                                  {"uint8", DType::kUint8},
                                                  {"uint16", DType::kUint16},
                                                  {"uint32", DType::kUint32}}) {
    dtype.value(name, value);
  }
  dtype.def_property_readonly("itemsize",
                              [](DType d) { return dtypeTraits(d).byteSize; });
  m.def(
      "encode",
      [](const py::array_t<float, py::array::c_style | py::array::forcecast>& values, DType type,
         const std::string& rounding, std::uint64_t seed) {
        ConvertOptions options;
        options.rounding = take(parseRoundingMode(rounding));
        options.seed = seed;
        const runtime::NpyType storage = runtime::storageType(type);
        py::array out(py::dtype(std::string(runtime::npyDescr(storage))),
                      std::vector<py::ssize_t>(values.shape(), values.shape() + values.ndim()));
        const auto bytes = static_cast<std::size_t>(dtypeTraits(type).byteSize);
        auto* dst = static_cast<std::uint8_t*>(out.mutable_data());
        for (py::ssize_t i = 0; i < values.size(); ++i) {
          const std::uint32_t bits = encodeFloat(values.data()[i], type, options,
                                                 stochasticWord(options, static_cast<std::uint64_t>(i)));
          std::memcpy(dst + static_cast<std::size_t>(i) * bytes, &bits, bytes);
        }
        return out;
      },
      py::arg("values"), py::arg("dtype"), py::arg("rounding") = "nearest_even", py::arg("seed") = 0,
      "float32 values as the storage bits of `dtype` (bf16 as uint16, fp8 as uint8).");
  m.def(
      "decode",
      [](const py::array& bits, DType type) {
        const runtime::NpyArray storage = toNpyArray(bits, "decode");
        if (storage.type != runtime::storageType(type)) {
          throw py::type_error("decode needs the storage type of the dtype (" +
                               std::string(runtime::npyDescr(runtime::storageType(type))) + ")");
        }
        py::array_t<float> out(std::vector<py::ssize_t>(storage.shape.begin(), storage.shape.end()));
        const auto bytes = static_cast<std::size_t>(dtypeTraits(type).byteSize);
        for (py::ssize_t i = 0; i < out.size(); ++i) {
          std::uint32_t word = 0;
          std::memcpy(&word, storage.data.data() + static_cast<std::size_t>(i) * bytes, bytes);
          out.mutable_data()[i] = decodeFloat(word, type);
        }
        return out;
      },
      py::arg("bits"), py::arg("dtype"), "Storage bits of `dtype` as float32 values (exact).");
  m.def(
      "to_dtype", [](const py::object& value) { return toDType(value); }, py::arg("value"),
      "A dtype from a trnsim dtype, a name ('bf16', 'bfloat16') or a numpy dtype.");
  bindTabledEnum<isa::AluOp>(m, "AluOp");
  bindTabledEnum<isa::ActivationFunction>(m, "ActivationFunction");
  bindTabledEnum<isa::ReduceCmd>(m, "ReduceCmd");
  bindTabledEnum<isa::CollectiveOp>(m, "CollectiveOp");
  bindTabledEnum<isa::MatmulPerfMode>(m, "MatmulPerfMode");
  bindTabledEnum<isa::PartitionReduceOp>(m, "PartitionReduceOp");
  bindTabledEnum<isa::DmaOobMode>(m, "DmaOobMode");
  py::enum_<isa::Engine> engine(m, "Engine");
  for (const auto& [value, name] : spec::kEngineNames) {
    engine.value(std::string(name).c_str(), value);
  }
}

void bindTensor(py::module_& m) {
  using Guard = py::call_guard<PythonCallSite>;
  py::class_<Tensor>(m, "Tensor",
                     "A view of a kernel tensor (HBM, SBUF or PSUM), valid while its kernel is "
                     "traced. Dimension 0 of an on-chip tile is the partition dimension.")
      .def_property_readonly("shape",
                             [](const Tensor& t) {
                               const std::vector<std::int64_t> s = live(t).shape();
                               return py::tuple(py::cast(s));
                             })
      .def_property_readonly("dtype", [](const Tensor& t) { return live(t).dtype(); })
      .def_property_readonly("ndim", [](const Tensor& t) { return live(t).rank(); })
      .def_property_readonly("buffer",
                             [](const Tensor& t) {
                               return std::string(isa::memoryName(live(t).memory()));
                             })
      .def("__repr__", [](const Tensor& t) { return t.valid() ? t.describe() : "<no tensor>"; })
      .def(
          "__getitem__",
          [](const Tensor& t, const py::handle& key) {
            const std::vector<kernel::Index> indices = toIndices(live(t), key);
            return t.index(std::span<const kernel::Index>(indices));
          },
          Guard())
      .def(
          "reshape", [](const Tensor& t, std::vector<std::int64_t> shape) {
            return live(t).reshape(std::move(shape));
          },
          py::arg("shape"), Guard())
      .def(
          "permute", [](const Tensor& t, std::vector<int> order) {
            return live(t).permute(std::move(order));
          },
          py::arg("order"), Guard())
      .def(
          "broadcast_to", [](const Tensor& t, int dim, std::int64_t count) {
            return live(t).broadcast(dim, count);
          },
          py::arg("dim"), py::arg("count"), Guard())
      .def(
          "expand_dims", [](const Tensor& t, int dim) { return live(t).expandDim(dim); },
          py::arg("dim"), Guard())
      .def(
          "view", [](const Tensor& t, const py::handle& dtype) {
            return live(t).bitcast(toDType(dtype));
          },
          py::arg("dtype"), Guard())
      .def(
          "ap",
          [](const Tensor& t, std::int64_t partitions,
             const std::vector<std::pair<std::int64_t, std::int64_t>>& pattern,
             std::int64_t offset) {
            std::vector<isa::Dim> free;
            for (const auto& [stride, count] : pattern) {
              free.push_back(isa::Dim{stride, count});
            }
            return live(t).pattern(partitions, std::move(free), offset);
          },
          py::arg("partitions"), py::arg("pattern"), py::arg("offset") = 0, Guard())
      .def(
          "__add__", [](const Tensor& a, const py::handle& b) {
            return nl::add(live(a), operand(b));
          },
          py::is_operator(), Guard())
      .def(
          "__radd__", [](const Tensor& a, float b) { return nl::add(b, live(a)); },
          py::is_operator(), Guard())
      .def(
          "__sub__", [](const Tensor& a, const py::handle& b) {
            return nl::subtract(live(a), operand(b));
          },
          py::is_operator(), Guard())
      .def(
          "__rsub__", [](const Tensor& a, float b) { return nl::subtract(b, live(a)); },
          py::is_operator(), Guard())
      .def(
          "__mul__", [](const Tensor& a, const py::handle& b) {
            return nl::multiply(live(a), operand(b));
          },
          py::is_operator(), Guard())
      .def(
          "__rmul__", [](const Tensor& a, float b) { return nl::multiply(b, live(a)); },
          py::is_operator(), Guard())
      .def(
          "__truediv__", [](const Tensor& a, const py::handle& b) {
            return nl::divide(live(a), operand(b));
          },
          py::is_operator(), Guard())
      .def(
          "__rtruediv__", [](const Tensor& a, float b) { return nl::divide(b, live(a)); },
          py::is_operator(), Guard())
      .def(
          "__pow__", [](const Tensor& a, const py::handle& b) {
            return nl::power(live(a), operand(b));
          },
          py::is_operator(), Guard())
      .def(
          "__neg__", [](const Tensor& a) { return nl::negative(live(a)); }, Guard());
}

}  // namespace trn::python
