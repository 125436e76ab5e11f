"""The package works after `cmake --install`, outside the build tree: installed into a temporary
prefix, imported from there by a fresh interpreter, and a kernel simulated."""
import glob
import os
import subprocess
import sys

import pytest

BUILD = os.environ.get("TRN_BUILD_DIR")

PROGRAM = """
import numpy as np, trnsim, trnsim.language as nl
assert trnsim.__file__.startswith(PREFIX), trnsim.__file__
@trnsim.jit
def double(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.multiply(nl.load(x), 2.0))
    return out
x = np.arange(128 * 8, dtype=np.float32).reshape(128, 8)
assert np.array_equal(double(x), 2 * x)
print("installed ok")
"""


@pytest.mark.skipif(BUILD is None, reason="TRN_BUILD_DIR names the build to install (ctest sets it)")
def test_installed_package_runs_a_kernel(tmp_path):
    prefix = str(tmp_path / "prefix")
    subprocess.run(["cmake", "--install", BUILD, "--prefix", prefix], check=True,
                   stdout=subprocess.DEVNULL)
    # TRN_PYTHON_INSTALL_DIR: lib/python3.X/dist-packages unless the build chose another.
    found = glob.glob(os.path.join(prefix, "**", "trnsim", "__init__.py"), recursive=True)
    assert len(found) == 1, found
    site = os.path.dirname(os.path.dirname(found[0]))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = site
    result = subprocess.run([sys.executable, "-c", f"PREFIX = {prefix!r}\n" + PROGRAM],
                            env=env, cwd=str(tmp_path), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "installed ok" in result.stdout
