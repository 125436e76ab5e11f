// The run API for Python: a Session on a chip, compiling a Python kernel function into a launch
// (the function is traced through the tile language, its errors raised as trnsim.KernelError at
// the kernel's line, or as the Python exception the kernel raised), running launches and program
// files on numpy arrays, ONNX models through the graph compiler (what trnsim.trace stands on), and
// what a run leaves: outputs, statistics, the report, the trace.
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "bindings.h"
#include "trn/graph/model.h"
#include "trn/graph/model_file.h"
#include "trn/graph/node_profile.h"
#include "trn/harness/check.h"
#include "trn/isa/program_text.h"
#include "trn/profile/report.h"
#include "trn/profile/html_report.h"
#include "trn/profile/report_json.h"
#include "trn/profile/verdict.h"
#include "trn/profile/trace.h"
#include "trn/runtime/host_io.h"
#include "trn/runtime/session.h"

namespace trn::python {
namespace {

using runtime::Session;

/// A launch and what its compilation printed (--dump-after).
struct Launch {
  runtime::CompiledLaunch launch;
  std::string dump;
};

/// A finished run: its result and the programs it ran (for traces).
struct Run {
  runtime::RunResult result;
  std::vector<std::shared_ptr<const isa::Program>> programs;
  std::shared_ptr<const spec::ChipSpec> chip;
  /// For kernels launched one after another on one core (a model's parts; result.cores holds
  /// each launch's statistics): their names and start times. Empty for cores run together.
  std::vector<std::string> launches;
  std::vector<Picoseconds> starts;
  /// Cores of each launch: the entries of launch p are p × lnc ... p × lnc + lnc - 1.
  int lnc = 1;
  /// A tensor-parallel model's run: the collectives it ran, in order.
  std::vector<fabric::CollectiveRecord> collectives;
};

kernel::CompileOptions toCompileOptions(const py::dict& options, std::ostream* dump) {
  kernel::CompileOptions o;
  for (const auto& [key, value] : options) {
    const std::string name = key.cast<std::string>();
    if (value.is_none()) {
      continue;
    }
    if (name == "bufs") {
      o.bufs = value.cast<int>();
    } else if (name == "auto_cast") {
      const std::string mode = value.cast<std::string>();
      if (mode != "none" && mode != "matmult") {
        throw py::value_error("auto_cast must be 'none' or 'matmult', not '" + mode + "'");
      }
      o.autoCast.mode = mode == "matmult" ? kernel::AutoCast::kMatmult : kernel::AutoCast::kNone;
    } else if (name == "auto_cast_type") {
      o.autoCast.type = take(kernel::parseAutoCastType(value.cast<std::string>()));
    } else if (name == "dump_after") {
      o.dumpAfter = value.cast<std::string>();
      o.dumpStream = dump;
    } else if (name == "verify_each_pass") {
      o.verifyEachPass = value.cast<bool>();
    } else {
      throw py::type_error("unknown compile option '" + name + "'");
    }
  }
  return o;
}

/// The dtype of tensor `name` in the first core of `program` that declares it.
std::optional<DType> tensorDType(const isa::ChipProgram& program, const std::string& name) {
  for (const auto& core : program.cores) {
    if (const std::optional<std::int32_t> t = core.program.findTensor(name)) {
      return core.program.tensors[static_cast<std::size_t>(*t)].dtype;
    }
  }
  return std::nullopt;
}

/// The report of core `c` of `run` (or of the whole run when c < 0) with its verdict: the
/// slowest core's for the whole run.
py::dict reportOf(const Run& run, int c) {
  const auto one = static_cast<std::size_t>(c < 0 ? 0 : c);
  const std::size_t count = c < 0 ? run.programs.size() : 1;
  const core::RunStats& stats = c < 0 ? run.result.stats : run.result.cores.at(one);
  const profile::Report report = profile::makeReport(stats, *run.chip);
  profile::Verdict verdict;
  if (report.timed) {  // cores together or launches in turn: the longest one bounds the run
    std::vector<const isa::Program*> programs;
    for (std::size_t i = one; i < one + count; ++i) {
      programs.push_back(run.programs[i].get());
    }
    verdict = take(profile::explainSlowestCore(
        programs, std::span(run.result.cores).subspan(one, count), *run.chip));
  }
  return reportDict(report, verdict);
}

Status writeTrace(const Run& run, const std::string& path) {
  std::vector<profile::TraceSegment> segments;
  if (run.launches.size() > 1) {
    for (std::size_t i = 0; i < run.programs.size(); ++i) {
      segments.push_back({run.launches[i], run.programs[i].get(), &run.result.cores[i],
                          run.lnc > 1 ? static_cast<int>(i) / run.lnc : -1});
    }
    return profile::writeSequenceTraceFile(path, segments);
  }
  for (std::size_t i = 0; i < run.programs.size(); ++i) {
    segments.push_back(profile::TraceSegment{
        "core " + std::to_string(run.result.physicalCores[i]), run.programs[i].get(),
        &run.result.cores[i], 0});
  }
  return profile::writeCoresTraceFile(path, segments);
}

}  // namespace

runtime::RunOptions toRunOptions(const py::dict& options) {
  runtime::RunOptions o;
  for (const auto& [key, value] : options) {
    const std::string name = key.cast<std::string>();
    if (value.is_none()) {
      continue;
    }
    if (name == "mode") {
      o.mode = take(core::parseRunMode(value.cast<std::string>()));
    } else if (name == "rounding") {
      o.rounding = take(parseRoundingMode(value.cast<std::string>()));
    } else if (name == "seed") {
      o.seed = value.cast<std::uint64_t>();
    } else if (name == "poison") {
      o.poison = value.cast<bool>();
    } else if (name == "detect_races") {
      o.detectRaces = value.cast<bool>();
    } else if (name == "record") {
      o.record = value.cast<bool>();
    } else if (name == "max_instructions") {
      o.maxInstructions = value.cast<std::uint64_t>();
    } else if (name == "lnc") {
      o.lnc = value.cast<int>();
    } else if (name == "parallel") {
      o.parallel = value.cast<bool>();
    } else {
      throw py::type_error("unknown run option '" + name + "'");
    }
  }
  return o;
}

py::dict reportDict(const profile::Report& report, const profile::Verdict& verdict) {
  nlohmann::json figures = profile::reportToJson(report);
  figures["bound_by"] = report.timed ? nlohmann::json(profile::verdictLabel(verdict))
                                     : nlohmann::json(nullptr);
  figures["verdict"] =
      report.timed ? profile::verdictToJson(verdict) : nlohmann::json(nullptr);
  return py::module_::import("json").attr("loads")(figures.dump());
}

void bindRuntime(py::module_& m) {
  py::class_<Launch, std::shared_ptr<Launch>>(m, "Launch",
                                              "A kernel compiled for the cores of a logical core.")
      .def_property_readonly("name", [](const Launch& l) { return l.launch.first().name; })
      .def_property_readonly("cores", [](const Launch& l) { return l.launch.cores.size(); })
      .def_property_readonly("inputs", [](const Launch& l) { return specList(l.launch.first().inputs); })
      .def_property_readonly("outputs",
                             [](const Launch& l) { return specList(l.launch.first().outputs); })
      .def_property_readonly("dump", [](const Launch& l) { return l.dump; })
      .def("instructions",
           [](const Launch& l, int core) {
             return l.launch.cores.at(static_cast<std::size_t>(core))->summary.instructions;
           },
           py::arg("core") = 0)
      .def("summary",
           [](const Launch& l, int core) {
             const kernel::CompileSummary& s =
                 l.launch.cores.at(static_cast<std::size_t>(core))->summary;
             py::dict d;
             d["instructions"] = s.instructions;
             d["semaphore_waits"] = s.semaphoreWaits;
             d["cross_engine_dependencies"] = s.crossEngineDependencies;
             d["sbuf_peak_bytes"] = s.sbufPeakBytes;
             d["psum_peak_bytes"] = s.psumPeakBytes;
             d["bufs"] = s.bufs;
             d["spills"] = s.spills;
             d["spill_bytes"] = s.spillBytes;
             return d;
           },
           py::arg("core") = 0)
      .def("program_text",
           [](const Launch& l, int core) {
             return isa::formatProgramText(
                 l.launch.cores.at(static_cast<std::size_t>(core))->program);
           },
           py::arg("core") = 0)
      .def("save", [](const Launch& l, const std::string& path) {
        const Status status = runtime::saveChipProgram(l.launch.chipProgram(), path);
        if (!status.ok()) {
          raise(status);
        }
      });

  py::class_<isa::ChipProgram, std::shared_ptr<isa::ChipProgram>>(
      m, "Program", "A program file: one program per physical core.")
      .def_property_readonly("lnc", [](const isa::ChipProgram& p) { return p.lnc; })
      .def_property_readonly("cores",
                             [](const isa::ChipProgram& p) {
                               std::vector<int> cores;
                               for (const auto& c : p.cores) cores.push_back(c.physicalCore);
                               return cores;
                             })
      .def_property_readonly("tensors", [](const isa::ChipProgram& p) {
        py::list out;
        for (const auto& c : p.cores) {
          for (const isa::TensorDecl& t : c.program.tensors) {
            out.append(py::make_tuple(t.name, std::string(isa::enumName(t.kind)),
                                      py::tuple(py::cast(t.shape)), t.dtype));
          }
        }
        return out;
      });
  m.def(
      "load_model",
      [](const std::string& path) {
        graph::LoadedModel loaded = take(graph::loadModel(path));
        return py::make_tuple(loaded.chip,
                              std::make_shared<graph::CompiledModel>(std::move(loaded.model)));
      },
      py::arg("path"), "Reads a compiled model file (.trnx): (chip name, Model).");
  m.def("load_program", [](const std::string& path) {
    return std::make_shared<isa::ChipProgram>(take(runtime::loadChipProgram(path)));
  });

  py::class_<Run, std::shared_ptr<Run>>(m, "Run", "A finished run.")
      .def_property_readonly("outputs",
                             [](const Run& r) {
                               py::list out;
                               for (const runtime::NpyArray& a : r.result.outputs) {
                                 out.append(toNumpy(a));
                               }
                               return out;
                             })
      .def_property_readonly("time_ps", [](const Run& r) { return r.result.stats.total.count(); })
      .def_property_readonly("instructions",
                             [](const Run& r) { return r.result.stats.instructions; })
      .def_property_readonly("physical_cores", [](const Run& r) { return r.result.physicalCores; })
      .def("report", [](const Run& r) { return reportOf(r, -1); })
      .def_property_readonly(
          "collectives",
          [](const Run& r) {
            py::list out;
            for (const fabric::CollectiveRecord& c : r.collectives) {
              py::dict row;
              row["op"] = std::string(fabric::opName(c.op));
              row["bytes"] = c.bytes;
              row["us"] = static_cast<double>(c.picoseconds) * 1e-6;
              out.append(row);
            }
            return out;
          },
          "A tensor-parallel model's run: each collective (op, bytes, fabric time in us).")
      .def("core_reports", [](const Run& r) {
        py::list out;
        for (std::size_t c = 0; c < r.result.cores.size(); ++c) {
          out.append(reportOf(r, static_cast<int>(c)));
        }
        return out;
      })
      .def("write_report",
           [](const Run& r, const std::string& path, const std::string& title) {
             std::vector<profile::PageRun> runs;
             for (std::size_t c = 0; c < r.programs.size(); ++c) {
               const std::string core = "core " + std::to_string(r.result.physicalCores[c]);
               if (r.launches.empty()) {
                 runs.push_back({core, core, r.programs[c].get(), &r.result.cores[c], {}});
               } else {
                 runs.push_back(
                     {r.launches[c], core, r.programs[c].get(), &r.result.cores[c], r.starts[c]});
               }
             }
             profile::PageOptions options;
             options.title = title;
             const Status status = profile::writeHtmlReportFile(path, runs, *r.chip, options);
             if (!status.ok()) {
               raise(status);
             }
           })
      .def("report_text",
           [](const Run& r) {
             return profile::formatReport(profile::makeReport(r.result.stats, *r.chip));
           })
      .def("write_trace", [](const Run& r, const std::string& path) {
        const Status status = writeTrace(r, path);
        if (!status.ok()) {
          raise(status);
        }
      });

  py::class_<Session, std::shared_ptr<Session>>(m, "Session",
                                                "A simulated chip to compile for and run on.")
      .def(py::init([](const std::string& chip) {
             return std::make_shared<Session>(take(Session::open(chip)));
           }),
           py::arg("chip") = "trn2")
      .def_property_readonly("chip", [](const Session& s) { return s.chip().name; })
      .def(
          "compile",
          [](const Session& s, const std::string& name, py::function fn, const py::list& specs,
             const py::dict& runOptions, const py::dict& compileOptions,
             const std::vector<std::int64_t>& grid) {
            auto pending = std::make_shared<PendingError>();
            std::ostringstream dump;
            const kernel::KernelDef def = pythonKernel(name, fn, pending);
            const std::vector<kernel::TensorSpec> inputs = toSpecs(specs);
            Result<runtime::CompiledLaunch> launch =
                s.compileLaunch(def, inputs, toRunOptions(runOptions),
                                toCompileOptions(compileOptions, &dump), nullptr, grid);
            pending->raiseIfSet();
            auto out = std::make_shared<Launch>();
            out->launch = take(std::move(launch), /*kernelError=*/true);
            out->dump = dump.str();
            return out;
          },
          py::arg("name"), py::arg("fn"), py::arg("specs"), py::arg("run_options"),
          py::arg("compile_options"), py::arg("grid"))
      .def(
          "trace",
          [](const Session& s, const std::string& name, py::function fn, const py::list& specs) {
            auto pending = std::make_shared<PendingError>();
            const kernel::KernelDef def = pythonKernel(name, fn, pending);
            const std::vector<kernel::TensorSpec> inputs = toSpecs(specs);
            Result<kernel::KernelIR> ir = kernel::trace(def, inputs, s.coreLimits());
            pending->raiseIfSet();
            return take(std::move(ir), /*kernelError=*/true).ops.size();
          },
          py::arg("name"), py::arg("fn"), py::arg("specs"),
          "Traces a kernel without compiling it; returns the number of tile operations.")
      .def(
          "run",
          [](const Session& s, const Launch& launch, const py::list& arrays,
             const py::dict& runOptions) {
            std::vector<runtime::NpyArray> inputs;
            for (std::size_t i = 0; i < arrays.size(); ++i) {
              inputs.push_back(toNpyArray(arrays[i].cast<py::array>(),
                                          "input " + std::to_string(i)));
            }
            const runtime::RunOptions options = toRunOptions(runOptions);
            auto run = std::make_shared<Run>();
            run->chip = s.sharedChip();
            for (const auto& core : launch.launch.cores) {
              run->programs.push_back(std::shared_ptr<const isa::Program>(core, &core->program));
            }
            Result<runtime::RunResult> result = [&] {
              const py::gil_scoped_release release;
              return s.runLaunch(launch.launch, inputs, options);
            }();
            run->result = take(std::move(result));
            return run;
          },
          py::arg("launch"), py::arg("arrays"), py::arg("run_options"))
      .def(
          "run_program",
          [](const Session& s, const isa::ChipProgram& program, const py::dict& inputs,
             const std::vector<std::string>& outputs, bool float32Outputs,
             const py::dict& runOptions) {
            runtime::RunOptions options = toRunOptions(runOptions);
            options.lnc = program.lnc;
            std::vector<std::string> names;
            std::vector<runtime::NpyArray> arrays;
            for (const auto& [key, value] : inputs) {
              names.push_back(key.cast<std::string>());
              arrays.push_back(toNpyArray(value.cast<py::array>(), "input '" + names.back() + "'"));
            }
            std::vector<runtime::TensorInput> bound;
            for (std::size_t i = 0; i < names.size(); ++i) {
              bound.push_back({names[i], &arrays[i], "input '" + names[i] + "'"});
            }
            std::vector<runtime::TensorOutput> wanted;
            for (const std::string& name : outputs) {
              const std::optional<DType> dtype = tensorDType(program, name);
              wanted.push_back(
                  {name, float32Outputs && dtype ? runtime::defaultHostType(*dtype) : std::nullopt});
            }
            auto run = std::make_shared<Run>();
            run->chip = s.sharedChip();
            std::vector<runtime::CoreProgram> cores;
            for (const auto& c : program.cores) {
              auto shared = std::make_shared<const isa::Program>(c.program);
              run->programs.push_back(shared);
              cores.push_back({shared, c.physicalCore});
            }
            Result<runtime::RunResult> result = [&] {
              const py::gil_scoped_release release;
              return s.runCores(cores, bound, wanted, options);
            }();
            run->result = take(std::move(result));
            return run;
          },
          py::arg("program"), py::arg("inputs"), py::arg("outputs"), py::arg("float32_outputs"),
          py::arg("run_options"))
      .def(
          "compile_model",
          [](const Session& s, const std::string& path,
             const std::map<std::string, std::int64_t>& symbols, const std::string& autoCast,
             const std::string& partition, int lnc, const std::string& autoCastType, int tp,
             const std::string& system) {
            graph::PipelineOptions pipeline;
            pipeline.shapes.symbols = symbols;
            pipeline.tensorParallel = tp;
            const graph::Placement placement = take(
                graph::placement(s, take(graph::parsePartition(partition)), lnc, tp, system));
            if (autoCast != "none" && autoCast != "matmult" && autoCast != "all") {
              throw py::value_error("auto_cast must be 'none', 'matmult' or 'all', not '" +
                                    autoCast + "'");
            }
            kernel::CompileOptions options;
            const Status cast = graph::applyAutoCast(
                autoCast, take(kernel::parseAutoCastType(autoCastType)), pipeline, options);
            if (!cast.ok()) {
              raise(cast);
            }
            return std::make_shared<graph::CompiledModel>(
                take(graph::compileModel(s, path, pipeline, options, placement)));
          },
          py::arg("path"), py::arg("symbols"), py::arg("auto_cast") = "none",
          py::arg("partition") = "auto", py::arg("lnc") = 1, py::arg("auto_cast_type") = "bf16",
          py::arg("tp") = 1, py::arg("system") = "trn2.48xlarge",
          "Compiles an ONNX model for a logical core of the chip, or with tp > 1 sharded over "
          "tp chips of the system (docs/compiler.md).")
      .def(
          "run_model",
          [](const Session& s, const graph::CompiledModel& model, const py::list& arrays,
             const py::dict& runOptions) {
            std::vector<runtime::NpyArray> inputs;
            for (std::size_t i = 0; i < arrays.size(); ++i) {
              inputs.push_back(toNpyArray(arrays[i].cast<py::array>(),
                                          "model input " + std::to_string(i)));
            }
            const runtime::RunOptions options = toRunOptions(runOptions);
            Result<graph::ModelRun> result = [&] {
              const py::gil_scoped_release release;
              return graph::runModel(s, model, inputs, options);
            }();
            graph::ModelRun ran = take(std::move(result));
            auto run = std::make_shared<Run>();
            run->chip = s.sharedChip();
            run->lnc = model.lnc;
            for (std::size_t p = 0; p < model.parts.size(); ++p) {
              const graph::ModelPart& part = model.parts[p];
              for (std::size_t c = 0; c < part.launch.cores.size(); ++c) {
                const auto& core = part.launch.cores[c];
                run->programs.push_back(std::shared_ptr<const isa::Program>(core, &core->program));
                run->launches.push_back(model.lnc > 1 ? part.name + " core " + std::to_string(c)
                                                      : part.name);
                run->result.physicalCores.push_back(static_cast<int>(c));
                run->starts.push_back(ran.starts.at(p));
              }
              if (model.lnc > 1) {
                for (core::RunStats& stats : ran.cores.at(p)) {
                  run->result.cores.push_back(std::move(stats));
                }
              } else {
                run->result.cores.push_back(std::move(ran.parts.at(p)));
              }
            }
            run->result.stats = std::move(ran.stats);
            run->result.outputs = std::move(ran.outputs);
            run->collectives = std::move(ran.collectives);
            return run;
          },
          py::arg("model"), py::arg("arrays"), py::arg("run_options"));

  py::class_<graph::CompiledModel, std::shared_ptr<graph::CompiledModel>>(
      m, "Model", "An ONNX model compiled for a logical core of a chip.")
      .def_property_readonly("inputs",
                             [](const graph::CompiledModel& c) { return c.graph->inputs; })
      .def_property_readonly("outputs",
                             [](const graph::CompiledModel& c) { return c.graph->outputs; })
      .def_property_readonly("nodes",
                             [](const graph::CompiledModel& c) {
                               py::list out;
                               for (const auto& [name, how] : c.nodeLowerings()) {
                                 out.append(py::make_tuple(name, how));
                               }
                               return out;
                             })
      .def_property_readonly("instructions",
                             [](const graph::CompiledModel& c) {
                               return c.launchedInstructions();
                             })
      .def_property_readonly("lnc", [](const graph::CompiledModel& c) { return c.lnc; })
      .def_property_readonly("tp", [](const graph::CompiledModel& c) { return c.ranks; })
      .def(
          "save",
          [](const graph::CompiledModel& c, const std::string& chip, const std::string& path) {
            const Status status = graph::saveModel(c, chip, path);
            if (!status.ok()) {
              raise(status);
            }
          },
          py::arg("chip"), py::arg("path"),
          "Writes the compiled model file (.trnx) 'trnsim graph run' and trnsim.load run.")
      .def_property_readonly("kernels",
                             [](const graph::CompiledModel& c) {
                               py::list out;
                               for (const graph::ModelPart& part : c.parts) {
                                 out.append(py::make_tuple(part.name, part.kernelIndex,
                                                           part.instructions()));
                               }
                               return out;
                             },
                             "[(name, distinct kernel index, instructions)] in launch order")
      .def(
          "layers",
          [](const graph::CompiledModel& c, const Run& run) {
            py::list out;
            const auto us = [](Picoseconds t) { return static_cast<double>(t.count()) * 1e-6; };
            for (const graph::LayerTime& l : graph::profileLayers(
                     graph::profileNodes(c, run.result.cores, run.starts))) {
              py::dict row;
              row["layer"] = l.layer;
              row["nodes"] = l.nodes;
              row["instructions"] = l.instructions;
              row["first_us"] = us(l.first);
              row["last_us"] = us(l.last);
              row["engine_us"] = us(l.engineBusy);
              row["dma_us"] = us(l.dmaBusy);
              out.append(row);
            }
            return out;
          },
          py::arg("run"),
          "Per layer of the model (node names' module paths): nodes, executed instructions, "
          "span and engine/DMA time of a timed run.");
}

}  // namespace trn::python
