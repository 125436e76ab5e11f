#include "trn/python/embedded.h"

#include <pybind11/embed.h>

#include <filesystem>
#include <memory>
#include <string>

#include "bindings.h"

namespace trn::python {
namespace {

namespace fs = std::filesystem;

/// The interpreter of this process, started once and never finalised: kernels registered from
/// Python keep references into it until the process ends. The main thread does not hold the
/// GIL between calls, so that any thread may take it (the harness runs references on a thread
/// of their own).
void startInterpreter() {
  static const bool started = [] {
    py::initialize_interpreter();
    PyEval_SaveThread();
    return true;
  }();
  (void)started;
}

/// The directory holding the trnsim package: the build tree's, or an installed one beside the
/// program (<prefix>/bin/trnsim and <prefix>/<TRN_PYTHON_INSTALL_DIR>/trnsim).
std::string packageDirectory() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / TRN_PYTHON_INSTALL_DIR;
    if (fs::is_regular_file(installed / "trnsim" / "__init__.py", ec)) {
      return installed.string();
    }
  }
  return TRN_PYTHON_BUILD_DIR;
}

}  // namespace

Status loadPythonKernels(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return Status(ErrorCode::kNotFound, "no Python kernel file '" + path + "'");
  }
  startInterpreter();
  const py::gil_scoped_acquire gil;
  try {
    const py::module_ sys = py::module_::import("sys");
    const py::dict modules = sys.attr("modules");
    if (!modules.contains("trnsim._trnsim")) {
      static PyModuleDef definition{};
      py::module_ core = py::module_::create_extension_module("trnsim._trnsim", nullptr,
                                                              &definition);
      defineModule(core);
      modules["trnsim._trnsim"] = core;
      sys.attr("path").attr("insert")(0, packageDirectory());
    }
    py::module_::import("runpy").attr("run_path")(path, py::arg("run_name") = "__trnsim_kernels__");
  } catch (py::error_already_set& error) {
    return Status(ErrorCode::kInvalidArgument,
                  "the Python kernel file '" + path + "' failed: " + describe(error));
  }
  return {};
}

}  // namespace trn::python
