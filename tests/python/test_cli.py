"""Kernels written in Python on the command line: `trnsim kernels bench|compile --plugin f.py`
runs the file in an interpreter inside trnsim, and its registered kernels get the float64 check,
the report, --json, --dump-after and --trace like the library's own."""
import json
import os
import subprocess

import numpy as np
import pytest

import trnsim
import trnsim.kernels as tk
import trnsim.language as nl

BUILD = os.environ.get("TRN_BUILD_DIR")
TRNSIM = os.path.join(BUILD, "tools", "trnsim", "trnsim") if BUILD else None

KERNELS = '''
import numpy as np
import trnsim
import trnsim.kernels as tk
import trnsim.language as nl

def reference(x, w):
    return np.maximum(x @ w, 0.0)

@tk.register(inputs={"x": trnsim.TensorSpec((128, 128)), "w": trnsim.TensorSpec((128, 256))},
             reference=reference, tolerance=(1e-4, 1e-4), summary="relu(x @ w)",
             flops=lambda x, w: 2.0 * x[0] * x[1] * w[1])
@trnsim.jit
def relu_matmul(x, w):
    out = nl.ndarray((x.shape[0], w.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    product = nl.matmul(nl.load(x), nl.load(w))
    nl.store(out, nl.relu(product))
    return out
'''

pytestmark = pytest.mark.skipif(TRNSIM is None or not os.path.exists(TRNSIM),
                                reason="TRN_BUILD_DIR names the build with the trnsim program")


def trnsim_cli(*args):
    return subprocess.run([TRNSIM, *args], capture_output=True, text=True)


@pytest.fixture
def kernel_file(tmp_path):
    path = tmp_path / "my_kernels.py"
    path.write_text(KERNELS)
    return str(path)


def test_bench_checks_a_python_kernel_against_its_reference(kernel_file):
    result = trnsim_cli("kernels", "bench", "relu_matmul", "--plugin", kernel_file)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "relu_matmul" in result.stdout
    assert "0 of 32768" in result.stdout  # elements outside the tolerance


def test_bench_json_and_trace(kernel_file, tmp_path):
    trace = tmp_path / "t.json"
    result = trnsim_cli("kernels", "bench", "relu_matmul", "--plugin", kernel_file, "--json",
                        "--trace", str(trace), "--shape", "x=128x128", "--shape", "w=128x512")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["result"]["numerics"]["pass"] is True
    assert doc["result"]["useful_flops"] == 2 * 128 * 128 * 512
    events = json.loads(trace.read_text())["traceEvents"]
    assert any("my_kernels.py" in json.dumps(e.get("args", {})) for e in events)


def test_compile_dumps_the_ir_with_python_lines(kernel_file):
    result = trnsim_cli("kernels", "compile", "relu_matmul", "--plugin", kernel_file,
                        "--dump-after", "trace")
    assert result.returncode == 0, result.stderr
    assert "my_kernels.py:16" in result.stdout  # the nl.matmul line


def test_a_failing_kernel_file_is_an_input_error(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('broken on purpose')\n")
    result = trnsim_cli("kernels", "list", "--plugin", str(bad))
    assert result.returncode == 3
    assert "bad.py" in result.stderr and "broken on purpose" in result.stderr
    missing = trnsim_cli("kernels", "list", "--plugin", str(tmp_path / "none.py"))
    assert missing.returncode == 3 and "none.py" in missing.stderr


def test_registered_kernels_check_from_python(rng):
    def reference(a):
        return a * 3.0

    @tk.register(inputs={"a": trnsim.TensorSpec((128, 64))}, reference=reference,
                 name="triple_for_test")
    @trnsim.jit
    def triple(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.multiply(nl.load(a), 3.0))
        return out

    assert "triple_for_test" in tk.names()
    result = tk.check("triple_for_test")
    assert result.passed and result.checked
    a = rng.standard_normal((128, 64), dtype=np.float32)
    np.testing.assert_array_equal(triple(a), a * np.float32(3.0))
    with pytest.raises(trnsim.Error, match="registered already"):
        tk.register(triple, inputs={"a": trnsim.TensorSpec((4, 4))}, reference=reference,
                    name="triple_for_test")
