#!/usr/bin/python3
"""Exports a torchvision model with random weights to ONNX for the optimizer
benchmarks: models/export_torchvision.py NAME OUT.onnx [BATCH], NAME one of
resnet50, resnext50 (= resnext50_32x4d), squeezenet (= squeezenet1_1), inception_v3,
shufflenet_v2_x1_0, resnet18, mobilenet_v2, densenet121, googlenet, efficientnet_b0
(`export_torchvision.py --list` prints them)

Uses Debian's python3-torchvision (run with /usr/bin/python3); batch BATCH (default 1),
opset 13, eval mode (batch norms in inference form)."""
import sys

import torch
import torchvision

MODELS = {
    "resnet50": (torchvision.models.resnet50, 224),
    "resnext50": (torchvision.models.resnext50_32x4d, 224),
    "squeezenet": (torchvision.models.squeezenet1_1, 224),
    "resnext50_32x4d": (torchvision.models.resnext50_32x4d, 224),
    "squeezenet1_1": (torchvision.models.squeezenet1_1, 224),
    "shufflenet_v2_x1_0": (torchvision.models.shufflenet_v2_x1_0, 224),
    "inception_v3": (lambda: torchvision.models.inception_v3(aux_logits=False, init_weights=True), 299),
    "resnet18": (torchvision.models.resnet18, 224),
    "mobilenet_v2": (torchvision.models.mobilenet_v2, 224),
    "densenet121": (torchvision.models.densenet121, 224),
    "googlenet": (lambda: torchvision.models.googlenet(aux_logits=False, init_weights=True), 224),
    "efficientnet_b0": (torchvision.models.efficientnet_b0, 224),
}


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(MODELS))
        return
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in MODELS or (len(sys.argv) == 4 and not sys.argv[3].isdigit()):
        sys.exit("usage: export_torchvision.py [%s] OUT.onnx [BATCH]" % "|".join(MODELS))
    batch = int(sys.argv[3]) if len(sys.argv) == 4 else 1
    if batch < 1:
        sys.exit("export_torchvision.py: BATCH must be >= 1")
    build, size = MODELS[sys.argv[1]]
    torch.manual_seed(0)
    model = build().eval()
    example = torch.randn(batch, 3, size, size)
    torch.onnx.export(model, example, sys.argv[2], opset_version=13, input_names=["input"],
                      output_names=["output"], do_constant_folding=True)


if __name__ == "__main__":
    main()
