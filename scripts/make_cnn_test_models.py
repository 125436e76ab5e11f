#!/usr/bin/python3
"""Writes the one-operator convolution and pooling models of tests/graph/models/cnn/ with
Debian's python3-onnx (onnx.helper), for tests/graph/conv_test.cpp, which computes their float64
references itself from the weights and attributes in the files.

Run from anywhere: /usr/bin/python3 scripts/make_cnn_test_models.py. The models are committed;
rerun this script only to change them. Weights come from a fixed seed.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "graph", "models",
                   "cnn")
OPSET = 17
rng = np.random.default_rng(2019)


def weight(name, *shape, low=-0.5, high=0.5):
    return numpy_helper.from_array(rng.uniform(low, high, shape).astype(np.float32), name)


def save(name, nodes, x_shape, inits):
    """The graph x -> nodes -> y, with y's shape as ONNX's own shape inference gives it."""
    def make(y_shape):
        graph = helper.make_graph(
            nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], inits)
        model = helper.make_model(graph, producer_name="make_cnn_test_models.py",
                                  opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        return model
    inferred = onnx.shape_inference.infer_shapes(make(None), strict_mode=True)
    y = inferred.graph.output[0]
    model = make([d.dim_value for d in y.type.tensor_type.shape.dim])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name + ".onnx"))


def conv(name, x_shape, w_shape, bias=True, **attrs):
    inputs = ["x", "W"] + (["B"] if bias else [])
    inits = [weight("W", *w_shape)] + ([weight("B", w_shape[0])] if bias else [])
    save(name, [helper.make_node("Conv", inputs, ["y"], name=name, **attrs)], x_shape, inits)


def pool(name, op, x_shape, **attrs):
    save(name, [helper.make_node(op, ["x"], ["y"], name=name, **attrs)], x_shape, [])


def maxpool_indices():
    """A MaxPool whose Indices output is a graph output: not lowered (an error naming the node)."""
    node = helper.make_node("MaxPool", ["x"], ["y", "indices"], name="pool_with_indices",
                            kernel_shape=[2, 2])
    graph = helper.make_graph(
        [node], "maxpool_indices", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [1, 2, 3, 3])])
    model = helper.make_model(graph, producer_name="make_cnn_test_models.py",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, "maxpool_indices.onnx"))


def batch_norm(name, x_shape, after_conv):
    """A BatchNormalization after a Conv (folded into it) or on the input (lowered by itself)."""
    c = x_shape[1]
    nodes, inits = [], []
    source = "x"
    if after_conv:
        nodes.append(helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", pads=[1, 1, 1, 1]))
        inits += [weight("W", c, c, 3, 3), weight("B", c)]
        source = "c"
    nodes.append(helper.make_node("BatchNormalization", [source, "scale", "beta", "mean", "var"],
                                  ["y"], name=name, epsilon=1e-3))
    inits += [weight("scale", c, low=0.5, high=1.5), weight("beta", c), weight("mean", c),
              weight("var", c, low=0.2, high=2.0)]
    save(name, nodes, x_shape, inits)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    conv("conv3x3_stride2_pad1", [2, 5, 13, 11], [6, 5, 3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    conv("conv3x3_pad1_tiles", [1, 4, 30, 40], [7, 4, 3, 3], pads=[1, 1, 1, 1])
    conv("conv1x1_wide", [1, 130, 6, 5], [140, 130, 1, 1], bias=False)
    conv("conv7x7_stride2_pad3", [1, 3, 24, 20], [8, 3, 7, 7], strides=[2, 2], pads=[3, 3, 3, 3])
    conv("conv_dilated_asymmetric", [1, 4, 10, 12], [5, 4, 3, 2], dilations=[2, 1],
         strides=[1, 2], pads=[2, 0, 1, 1])
    conv("conv_grouped", [1, 6, 8, 8], [9, 2, 3, 3], group=3, pads=[0, 1, 0, 1])
    conv("conv_depthwise", [2, 4, 7, 7], [4, 1, 3, 3], group=4, pads=[1, 1, 1, 1])
    conv("conv_same_upper", [1, 3, 9, 10], [4, 3, 4, 4], strides=[2, 2], auto_pad="SAME_UPPER")
    conv("conv1d", [2, 3, 17], [4, 3, 5], pads=[2, 2])
    pool("maxpool3x3_stride2_pad1", "MaxPool", [2, 3, 11, 12], kernel_shape=[3, 3],
         strides=[2, 2], pads=[1, 1, 1, 1])
    pool("maxpool_ceil", "MaxPool", [1, 2, 10, 10], kernel_shape=[3, 3], strides=[2, 2],
         ceil_mode=1)
    pool("avgpool_pad_excluded", "AveragePool", [1, 3, 9, 9], kernel_shape=[3, 3],
         strides=[2, 2], pads=[1, 1, 1, 1])
    pool("avgpool_pad_included", "AveragePool", [1, 3, 9, 9], kernel_shape=[3, 3],
         strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)
    pool("avgpool_ceil", "AveragePool", [1, 2, 10, 10], kernel_shape=[2, 2], strides=[3, 3],
         ceil_mode=1)
    pool("global_avgpool", "GlobalAveragePool", [2, 130, 5, 3])
    pool("global_maxpool", "GlobalMaxPool", [1, 3, 4, 4])
    batch_norm("batchnorm_after_conv", [1, 4, 6, 6], after_conv=True)
    batch_norm("batchnorm_alone", [2, 3, 5, 4], after_conv=False)
    maxpool_indices()
