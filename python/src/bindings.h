// What the binding files of the Python extension share: the kernel being traced on this thread,
// the Python caller's source line as the kernel's call site, conversions between Python objects
// and trnsim's types (dtypes, operators, numpy arrays), and the functions that bind each part.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "trn/base/status.h"
#include "trn/isa/enums.h"
#include "trn/kernel/call_site.h"
#include "trn/kernel/compiler.h"
#include "trn/kernel/kernel.h"
#include "trn/kernel/tensor.h"
#include "trn/numerics/dtype.h"
#include "trn/profile/report.h"
#include "trn/profile/verdict.h"
#include "trn/runtime/npy.h"
#include "trn/runtime/session.h"

namespace trn::python {

namespace py = pybind11;

// ---- Tracing ----------------------------------------------------------------------------------

/// Makes `kernel` the one Python kernel code on this thread traces into, for its lifetime.
class TracingScope {
 public:
  explicit TracingScope(kernel::Kernel& kernel);
  ~TracingScope();
  TracingScope(const TracingScope&) = delete;
  TracingScope& operator=(const TracingScope&) = delete;

 private:
  kernel::Kernel* outer_;
};

/// The kernel being traced; a Python error naming `function` when there is none.
kernel::Kernel& currentKernel(std::string_view function);

/// Default names of the HBM tensors one program instance declares without a name ("out0",
/// "out1", ...; "scratch0", ...), counted afresh for each instance so that the instances of an
/// SPMD launch name the same outputs alike.
std::string nextOutputName();
std::string nextScratchName();
void startProgramInstance();

/// `tensor` when it belongs to the kernel being traced; a Python error otherwise (a tensor kept
/// from an earlier trace would point at a kernel that no longer exists).
const kernel::Tensor& live(const kernel::Tensor& tensor);

/// A pybind11 call guard: while a bound function runs, the kernel language records the line of
/// the Python code that called it (the first frame outside the trnsim package), so errors, IR
/// dumps and profiles name the kernel author's file and line.
class PythonCallSite {
 public:
  PythonCallSite();

 private:
  std::optional<kernel::CallSite> site_;
};

// ---- Errors -----------------------------------------------------------------------------------

/// Raises the Python exception for `status`: trnsim.KernelError for errors of a kernel's trace
/// or compilation, RaceError and DeadlockError for those, trnsim.Error otherwise; all carry the
/// error code's name as `code`.
[[noreturn]] void raise(const Status& status, bool kernelError = false);

/// Sets the Python error raise() raises, without throwing (for exception translators).
void setPythonError(const Status& status, bool kernelError);

/// The value of `result`, or raise(status).
template <typename T>
T take(Result<T> result, bool kernelError = false) {
  if (!result.ok()) {
    raise(result.status(), kernelError);
  }
  return std::move(result).value();
}

// ---- Python kernels ---------------------------------------------------------------------------

/// `object` held for C++ code that copies it freely and may drop it on any thread: the last
/// owner releases it under the GIL.
std::shared_ptr<py::object> shareObject(py::object object);

/// A Python exception as text: its traceback and message.
std::string describe(py::error_already_set& error);

/// A Python exception a kernel raised while traced, kept to be raised again once the compiler
/// has returned (so that the caller sees the exception itself).
class PendingError {
 public:
  void keep(py::error_already_set error) { error_.emplace(std::move(error)); }
  /// Raises the kept exception, if any.
  void raiseIfSet();

 private:
  std::optional<py::error_already_set> error_;
};

/// A Python function as a kernel: each program instance calls it with the input tensors, under
/// the GIL. A trnsim.KernelError it raises is the trace's error; another exception is kept in
/// `pending` when given, or else described in the error's message.
kernel::KernelDef pythonKernel(std::string name, const py::function& fn,
                               std::shared_ptr<PendingError> pending);

// ---- Conversions ------------------------------------------------------------------------------

/// A dtype from a trnsim dtype name ("bf16", "bfloat16", "float8_e4m3"), a trnsim.dtype object,
/// or a numpy dtype or type (np.float32).
DType toDType(const py::handle& object);

/// An ALU operator from its name ("add", "maximum"), or a function named like one (nl.add,
/// np.maximum), as NKI accepts them.
isa::AluOp toAluOp(const py::handle& object);

/// An activation function from its name or a function named like one (nl.exp, np.tanh).
isa::ActivationFunction toActivation(const py::handle& object);

/// A numpy array as an NpyArray (a copy, C order), for the runtime.
runtime::NpyArray toNpyArray(const py::array& array, std::string_view what);

/// An NpyArray as a new numpy array.
py::array toNumpy(const runtime::NpyArray& array);

/// Tensor specs from (name, shape, dtype) tuples, and back.
std::vector<kernel::TensorSpec> toSpecs(const py::list& specs);
py::list specList(const std::vector<kernel::TensorSpec>& specs);

/// Run options from the keyword arguments of trnsim.simulate and its kin (mode, rounding, seed,
/// poison, detect_races, record, max_instructions, lnc, parallel); None keeps a default.
runtime::RunOptions toRunOptions(const py::dict& options);

/// A run report and its verdict as the dict trnsim.Report wraps.
py::dict reportDict(const profile::Report& report, const profile::Verdict& verdict);

// ---- Binding each part ------------------------------------------------------------------------

/// Defines the module trnsim._trnsim in `m`: its exceptions, types and functions.
void defineModule(py::module_& m);

void bindTypes(py::module_& m);
void bindTensor(py::module_& m);
void bindLanguage(py::module_& nl);
void bindIsa(py::module_& nisa);
void bindRuntime(py::module_& m);
void bindKernels(py::module_& kernels);

}  // namespace trn::python
