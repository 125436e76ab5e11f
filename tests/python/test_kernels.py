"""The reference kernel library from Python, and Python kernels against their C++ twins."""
import numpy as np

import trnsim
import trnsim.isa as nisa
import trnsim.kernels as tk
import trnsim.language as nl


def test_library_lists_its_kernels():
    names = tk.names()
    assert {"tensor_add", "rmsnorm", "softmax", "flash_attention"} <= set(names)
    assert tk.spmd("rmsnorm") and "RMSNorm" in tk.summary("rmsnorm")
    assert [s[0] for s in tk.default_inputs("tensor_add")] == ["a", "b"]


def test_reference_is_float64(rng):
    a = rng.standard_normal((4, 8))
    b = rng.standard_normal((4, 8))
    (out,) = tk.reference("tensor_add", [a, b])
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, a + b)


def test_check_runs_against_the_reference():
    result = tk.check("rmsnorm", shapes={"x": (256, 512), "w": (512,)})
    assert result.checked and result.passed
    assert result.report.time_us > 0
    assert result.comparisons[0]["failures"] == 0
    assert result.outputs[0].shape == (256, 512)


def test_python_port_of_tensor_add_is_the_cpp_kernel(rng):
    """The same instructions as src/kernels/elementwise.cpp: the same bits and the same time."""

    @trnsim.jit
    def tensor_add(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm, name="out")
        for r in range(0, a.shape[0], 128):
            rows = min(128, a.shape[0] - r)
            x = nl.ndarray((rows, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf, name="a_tile")
            y = nl.ndarray((rows, a.shape[1]), dtype=b.dtype, buffer=nl.sbuf, name="b_tile")
            nisa.dma_copy(x, a[nl.ds(r, rows)])
            nisa.dma_copy(y, b[nl.ds(r, rows)])
            nisa.tensor_tensor(x, x, y, op=nl.add)
            nisa.dma_copy(out[nl.ds(r, rows)], x)
        return out

    a = rng.standard_normal((300, 256), dtype=np.float32)
    b = rng.standard_normal((300, 256), dtype=np.float32)
    cpp = tk.check("tensor_add", inputs=[a, b], shapes={"a": a.shape, "b": b.shape})
    ours = trnsim.benchmark(tensor_add, a, b, mode="functional+timing")
    np.testing.assert_array_equal(ours.outputs[0], cpp.outputs[0].astype(np.float32))
    assert ours.instructions == cpp.report.instructions
    assert ours.total_ps == cpp.report.total_ps
