"""trnsim.kernels: the reference kernel library (matmuls, norms, softmax, attention, MLP, ...).

Each kernel has default input shapes, a float64 reference and a tolerance::

    import trnsim.kernels as tk
    tk.names()                                   # every kernel
    result = tk.check("rmsnorm")                 # run at its default shapes, compared to float64
    result.passed, result.report.time_us, result.mfu
    tk.reference("softmax", [x])                 # the float64 reference on your arrays
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
          mode="functional+timing", seed=0, check_numerics=True, auto_cast="none"):
    """Runs reference kernel ``name`` (on seeded random inputs, or ``inputs``: numpy arrays,
    one per input, rounded to its dtype) and compares its outputs with the float64 reference."""
    from . import _run_options, _session
    session = _session(chip)
    specs = _specs(name, shapes, dtype)
    options = _run_options(mode, None, seed, None, None, lnc, None, None)
    figures = _trnsim.kernels.check(session, name, specs, options, check_numerics, inputs,
                                    auto_cast)
    return CheckResult(figures, figures["report_text"])


def reference(name, arrays):
    """The float64 outputs of kernel ``name``'s CPU reference on ``arrays``."""
    return _trnsim.kernels.reference(name, list(arrays))
