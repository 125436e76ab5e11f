"""A traced model saved as a compiled model file (``TracedModel.save``, .trnx) and read back
(``trnsim.load``) runs without the module: the outputs and simulated time of the traced model,
and ``trnsim graph run FILE.trnx`` runs the same file."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import trnsim

sys.path.insert(0, os.path.join(os.environ.get("TRN_SOURCE_DIR", "."), "scripts"))
import torch_reference_models as models  # noqa: E402

BUILD = os.environ.get("TRN_BUILD_DIR")
TRNSIM = os.path.join(BUILD, "tools", "trnsim", "trnsim") if BUILD else None


def test_a_saved_model_runs_as_the_traced_one(tmp_path):
    torch.manual_seed(21)
    module = models.Llama(layers=2, d=64, heads=8, kv_heads=2, ff=96)
    cos, sin = models.rotary_tables(16, 8)
    inputs = (torch.randn(1, 16, 64), cos, sin, models.causal_mask(16))
    traced = trnsim.trace(module, inputs, lnc=2)
    path = str(tmp_path / "llama.trnx")
    traced.save(path)
    loaded = trnsim.load(path)
    assert loaded.lnc == 2 and loaded.kernels == traced.kernels
    want = traced(*inputs)
    got = loaded(*inputs)
    assert torch.equal(got, want)
    assert loaded.last_report.time_us == traced.last_report.time_us
    assert [row["layer"] for row in loaded.layers] == ["layers.0", "layers.1", "norm"]
    with pytest.raises(trnsim.Error, match="no TRNXMODL magic"):
        (tmp_path / "bad.trnx").write_bytes(b"x" * 64)
        trnsim.load(str(tmp_path / "bad.trnx"))


@pytest.mark.skipif(TRNSIM is None or not os.path.exists(TRNSIM),
                    reason="TRN_BUILD_DIR names the build with the trnsim program")
def test_the_cli_runs_a_file_saved_from_python(tmp_path):
    module = torch.nn.Sequential(torch.nn.Linear(48, 160), torch.nn.ReLU(),
                                 torch.nn.Linear(160, 24))
    x = torch.randn(200, 48)
    traced = trnsim.trace(module, x)
    traced.save(str(tmp_path / "mlp.trnx"))
    np.save(tmp_path / "x.npy", x.numpy())
    done = subprocess.run([TRNSIM, "graph", "run", str(tmp_path / "mlp.trnx"), "--input",
                           f"input0={tmp_path / 'x.npy'}", "--output-dir", str(tmp_path / "out")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = list((tmp_path / "out").glob("*.npy"))
    assert len(outputs) == 1
    assert np.array_equal(np.load(outputs[0]), traced(x).numpy())
