#!/usr/bin/python3
"""Exports the 12-layer GPT of issue 25 to ONNX: 12 pre-LayerNorm GPT blocks built from torch.nn
layers (tests/onnx/models.py's GptBlock), width 512, 8 heads, sequence 512, batch 4, opset 14.
Run with Debian's /usr/bin/python3 (python3-torch):
    scripts/export_gpt12.py OUT.onnx [LAYERS=12]
then `doppler import OUT.onnx --devices 8 -o gpt12.json`."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "onnx"))


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    import torch
    from torch import nn
    from models import GptBlock

    layers = int(argv[2]) if len(argv) == 3 else 12
    B, S, d, h = 4, 512, 512, 8
    torch.manual_seed(0)
    model = nn.Sequential(*[GptBlock(d, h, S) for _ in range(layers)]).eval()
    x = torch.randn(B, S, d, generator=torch.Generator().manual_seed(1))
    torch.onnx.export(model, (x,), argv[1], opset_version=14, do_constant_folding=True,
                      input_names=["x"], output_names=["y"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
