#!/usr/bin/python3
"""Writes the GRU models optimizer/opaque_costs_test.cc optimizes, as PyTorch
exports them (torch 1.13, torch.onnx.export at opset 17): a GRUCell unrolled
over 4 steps in a Python loop (gru_unrolled.onnx: Gemms, Splits, Sigmoids and
the opaque Gather, Sub and Unsqueeze), and torch.nn.GRU (gru_op.onnx: one GRU
node fed by Shape/Gather/Unsqueeze/Concat/Expand shape arithmetic). Input
[1, 4, 16], hidden 32, fixed weights (seed 0).

  /usr/bin/python3 optimizer/testdata/make_gru_models.py optimizer/testdata
"""
import sys

import torch


class Unrolled(torch.nn.Module):
    def __init__(self, inputs=16, hidden=32, steps=4):
        super().__init__()
        self.cell = torch.nn.GRUCell(inputs, hidden)
        self.steps = steps
        self.hidden = hidden

    def forward(self, x):
        h = torch.zeros(x.shape[0], self.hidden)
        outs = []
        for t in range(self.steps):
            h = self.cell(x[:, t], h)
            outs.append(h.unsqueeze(1))
        return torch.cat(outs, 1)


class Operator(torch.nn.Module):
    def __init__(self, inputs=16, hidden=32):
        super().__init__()
        self.gru = torch.nn.GRU(inputs, hidden, batch_first=True)

    def forward(self, x):
        return self.gru(x)[0]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    torch.manual_seed(0)
    x = torch.randn(1, 4, 16)
    for name, module in (("gru_unrolled", Unrolled()), ("gru_op", Operator())):
        torch.onnx.export(module.eval(), (x,), f"{out}/{name}.onnx", opset_version=17,
                          input_names=["x"], output_names=["y"])


if __name__ == "__main__":
    main()
