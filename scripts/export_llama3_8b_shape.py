#!/usr/bin/python3
"""Exports a Llama-3-8B-shaped decoder (32 layers, hidden 4096, 32 query and 8 key/value heads,
MLP 14336; scripts/torch_reference_models.py's Llama) to ONNX without its weights, for the graph
compiler's scale benchmark (bench/llama3_8b_timing.py): the weights are graph inputs, which a
timing-only run does not need.

PyTorch (1.13) cannot export 8 billion parameters on this machine: ``export_params=False`` still
materialises them while tracing, and the meta device has no ONNX export. So one layer is exported
by ``torch.onnx.export`` (its parameters zero-stride views of one number each, distinct so the
exporter does not merge them) with the sequence length as a symbolic dimension ("seq", bound at
compile time with --dim seq=N), and the file is made by repeating that layer's nodes 32 times,
each copy's values and weights renamed "layers.i", between the graph inputs and the final norm.

Run: /usr/bin/python3 scripts/export_llama3_8b_shape.py [OUT.onnx] [LAYERS]
"""
import os
import sys
import tempfile

import onnx
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_reference_models as models  # noqa: E402

HIDDEN, HEADS, KV_HEADS, MLP = 4096, 32, 8, 14336


def export_one_layer(path):
    count = [0]

    def shell(*shape):
        count[0] += 1
        return nn.Parameter(torch.full((1,), float(count[0])).expand(*shape))

    module = models.Llama(1, HIDDEN, HEADS, KV_HEADS, MLP, make=shell).eval()
    tokens, head_dim = 8, HIDDEN // HEADS
    cos, sin = models.rotary_tables(tokens, head_dim)
    example = (torch.randn(1, tokens, HIDDEN), cos, sin, models.causal_mask(tokens))
    seq = {"x": {1: "seq"}, "cos": {0: "seq"}, "sin": {0: "seq"}, "mask": {0: "seq", 1: "seq"},
           "y": {1: "seq"}}
    with torch.no_grad():
        torch.onnx.export(module, example, path, opset_version=17, export_params=False,
                          input_names=["x", "cos", "sin", "mask"], output_names=["y"],
                          dynamic_axes=seq)


def stack(one_layer, layers):
    graph = one_layer.graph
    first = "/layers.0/"
    layer_nodes = [n for n in graph.node if n.name.startswith(first)]
    last = max(i for i, n in enumerate(graph.node) if n.name.startswith(first))
    # Nodes outside the layer: constants and shape computations the exporter placed before its
    # last node (shared by every copy), and the final norm after it.
    before = [n for n in graph.node[:last] if not n.name.startswith(first)]
    rest = [n for n in graph.node[last:] if not n.name.startswith(first)]
    layer_weights = [i for i in graph.input if i.name.startswith("layers.0.")]
    produced = {o for n in layer_nodes for o in n.output}
    # The value the layer hands on: the one of its outputs a node after it reads.
    handed_on = {i for n in rest for i in n.input} & produced
    assert len(handed_on) == 1, handed_on
    layer_output = handed_on.pop()

    def renamed(name, i, previous):
        if name == "x" and previous is not None:
            return previous
        if name in produced:
            return name.replace(first, f"/layers.{i}/", 1) if name.startswith(first) \
                else f"layers.{i}.{name}"
        if name.startswith("layers.0."):
            return f"layers.{i}." + name[len("layers.0."):]
        return name

    nodes, inputs, previous = list(before), [i for i in graph.input if not i.name.startswith("layers.0.")], None
    for i in range(layers):
        for node in layer_nodes:
            copy = onnx.NodeProto()
            copy.CopyFrom(node)
            copy.name = node.name.replace(first, f"/layers.{i}/", 1)
            copy.input[:] = [renamed(v, i, previous) for v in node.input]
            copy.output[:] = [renamed(v, i, previous) for v in node.output]
            nodes.append(copy)
        for weight in layer_weights:
            copy = onnx.ValueInfoProto()
            copy.CopyFrom(weight)
            copy.name = renamed(weight.name, i, previous)
            inputs.append(copy)
        previous = renamed(layer_output, i, previous)
    for node in rest:
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        copy.input[:] = [previous if v == layer_output else v for v in node.input]
        nodes.append(copy)
    out = onnx.helper.make_graph(nodes, f"llama3_8b_shape_{layers}_layers", inputs,
                                 list(graph.output), list(graph.initializer))
    model = onnx.helper.make_model(out, opset_imports=list(one_layer.opset_import),
                                   producer_name="scripts/export_llama3_8b_shape.py")
    model.ir_version = one_layer.ir_version
    return model


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else "llama3_8b_shape.onnx"
    layers = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "one_layer.onnx")
        export_one_layer(path)
        model = stack(onnx.load(path), layers)
    onnx.checker.check_model(model)
    onnx.save(model, target)
    print(f"{target}: {layers} layers, {len(model.graph.node)} nodes, "
          f"{len(model.graph.input) - 4} weight inputs")
