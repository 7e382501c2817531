#!/usr/bin/python3
"""Small ONNX models for the optimizer's end-to-end test, written to DIR:
  convrelu.onnx   Conv (pads 1, bias) + Relu + a second Conv + Relu
  matmuls.onnx    two MatMuls sharing their input, then Add
  dynamic_batch.onnx  convrelu.onnx with a symbolic batch "N"
  external/convrelu.onnx  convrelu.onnx with its weights in external/convrelu.weights
  truncated.onnx  the first half of convrelu.onnx's bytes
  cycle.onnx      Relu nodes feeding each other
  dangling.onnx   a node reading a value nothing defines
  shapes.onnx     Add of [2,3] and [4,5]
  opaque.onnx     Conv + LRN (no IR equivalent) + Relu
  computed_shapes.onnx  PyTorch's export patterns: torch.chunk as Slices whose
                  ends are Shape->Gather->Add->Div->Unsqueeze->Mul, one half
                  through Conv + Relu, then x.reshape(x.shape[0], -1) as
                  Shape->Gather->Unsqueeze->Concat->Reshape into a MatMul
Run with Debian's /usr/bin/python3 (python3-onnx)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)


def weight(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.2, name)


def model(nodes, inputs, outputs, inits=(), check=True):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    if check:
        onnx.checker.check_model(m)
    return m


def f32(name, *shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def main(out):
    conv = model(
        [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c1"], ["r1"]),
         helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
         helper.make_node("Relu", ["c2"], ["y"])],
        [f32("x", 1, 8, 16, 16)], [f32("y", 1, 8, 8, 8)],
        [weight("w1", 8, 8, 3, 3), weight("b1", 8), weight("w2", 8, 8, 3, 3)])
    onnx.save(conv, f"{out}/convrelu.onnx")
    dynamic = onnx.ModelProto()
    dynamic.CopyFrom(conv)
    for value in (dynamic.graph.input[0], dynamic.graph.output[0]):
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    onnx.save(dynamic, f"{out}/dynamic_batch.onnx")
    external = onnx.ModelProto()
    external.CopyFrom(conv)
    os.makedirs(f"{out}/external", exist_ok=True)
    onnx.save_model(external, f"{out}/external/convrelu.onnx", save_as_external_data=True,
                    all_tensors_to_one_file=True, location="convrelu.weights", size_threshold=1024)
    mm = model(
        [helper.make_node("MatMul", ["x", "p"], ["a"]),
         helper.make_node("MatMul", ["x", "q"], ["b"]),
         helper.make_node("Add", ["a", "b"], ["y"])],
        [f32("x", 32, 64)], [f32("y", 32, 64)], [weight("p", 64, 64), weight("q", 64, 64)])
    onnx.save(mm, f"{out}/matmuls.onnx")
    data = conv.SerializeToString()
    with open(f"{out}/truncated.onnx", "wb") as f:
        f.write(data[: len(data) // 2])
    cyc = model([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
                 helper.make_node("Add", ["x", "b"], ["y"])],
                [f32("x", 2, 3)], [f32("y", 2, 3)], check=False)
    onnx.save(cyc, f"{out}/cycle.onnx")
    dang = model([helper.make_node("Add", ["x", "nowhere"], ["y"])], [f32("x", 2, 3)], [f32("y", 2, 3)], check=False)
    onnx.save(dang, f"{out}/dangling.onnx")
    shapes = model([helper.make_node("Add", ["x", "z"], ["y"])], [f32("x", 2, 3), f32("z", 4, 5)],
                   [f32("y", 2, 3)], check=False)
    onnx.save(shapes, f"{out}/shapes.onnx")
    opq = model(
        [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
         helper.make_node("LRN", ["c1"], ["l"], size=3),
         helper.make_node("Relu", ["l"], ["y"])],
        [f32("x", 1, 8, 16, 16)], [f32("y", 1, 8, 16, 16)], [weight("w1", 8, 8, 3, 3)])
    onnx.save(opq, f"{out}/opaque.onnx")
    onnx.save(computed_shapes(), f"{out}/computed_shapes.onnx")
    # Small to send, 4 MiB per activation to check: for --max-check-mb.
    big = model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Sigmoid", ["r"], ["y"])],
                [f32("x", 1, 64, 128, 128)], [f32("y", 1, 64, 128, 128)])
    onnx.save(big, f"{out}/big.onnx")


def ints(name, values, scalar=False):
    return numpy_helper.from_array(np.array(values[0] if scalar else values, dtype=np.int64), name)


def computed_shapes():
    const = lambda name, values, scalar=False: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=ints(name, values, scalar))
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        const("one", [1], scalar=True), const("two", [2], scalar=True), const("zero_s", [0], scalar=True),
        helper.make_node("Gather", ["shape", "one"], ["channels"], axis=0),
        helper.make_node("Add", ["channels", "one"], ["rounded"]),
        helper.make_node("Div", ["rounded", "two"], ["half"]),
        helper.make_node("Unsqueeze", ["half", "zero"], ["half1d"]),
        helper.make_node("Mul", ["half1d", "two1d"], ["full1d"]),
        helper.make_node("Slice", ["x", "zero", "half1d", "axis1"], ["first"]),
        helper.make_node("Slice", ["x", "half1d", "full1d", "axis1"], ["second"]),
        helper.make_node("Conv", ["second", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Concat", ["first", "r"], ["cat"], axis=1),
        helper.make_node("Shape", ["cat"], ["cat_shape"]),
        helper.make_node("Gather", ["cat_shape", "zero_s"], ["batch"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "zero"], ["batch1d"]),
        helper.make_node("Concat", ["batch1d", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["cat", "target"], ["flat"]),
        helper.make_node("MatMul", ["flat", "p"], ["y"]),
    ]
    inits = [weight("w", 4, 4, 3, 3), weight("p", 8 * 6 * 6, 10), ints("zero", [0]), ints("axis1", [1]),
             ints("two1d", [2]), ints("minus_one", [-1])]
    return model(nodes, [f32("x", "N", 8, 6, 6)], [f32("y", "N", 10)], inits)


if __name__ == "__main__":
    main(sys.argv[1])
