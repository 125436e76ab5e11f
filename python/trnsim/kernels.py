"""trnsim.kernels: the reference kernel library (matmuls, norms, softmax, attention, MLP, ...).

Each kernel has default input shapes, a float64 reference and a tolerance::

    import trnsim.kernels as tk
    tk.names()                                   # every kernel
    result = tk.check("rmsnorm")                 # run at its default shapes, compared to float64
    result.passed, result.report.time_us, result.mfu
    tk.reference("softmax", [x])                 # the float64 reference on your arrays

Your own kernels join the library with ``register`` (then ``check`` and the command line's
``trnsim kernels bench NAME --plugin file.py`` treat them as the library's own).
"""
from . import _trnsim
from ._trnsim.kernels import default_inputs, flops, names, spmd, summary, tolerance  # noqa: F401


class CheckResult:
    """A reference kernel's run against its float64 reference (trnsim.kernels.check)."""

    def __init__(self, figures, text):
        from . import Report  # the package imports this module first
        self.report = Report(figures["report"], text)
        self.mfu = figures["mfu"]
        self.checked = figures["checked"]
        self.passed = figures["passed"]
        self.tolerance = figures["tolerance"]
        self.comparisons = figures["comparisons"]
        self.outputs = figures["outputs"]
        self.inputs = figures["inputs"]

    def __repr__(self):
        return (f"CheckResult(passed={self.passed}, time_us={self.report.time_us:.3f}, "
                f"mfu={self.mfu:.3f})")


def _specs(name, shapes, dtype):
    """The kernel's inputs at its defaults, with `shapes` ({input: shape}) and `dtype` applied."""
    from . import _dtype_of
    specs = []
    for input_name, shape, default_dtype in default_inputs(name):
        if shapes and input_name in shapes:
            shape = tuple(shapes[input_name])
        specs.append((input_name, shape, _dtype_of(dtype) if dtype is not None else default_dtype))
    if shapes:
        unknown = set(shapes) - {s[0] for s in specs}
        if unknown:
            raise ValueError(f"kernel '{name}' has no input {sorted(unknown)}; its inputs are "
                             f"{[s[0] for s in specs]}")
    return specs


def check(name, inputs=None, shapes=None, dtype=None, chip="trn2", lnc=1,
          mode="functional+timing", seed=0, check_numerics=True, auto_cast="none",
          auto_cast_type="bf16"):
    """Runs reference kernel ``name`` (on seeded random inputs, or ``inputs``: numpy arrays,
    one per input, rounded to its dtype) and compares its outputs with the float64 reference.
    ``auto_cast="matmult"`` computes its fp32 products in ``auto_cast_type`` (bf16, fp16, tf32 or
    fp8_e4m3), and the reference reads those operands rounded so."""
    from . import _run_options, _session
    session = _session(chip)
    specs = _specs(name, shapes, dtype)
    options = _run_options(mode, None, seed, None, None, lnc, None, None)
    figures = _trnsim.kernels.check(session, name, specs, options, check_numerics, inputs,
                                    auto_cast, auto_cast_type)
    return CheckResult(figures, figures["report_text"])


def register(fn=None, *, inputs, reference, tolerance=(1e-5, 1e-5), summary="", spmd=False,
             flops=None, name=None):
    """Adds a kernel to the library: ``inputs`` are its default inputs, ``{name: TensorSpec}``
    (or ``(name, shape, dtype)`` tuples), ``reference(*arrays)`` computes its outputs in float64
    with numpy, ``tolerance`` is (atol, rtol) for |out - ref| <= atol + rtol * |ref|,
    ``flops(*shapes)`` its useful FLOPs (for MFU), ``spmd`` that it splits its work over
    nl.program_id(0) so an LNC=2 launch works. Usable as a decorator."""
    from . import Kernel, TensorSpec, _dtype_of

    def specs():
        items = inputs.items() if isinstance(inputs, dict) else [(i[0], i[1:]) for i in inputs]
        out = []
        for input_name, spec in items:
            if isinstance(spec, TensorSpec):
                out.append((input_name, spec.shape, spec.dtype))
            else:
                shape, dtype = spec if len(spec) == 2 else (spec[0], "float32")
                out.append((input_name, tuple(shape), _dtype_of(dtype)))
        return out

    def add(f):
        function = f.fn if isinstance(f, Kernel) else f
        _trnsim.kernels.register(function, specs(), reference, tuple(tolerance), summary, spmd,
                                 flops, name or function.__name__)
        return f

    return add if fn is None else add(fn)


def reference(name, arrays):
    """The float64 outputs of kernel ``name``'s CPU reference on ``arrays``."""
    return _trnsim.kernels.reference(name, list(arrays))
