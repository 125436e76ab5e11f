"""trnsim: a software Trainium2 for NKI users.

Write a kernel as you would for NKI, with ``trnsim.language`` as ``nl`` and ``trnsim.isa`` as
``nisa``, and run it on a simulated NeuronCore with numpy arrays in and out::

    import numpy as np
    import trnsim
    import trnsim.language as nl

    @trnsim.jit
    def add(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.add(nl.load(a), nl.load(b)))
        return out

    c = add(np.ones((128, 512), np.float32), np.ones((128, 512), np.float32))
    report = trnsim.benchmark(add, a, b)   # simulated time, engine use, MFU, what bounds it

Results are bit-reproducible: the same inputs, options and seed give the same bits and cycles.
"""
import inspect
import os

import numpy as np

from . import _trnsim
from ._trnsim import (  # noqa: F401
    DeadlockError, Error, KernelError, RaceError, Session, decode, dtype, encode)

from . import isa, kernels, language
from .model import TracedModel, load, trace  # noqa: F401

__all__ = [
    "Error", "KernelError", "RaceError", "DeadlockError", "Session", "dtype", "encode", "decode", "jit", "Kernel",
    "TensorSpec", "as_dtype", "simulate", "benchmark", "compile", "run_program", "load_program",
    "Report", "language", "isa", "kernels", "trace", "load", "TracedModel",
]


class TensorSpec:
    """A kernel input by shape and dtype alone, for timing-only runs and compiling."""

    def __init__(self, shape, dtype=language.float32):
        self.shape = tuple(int(n) for n in shape)
        self.dtype = _dtype_of(dtype)

    def __repr__(self):
        return f"TensorSpec({self.shape}, {self.dtype.name})"


class TypedArray:
    """A numpy array of floats to be given to a kernel as another dtype (see as_dtype)."""

    def __init__(self, array, dtype):
        self.dtype = _dtype_of(dtype)
        array = np.asarray(array)
        if array.dtype not in (np.float32, np.float64):
            raise TypeError(f"as_dtype takes float32 or float64 values, not {array.dtype}")
        self.array = np.ascontiguousarray(array)
        self.shape = array.shape


def as_dtype(array, dtype):
    """``array`` (float32 or float64) as a kernel input of ``dtype``, e.g. nl.bfloat16 (numpy has
    no bf16 or fp8): rounded once to it when the kernel runs, with the run's rounding mode."""
    return TypedArray(array, dtype)


def _dtype_of(value):
    """A trnsim dtype from a dtype, a name or a numpy dtype; float64 arrays become fp32 inputs."""
    if not isinstance(value, (dtype, str)) and np.dtype(value) == np.float64:
        return dtype.float32
    try:
        return _trnsim.to_dtype(value)
    except TypeError as error:
        if isinstance(value, str):
            raise
        raise TypeError(f"numpy arrays of {np.dtype(value).name} cannot be kernel inputs") \
            from error


class Report:
    """What a run took and why: simulated time, per-engine busy / waiting / idle, DMA and HBM
    figures, achieved TFLOP/s, MFU and what bounds it (``bound_by`` in a few words, ``verdict``
    with its evidence and remedies, ``explain()`` as text). Attribute access reads the figures
    (``report.time_us``, ``report.engines["pe"]["busy_fraction"]``); ``str(report)`` is the
    text table ``trnsim kernels bench`` prints."""

    def __init__(self, figures, text, trace=None, outputs=None):
        self._figures = dict(figures)
        self._figures["engines"] = {e["engine"]: e for e in figures["engines"]}
        self._figures["time_us"] = figures["total_ps"] * 1e-6
        self._figures["mfu"] = figures["pe_utilisation"]
        self._figures["tflops"] = figures["achieved_tflops"]
        self._text = text
        self.trace = trace
        self.outputs = outputs if outputs is not None else []

    def __getattr__(self, name):
        figures = self.__dict__.get("_figures", {})
        if name in figures:
            return figures[name]
        raise AttributeError(name)

    def explain(self):
        """The verdict as text: what bounds the run, the figures behind it, the usual remedies."""
        verdict = self._figures.get("verdict")
        return verdict["text"] if verdict else "no verdict: the run was not timed"

    def as_dict(self):
        return dict(self._figures)

    def __str__(self):
        return self._text

    def __repr__(self):
        return (f"Report(time_us={self.time_us:.3f}, mfu={self.mfu:.3f}, "
                f"bound_by={self.bound_by!r})")


class Kernel:
    """A Python function traced as a tile kernel (``@trnsim.jit``). Calling it simulates it;
    ``kernel[g](...)`` launches it over an SPMD grid, as in NKI."""

    def __init__(self, fn, grid=None):
        self.fn = fn
        self.name = fn.__name__
        self.grid = grid
        try:
            self.parameters = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            self.parameters = []

    def __getitem__(self, grid):
        return Kernel(self.fn, tuple(grid) if isinstance(grid, (tuple, list)) else (grid,))

    def __call__(self, *arrays, **options):
        return simulate(self, *arrays, **options)

    def __repr__(self):
        return f"trnsim.Kernel({self.name})"


def jit(fn=None, **options):
    """Marks a function as a tile kernel (NKI's ``@nki.jit``). NKI's ``mode=`` chooses a
    framework there and means nothing here, so it is accepted and ignored; any other keyword is
    an error."""
    unknown = sorted(set(options) - {"mode"})
    if unknown:
        raise TypeError(f"trnsim.jit takes no option {', '.join(unknown)}")
    if fn is None:
        return lambda f: Kernel(f)
    return Kernel(fn)


_sessions = {}


def _session(chip):
    if isinstance(chip, Session):
        return chip
    if chip not in _sessions:
        _sessions[chip] = Session(chip)
    return _sessions[chip]


def _as_kernel(kernel):
    if isinstance(kernel, Kernel):
        return kernel
    if callable(kernel):
        return Kernel(kernel)
    raise TypeError(f"a kernel is a function or a trnsim.Kernel, not {kernel!r}")


def _inputs(kernel, arrays):
    """(specs, data arrays or None when some input has no data)."""
    specs, data = [], []
    for i, a in enumerate(arrays):
        name = kernel.parameters[i] if i < len(kernel.parameters) else f"in{i}"
        if isinstance(a, TensorSpec):
            specs.append((name, a.shape, a.dtype))
            data.append(None)
        elif isinstance(a, TypedArray):
            specs.append((name, a.shape, a.dtype))
            data.append(a.array)
        else:
            array = np.asarray(a)
            specs.append((name, array.shape, _dtype_of(array.dtype)))
            data.append(np.ascontiguousarray(array))
    return specs, (None if any(d is None for d in data) else data)


def _run_options(mode, rounding, seed, poison, detect_races, lnc, record, max_instructions):
    return {
        "mode": mode, "rounding": rounding, "seed": seed, "poison": poison,
        "detect_races": detect_races, "lnc": lnc, "record": record,
        "max_instructions": max_instructions,
    }


def compile(kernel, *arrays, chip="trn2", lnc=1, grid=None, bufs=2, auto_cast="none",
            dump_after=None):
    """Traces ``kernel`` for inputs like ``arrays`` (numpy arrays or TensorSpecs) and compiles
    it: the result's ``program_text()``, ``summary()``, ``dump`` (the IR after ``dump_after``,
    a pass name) and ``save(path)`` (a TRNPROG file ``trnsim run`` takes)."""
    kernel = _as_kernel(kernel)
    specs, _ = _inputs(kernel, arrays)
    grid = grid if grid is not None else kernel.grid
    return _session(chip).compile(
        kernel.name, kernel.fn, specs, _run_options(None, None, None, None, None, lnc, None, None),
        {"bufs": bufs, "auto_cast": auto_cast, "dump_after": dump_after},
        list(grid) if grid else [])


def _launch_and_run(kernel, arrays, chip, lnc, grid, mode, rounding, seed, poison, detect_races,
                    record, max_instructions, bufs, auto_cast):
    kernel = _as_kernel(kernel)
    specs, data = _inputs(kernel, arrays)
    if data is None and mode != "timing-only":
        raise ValueError("inputs given as TensorSpec have no data: use mode='timing-only'")
    session = _session(chip)
    options = _run_options(mode, rounding, seed, poison, detect_races, lnc, record,
                           max_instructions)
    grid = grid if grid is not None else kernel.grid
    launch = session.compile(kernel.name, kernel.fn, specs, options,
                             {"bufs": bufs, "auto_cast": auto_cast}, list(grid) if grid else [])
    return launch, session.run(launch, data or [], options)


def _outputs(launch, run, raw):
    outputs = run.outputs
    if raw:
        outputs = [
            encode(o, spec[2]) if o.dtype == np.float32 and spec[2] != dtype.float32 else o
            for o, spec in zip(outputs, launch.outputs)
        ]
    return outputs


def simulate(kernel, *arrays, chip="trn2", lnc=1, grid=None, mode="functional+timing",
             rounding="nearest_even", seed=0, poison=True, detect_races=True, raw=False,
             max_instructions=None, bufs=2, auto_cast="none"):
    """Runs ``kernel`` on ``arrays`` on a simulated chip and returns its output (a tuple for
    several). bf16 and fp8 outputs come back as float32 (exactly), or as their storage bits with
    ``raw=True``. ``lnc=2`` runs the kernel's SPMD instances on the two cores of a logical core.
    Errors in the kernel raise trnsim.KernelError naming its line; races, deadlocks and reads of
    unwritten memory raise trnsim.Error."""
    launch, run = _launch_and_run(kernel, arrays, chip, lnc, grid, mode, rounding, seed, poison,
                                  detect_races, False, max_instructions, bufs, auto_cast)
    outputs = _outputs(launch, run, raw)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def benchmark(kernel, *arrays, chip="trn2", lnc=1, grid=None, mode="timing-only",
              rounding="nearest_even", seed=0, poison=True, detect_races=True, trace=None,
              report=None, max_instructions=None, bufs=2, auto_cast="none"):
    """Simulates ``kernel`` (timing-only by default: arrays may be TensorSpecs) and returns its
    Report, with the verdict on what bounds it decided from the run's critical path;
    ``trace="t.json"`` also writes the Chrome/Perfetto timeline, ``report="r.html"`` the offline
    HTML report (docs/profiling.md)."""
    launch, run = _launch_and_run(kernel, arrays, chip, lnc, grid, mode, rounding, seed, poison,
                                  detect_races, True, max_instructions, bufs, auto_cast)
    if trace is not None:
        run.write_trace(os.fspath(trace))
    if report is not None:
        run.write_report(os.fspath(report), f"trnsim.benchmark {launch.name}")
    return Report(run.report(), run.report_text(), trace, run.outputs)


def load_program(path):
    """A program file (``.tasm`` text or TRNPROG binary, one core or several)."""
    return _trnsim.load_program(os.fspath(path))


def run_program(program, inputs, outputs, chip="trn2", mode="functional+timing",
                rounding="nearest_even", seed=0, poison=True, detect_races=True, raw=False,
                trace=None, max_instructions=None):
    """Runs a program (a path or load_program's result) with ``inputs`` ({tensor name: numpy
    array}, in the tensor's storage type or float32) and returns ({name: array} for the tensors
    named in ``outputs``, Report). bf16, tf32 and fp8 outputs come back as float32 unless
    ``raw``."""
    if not isinstance(program, _trnsim.Program):
        program = load_program(program)
    options = _run_options(mode, rounding, seed, poison, detect_races, program.lnc, True,
                           max_instructions)
    arrays = {name: np.ascontiguousarray(value) for name, value in inputs.items()}
    run = _session(chip).run_program(program, arrays, list(outputs), not raw, options)
    if trace is not None:
        run.write_trace(os.fspath(trace))
    return dict(zip(outputs, run.outputs)), Report(run.report(), run.report_text(), trace)
