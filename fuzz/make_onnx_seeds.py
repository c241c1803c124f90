#!/usr/bin/python3
"""Writes the convolutional and recurrent seeds of the ONNX fuzz corpus (fuzz/corpus/onnx/).

Run with Debian's /usr/bin/python3 (python3-onnx): small models that exercise Conv (stride,
padding, groups, bias), MaxPool, Clip, depthwise Conv, HardSwish, GlobalAveragePool, Pad,
AveragePool and BatchNormalization, so that the fuzzer mutates convolutional attributes, and a
bidirectional LSTM (peepholes, clip) feeding a GRU (linear_before_reset), for the recurrent ones,
and stepped Slices (a flip, every other row), Trilu, TopK, PRelu, Max and Round.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def weight(name, shape, seed):
    return numpy_helper.from_array(
        np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32), name)


def conv_pool():
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1],
                         group=2, kernel_shape=[3, 3]),
        helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["m", "lo", "hi"], ["y"]),
    ]
    inits = [weight("w", [4, 1, 3, 3], 1), weight("b", [4], 2),
             numpy_helper.from_array(np.array(0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6, np.float32), "hi")]
    return nodes, inits, [1, 2, 9, 9], [1, 4, 3, 3]


def depthwise_gap():
    nodes = [
        helper.make_node("Pad", ["x", "pads"], ["p"], mode="constant"),
        helper.make_node("Conv", ["p", "w"], ["c"], group=3, kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c", "g", "bb", "mu", "var"], ["n"]),
        helper.make_node("HardSwish", ["n"], ["h"]),
        helper.make_node("AveragePool", ["h"], ["a"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["a"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads"),
             weight("w", [3, 1, 3, 3], 3), weight("g", [3], 4), weight("bb", [3], 5),
             weight("mu", [3], 6), numpy_helper.from_array(np.ones(3, np.float32), "var")]
    return nodes, inits, [1, 3, 8, 8], [1, 3, 1, 1]


def recurrent():
    hidden = 3
    nodes = [
        helper.make_node("LSTM", ["x", "w", "r", "b", "", "", "", "p"], ["ly", "lh"],
                         hidden_size=hidden, direction="bidirectional", clip=5.0),
        helper.make_node("Reshape", ["ly", "shape"], ["s"]),
        helper.make_node("GRU", ["s", "gw", "gr", "gb"], ["", "y2"], hidden_size=hidden,
                         linear_before_reset=1),
        helper.make_node("Add", ["lh", "y2"], ["y"]),
    ]
    inits = [weight("w", [2, 4 * hidden, 4], 7), weight("r", [2, 4 * hidden, hidden], 8),
             weight("b", [2, 8 * hidden], 9), weight("p", [2, 3 * hidden], 10),
             numpy_helper.from_array(np.array([5, 2, 2 * hidden], np.int64), "shape"),
             weight("gw", [1, 3 * hidden, 2 * hidden], 11),
             weight("gr", [1, 3 * hidden, hidden], 12), weight("gb", [1, 6 * hidden], 13)]
    return nodes, inits, [5, 2, 4], [2, 2, 3]


def slices_topk():
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    nodes = [
        helper.make_node("Slice", ["x", "fs", "fe", "fa", "ft"], ["f"]),  # torch.flip(x, [1])
        helper.make_node("Slice", ["f", "ss", "se", "sa", "st"], ["s"]),  # f[::2]
        helper.make_node("Trilu", ["s", "k"], ["t"]),
        helper.make_node("TopK", ["t", "kk"], ["v", "i"], axis=1),
        helper.make_node("PRelu", ["v", "slope"], ["pr"]),
        helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
        helper.make_node("Max", ["pr", "fi"], ["m"]),
        helper.make_node("Round", ["m"], ["y"]),
    ]
    inits = [i64("fs", [-1]), i64("fe", [-2**63]), i64("fa", [1]), i64("ft", [-1]),
             i64("ss", [0]), i64("se", [4]), i64("sa", [0]), i64("st", [2]), i64("k", 1),
             i64("kk", [3]), weight("slope", [3], 14)]
    return nodes, inits, [4, 6], [2, 3]


def main(outdir):
    seeds = (("conv_pool", conv_pool), ("depthwise_gap", depthwise_gap), ("recurrent", recurrent),
             ("slices_topk", slices_topk))
    for name, build in seeds:
        nodes, inits, shape, out = build()
        graph = helper.make_graph(
            nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
        model.ir_version = 8
        with open(os.path.join(outdir, f"{name}.onnx"), "wb") as f:
            f.write(model.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "onnx"))
