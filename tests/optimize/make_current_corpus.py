#!/usr/bin/python3
"""Small ONNX models in the forms current exporters write, for the optimizer's
test of them (current_models_test.sh): make_current_corpus.py DIR writes
NAME.irI.opO.onnx files into DIR and prints one line per model (file, IR
version, opset, node count).

Users bring models saved by onnx >= 1.14 exporters: IR version 9 or 10,
opsets 18-21. Debian's torch 1.13 / onnx 1.12 write IR 7-8 and opsets <= 17,
so each network is exported at an opset torch knows and, for a newer opset,
rewritten into the operator forms that opset requires and re-stamped:
  opset 18  Reduce* (but ReduceSum) take axes as an input, not an attribute;
            Split of equal parts says num_outputs instead of the sizes; Pad
            names the padded axes (axes input); Resize names its axes (axes,
            antialias, keep_aspect_ratio_policy attributes);
            GroupNormalization as one node (its scale and bias per group)
  opset 19  Resize's half_pixel_symmetric; Pad's mode 'wrap' (pad_conv only)
  opset 20  GELU as one Gelu node
  opset 21  GroupNormalization's scale and bias per channel
onnx 1.12's helper and checker do not know opsets past 17, so converted nodes
are built with helper.make_node and fields set directly, never checked by it;
ONNX Runtime is the judge (current_models_test.sh loads every model in it).

Weights are random (fixed seeds: the same bytes every run) and sizes small,
so optimizing the whole corpus takes minutes on 2 cores. Run with Debian's
/usr/bin/python3 (python3-onnx, python3-torch, python3-torchvision)."""
import importlib
import io
import math
import os
import sys
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper
from torch import nn

# torchvision.models re-exports its builders under the modules' names
# (torchvision.models.googlenet is a function), so import the modules by path.
resnet = importlib.import_module("torchvision.models.resnet")
squeezenet = importlib.import_module("torchvision.models.squeezenet")
mobilenetv2 = importlib.import_module("torchvision.models.mobilenetv2")
shufflenetv2 = importlib.import_module("torchvision.models.shufflenetv2")
densenet = importlib.import_module("torchvision.models.densenet")
googlenet = importlib.import_module("torchvision.models.googlenet")

# --- the networks: torchvision's blocks behind a small stem, and sequence models


def stem(channels):
    return nn.Sequential(nn.Conv2d(3, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU())


def resnet_block():
    down = nn.Sequential(nn.Conv2d(16, 32, 1, stride=2, bias=False), nn.BatchNorm2d(32))
    return nn.Sequential(stem(16), resnet.BasicBlock(16, 32, stride=2, downsample=down), resnet.BasicBlock(32, 32))


def resnet_bottleneck():
    down = nn.Sequential(nn.Conv2d(16, 64, 1, bias=False), nn.BatchNorm2d(64))
    return nn.Sequential(stem(16), resnet.Bottleneck(16, 16, downsample=down), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(64, 10))


def squeezenet_fire():
    return nn.Sequential(nn.Conv2d(3, 32, 3, stride=2), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True),
                         squeezenet.Fire(32, 8, 16, 16), squeezenet.Fire(32, 8, 16, 16),
                         nn.Conv2d(32, 10, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())


def inception_mini():
    return nn.Sequential(stem(16), googlenet.Inception(16, 8, 8, 16, 4, 8, 8), nn.MaxPool2d(2),
                         googlenet.Inception(40, 8, 8, 16, 4, 8, 8))


def mobilenet_block():
    return nn.Sequential(stem(16), mobilenetv2.InvertedResidual(16, 24, 2, 4),
                         mobilenetv2.InvertedResidual(24, 24, 1, 4))


def shufflenet_unit():
    # Stride 2 then stride 1: both branches, then the chunk and channel shuffle.
    return nn.Sequential(stem(16), shufflenetv2.InvertedResidual(16, 32, 2), shufflenetv2.InvertedResidual(32, 32, 1))


def densenet_block():
    return nn.Sequential(stem(16), densenet._DenseBlock(3, 16, bn_size=2, growth_rate=8, drop_rate=0.0))


class CbamBlock(nn.Module):
    """Channel attention from a mean and a max over the image (ReduceMean and
    ReduceMax with axes), then a spatial one from the same over channels."""

    def __init__(self, c=16):
        super().__init__()
        self.stem = stem(c)
        self.mlp = nn.Sequential(nn.Conv2d(c, c // 4, 1), nn.ReLU(), nn.Conv2d(c // 4, c, 1))
        self.spatial = nn.Conv2d(2, 1, 7, padding=3)

    def forward(self, x):
        x = self.stem(x)
        x = x * torch.sigmoid(self.mlp(x.mean((2, 3), keepdim=True)) + self.mlp(x.amax((2, 3), keepdim=True)))
        s = torch.cat([x.mean(1, keepdim=True), x.amax(1, keepdim=True)], 1)
        return x * torch.sigmoid(self.spatial(s))


class L2NormHead(nn.Module):
    """An embedding head: pooled features L2-normalized (ReduceL2, Clip, Expand, Div)."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(stem(16), nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 16))

    def forward(self, x):
        return F.normalize(self.body(x), dim=1)


class UNetUp(nn.Module):
    """A U-Net level: down by max pooling, up by nearest and bilinear Resize,
    an explicit zero Pad, and the skip concatenated."""

    def __init__(self):
        super().__init__()
        self.enc = stem(8)
        self.mid = nn.Sequential(nn.Conv2d(8, 16, 3), nn.ReLU())
        self.dec = nn.Conv2d(8 + 16 + 16, 8, 3, padding=1)

    def forward(self, x):
        skip = self.enc(x)
        y = F.pad(self.mid(F.max_pool2d(skip, 2)), (1, 1, 1, 1))
        up = torch.cat([skip, F.interpolate(y, scale_factor=2.0, mode="nearest"),
                        F.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False)], 1)
        return torch.relu(self.dec(up))


def pad_conv():
    # Reflect padding as a Pad node before each Conv; from opset 19 the
    # corpus turns it into 'wrap' (circular), which torch 1.13 cannot export.
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, padding_mode="reflect"), nn.ReLU(),
                         nn.Conv2d(16, 16, 3, padding=1, padding_mode="reflect"))


def groupnorm_conv():
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.GroupNorm(4, 16), nn.ReLU(),
                         nn.Conv2d(16, 16, 3, padding=1), nn.GroupNorm(2, 16))


def gelu_mlp():
    return nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32), nn.GELU(), nn.Linear(32, 8))


def layernorm():
    # torch 1.13 writes nn.LayerNorm as ReduceMean/Sub/Pow/Sqrt/Div below
    # opset 17, and as one LayerNormalization node from 17.
    return nn.Sequential(nn.Linear(32, 32), nn.LayerNorm(32), nn.ReLU(), nn.Linear(32, 32), nn.LayerNorm(32))


class UnrolledGRU(nn.Module):
    """A GRU cell written out over 4 steps (MatMul, Split into equal gates,
    Sigmoid, Tanh, Sub), as exporters unroll a scripted cell."""

    def __init__(self, n_in=16, hidden=32, steps=4):
        super().__init__()
        self.hidden, self.steps = hidden, steps
        self.x2h = nn.Linear(n_in, 3 * hidden)
        self.h2h = nn.Linear(hidden, 3 * hidden)

    def forward(self, xs):  # [1, steps, n_in]
        h = torch.zeros(xs.shape[0], self.hidden)
        for t in range(self.steps):
            xr, xz, xn = self.x2h(xs[:, t]).split(self.hidden, -1)
            hr, hz, hn = self.h2h(h).split(self.hidden, -1)
            r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            h = (1 - z) * torch.tanh(xn + r * hn) + z * h
        return h


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.out = nn.Linear(32, 8)

    def forward(self, x):
        return self.out(self.lstm(x)[0])


def transformer_encoder():
    return nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation="gelu", batch_first=True)


class MaskedAttention(nn.Module):
    """Causal self-attention: the mask by Where, scores' Softmax, and the
    probabilities as a second output."""

    def __init__(self, d=32, t=8):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.register_buffer("mask", torch.triu(torch.ones(t, t), 1).bool())
        self.scale = 1 / math.sqrt(d)

    def forward(self, x):
        q, k, v = self.qkv(x).split(x.shape[-1], -1)
        p = torch.softmax((q @ k.transpose(1, 2) * self.scale).masked_fill(self.mask, float("-inf")), -1)
        return p @ v, p


class ElementwiseMix(nn.Module):
    """PyTorch's elementwise operators after a Conv: Where, Neg, Exp, Sub,
    Pow, Sqrt, Div, Erf and a Cast of a comparison."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        positive = y > 0
        elu = torch.where(positive, y, torch.exp(-torch.neg(y)) - 1)
        s = torch.sqrt(elu.pow(2) + 1)
        return torch.erf(s / 2) * positive.float() - elu / s


# --- export


def randomize_norms(module, gen):
    """Normalizations' statistics and affine parameters other than torch's 0
    and 1, so folding them is not a no-op and a lost scale shows."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
        if isinstance(m, (nn.BatchNorm2d, nn.GroupNorm, nn.LayerNorm)):
            m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
            m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)


def export(build, shapes, opset, seed, dynamic_batch=False):
    torch.manual_seed(seed)
    module = build().eval()
    with torch.no_grad():
        randomize_norms(module, torch.Generator().manual_seed(seed))
    gen = torch.Generator().manual_seed(seed)
    examples = tuple(torch.randn(*s, generator=gen) for s in shapes)
    names = ["input"] if len(shapes) == 1 else ["input_%d" % i for i in range(len(shapes))]
    with torch.no_grad():
        results = module(*examples)
    outputs = ["output"] if torch.is_tensor(results) else ["output_%d" % i for i in range(len(results))]
    dynamic = {n: {0: "N"} for n in names + outputs} if dynamic_batch else None
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer and shape-inference chatter
        torch.onnx.export(module, examples, f, opset_version=opset, input_names=names, output_names=outputs,
                          dynamic_axes=dynamic, do_constant_folding=True)
    return onnx.load_from_string(f.getvalue())


# --- constants: the values of torch's constant chains (Constant ->
# ConstantOfShape -> Concat -> Reshape -> Slice -> Transpose -> Cast for
# Pad's pads), which the newer forms need as numbers


def producers(graph):
    return {o: n for n in graph.node for o in n.output}


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def constant_value(graph, name, made=None):
    """The value of `name` as a numpy array, or None when it is not constant."""
    made = producers(graph) if made is None else made
    for init in graph.initializer:
        if init.name == name:
            return numpy_helper.to_array(init)
    node = made.get(name)
    if node is None:
        return None
    ins = [constant_value(graph, i, made) if i else None for i in node.input]
    if any(v is None for i, v in zip(node.input, ins) if i):
        return None
    op = node.op_type
    if op == "Constant":
        return numpy_helper.to_array(attr(node, "value"))
    if op == "Identity":  # torch's export shares equal initializers this way
        return ins[0]
    if op == "ConstantOfShape":
        fill = attr(node, "value")
        fill = numpy_helper.to_array(fill) if fill is not None else np.zeros(1, np.float32)
        return np.full(ins[0].astype(np.int64), fill.ravel()[0], fill.dtype)
    if op == "Concat":
        return np.concatenate(ins, attr(node, "axis"))
    if op == "Reshape":
        return ins[0].reshape(ins[1].astype(np.int64))
    if op == "Transpose":
        return ins[0].transpose(attr(node, "perm"))
    if op == "Cast":
        return ins[0].astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[attr(node, "to")])
    if op == "Slice":
        data, starts, ends = ins[0], ins[1], ins[2]
        axes = ins[3] if len(ins) > 3 and ins[3] is not None else range(len(starts))
        steps = ins[4] if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
        index = [slice(None)] * data.ndim
        for s, e, a, st in zip(starts, ends, axes, steps):
            # Clamp like ONNX: torch writes INT64 min/max for open ends.
            lim = data.shape[a]
            e = int(max(min(e, lim), -lim - 1))
            index[a] = slice(int(max(min(s, lim), -lim - 1)), e if e >= -lim else None, int(st))
        return data[tuple(index)]
    return None


# --- the newer operator forms


def unique_name(graph, base):
    taken = {v for n in graph.node for v in list(n.input) + list(n.output)} | {i.name for i in graph.initializer}
    name, k = base, 0
    while name in taken:
        k += 1
        name = "%s_%d" % (base, k)
    return name


def add_initializer(graph, base, array):
    name = unique_name(graph, base)
    graph.initializer.append(numpy_helper.from_array(np.asarray(array), name))
    return name


def drop_attribute(node, name):
    kept = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(kept)


def set_attribute(node, name, value):
    drop_attribute(node, name)
    node.attribute.append(helper.make_attribute(name, value))


REDUCE_WITH_AXES_INPUT_FROM_18 = ["ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                                  "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"]


def reduce_axes_to_input(graph):
    """Opset 18: the reductions' axes attribute becomes their second input."""
    for node in graph.node:
        if node.op_type in REDUCE_WITH_AXES_INPUT_FROM_18:
            axes = attr(node, "axes")
            if axes is not None:
                drop_attribute(node, "axes")
                node.input.append(add_initializer(graph, node.output[0] + "_axes", np.array(axes, np.int64)))


def split_sizes_to_num_outputs(graph):
    """Opset 18: a Split into equal parts says how many (num_outputs) instead of the sizes."""
    for node in graph.node:
        if node.op_type == "Split" and len(node.input) > 1 and node.input[1]:
            sizes = constant_value(graph, node.input[1])
            if sizes is not None and len(set(sizes.tolist())) == 1 and len(sizes) == len(node.output):
                del node.input[1:]
                set_attribute(node, "num_outputs", len(node.output))


def pad_axes_input(graph):
    """Opset 18: Pad's pads for the padded axes only, named by the axes input."""
    for node in graph.node:
        if node.op_type != "Pad" or len(node.input) > 3:
            continue
        pads = constant_value(graph, node.input[1])
        if pads is None:
            continue
        rank = len(pads) // 2
        axes = [a for a in range(rank) if pads[a] or pads[a + rank]]
        if not axes:
            continue
        new_pads = [pads[a] for a in axes] + [pads[a + rank] for a in axes]
        node.input[1] = add_initializer(graph, node.output[0] + "_pads", np.array(new_pads, np.int64))
        while len(node.input) < 3:
            node.input.append("")  # no constant_value: zeros
        node.input.append(add_initializer(graph, node.output[0] + "_axes", np.array(axes, np.int64)))


def pad_reflect_to_wrap(graph):
    """Opset 19: circular padding as Pad mode 'wrap' (the model changes: its reflect pads wrap)."""
    for node in graph.node:
        if node.op_type == "Pad" and attr(node, "mode") == b"reflect":
            set_attribute(node, "mode", "wrap")


def resize_axes(graph):
    """Opset 18: Resize scales only the axes it names (axes attribute), with
    the new attributes spelled out at their defaults."""
    for node in graph.node:
        if node.op_type != "Resize" or len(node.input) < 3 or not node.input[2]:
            continue
        scales = constant_value(graph, node.input[2])
        if scales is None or len(scales) != 4 or list(scales[:2]) != [1, 1]:
            continue
        node.input[2] = add_initializer(graph, node.output[0] + "_scales", scales[2:].astype(np.float32))
        set_attribute(node, "axes", [2, 3])
        set_attribute(node, "antialias", 0)
        set_attribute(node, "keep_aspect_ratio_policy", "stretch")


def resize_half_pixel_symmetric(graph):
    """Opset 19: half_pixel_symmetric, the same as half_pixel at whole scale factors."""
    for node in graph.node:
        if node.op_type == "Resize" and attr(node, "coordinate_transformation_mode") == b"half_pixel":
            set_attribute(node, "coordinate_transformation_mode", "half_pixel_symmetric")


def readers(graph):
    r = {}
    for n in graph.node:
        for i in n.input:
            r.setdefault(i, []).append(n)
    return r


def only_reader(read, name, op):
    nodes = read.get(name, [])
    return nodes[0] if len(nodes) == 1 and nodes[0].op_type == op else None


def scalar(graph, name):
    v = constant_value(graph, name)
    return float(v.ravel()[0]) if v is not None and v.size == 1 else None


def replace_nodes(graph, old, new):
    """`new` where the first of `old` was (its inputs are defined by then, its readers come later)."""
    at = list(graph.node).index(old[0])
    for n in old:
        graph.node.remove(n)
    graph.node.insert(at, new)


def fuse_gelu(graph):
    """Opset 20: torch's erf GELU, x * (erf(x / sqrt 2) + 1) * 0.5, as one Gelu node."""
    made, read = producers(graph), readers(graph)
    for erf in [n for n in graph.node if n.op_type == "Erf"]:
        div = made.get(erf.input[0])
        if div is None or div.op_type != "Div" or abs((scalar(graph, div.input[1]) or 0) - math.sqrt(2)) > 1e-5:
            continue
        x = div.input[0]
        plus = only_reader(read, erf.output[0], "Add")
        times_x = plus and only_reader(read, plus.output[0], "Mul")
        half = times_x and only_reader(read, times_x.output[0], "Mul")
        if not half or x not in times_x.input or scalar(graph, half.input[1]) != 0.5:
            continue
        gelu = helper.make_node("Gelu", [x], [half.output[0]], name=half.name + "_gelu")
        replace_nodes(graph, (div, erf, plus, times_x, half), gelu)


def instance_norm_to_group_norm(graph, opset):
    """torch's GroupNorm (Reshape to groups, InstanceNormalization, Reshape
    back, Mul by the weight, Add the bias) as GroupNormalization: at opsets
    18-20 its scale and bias are per group, so the per-channel Mul and Add
    stay; from 21 they are per channel and take the weight and bias."""
    made, read = producers(graph), readers(graph)
    for inorm in [n for n in graph.node if n.op_type == "InstanceNormalization"]:
        to_groups = made.get(inorm.input[0])
        back = only_reader(read, inorm.output[0], "Reshape")
        mul = back and only_reader(read, back.output[0], "Mul")
        add = mul and only_reader(read, mul.output[0], "Add")
        if not (to_groups and to_groups.op_type == "Reshape" and add):
            continue
        x = to_groups.input[0]
        groups = len(constant_value(graph, inorm.input[1]))
        weight = constant_value(graph, mul.input[1])
        bias = constant_value(graph, add.input[1])
        eps = attr(inorm, "epsilon", 1e-5)
        if opset >= 21:
            removed = (to_groups, inorm, back, mul, add)
            scale = add_initializer(graph, add.output[0] + "_gn_scale", weight.ravel().astype(np.float32))
            shift = add_initializer(graph, add.output[0] + "_gn_bias", bias.ravel().astype(np.float32))
            out = add.output[0]
        else:
            removed = (to_groups, inorm, back)
            scale = add_initializer(graph, back.output[0] + "_gn_scale", np.ones(groups, np.float32))
            shift = add_initializer(graph, back.output[0] + "_gn_bias", np.zeros(groups, np.float32))
            out = back.output[0]
        node = helper.make_node("GroupNormalization", [x, scale, shift], [out], name=inorm.name + "_group",
                                epsilon=eps, num_groups=groups)
        replace_nodes(graph, removed, node)


def remove_dead_nodes(graph):
    """Nodes no output needs (a conversion's leftover constant chains), and
    their initializers and value_info."""
    needed = {o.name for o in graph.output}
    kept = []
    for node in reversed(graph.node):
        if any(o in needed for o in node.output):
            kept.append(node)
            needed.update(i for i in node.input if i)
    kept.reverse()
    del graph.node[:]
    graph.node.extend(kept)
    inits = [i for i in graph.initializer if i.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(inits)
    made = {o for n in graph.node for o in n.output}
    infos = [v for v in graph.value_info if v.name in made]
    del graph.value_info[:]
    graph.value_info.extend(infos)


def to_newer_forms(model, opset, wrap_pads=False):
    """The model's nodes in the forms `opset` requires (see the module docstring)."""
    g = model.graph
    if opset >= 18:
        reduce_axes_to_input(g)
        split_sizes_to_num_outputs(g)
        pad_axes_input(g)
        resize_axes(g)
        instance_norm_to_group_norm(g, opset)
    if opset >= 19:
        resize_half_pixel_symmetric(g)
        if wrap_pads:
            pad_reflect_to_wrap(g)
    if opset >= 20:
        fuse_gelu(g)
    remove_dead_nodes(g)


def restamp(model, ir_version, opset):
    """The versions a newer exporter writes: IR version and default-domain opset."""
    model.ir_version = ir_version
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = opset


# --- the corpus: NAME, builder, input shapes, opset torch exports at for the
# newer variants, (IR, opset) variants, options

IMAGE = [(1, 3, 32, 32)]
SEQUENCE = [(1, 8, 32)]
CORPUS = [
    ("resnet_block", resnet_block, IMAGE, 17, [(7, 13), (8, 17), (9, 17), (10, 21)], {}),
    ("resnet_block_nbatch", resnet_block, IMAGE, 17, [(8, 16), (10, 21)], {"dynamic_batch": True}),
    ("resnet_bottleneck", resnet_bottleneck, IMAGE, 17, [(8, 15), (9, 19)], {}),
    ("squeezenet_fire", squeezenet_fire, [(1, 3, 64, 64)], 17, [(7, 13), (9, 18), (10, 21)], {}),
    ("inception_mini", inception_mini, IMAGE, 17, [(7, 14), (10, 20)], {}),
    ("mobilenet_block", mobilenet_block, IMAGE, 17, [(8, 16), (9, 19)], {}),
    ("shufflenet_unit", shufflenet_unit, IMAGE, 17, [(7, 13), (9, 18)], {}),
    ("densenet_block", densenet_block, IMAGE, 17, [(8, 17), (10, 21)], {}),
    ("cbam_block", CbamBlock, IMAGE, 17, [(8, 16), (9, 18), (10, 20)], {}),
    ("l2norm_head", L2NormHead, IMAGE, 17, [(7, 14), (10, 19)], {}),
    ("unet_up", UNetUp, IMAGE, 17, [(8, 16), (8, 18), (10, 19)], {}),
    ("pad_conv", pad_conv, IMAGE, 17, [(8, 17), (9, 19), (10, 21)], {"wrap_pads": True}),
    ("groupnorm_conv", groupnorm_conv, IMAGE, 17, [(8, 17), (9, 18), (10, 21)], {}),
    ("gelu_mlp", gelu_mlp, [(1, 32)], 17, [(7, 13), (9, 20), (10, 21)], {}),
    ("layernorm_decomposed", layernorm, SEQUENCE, 16, [(7, 13), (8, 16), (9, 18)], {}),
    ("layernorm", layernorm, SEQUENCE, 17, [(8, 17), (9, 19), (10, 21)], {}),
    ("gru_unrolled", UnrolledGRU, [(1, 4, 16)], 17, [(7, 13), (10, 18)], {}),
    ("lstm", Lstm, [(1, 6, 16)], 17, [(7, 14), (9, 20)], {}),
    ("transformer_encoder", transformer_encoder, SEQUENCE, 17, [(8, 16), (8, 17), (10, 20)], {}),
    ("masked_attention", MaskedAttention, SEQUENCE, 17, [(7, 13), (10, 21)], {}),
    ("elementwise_mix", ElementwiseMix, IMAGE, 17, [(8, 15), (9, 19)], {}),
]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_current_corpus.py DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for seed, (name, build, shapes, newer_export_opset, variants, options) in enumerate(CORPUS):
        for ir_version, opset in variants:
            model = export(build, shapes, min(opset, newer_export_opset), seed,
                           dynamic_batch=options.get("dynamic_batch", False))
            to_newer_forms(model, opset, wrap_pads=options.get("wrap_pads", False))
            restamp(model, ir_version, opset)
            file = "%s.ir%d.op%d.onnx" % (name, ir_version, opset)
            onnx.save(model, os.path.join(out, file))
            print("%-40s ir %2d  opset %2d  %3d nodes" % (file, ir_version, opset, len(model.graph.node)))


if __name__ == "__main__":
    main()
