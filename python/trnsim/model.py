"""Whole PyTorch models on a simulated chip, the way ``torch_neuronx.trace`` takes them.

``trnsim.trace(module, example_inputs)`` exports the module through ONNX (``torch.onnx.export``,
opset 17: the same interchange ``trnsim compile`` reads), compiles it with the graph compiler for
a logical core of the chip (docs/compiler.md: one core, or two with ``lnc=2``) and returns a TracedModel: call it with torch tensors or
numpy arrays of the example shapes and it runs on the simulated chip, returning what the module
returns (torch tensors for torch inputs). Each call's timing is in ``last_report``.
"""
import os
import tempfile

import numpy as np

from . import _trnsim


class TracedModel:
    """A module compiled for a simulated chip (trnsim.trace's result)."""

    def __init__(self, session, model, name, options):
        self._session = session
        self._model = model
        self.name = name
        self._options = options
        self.last_report = None
        self._last_run = None

    @property
    def nodes(self):
        """[(node name, how it was lowered)] in graph order: the 'lines' of the model kernel."""
        return self._model.nodes

    @property
    def layers(self):
        """Per layer of the last timed call (layers as the node names' module paths give them,
        "layers.3", "h.0"): dicts of nodes, instructions, first_us, last_us, engine_us, dma_us."""
        if self._last_run is None or self._options["mode"] == "functional-only":
            raise ValueError("layers needs a call in a timed mode first")
        return self._model.layers(self._last_run)

    @property
    def instructions(self):
        """Instructions one call launches (every kernel of the model)."""
        return self._model.instructions

    @property
    def kernels(self):
        """[(name, distinct kernel index, instructions)] in launch order: one entry for a model
        compiled as one kernel; one per layer when layers repeat (each distinct one compiled
        once, ``partition`` in trace)."""
        return self._model.kernels

    @property
    def lnc(self):
        """Cores of the logical core each kernel is launched over."""
        return self._model.lnc

    @property
    def tp(self):
        """Tensor-parallel ranks the model is sharded over (1: not sharded)."""
        return self._model.tp

    @property
    def collectives(self):
        """The last call's collectives, a dict each (op, bytes, us): a sharded model's
        all-reduces and all-gathers."""
        return self._last_run.collectives

    def save(self, path):
        """Writes the compiled model (every kernel, the launch order, the weights) to ``path``, a
        .trnx file that ``trnsim.load`` and ``trnsim graph run`` run without the module."""
        self._model.save(self._session.chip, path)

    def __call__(self, *inputs):
        from . import Report  # the package's report type; imported late to avoid a cycle
        torch_in = any(type(x).__module__.startswith("torch") for x in inputs)
        arrays = [_host_array(x) for x in inputs]
        run = self._session.run_model(self._model, arrays, self._options)
        self.last_report = Report(run.report(), run.report_text(), None, run.outputs)
        self._last_run = run
        outputs = run.outputs
        if torch_in:
            import torch
            outputs = [torch.from_numpy(o) for o in outputs]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def __repr__(self):
        return f"TracedModel({self.name!r}, {len(self.nodes)} nodes, {self.instructions} instructions)"


def _host_array(x):
    """Floating-point inputs as float32 (the model's type), integer ones (token ids) as they are."""
    array = x.detach().cpu().numpy() if type(x).__module__.startswith("torch") else np.asarray(x)
    if array.dtype.kind == "f":
        array = array.astype(np.float32, copy=False)
    return np.ascontiguousarray(array)


def trace(module, example_inputs, chip="trn2", mode="functional+timing", seed=0,
          rounding="nearest_even", auto_cast="none", partition="auto", lnc=1, auto_cast_type="bf16",
          tp=1, system="trn2.48xlarge"):
    """Compiles ``module`` (a torch.nn.Module, put in eval mode) for ``example_inputs`` (a tensor
    or a tuple of them) onto a logical core of ``chip``; returns a TracedModel. ``lnc=2`` launches
    each kernel over the two cores of a logical core, each computing its share of every node. ``auto_cast="matmult"``
    computes the matrix products of fp32 tensors in bf16 with fp32 accumulation, as neuronx-cc
    does by default (``--auto-cast matmult``); ``auto_cast_type`` chooses fp16, tf32 or fp8_e4m3
    instead (``--auto-cast-type``; ``auto_cast="all"`` takes bf16 only). ``partition`` splits
    the model into kernels:
    "auto" (one per layer when layers repeat, each distinct layer compiled once), "one" or
    "per-layer". ``tp=N`` shards the model over N chips of ``system`` (tensor parallelism by
    Megatron's rules, the all-reduces and all-gathers inserted; docs/compiler.md), each chip
    running its share on a logical core (with ``lnc=2``, split over its two cores). Operators the graph compiler cannot lower raise trnsim.Error naming the node and
    its op type."""
    import torch
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    module.eval()
    name = type(module).__name__
    session = _trnsim.Session(chip) if isinstance(chip, str) else chip
    with tempfile.TemporaryDirectory(prefix="trnsim-trace-") as directory:
        path = os.path.join(directory, f"{name}.onnx")
        with torch.no_grad():
            torch.onnx.export(module, tuple(example_inputs), path, opset_version=17,
                              input_names=[f"input{i}" for i in range(len(example_inputs))])
        model = session.compile_model(path, {}, auto_cast, partition, lnc, auto_cast_type, tp,
                                      system)
    options = {"mode": mode, "seed": seed, "rounding": rounding, "record": mode != "functional-only"}
    return TracedModel(session, model, name, options)


def load(path, mode="functional+timing", seed=0, rounding="nearest_even"):
    """A model saved by ``TracedModel.save`` or ``trnsim compile -o FILE.trnx``, ready to call on
    the chip it was compiled for (a TracedModel named after the file)."""
    chip, model = _trnsim.load_model(path)
    options = {"mode": mode, "seed": seed, "rounding": rounding, "record": mode != "functional-only"}
    name = os.path.splitext(os.path.basename(path))[0]
    return TracedModel(_trnsim.Session(chip), model, name, options)
