#!/usr/bin/env python3
"""Writes the models bench/ort/drift.js was first run on into DIR: the ort
backend's timing layouts for a few operators (ort_model.h), and a probe.

  python3 bench/ort/drift_models.py DIR

  probe.onnx     one Identity on a 1x512 float: the run-overhead probe
  matmul_a.onnx  48 chained 1x512 . 512x512 MatMuls over 8 weight sets (seed 0)
  matmul_b.onnx  the same layout, other weights (seed 1): a second session of the same kernel
  relu.onnx      64 chained Relus on 64x1024
  conv.onnx      8 chained 3x3 convolutions, 64 channels, 28x28
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(path, nodes, initializers, inp, out):
    graph = helper.make_graph(nodes, os.path.basename(path), [inp], [out], initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def value(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def chain(op, count, weights=()):
    nodes, prev = [], "x"
    for k in range(count):
        inputs = [prev] + ([weights[k % len(weights)]] if weights else [])
        nodes.append(helper.make_node(op, inputs, [f"y{k}"], **({"pads": [1, 1, 1, 1]} if op == "Conv" else {})))
        prev = f"y{k}"
    return nodes, prev


def main(out):
    os.makedirs(out, exist_ok=True)
    save(os.path.join(out, "probe.onnx"), [helper.make_node("Identity", ["x"], ["y"])], [], value("x", [1, 512]),
         value("y", [1, 512]))
    for name, seed in (("matmul_a", 0), ("matmul_b", 1)):
        rng = np.random.default_rng(seed)
        # Scaled so that the chain's values stay finite.
        weights = [numpy_helper.from_array((rng.standard_normal((512, 512)) / np.sqrt(512)).astype(np.float32), f"w{i}")
                   for i in range(8)]
        nodes, last = chain("MatMul", 48, [w.name for w in weights])
        save(os.path.join(out, f"{name}.onnx"), nodes, weights, value("x", [1, 512]), value(last, [1, 512]))
    nodes, last = chain("Relu", 64)
    save(os.path.join(out, "relu.onnx"), nodes, [], value("x", [64, 1024]), value(last, [64, 1024]))
    rng = np.random.default_rng(3)
    weight = numpy_helper.from_array((rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32), "w")
    nodes, last = chain("Conv", 8, ["w"])
    save(os.path.join(out, "conv.onnx"), nodes, [weight], value("x", [1, 64, 28, 28]), value(last, [1, 64, 28, 28]))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: drift_models.py DIR")
    main(sys.argv[1])
