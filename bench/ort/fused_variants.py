#!/usr/bin/python3
"""Rewrites a transformer layer from models/build_structures.py by hand into ONNX Runtime's fused
contrib operators, so that what those kernels gain in the runtime can be measured against the layer as
ONNX Runtime runs it (bench/fused_kernels.sh times them with bench/ort/speedup.js).

  fused_variants.py LAYER.onnx OUTDIR [--block]

writes into OUTDIR, each computing the same function as LAYER.onnx:
  base.onnx             the layer as it is
  mha.onnx              the attention core (heads split, Q.K^T, scale, Softmax, .V, heads merged)
                        as com.microsoft.MultiHeadAttention over the projected Q, K and V
  attention.onnx        the Q/K/V projections and the core as one com.microsoft.Attention (packed weights)
  skip_layer_norm.onnx  each residual Add and the layer norm after it as com.microsoft.SkipLayerNormalization
  fused.onnx            attention.onnx and skip_layer_norm.onnx together
With --block the layer is first cut to its attention block (input to merged heads), and only base, mha
and attention are written.

The layer is recognised by the value names build_structures.py gives its nodes (split_heads, qk,
probs, ctx, ln_mean, ...): this is a measuring tool for those models, not a general fuser. Batch 1
only (activations [seq, hidden]). Run with /usr/bin/python3 (Debian's python3-onnx)."""
import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"


def stem(value):
    """The builder's name for a value without its counter: 'split_heads_14' -> 'split_heads'."""
    return value.rsplit("_", 1)[0]


class Layer:
    def __init__(self, model):
        self.model = model
        self.graph = model.graph
        self.inits = {i.name: i for i in self.graph.initializer}
        self.producer = {o: n for n in self.graph.node for o in n.output}
        self.fresh = 0

    def array(self, name):
        return numpy_helper.to_array(self.inits[name])

    def const(self, array, stem_name):
        self.fresh += 1
        name = "%s_fused_%d" % (stem_name, self.fresh)
        self.graph.initializer.append(numpy_helper.from_array(np.asarray(array), name))
        self.inits[name] = self.graph.initializer[-1]
        return name

    def nodes_with(self, stems):
        return [n for n in self.graph.node if stem(n.output[0]) in stems]

    def replace(self, old, new):
        """Puts `new` where the first of `old` was and drops `old` (nodes named by their first output:
        protobuf copies nodes whenever the list is rebuilt); the graph stays topologically sorted because
        each new node reads only values produced before the first old node or by new nodes."""
        gone = {n.output[0] for n in old}
        nodes = list(self.graph.node)
        first = min(i for i, n in enumerate(nodes) if n.output[0] in gone)
        kept = nodes[:first] + list(new) + [n for n in nodes[first:] if n.output[0] not in gone]
        self.set_nodes(kept)

    def set_nodes(self, nodes):
        nodes = list(nodes)
        del self.graph.node[:]
        self.graph.node.extend(nodes)
        self.producer = {o: n for n in self.graph.node for o in n.output}

    def prune(self):
        """Drops initializers nothing reads any more (the unpacked Q/K/V weights)."""
        read = {i for n in self.graph.node for i in n.input}
        keep = [i for i in self.graph.initializer if i.name in read]
        del self.graph.initializer[:]
        self.graph.initializer.extend(keep)

    def attention_geometry(self):
        shape = self.array(self.nodes_with({"split_heads"})[0].input[1])
        if len(shape) != 3:
            sys.exit("fused_variants.py: only batch 1 layers ([seq, hidden] activations)")
        seq, heads, dh = (int(v) for v in shape)
        return seq, heads, dh

    def projections(self):
        """[(x, w, b, MatMul node, Add node)] of Q, K and V, in that order: each head reshape reads
        Add(MatMul(x, w), b)."""
        out = []
        for reshape in self.nodes_with({"split_heads"}):
            add = self.producer[reshape.input[0]]
            matmul = self.producer[add.input[0]]
            out.append((matmul.input[0], matmul.input[1], add.input[1], matmul, add))
        return out


CORE = {"split_heads", "to_heads", "qk", "scores", "probs", "ctx_heads", "ctx_t", "ctx"}


def fused_attention(layer, op, inputs, constants=()):
    """Nodes computing the merged heads ('ctx') as the contrib operator `op` over `inputs` (each
    reshaped to [1, seq, hidden]) and `constants`, its output reshaped back to [seq, hidden]."""
    seq, heads, dh = layer.attention_geometry()
    ctx = layer.nodes_with({"ctx"})[0].output[0]
    to3 = layer.const(np.array([1, seq, heads * dh], np.int64), "bsd")
    to2 = layer.const(np.array([seq, heads * dh], np.int64), "sd")
    new = [helper.make_node("Reshape", [t, to3], [t + "_3d"]) for t in inputs]
    new.append(helper.make_node(op, [t + "_3d" for t in inputs] + list(constants), [ctx + "_3d"], domain=MS,
                                num_heads=heads))
    new.append(helper.make_node("Reshape", [ctx + "_3d", to2], [ctx]))
    return new


def to_mha(layer):
    q, k, v = (p[4].output[0] for p in layer.projections())
    layer.replace(layer.nodes_with(CORE), fused_attention(layer, "MultiHeadAttention", [q, k, v]))


def to_attention(layer):
    proj = layer.projections()
    x = proj[0][0]
    if any(p[0] != x for p in proj):
        sys.exit("fused_variants.py: Q, K and V do not read one input")
    weights = layer.const(np.concatenate([layer.array(p[1]) for p in proj], axis=1), "qkv_w")
    bias = layer.const(np.concatenate([layer.array(p[2]) for p in proj]), "qkv_b")
    layer.replace([p[3] for p in proj] + [p[4] for p in proj] + layer.nodes_with(CORE),
                  fused_attention(layer, "Attention", [x], [weights, bias]))


LAYER_NORM = ["ln_mean", "ln_centered", "ln_sq", "ln_var", "ln_var_eps", "ln_std", "ln_norm", "ln_scaled", "ln_out"]


def to_skip_layer_norm(layer):
    for residual_stem in ("attn_residual", "ffn_residual"):
        residual = layer.nodes_with({residual_stem})[0]
        # The layer norm reading the residual sum: follow its chain of nodes in the builder's order.
        chain, value = [], residual.output[0]
        for name in LAYER_NORM:
            node = next(n for n in layer.graph.node if stem(n.output[0]) == name and
                        (value in n.input or (chain and chain[-1].output[0] in n.input)))
            chain.append(node)
        by = {stem(n.output[0]): n for n in chain}
        eps = float(layer.array(by["ln_var_eps"].input[1]))
        gamma, beta = by["ln_scaled"].input[1], by["ln_out"].input[1]
        fused = helper.make_node("SkipLayerNormalization", [residual.input[0], residual.input[1], gamma, beta],
                                 [by["ln_out"].output[0]], domain=MS, epsilon=eps)
        layer.replace([residual] + chain, [fused])


def cut_to_attention_block(layer):
    ctx = layer.nodes_with({"ctx"})[0].output[0]
    seq, heads, dh = layer.attention_geometry()
    need, keep = {ctx}, []
    for n in reversed(list(layer.graph.node)):
        if any(o in need for o in n.output):
            keep.append(n)
            need.update(n.input)
    layer.set_nodes(reversed(keep))
    del layer.graph.output[:]
    layer.graph.output.append(helper.make_tensor_value_info(ctx, TensorProto.FLOAT, [seq, heads * dh]))


def variant(path, block, rewrites):
    layer = Layer(onnx.load(path))
    if block:
        cut_to_attention_block(layer)
    for rewrite in rewrites:
        rewrite(layer)
    layer.prune()
    if rewrites:
        layer.model.opset_import.append(helper.make_opsetid(MS, 1))
    onnx.checker.check_model(layer.model)
    return layer.model


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("layer")
    parser.add_argument("outdir")
    parser.add_argument("--block", action="store_true", help="cut to the attention block first")
    args = parser.parse_args()
    variants = {"base": [], "mha": [to_mha], "attention": [to_attention]}
    if not args.block:
        variants.update({"skip_layer_norm": [to_skip_layer_norm], "fused": [to_attention, to_skip_layer_norm]})
    for name, rewrites in variants.items():
        onnx.save(variant(args.layer, args.block, rewrites), "%s/%s.onnx" % (args.outdir, name))
        print("%s/%s.onnx" % (args.outdir, name))


if __name__ == "__main__":
    main()
