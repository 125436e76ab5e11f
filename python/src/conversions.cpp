// Python objects to trnsim's types and back: dtypes, ALU operators, activation functions, numpy
// arrays.
#include <array>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.h"
#include "trn/isa/enums.h"

namespace trn::python {
namespace {

/// NKI's and numpy's names for the dtypes, beside trnsim's own ("bf16", "fp8_e4m3").
const std::vector<std::pair<std::string_view, DType>>& dtypeAliases() {
  static const std::vector<std::pair<std::string_view, DType>> aliases = {
      {"float32", DType::kFp32},         {"tfloat32", DType::kTf32},
      {"bfloat16", DType::kBf16},        {"float16", DType::kFp16},
      {"float8_e4m3", DType::kFp8E4m3},  {"float8_e5m2", DType::kFp8E5m2},
      {"float8_e3m4", DType::kFp8E3m4},  {"float8_e4m3fn", DType::kFp8E4m3Fn},
      {"int8", DType::kInt8},            {"int16", DType::kInt16},
      {"int32", DType::kInt32},          {"uint8", DType::kUint8},
      {"uint16", DType::kUint16},        {"uint32", DType::kUint32},
  };
  return aliases;
}

/// "add" for "add", np.add and nl.add alike.
std::string nameOf(const py::handle& object, std::string_view what) {
  if (py::isinstance<py::str>(object)) {
    return object.cast<std::string>();
  }
  if (py::hasattr(object, "__name__")) {
    return py::getattr(object, "__name__").cast<std::string>();
  }
  throw py::type_error(std::string(what) + " must be a name or a function such as nl.add, not " +
                       py::repr(object).cast<std::string>());
}

/// Enum values of the functions and names last converted, by identity: kernels pass the same
/// few objects (nl.add, np.maximum, "max") over and over. Entries hold strong references, so an
/// address is never reused by another object while cached.
template <typename E>
class IdentityCache {
 public:
  [[nodiscard]] const E* find(PyObject* object) const {
    for (std::size_t i = 0; i < used_; ++i) {
      if (entries_[i].first == object) {
        return &entries_[i].second;
      }
    }
    return nullptr;
  }
  void add(PyObject* object, E value) {
    if (used_ < entries_.size()) {
      Py_INCREF(object);
      entries_[used_++] = {object, value};
    }
  }

 private:
  std::array<std::pair<PyObject*, E>, 32> entries_{};
  std::size_t used_ = 0;
};

template <typename E>
std::string choices() {
  std::string out;
  for (const auto& [value, name] : isa::EnumTable<E>::kEntries) {
    out += out.empty() ? "" : ", ";
    out += name;
  }
  return out;
}

}  // namespace

DType toDType(const py::handle& object) {
  if (py::isinstance<DType>(object)) {
    return object.cast<DType>();
  }
  std::string name;
  if (py::isinstance<py::str>(object)) {
    name = object.cast<std::string>();
  } else {
    // numpy dtypes and scalar types (np.float32, np.dtype("int8")).
    try {
      name = py::module_::import("numpy").attr("dtype")(object).attr("name").cast<std::string>();
    } catch (const py::error_already_set&) {
      throw py::type_error("not a dtype: " + py::repr(object).cast<std::string>());
    }
  }
  for (const auto& [alias, dtype] : dtypeAliases()) {
    if (alias == name) {
      return dtype;
    }
  }
  Result<DType> parsed = parseDType(name);
  if (!parsed.ok()) {
    throw py::type_error("unknown dtype '" + name +
                         "': use nl.float32, nl.bfloat16, nl.float8_e4m3, ..., a numpy dtype, or "
                         "a name such as 'bf16'");
  }
  return *parsed;
}

/// An enum value of E from an instance, a name, or a function named like one; `aliases` maps
/// numpy's and NKI's spellings to the table's names, `what` names E in errors.
template <typename E>
E toTabledEnum(const py::handle& object, std::string_view what,
               std::initializer_list<std::pair<std::string_view, std::string_view>> aliases) {
  thread_local IdentityCache<E> cache;
  if (const E* cached = cache.find(object.ptr())) {
    return *cached;
  }
  if (py::isinstance<E>(object)) {
    return object.cast<E>();
  }
  std::string name = nameOf(object, what);
  for (const auto& [alias, canonical] : aliases) {
    if (name == alias) {
      name = canonical;
    }
  }
  E value{};
  if (!isa::enumFromName(name, value)) {
    throw py::value_error("'" + name + "' is not " + std::string(what) + "; one of: " +
                          choices<E>());
  }
  cache.add(object.ptr(), value);
  return value;
}

isa::AluOp toAluOp(const py::handle& object) {
  return toTabledEnum<isa::AluOp>(object, "an ALU operator",
                                  {{"maximum", "max"},
                                   {"minimum", "min"},
                                   {"power", "pow"},
                                   {"true_divide", "divide"}});
}

isa::ActivationFunction toActivation(const py::handle& object) {
  return toTabledEnum<isa::ActivationFunction>(object, "an activation function",
                                               {{"identity", "copy"}, {"absolute", "abs"}});
}

runtime::NpyArray toNpyArray(const py::array& array, std::string_view what) {
  const py::dtype dtype = array.dtype();
  const char kind = dtype.kind();
  const auto size = static_cast<int>(dtype.itemsize());
  runtime::NpyArray out;
  using T = runtime::NpyType;
  if (kind == 'f' && size == 4) out.type = T::kFloat32;
  else if (kind == 'f' && size == 8) out.type = T::kFloat64;
  else if (kind == 'f' && size == 2) out.type = T::kFloat16;
  else if (kind == 'i' && size == 1) out.type = T::kInt8;
  else if (kind == 'i' && size == 2) out.type = T::kInt16;
  else if (kind == 'i' && size == 4) out.type = T::kInt32;
  else if (kind == 'i' && size == 8) out.type = T::kInt64;
  else if (kind == 'u' && size == 1) out.type = T::kUInt8;
  else if (kind == 'u' && size == 2) out.type = T::kUInt16;
  else if (kind == 'u' && size == 4) out.type = T::kUInt32;
  else if (kind == 'u' && size == 8) out.type = T::kUInt64;
  else if (kind == 'b') out.type = T::kBool;
  else {
    throw py::type_error(std::string(what) + ": numpy arrays of " +
                         py::repr(dtype).cast<std::string>() + " are not supported");
  }
  if (dtype.byteorder() == '>') {
    throw py::type_error(std::string(what) + ": big-endian arrays are not supported");
  }
  const py::array contiguous = py::array::ensure(array, py::array::c_style);
  out.shape.assign(contiguous.shape(), contiguous.shape() + contiguous.ndim());
  out.data.resize(static_cast<std::size_t>(contiguous.nbytes()));
  if (!out.data.empty()) {
    std::memcpy(out.data.data(), contiguous.data(), out.data.size());
  }
  return out;
}

py::array toNumpy(const runtime::NpyArray& array) {
  py::array out(py::dtype(std::string(runtime::npyDescr(array.type))),
                std::vector<py::ssize_t>(array.shape.begin(), array.shape.end()));
  if (!array.data.empty()) {
    std::memcpy(out.mutable_data(), array.data.data(), array.data.size());
  }
  return out;
}

std::vector<kernel::TensorSpec> toSpecs(const py::list& specs) {
  std::vector<kernel::TensorSpec> out;
  for (const py::handle spec : specs) {
    const auto tuple = spec.cast<py::tuple>();
    if (tuple.size() != 3) {
      throw py::type_error("a tensor spec is (name, shape, dtype)");
    }
    out.push_back(kernel::TensorSpec{tuple[0].cast<std::string>(),
                                     tuple[1].cast<std::vector<std::int64_t>>(),
                                     toDType(tuple[2])});
  }
  return out;
}

py::list specList(const std::vector<kernel::TensorSpec>& specs) {
  py::list out;
  for (const kernel::TensorSpec& s : specs) {
    out.append(py::make_tuple(s.name, py::tuple(py::cast(s.shape)), s.dtype));
  }
  return out;
}

}  // namespace trn::python
