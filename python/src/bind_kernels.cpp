// trnsim.kernels: the reference kernel library from Python: the entries, their float64
// references, and checking one on a session (harness::checkKernel) with its figures.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "trn/harness/check.h"
#include "trn/kernels/registry.h"

namespace trn::python {
namespace {

using kernels::HostTensor;
using kernels::KernelEntry;

const KernelEntry& entryNamed(const std::string& name) {
  const KernelEntry* entry = kernels::findKernel(name);
  if (entry == nullptr) {
    throw py::value_error("no reference kernel is called '" + name +
                          "'; trnsim.kernels.names() lists them");
  }
  return *entry;
}

std::vector<kernel::TensorSpec> specsOf(const KernelEntry& entry, const py::list& specs) {
  return specs.empty() ? entry.defaultInputs : toSpecs(specs);
}

HostTensor toHost(const py::handle& object) {
  const auto array =
      py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(object);
  if (!array) {
    throw py::type_error("expected an array of numbers");
  }
  HostTensor t;
  t.shape.assign(array.shape(), array.shape() + array.ndim());
  t.values.assign(array.data(), array.data() + array.size());
  return t;
}

py::array_t<double> toArray(const HostTensor& t) {
  py::array_t<double> out(std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()));
  std::copy(t.values.begin(), t.values.end(), out.mutable_data());
  return out;
}

/// A Python float64 reference as the library's: arrays in, arrays out, under the GIL. A Python
/// exception is printed and gives no outputs, which the check reports as a mismatch.
kernels::ReferenceFn pythonReference(const py::function& reference, const std::string& name) {
  return [fn = shareObject(reference), name](std::span<const HostTensor> inputs) {
    const py::gil_scoped_acquire gil;
    std::vector<HostTensor> out;
    try {
      py::list args;
      for (const HostTensor& t : inputs) {
        args.append(toArray(t));
      }
      const py::object result = (*fn)(*args);
      if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) {
        for (const py::handle item : result) {
          out.push_back(toHost(item));
        }
      } else {
        out.push_back(toHost(result));
      }
    } catch (py::error_already_set& error) {
      PySys_WriteStderr("trnsim: the reference of kernel '%s' failed:\n%s", name.c_str(),
                        describe(error).c_str());
      out.clear();
    }
    return out;
  };
}

}  // namespace

void bindKernels(py::module_& m) {
  m.def("names", [] {
    std::vector<std::string> out;
    for (const KernelEntry& e : kernels::referenceKernels()) {
      out.push_back(e.name);
    }
    for (const KernelEntry* e : kernels::userKernels()) {
      out.push_back(e->name);
    }
    return out;
  });
  m.def("summary", [](const std::string& name) { return entryNamed(name).summary; });
  m.def("spmd", [](const std::string& name) { return entryNamed(name).spmd; });
  m.def("default_inputs",
        [](const std::string& name) { return specList(entryNamed(name).defaultInputs); });
  m.def(
      "flops",
      [](const std::string& name, const py::list& specs) {
        const KernelEntry& e = entryNamed(name);
        const std::vector<kernel::TensorSpec> s = specsOf(e, specs);
        return e.flops ? e.flops(s) : 0.0;
      },
      py::arg("name"), py::arg("specs") = py::list());
  m.def(
      "tolerance",
      [](const std::string& name, const py::list& specs) {
        const KernelEntry& e = entryNamed(name);
        const kernels::Tolerance t = e.toleranceAt(specsOf(e, specs));
        return py::make_tuple(t.atol, t.rtol);
      },
      py::arg("name"), py::arg("specs") = py::list());
  m.def(
      "reference",
      [](const std::string& name, const py::list& arrays) {
        const KernelEntry& e = entryNamed(name);
        if (arrays.size() != e.defaultInputs.size()) {
          throw py::value_error("kernel '" + name + "' takes " +
                                std::to_string(e.defaultInputs.size()) + " inputs, not " +
                                std::to_string(arrays.size()));
        }
        std::vector<HostTensor> inputs;
        for (const py::handle a : arrays) {
          inputs.push_back(toHost(a));
        }
        py::list out;
        for (const HostTensor& t : e.reference(inputs)) {
          out.append(toArray(t));
        }
        return out;
      },
      py::arg("name"), py::arg("arrays"));
  m.def(
      "register",
      [](const py::function& fn, const py::list& inputs, const py::function& reference,
         std::pair<double, double> tolerance, const std::string& summary, bool spmd,
         const py::object& flops, const std::optional<std::string>& name) {
        KernelEntry entry;
        entry.name = name ? *name : fn.attr("__name__").cast<std::string>();
        entry.summary = summary.empty() ? "a kernel written in Python" : summary;
        entry.defaultInputs = toSpecs(inputs);
        entry.def = pythonKernel(entry.name, fn, nullptr);
        entry.reference = pythonReference(reference, entry.name);
        entry.tolerance = kernels::Tolerance{tolerance.first, tolerance.second};
        entry.spmd = spmd;
        if (!flops.is_none()) {
          entry.flops = [f = shareObject(flops)](std::span<const kernel::TensorSpec> specs) {
            const py::gil_scoped_acquire gil;
            py::list shapes;
            for (const kernel::TensorSpec& s : specs) {
              shapes.append(py::tuple(py::cast(s.shape)));
            }
            return (*f)(*shapes).cast<double>();
          };
        }
        const Status status = kernels::registerKernel(std::move(entry));
        if (!status.ok()) {
          raise(status);
        }
        return fn;
      },
      py::arg("fn"), py::arg("inputs"), py::arg("reference"),
      py::arg("tolerance") = std::pair<double, double>{1e-5, 1e-5}, py::arg("summary") = "",
      py::arg("spmd") = false, py::arg("flops") = py::none(), py::arg("name") = py::none());
  m.def(
      "check",
      [](const runtime::Session& session, const std::string& name, const py::list& specs,
         const py::dict& runOptions, bool checkNumerics, const py::object& arrays,
         const std::string& autoCast, const std::string& autoCastType) {
        const KernelEntry& e = entryNamed(name);
        const std::vector<kernel::TensorSpec> s = specsOf(e, specs);
        harness::CheckOptions options;
        options.run = toRunOptions(runOptions);
        options.run.record = core::hasTiming(options.run.mode);  // the verdict's critical path
        options.checkNumerics = checkNumerics;
        options.compile.autoCast = {
            autoCast == "matmult" ? kernel::AutoCast::kMatmult : kernel::AutoCast::kNone,
            take(kernel::parseAutoCastType(autoCastType))};
        const Status castable = harness::checkAutoCast(e, s, options.compile.autoCast);
        if (!castable.ok()) {
          raise(castable);
        }
        std::vector<HostTensor> inputs;
        if (!arrays.is_none()) {
          for (const py::handle a : arrays) {
            inputs.push_back(toHost(a));
          }
        }
        Result<harness::CheckResult> result = [&] {
          const py::gil_scoped_release release;
          return harness::checkKernel(session, e, s, options, nullptr, inputs);
        }();
        const harness::CheckResult r = take(std::move(result));
        py::dict d;
        d["report"] = reportDict(r.report, r.verdict);
        d["report_text"] = profile::formatReport(r.report);
        d["mfu"] = r.mfu;
        d["useful_flops"] = r.usefulFlops;
        d["checked"] = r.checked;
        d["passed"] = r.pass;
        d["tolerance"] = py::make_tuple(r.tolerance.atol, r.tolerance.rtol);
        py::list comparisons;
        for (const kernels::Comparison& c : r.comparisons) {
          py::dict cd;
          cd["max_abs_error"] = c.maxAbsError;
          cd["max_rel_error"] = c.maxRelError;
          cd["failures"] = c.failures;
          cd["passed"] = c.pass;
          comparisons.append(cd);
        }
        d["comparisons"] = comparisons;
        py::list outputs;
        for (const HostTensor& t : r.outputs) {
          outputs.append(toArray(t));
        }
        d["outputs"] = outputs;
        py::list used;
        for (const HostTensor& t : r.inputs) {
          used.append(toArray(t));
        }
        d["inputs"] = used;
        return d;
      },
      py::arg("session"), py::arg("name"), py::arg("specs"), py::arg("run_options"),
      py::arg("check_numerics"), py::arg("inputs"), py::arg("auto_cast"),
      py::arg("auto_cast_type") = "bf16");
}

}  // namespace trn::python
