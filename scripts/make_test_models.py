#!/usr/bin/python3
"""Writes the small ONNX models of tests/graph/models/ with Debian's python3-onnx (onnx.helper).

Run from anywhere: /usr/bin/python3 scripts/make_test_models.py. The models are committed; rerun
this script only to change them. Weights come from a fixed seed, so the output is reproducible.
The error models (unknown_op, matmul_mismatch, missing_input) are deliberately invalid and are
not run through onnx.checker.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "graph", "models")
OPSET = 17
rng = np.random.default_rng(19)


def weight(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def save(graph, name, check=True):
    model = helper.make_model(graph, producer_name="make_test_models.py",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name))


def mlp():
    """x[batch, 16] -> Gemm(transB) 32 -> Relu -> MatMul 8 -> Add bias. 808 parameters."""
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["a"], name="relu"),
        helper.make_node("MatMul", ["a", "w2"], ["m"], name="fc2"),
        helper.make_node("Add", ["m", "b2"], ["y"], name="bias2"),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])],
        [weight("w1", 32, 16), weight("b1", 32), weight("w2", 32, 8), weight("b2", 8)])
    save(graph, "mlp.onnx")


def attention():
    """Self-attention over x[2, 8, 32] with 4 heads of 8; the output reshape's target is computed
    in the graph (Shape -> Gather -> Unsqueeze -> Concat), as PyTorch exports it."""
    nodes = []
    for p in ("q", "k", "v"):
        nodes += [
            helper.make_node("MatMul", ["x", "w" + p], [p + "_proj"], name=p + "_proj"),
            helper.make_node("Reshape", [p + "_proj", "heads_shape"], [p + "_heads"],
                             name=p + "_split_heads"),
        ]
    nodes += [
        helper.make_node("Transpose", ["q_heads"], ["q_t"], name="q_t", perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k_heads"], ["k_t"], name="k_t", perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v_heads"], ["v_t"], name="v_t", perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["q_t", "k_t"], ["scores"], name="scores"),
        helper.make_node("Div", ["scores", "scale"], ["scaled"], name="scale"),
        helper.make_node("Softmax", ["scaled"], ["probs"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["probs", "v_t"], ["context"], name="context"),
        helper.make_node("Transpose", ["context"], ["context_t"], name="merge_t",
                         perm=[0, 2, 1, 3]),
        helper.make_node("Shape", ["x"], ["x_shape"], name="x_shape"),
        helper.make_node("Gather", ["x_shape", "zero"], ["batch"], name="batch", axis=0),
        helper.make_node("Gather", ["x_shape", "one"], ["seq"], name="seq", axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"], name="batch1"),
        helper.make_node("Unsqueeze", ["seq", "axes0"], ["seq1"], name="seq1"),
        helper.make_node("Concat", ["batch1", "seq1", "minus_one"], ["merged_shape"],
                         name="merged_shape", axis=0),
        helper.make_node("Reshape", ["context_t", "merged_shape"], ["merged"], name="merge_heads"),
        helper.make_node("MatMul", ["merged", "wo"], ["y"], name="out_proj"),
    ]
    inits = [weight("wq", 32, 32), weight("wk", 32, 32), weight("wv", 32, 32),
             weight("wo", 32, 32), ints("heads_shape", [2, 8, 4, 8]),
             numpy_helper.from_array(np.array(np.sqrt(8.0), dtype=np.float32), "scale"),
             ints("zero", 0), ints("one", 1), ints("axes0", [0]), ints("minus_one", [-1])]
    graph = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, 32])], inits)
    save(graph, "attention.onnx")


def conv_bn_relu():
    """x[1, 3, 16, 16] -> Conv 3x3 stride 2 pad 1 -> BatchNorm -> Relu -> MaxPool 2 ->
    GlobalAveragePool -> Flatten."""
    nodes = [
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["c"], name="conv",
                         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                         ["n"], name="bn", epsilon=1e-5),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["y"], name="flatten", axis=1),
    ]
    var = numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "bn_var")
    graph = helper.make_graph(
        nodes, "conv_bn_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        [weight("conv_w", 8, 3, 3, 3), weight("conv_b", 8), weight("bn_scale", 8),
         weight("bn_bias", 8), weight("bn_mean", 8), var])
    save(graph, "conv_bn_relu.onnx")


def layer_norm():
    """LayerNormalization over the last axis of x[4, 10, 64], then a ReduceMean over it."""
    nodes = [
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], name="ln",
                         axis=-1, epsilon=1e-5),
        helper.make_node("ReduceMean", ["y"], ["mean"], name="mean", axes=[-1], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "layer_norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 10, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 10, 64]),
         helper.make_tensor_value_info("mean", TensorProto.FLOAT, [4, 10])],
        [weight("gamma", 64), weight("beta", 64)])
    save(graph, "layer_norm.onnx")


def errors():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    save(helper.make_graph([helper.make_node("FancyOp", ["x"], ["y"], name="fancy")],
                           "unknown_op", [x], [y]), "unknown_op.onnx", check=False)
    save(helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm_bad")],
                           "matmul_mismatch", [x], [y], [weight("w", 4, 5)]),
         "matmul_mismatch.onnx", check=False)
    save(helper.make_graph([helper.make_node("Add", ["x", "ghost"], ["y"], name="add_ghost")],
                           "missing_input", [x], [y]), "missing_input.onnx", check=False)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    mlp()
    attention()
    conv_bn_relu()
    layer_norm()
    errors()
