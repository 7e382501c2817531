#!/usr/bin/python3
"""Builds the hand-made benchmark structures as ONNX models with onnx.helper:
  models/build_structures.py NAME OUT.onnx [--small] [--batch N] [--seq S] [--steps T] [--act gelu|relu] [--merged]
  models/build_structures.py --list
NAME is one of:
  transformer_layer  a BERT-base-like encoder layer: sequence 128, hidden 768, 12 heads, FFN 3072.
                     Q, K and V are separate MatMul + Add over the same input (a merge is possible).
  rnn_cell           an LSTM-style cell unrolled over 8 steps, hidden 512: each gate is its own MatMul
                     of the same x_t and of the same h_{t-1} (shared-input matmul merging pays).
  nasrnn_cell        a NAS-RNN cell (TASO's and Tensat's benchmark structure): per step 8 MatMuls of x
                     and 8 of h, summed in pairs, feeding a tree of Add/Mul/Tanh/Sigmoid/Relu; 5 steps.
  inception_cell     Inception-style blocks (parallel 1x1, 3x3, 5x5 and pool branches, Conv+Relu,
                     Concat) on a 1x192x28x28 input, 3 stacked.
  nasnet_cell        NASNet-A-style normal cells (separable convs as depthwise + pointwise Conv,
                     average/max pools, Adds, Concat) on 1x64x28x28, 3 stacked.
--small gives a much smaller configuration of the same structure (for tests).
--merged writes the shared-input matmuls of transformer_layer (Q/K/V), rnn_cell (the gates of x_t and
of h_{t-1}) and nasrnn_cell (the eight of x_t and of h) merged by hand, as one MatMul over the
concatenated weights (and one bias Add) followed by a Split: the same weights, so the same function
as the unmerged model (the reference a search's merge is measured against).
Batch 1 unless --batch (--seq sets the transformer's sequence), opset 13, deterministic random weights scaled by
1/sqrt(fan-in) so activations stay in range; every model passes onnx.checker (full check).
Run with /usr/bin/python3 (Debian's python3-onnx)."""
import argparse
import math
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


class Builder:
    """Accumulates nodes and initializers; every value gets a fresh name."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.count = 0

    def name(self, stem):
        self.count += 1
        return "%s_%d" % (stem, self.count)

    def input(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def output(self, value, shape):
        self.outputs.append(helper.make_tensor_value_info(value, TensorProto.FLOAT, shape))

    def const(self, array, stem="c"):
        n = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    # Values are drawn apart from the constants they become, so a merged model can concatenate the
    # very arrays the unmerged one uses (same seed, same draws, same order).
    def weight_values(self, shape, fan_in):
        return self.rng.standard_normal(shape).astype(np.float32) / np.float32(math.sqrt(fan_in))

    def bias_values(self, n):
        return (0.1 * self.rng.standard_normal(n)).astype(np.float32)

    def weight(self, shape, fan_in, stem="w"):
        return self.const(self.weight_values(shape, fan_in), stem)

    def bias(self, n, stem="b"):
        return self.const(self.bias_values(n), stem)

    def op(self, op_type, inputs, stem=None, **attrs):
        out = self.name(stem or op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out + "_node", **attrs))
        return out

    def model(self, graph_name):
        graph = helper.make_graph(self.nodes, graph_name, self.inputs, self.outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="taso-models-build_structures")
        model.ir_version = 7
        onnx.checker.check_model(model, full_check=True)
        return model

    def split_last(self, v, widths, stem):
        """Split along the last axis (opset 13: sizes as an input) into parts of `widths`."""
        outs = [self.name(stem) for _ in widths]
        sizes = self.const(np.array(widths, dtype=np.int64), stem + "_sizes")
        self.nodes.append(helper.make_node("Split", [v, sizes], outs, name=outs[0] + "_node", axis=-1))
        return outs

    # Building blocks shared by several structures.
    def linear(self, x, n_in, n_out, stem):
        return self.op("Add", [self.op("MatMul", [x, self.weight([n_in, n_out], n_in, stem + "_w")], stem + "_mm"),
                               self.bias(n_out, stem + "_b")], stem)

    def linears(self, x, n_in, n_out, stems, merged):
        """One linear per stem of the same input; with `merged`, one MatMul and Add over the
        concatenated weights and biases (drawn as the separate ones are), then a Split."""
        if not merged:
            return [self.linear(x, n_in, n_out, s) for s in stems]
        ws, bs = [], []
        for _ in stems:
            ws.append(self.weight_values([n_in, n_out], n_in))
            bs.append(self.bias_values(n_out))
        stem = "".join(stems)
        mm = self.op("MatMul", [x, self.const(np.concatenate(ws, axis=1), stem + "_w")], stem + "_mm")
        y = self.op("Add", [mm, self.const(np.concatenate(bs), stem + "_b")], stem)
        return self.split_last(y, [n_out] * len(stems), stem + "_part")

    def layer_norm(self, x, hidden):
        # LayerNormalization arrives in opset 17; at 13 it is written out as exporters do.
        axes = [-1]
        mean = self.op("ReduceMean", [x], "ln_mean", axes=axes, keepdims=1)
        d = self.op("Sub", [x, mean], "ln_centered")
        var = self.op("ReduceMean", [self.op("Mul", [d, d], "ln_sq")], "ln_var", axes=axes, keepdims=1)
        std = self.op("Sqrt", [self.op("Add", [var, self.const(np.float32(1e-5), "ln_eps")], "ln_var_eps")], "ln_std")
        norm = self.op("Div", [d, std], "ln_norm")
        gamma = self.const((1 + 0.1 * self.rng.standard_normal(hidden)).astype(np.float32), "ln_gamma")
        return self.op("Add", [self.op("Mul", [norm, gamma], "ln_scaled"), self.bias(hidden, "ln_beta")], "ln_out")

    def gelu(self, x):
        # 0.5 * x * (1 + erf(x / sqrt(2))), the form BERT exporters write.
        e = self.op("Erf", [self.op("Div", [x, self.const(np.float32(math.sqrt(2.0)), "sqrt2")], "gelu_div")],
                    "gelu_erf")
        one_plus = self.op("Add", [e, self.const(np.float32(1.0), "one")], "gelu_1p")
        return self.op("Mul", [self.op("Mul", [x, one_plus], "gelu_mul"), self.const(np.float32(0.5), "half")],
                       "gelu")

    def conv(self, x, c_in, c_out, k, stem, group=1, relu=True):
        w = self.weight([c_out, c_in // group, k, k], c_in // group * k * k, stem + "_w")
        pad = k // 2
        y = self.op("Conv", [x, w, self.bias(c_out, stem + "_b")], stem, kernel_shape=[k, k],
                    pads=[pad, pad, pad, pad], strides=[1, 1], group=group)
        return self.op("Relu", [y], stem + "_relu") if relu else y

    def pool(self, kind, x, k=3):
        pad = k // 2
        attrs = dict(kernel_shape=[k, k], pads=[pad, pad, pad, pad], strides=[1, 1])
        if kind == "AveragePool":
            attrs["count_include_pad"] = 0
        return self.op(kind, [x], kind.lower(), **attrs)


def transformer_layer(b, args):
    seq, hidden, heads, ffn = (16, 64, 4, 128) if args.small else (128, 768, 12, 3072)
    seq = args.seq or seq
    batch = args.batch
    dh = hidden // heads
    # 2-D activations [batch * seq, hidden], as TASO's BERT benchmark writes them (batch 1: [seq, hidden]);
    # attention runs per sequence: [heads, seq, dh] at batch 1, [batch, heads, seq, dh] above it.
    rows = batch * seq
    x = b.input("x", [rows, hidden])
    q, k, v = b.linears(x, hidden, hidden, ["q", "k", "v"], args.merged)
    lead = [] if batch == 1 else [batch]
    split_shape = b.const(np.array(lead + [seq, heads, dh], dtype=np.int64), "heads_shape")

    def batched(perm):  # a per-sequence permutation, after the batch axis when there is one
        return list(range(len(lead))) + [a + len(lead) for a in perm]

    def to_heads(t, perm):
        return b.op("Transpose", [b.op("Reshape", [t, split_shape], "split_heads")], "to_heads", perm=batched(perm))

    qh = to_heads(q, [1, 0, 2])  # [(batch,) heads, seq, dh]
    kh = to_heads(k, [1, 2, 0])  # [(batch,) heads, dh, seq]
    vh = to_heads(v, [1, 0, 2])
    scores = b.op("Mul", [b.op("MatMul", [qh, kh], "qk"), b.const(np.float32(1 / math.sqrt(dh)), "scale")],
                  "scores")
    probs = b.op("Softmax", [scores], "probs", axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [probs, vh], "ctx_heads")], "ctx_t", perm=batched([1, 0, 2]))
    ctx = b.op("Reshape", [ctx, b.const(np.array([rows, hidden], dtype=np.int64), "merge_shape")], "ctx")
    attn = b.linear(ctx, hidden, hidden, "attn_out")
    h1 = b.layer_norm(b.op("Add", [attn, x], "attn_residual"), hidden)
    f = b.linear(h1, hidden, ffn, "ffn_in")
    f = b.gelu(f) if args.act == "gelu" else b.op("Relu", [f], "ffn_relu")
    f = b.linear(f, ffn, hidden, "ffn_out")
    out = b.layer_norm(b.op("Add", [f, h1], "ffn_residual"), hidden)
    b.output(out, [rows, hidden])


def rnn_cell(b, args):
    steps, hidden = (args.steps or 3, 32) if args.small else (args.steps or 8, 512)
    batch = args.batch
    xs = [b.input("x%d" % t, [batch, hidden]) for t in range(steps)]
    h = b.input("h0", [batch, hidden])
    c = b.input("c0", [batch, hidden])
    # One weight per gate, shared over the steps as in a real LSTM.
    gates = ["i", "f", "g", "o"]
    if args.merged:
        # The gates' weights side by side: per step one MatMul of x_t, one of h, one Add of the two,
        # one bias Add and a Split into the four pre-activations.
        wx = b.const(np.concatenate([b.weight_values([hidden, hidden], 2 * hidden) for _ in gates], axis=1), "wx")
        wh = b.const(np.concatenate([b.weight_values([hidden, hidden], 2 * hidden) for _ in gates], axis=1), "wh")
        bias = b.const(np.concatenate([b.bias_values(hidden) for _ in gates]), "b")
    else:
        wx = {g: b.weight([hidden, hidden], 2 * hidden, "wx_" + g) for g in gates}
        wh = {g: b.weight([hidden, hidden], 2 * hidden, "wh_" + g) for g in gates}
        bias = {g: b.bias(hidden, "b_" + g) for g in gates}
    for x in xs:
        if args.merged:
            s = b.op("Add", [b.op("MatMul", [x, wx], "x_gates"), b.op("MatMul", [h, wh], "h_gates")], "sum_gates")
            pre = dict(zip(gates, b.split_last(b.op("Add", [s, bias], "pre_gates"), [hidden] * 4, "pre")))
        else:
            pre = {g: b.op("Add", [b.op("Add", [b.op("MatMul", [x, wx[g]], "x" + g),
                                                b.op("MatMul", [h, wh[g]], "h" + g)], "sum_" + g), bias[g]],
                           "pre_" + g) for g in gates}
        i = b.op("Sigmoid", [pre["i"]], "gate_i")
        f = b.op("Sigmoid", [pre["f"]], "gate_f")
        g = b.op("Tanh", [pre["g"]], "gate_g")
        o = b.op("Sigmoid", [pre["o"]], "gate_o")
        c = b.op("Add", [b.op("Mul", [f, c], "keep"), b.op("Mul", [i, g], "write")], "c")
        h = b.op("Mul", [o, b.op("Tanh", [c], "c_tanh")], "h")
    b.output(h, [batch, hidden])
    b.output(c, [batch, hidden])


def nasrnn_cell(b, args):
    steps, hidden = (args.steps or 2, 32) if args.small else (args.steps or 5, 512)
    batch = args.batch
    xs = [b.input("x%d" % t, [batch, hidden]) for t in range(steps)]
    h = b.input("h0", [batch, hidden])
    if args.merged:
        wx = b.const(np.concatenate([b.weight_values([hidden, hidden], 2 * hidden) for _ in range(8)], axis=1), "wx")
        wh = b.const(np.concatenate([b.weight_values([hidden, hidden], 2 * hidden) for _ in range(8)], axis=1), "wh")
    else:
        wx = [b.weight([hidden, hidden], 2 * hidden, "wx%d" % j) for j in range(8)]
        wh = [b.weight([hidden, hidden], 2 * hidden, "wh%d" % j) for j in range(8)]
    act = lambda kind, v: b.op(kind, [v], kind.lower())
    for x in xs:
        # Eight pre-activations, each a MatMul of x plus a MatMul of h (merged: one of each, their
        # sum split in eight).
        if args.merged:
            s = b.op("Add", [b.op("MatMul", [x, wx], "xw"), b.op("MatMul", [h, wh], "hw")], "t")
            t = b.split_last(s, [hidden] * 8, "t")
        else:
            t = [b.op("Add", [b.op("MatMul", [x, wx[j]], "xw%d" % j), b.op("MatMul", [h, wh[j]], "hw%d" % j)],
                      "t%d" % j) for j in range(8)]
        # The searched cell's combination tree: four pairs, then two levels of merges.
        l0 = b.op("Add", [act("Relu", t[0]), act("Sigmoid", t[1])], "l0")
        l1 = b.op("Add", [act("Sigmoid", t[2]), act("Tanh", t[3])], "l1")
        l2 = b.op("Mul", [act("Sigmoid", t[4]), act("Tanh", t[5])], "l2")
        l3 = b.op("Mul", [act("Sigmoid", t[6]), act("Relu", t[7])], "l3")
        m0 = b.op("Add", [act("Sigmoid", l1), act("Tanh", l2)], "m0")
        m1 = b.op("Mul", [act("Tanh", l0), act("Tanh", l3)], "m1")
        h = act("Tanh", b.op("Mul", [act("Tanh", m0), act("Tanh", m1)], "m2"))
    b.output(h, [batch, hidden])


def inception_cell(b, args):
    size, c_in, blocks = (8, 16, 2) if args.small else (28, 192, 3)
    s = 4 if args.small else 1  # channel divisor for --small
    x = b.input("x", [args.batch, c_in, size, size])
    c = c_in
    for _ in range(blocks):
        b1 = b.conv(x, c, 64 // s, 1, "b1x1")
        b2 = b.conv(b.conv(x, c, 96 // s, 1, "b3x3_reduce"), 96 // s, 128 // s, 3, "b3x3")
        b3 = b.conv(b.conv(x, c, 16 // s, 1, "b5x5_reduce"), 16 // s, 32 // s, 5, "b5x5")
        b4 = b.conv(b.pool("MaxPool", x), c, 32 // s, 1, "bpool_proj")
        x = b.op("Concat", [b1, b2, b3, b4], "concat", axis=1)
        c = (64 + 128 + 32 + 32) // s
    b.output(x, [args.batch, c, size, size])


def nasnet_cell(b, args):
    size, c_in, filters, cells = (8, 16, 8, 2) if args.small else (28, 64, 32, 3)
    x = b.input("x", [args.batch, c_in, size, size])

    def separable(v, k, stem):
        # NASNet's separable conv: relu, depthwise kxk, pointwise 1x1, applied twice.
        for rep in range(2):
            v = b.op("Relu", [v], stem + "_relu")
            v = b.conv(v, filters, filters, k, "%s_dw%d" % (stem, rep), group=filters, relu=False)
            v = b.conv(v, filters, filters, 1, "%s_pw%d" % (stem, rep), relu=False)
        return v

    prev, cur, c_prev, c_cur = x, x, c_in, c_in
    for _ in range(cells):
        # Both inputs squeezed to `filters` channels by relu + 1x1 conv.
        p = b.conv(b.op("Relu", [prev], "p_relu"), c_prev, filters, 1, "p_squeeze", relu=False)
        h = b.conv(b.op("Relu", [cur], "h_relu"), c_cur, filters, 1, "h_squeeze", relu=False)
        add = lambda u, v: b.op("Add", [u, v], "comb")
        outs = [
            add(separable(h, 5, "sep5_h"), separable(p, 3, "sep3_p")),
            add(separable(p, 5, "sep5_p"), separable(p, 3, "sep3_p2")),
            add(b.pool("AveragePool", h), p),
            add(b.pool("AveragePool", p), b.pool("MaxPool", p)),
            add(separable(h, 3, "sep3_h"), h),
        ]
        out = b.op("Concat", [p] + outs, "cell_out", axis=1)
        prev, cur, c_prev, c_cur = cur, out, c_cur, 6 * filters
    b.output(cur, [args.batch, c_cur, size, size])


STRUCTURES = {
    "transformer_layer": transformer_layer,
    "rnn_cell": rnn_cell,
    "nasrnn_cell": nasrnn_cell,
    "inception_cell": inception_cell,
    "nasnet_cell": nasnet_cell,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name", nargs="?", choices=sorted(STRUCTURES))
    parser.add_argument("out", nargs="?")
    parser.add_argument("--small", action="store_true", help="a small configuration of the same structure")
    parser.add_argument("--batch", type=int, default=1,
                        help="batch size of the RNN cells and the transformer layer (default 1)")
    parser.add_argument("--seq", type=int, default=0, help="the transformer layer's sequence length (default 128)")
    parser.add_argument("--steps", type=int, default=0, help="unrolled steps of the RNN cells (default 8 / 5)")
    parser.add_argument("--act", choices=["gelu", "relu"], default="gelu", help="the transformer's FFN activation")
    parser.add_argument("--merged", action="store_true",
                        help="the shared-input matmuls merged by hand (transformer_layer, rnn_cell, nasrnn_cell)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--list", action="store_true", help="print the structure names and exit")
    args = parser.parse_args()
    if args.list:
        print("\n".join(STRUCTURES))
        return
    if not args.name or not args.out:
        parser.error("give NAME and OUT.onnx (or --list)")
    if args.batch < 1 or args.steps < 0 or args.seq < 0:
        parser.error("--batch must be >= 1, --steps and --seq >= 0")
    b = Builder(args.seed)
    STRUCTURES[args.name](b, args)
    onnx.save(b.model(args.name), args.out)


if __name__ == "__main__":
    sys.exit(main())
