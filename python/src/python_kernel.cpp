// A Python function as a kernel of the tile language, and Python exceptions as messages. The
// function may be traced on any thread: it takes the GIL itself, and the Python objects it holds
// are released under the GIL.
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"

namespace trn::python {
namespace {

ErrorCode errorCodeNamed(const std::string& name) {
  for (int c = 0; c <= static_cast<int>(ErrorCode::kDeadlock); ++c) {
    if (errorCodeName(static_cast<ErrorCode>(c)) == name) {
      return static_cast<ErrorCode>(c);
    }
  }
  return ErrorCode::kFailedPrecondition;
}

/// The kernel's return value as its outputs: a tensor, a sequence of them, or None (every HBM
/// output it declared).
std::vector<kernel::Tensor> returnedTensors(kernel::Kernel& k, const py::object& result) {
  if (result.is_none()) {
    return k.declaredOutputs();
  }
  if (py::isinstance<kernel::Tensor>(result)) {
    return {live(result.cast<kernel::Tensor>())};
  }
  if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) {
    std::vector<kernel::Tensor> out;
    for (const py::handle item : result) {
      if (!py::isinstance<kernel::Tensor>(item)) {
        throw py::type_error("a kernel returns tensors; its result holds " +
                             py::repr(item).cast<std::string>());
      }
      out.push_back(live(item.cast<kernel::Tensor>()));
    }
    return out;
  }
  throw py::type_error("a kernel returns a tensor, a tuple of tensors or None, not " +
                       py::repr(result).cast<std::string>());
}

}  // namespace

std::shared_ptr<py::object> shareObject(py::object object) {
  return {new py::object(std::move(object)), [](py::object* held) {
            if (Py_IsInitialized() == 0) {
              return;  // the interpreter is gone (process exit): nothing to release
            }
            const py::gil_scoped_acquire gil;
            delete held;
          }};
}

std::string describe(py::error_already_set& error) {
  try {
    const py::object lines = py::module_::import("traceback")
                                 .attr("format_exception")(error.type(), error.value(),
                                                           error.trace());
    return py::str("").attr("join")(lines).cast<std::string>();
  } catch (const py::error_already_set&) {
    return error.what();
  }
}

void PendingError::raiseIfSet() {
  if (error_) {
    error_->restore();
    error_.reset();
    throw py::error_already_set();
  }
}

kernel::KernelDef pythonKernel(std::string name, const py::function& fn,
                               std::shared_ptr<PendingError> pending) {
  return kernel::KernelDef{
      std::move(name),
      [fn = shareObject(fn), pending](kernel::Kernel& k, std::span<const kernel::Tensor> inputs) {
        const py::gil_scoped_acquire gil;
        startProgramInstance();
        const TracingScope scope(k);
        py::tuple args(inputs.size());
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          args[i] = py::cast(inputs[i]);
        }
        try {
          return returnedTensors(k, (*fn)(*args));
        } catch (py::error_already_set& error) {
          const py::object kernelError = py::module_::import("trnsim._trnsim").attr("KernelError");
          if (error.matches(kernelError)) {
            const py::object value = error.value();
            throw kernel::TraceError{Status(errorCodeNamed(value.attr("code").cast<std::string>()),
                                            py::str(value).cast<std::string>())};
          }
          std::string message = "the kernel raised a Python exception";
          if (pending) {
            pending->keep(std::move(error));
          } else {
            message += ":\n" + describe(error);
          }
          throw kernel::TraceError{Status(ErrorCode::kFailedPrecondition, message)};
        }
      }};
}

}  // namespace trn::python
