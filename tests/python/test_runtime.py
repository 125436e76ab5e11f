"""Programs and reports from Python: .tasm files on numpy arrays, saved launches, benchmark
reports and traces, timing-only runs, and determinism."""
import json
import math
import os

import numpy as np
import pytest

import trnsim
import trnsim.language as nl

SOURCE = os.environ.get("TRN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(SOURCE, "examples", "matmul_gelu.tasm")


def bf16(x):
    return trnsim.decode(trnsim.encode(x, nl.bfloat16), nl.bfloat16)


def test_tasm_program_on_numpy_arrays(rng):
    lhsT = rng.standard_normal((128, 128)).astype(np.float32)
    rhs = rng.standard_normal((128, 512)).astype(np.float32)
    program = trnsim.load_program(EXAMPLE)
    assert [t[0] for t in program.tensors] == ["lhsT", "rhs", "c"]
    outputs, report = trnsim.run_program(program, {"lhsT": lhsT, "rhs": rhs}, ["c"])
    # bf16 operands (rounded on load), exact products, fp32 sums, GELU in double rounded once.
    z = bf16(lhsT).astype(np.float64).T @ bf16(rhs).astype(np.float64)
    erf = np.vectorize(math.erf)
    expected = 0.5 * z * (1.0 + erf(z / math.sqrt(2.0)))
    np.testing.assert_allclose(outputs["c"], expected, rtol=1e-5, atol=1e-4)
    assert report.time_us > 0 and report.instructions == 5
    assert report.engines["pe"]["instructions"] == 1


def test_missing_program_file_is_an_error():
    with pytest.raises(trnsim.Error, match="no_such.tasm"):
        trnsim.load_program("no_such.tasm")


@trnsim.jit
def scale(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for r in nl.affine_range(x.shape[0] // 128):
        rows = nl.ds(r * 128, 128)
        nl.store(out[rows, :], nl.multiply(nl.load(x[rows, :]), 0.5))
    return out


def test_saved_launch_runs_as_a_program(tmp_path, rng):
    x = rng.standard_normal((256, 64), dtype=np.float32)
    launch = trnsim.compile(scale, x)
    assert launch.summary()["instructions"] == launch.instructions() > 0
    assert launch.summary()["spills"] == launch.summary()["spill_bytes"] == 0
    assert "tensor_scalar" in launch.program_text()
    path = tmp_path / "scale.tprog"
    launch.save(str(path))
    outputs, _ = trnsim.run_program(path, {"x": x}, ["out0"])
    np.testing.assert_array_equal(outputs["out0"], x * np.float32(0.5))


def test_dump_after_a_pass():
    launch = trnsim.compile(scale, trnsim.TensorSpec((128, 32)), dump_after="allocate")
    assert "allocate" in launch.dump or "sbuf" in launch.dump
    assert "test_runtime.py" in launch.dump


def test_benchmark_report_and_trace(tmp_path, rng):
    x = rng.standard_normal((1024, 512), dtype=np.float32)
    trace = tmp_path / "t.json"
    page = tmp_path / "r.html"
    report = trnsim.benchmark(scale, x, trace=str(trace), report=str(page))
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert report.mode == "timing-only" and report.timed
    assert report.time_us > 1
    assert report.dma["bytes"] == 2 * x.nbytes
    # A load, a multiply and a store per tile: the DMA bounds it (its bandwidth or its latency).
    assert "DMA" in report.bound_by and report.verdict["evidence"]
    assert "remedy" in report.explain()
    assert "dve" in report.engines and 0 < report.engines["dve"]["busy_fraction"] < 1
    events = json.loads(trace.read_text())["traceEvents"]
    slices = [e for e in events if e.get("ph") == "X"]
    assert len(slices) >= report.instructions
    assert str(report).startswith(report.chip) or "dve" in str(report)


def test_timing_is_the_same_with_and_without_data(rng):
    x = rng.standard_normal((512, 256), dtype=np.float32)
    with_data = trnsim.benchmark(scale, x, mode="functional+timing")
    without = trnsim.benchmark(scale, trnsim.TensorSpec((512, 256)))
    assert with_data.total_ps == without.total_ps


def test_stochastic_rounding_is_seeded(rng):
    @trnsim.jit
    def to_bf16(x):
        out = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
        nl.store(out, nl.copy(nl.load(x), dtype=nl.bfloat16))
        return out

    x = rng.standard_normal((128, 256), dtype=np.float32)
    a = trnsim.simulate(to_bf16, x, rounding="stochastic", seed=7)
    b = trnsim.simulate(to_bf16, x, rounding="stochastic", seed=7)
    c = trnsim.simulate(to_bf16, x, rounding="stochastic", seed=8)
    nearest = trnsim.simulate(to_bf16, x)
    np.testing.assert_array_equal(a, b)
    assert np.any(a != c)
    np.testing.assert_array_equal(nearest, bf16(x))


def test_timing_only_needs_no_data_and_data_modes_need_it():
    with pytest.raises(ValueError, match="timing-only"):
        trnsim.simulate(scale, trnsim.TensorSpec((128, 8)))


def test_chip_choice_changes_the_time(rng):
    x = trnsim.TensorSpec((1024, 1024))
    trn1 = trnsim.benchmark(scale, x, chip="trn1").time_us
    trn2 = trnsim.benchmark(scale, x, chip="trn2").time_us
    assert trn1 != trn2
    with pytest.raises(trnsim.Error, match="trn9"):
        trnsim.benchmark(scale, x, chip="trn9")


RACY = """\
.tensor x input fp32 [128, 4]
.tensor y output fp32 [128, 4]
sp:  dma_copy dst=sbuf[0:128]:fp32[[1,4]] src=hbm:x:fp32[[4,128],[1,4]] queue=0 signal(s0+=1)
act: dma_copy dst=sbuf[0:128]:fp32[[1,4]] src=hbm:x:fp32[[4,128],[1,4]] queue=1 signal(s0+=1)
sp:  dma_copy dst=hbm:y:fp32[[4,128],[1,4]] src=sbuf[0:128]:fp32[[1,4]] queue=0 wait(s0>=2)
"""


def test_a_race_raises_race_error(tmp_path):
    path = tmp_path / "racy.tasm"
    path.write_text(RACY)
    x = np.ones((128, 4), np.float32)
    with pytest.raises(trnsim.RaceError) as error:
        trnsim.run_program(path, {"x": x}, ["y"])
    assert error.value.code == "race"
    assert isinstance(error.value, trnsim.Error)
    outputs, _ = trnsim.run_program(path, {"x": x}, ["y"], detect_races=False)
    np.testing.assert_array_equal(outputs["y"], x)
