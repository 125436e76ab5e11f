// The kernel being traced, the Python caller as the kernel's call site, and trnsim's Python
// exceptions.
#include "bindings.h"

#include <frameobject.h>

#include <string>
#include <unordered_map>
#include <utility>

namespace trn::python {
namespace {

thread_local kernel::Kernel* tracing = nullptr;
thread_local int outputsDeclared = 0;
thread_local int scratchDeclared = 0;

/// A strong reference kept as a cache key, so that its address cannot be reused by another
/// object while the cache holds it.
class CacheKey {
 public:
  [[nodiscard]] bool is(PyObject* object) const { return object == key_; }
  void set(PyObject* object) {
    Py_XINCREF(object);
    Py_XDECREF(key_);
    key_ = object;
  }

 private:
  PyObject* key_ = nullptr;
};

/// Where `frame` is: the storable file name of its code (kernel::locationFile) and its line.
/// Both are cached: the file by the code's filename object (the frames of one source file share
/// it), the line by the code object and instruction offset, since finding a line scans the
/// code's line table and a kernel calls the language from the same few places again and again.
isa::SourceLocation locationOf(PyFrameObject* frame) {
  thread_local CacheKey cachedName;
  thread_local std::string cachedFile;
  thread_local CacheKey cachedCode;
  thread_local std::unordered_map<int, int> cachedLines;
  PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
  PyObject* name = code->co_filename;
  if (!cachedName.is(name)) {
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(name, &size);
    if (text == nullptr) {
      PyErr_Clear();
    }
    cachedFile = kernel::locationFile(text == nullptr ? std::string_view("<unknown>")
                                                      : std::string_view(text, size));
    cachedName.set(name);
  }
  if (!cachedCode.is(reinterpret_cast<PyObject*>(code))) {
    cachedLines.clear();
    cachedCode.set(reinterpret_cast<PyObject*>(code));
  }
  Py_DECREF(code);
  const auto [line, inserted] = cachedLines.try_emplace(PyFrame_GetLasti(frame), 0);
  if (inserted) {
    line->second = PyFrame_GetLineNumber(frame);
  }
  return isa::SourceLocation{cachedFile, line->second};
}

/// True when `frame` runs code of the trnsim package itself (its module is trnsim or
/// trnsim.*), whose frames are skipped to find the kernel author's line. Cached by the frame's
/// globals: the frames of one module share them.
bool inPackage(PyFrameObject* frame) {
  thread_local CacheKey cachedGlobals;
  thread_local bool cachedInside = false;
  static PyObject* const nameKey = PyUnicode_InternFromString("__name__");
  PyObject* globals = PyFrame_GetGlobals(frame);  // new reference
  if (!cachedGlobals.is(globals)) {
    PyObject* name = PyDict_GetItemWithError(globals, nameKey);  // borrowed
    bool inside = false;
    if (name != nullptr && PyUnicode_Check(name)) {
      Py_ssize_t size = 0;
      const char* text = PyUnicode_AsUTF8AndSize(name, &size);
      if (text != nullptr) {
        const std::string_view module(text, static_cast<std::size_t>(size));
        inside = module == "trnsim" || module.starts_with("trnsim.");
      }
    }
    PyErr_Clear();
    cachedInside = inside;
    cachedGlobals.set(globals);
  }
  Py_DECREF(globals);
  return cachedInside;
}

}  // namespace

TracingScope::TracingScope(kernel::Kernel& kernel) : outer_(tracing) { tracing = &kernel; }

TracingScope::~TracingScope() { tracing = outer_; }

kernel::Kernel& currentKernel(std::string_view function) {
  if (tracing == nullptr) {
    throw py::value_error(std::string(function) +
                          " was called outside a kernel: call it from the body of a kernel "
                          "that trnsim.simulate, trnsim.benchmark or trnsim.compile traces");
  }
  return *tracing;
}

std::string nextOutputName() { return "out" + std::to_string(outputsDeclared++); }

std::string nextScratchName() { return "scratch" + std::to_string(scratchDeclared++); }

void startProgramInstance() {
  outputsDeclared = 0;
  scratchDeclared = 0;
}

const kernel::Tensor& live(const kernel::Tensor& tensor) {
  if (!tensor.valid()) {
    throw py::value_error("an empty tensor was passed where a kernel tensor is needed");
  }
  if (tracing == nullptr || &tensor.kernel() != tracing) {
    throw py::value_error(
        "a tensor of another kernel trace was used: tensors live only while their kernel is "
        "traced; do not keep them across calls");
  }
  return tensor;
}

PythonCallSite::PythonCallSite() {
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  if (frame == nullptr) {
    return;
  }
  Py_INCREF(frame);
  while (frame != nullptr) {
    if (!inPackage(frame)) {
      site_.emplace(locationOf(frame));
      Py_DECREF(frame);
      return;
    }
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference or nullptr
    Py_DECREF(frame);
    frame = back;
  }
}

void setPythonError(const Status& status, bool kernelError) {
  const py::module_ module = py::module_::import("trnsim._trnsim");
  const char* name = kernelError                           ? "KernelError"
                     : status.code() == ErrorCode::kRace     ? "RaceError"
                     : status.code() == ErrorCode::kDeadlock ? "DeadlockError"
                                                             : "Error";
  const py::object type = module.attr(name);
  py::object error = type(status.message());
  error.attr("code") = std::string(errorCodeName(status.code()));
  PyErr_SetObject(type.ptr(), error.ptr());
}

void raise(const Status& status, bool kernelError) {
  setPythonError(status, kernelError);
  throw py::error_already_set();
}

}  // namespace trn::python
