// The contents of the module trnsim._trnsim: its exceptions, then each part's bindings. The
// extension module (module.cpp) and the command line's embedded interpreter (for kernels
// written in Python) define it alike. The public package (python/trnsim) wraps it.
#include "bindings.h"

namespace trn::python {

void defineModule(py::module_& m) {
  m.doc() = "trnsim's C++ core: the tile language, sessions, the reference kernels";

  const py::object error = py::reinterpret_steal<py::object>(
      PyErr_NewExceptionWithDoc("trnsim.Error", "An error of trnsim; `code` names its kind.",
                                PyExc_RuntimeError, nullptr));
  m.attr("Error") = error;
  m.attr("KernelError") = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "trnsim.KernelError",
      "A kernel broke a rule of the tile language or the hardware while it was traced or "
      "compiled; the message starts with the kernel's file and line.",
      error.ptr(), nullptr));
  m.attr("RaceError") = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "trnsim.RaceError",
      "Two accesses to the same memory, at least one a write, were not ordered by program order "
      "or semaphores; the message names both instructions and the addresses.",
      error.ptr(), nullptr));
  m.attr("DeadlockError") = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "trnsim.DeadlockError",
      "No engine or core of the run could proceed; the message lists what each waits for.",
      error.ptr(), nullptr));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) {
        std::rethrow_exception(p);
      }
    } catch (const trn::kernel::TraceError& e) {
      setPythonError(e.status, /*kernelError=*/true);
    }
  });

  bindTypes(m);
  bindTensor(m);
  py::module_ language = m.def_submodule("language", "nki.language's counterpart (nl)");
  bindLanguage(language);
  py::module_ isa = m.def_submodule("isa", "nki.isa's counterpart (nisa)");
  bindIsa(isa);
  bindRuntime(m);
  py::module_ kernels = m.def_submodule("kernels", "the reference kernel library");
  bindKernels(kernels);
}

}  // namespace trn::python
