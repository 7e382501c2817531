#!/usr/bin/python3
"""Writes a model that keeps its weight in an external file: T steps of an
unrolled recurrent layer's input side, x_t @ W for one W shared by every step,
W as large as asked (--weight-mb; over 2048 makes the model larger than one
protobuf message holds). Batching the steps into one product reads W once
instead of T times, which the optimizer finds and ONNX Runtime measures.

  make_large_model.py OUT_DIR --weight-mb MB [--steps T]
writes OUT_DIR/large.onnx and OUT_DIR/large.weights. The weight is written in
slices, never held whole.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--weight-mb", type=float, required=True)
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    # A square weight of about the size asked, its side a multiple of 64.
    side = int((args.weight_mb * (1 << 20) / 4) ** 0.5) // 64 * 64
    rng = np.random.default_rng(7)
    with open(os.path.join(args.out, "large.weights"), "wb") as f:
        for start in range(0, side, 1024):
            rows = min(1024, side - start)
            (rng.standard_normal((rows, side), dtype=np.float32) / np.sqrt(side)).tofile(f)
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.extend([side, side])
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "large.weights"), ("offset", "0"), ("length", str(side * side * 4))):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    nodes, inputs, outputs = [], [], []
    for t in range(args.steps):
        inputs.append(helper.make_tensor_value_info(f"x{t}", TensorProto.FLOAT, [1, side]))
        outputs.append(helper.make_tensor_value_info(f"h{t}", TensorProto.FLOAT, [1, side]))
        nodes.append(helper.make_node("MatMul", [f"x{t}", "w"], [f"p{t}"], name=f"step{t}"))
        nodes.append(helper.make_node("Tanh", [f"p{t}"], [f"h{t}"], name=f"act{t}"))
    graph = helper.make_graph(nodes, "unrolled", inputs, outputs, [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_large_model")
    model.ir_version = 8
    with open(os.path.join(args.out, "large.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    print(f"side {side}: weight {side * side * 4 / (1 << 20):.0f} MiB")


if __name__ == "__main__":
    main()
