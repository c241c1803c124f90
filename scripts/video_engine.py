#!/usr/bin/python3
"""Video models on the CPU engine against PyTorch (docs/results/video.md, second table).

Usage: scripts/video_engine.py BUILD_DIR OUT_DIR [MODEL ...]   (default r3d_18 mc3_18 r2plus1d_18)

For each torchvision video ResNet at size b1 (one 16-frame clip of 112 x 112, seeded weights;
tests/onnx/models.py exports it with PyTorch's output): `doppler import` for 2 devices, `doppler
place --method heft` on the cpu profile, `doppler execute` (real kernels, 1 warm-up, 5 runs,
--save y), the largest difference from PyTorch's output, and PyTorch's own forward pass on 2
threads (median of 5 after a warm-up). Run on an idle machine; prints a Markdown table.
"""
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "onnx"))
import models  # noqa: E402  (tests/onnx/models.py)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"video_engine.py: {' '.join(cmd)} failed: {r.stderr.strip()}")
    return r.stdout


def pytorch_ms(name):
    import torch

    torch.set_num_threads(2)
    module, x, _ = models.build(name, "b1")
    times = []
    with torch.no_grad():
        module(x)
        for _ in range(5):
            t = time.perf_counter()
            module(x)
            times.append(time.perf_counter() - t)
    return sorted(times)[2] * 1e3


def engine_row(doppler, out, name):
    import numpy as np

    d = os.path.join(out, f"{name}-b1")
    if not os.path.isfile(os.path.join(d, "model.onnx")):
        run([sys.executable, models.__file__, "export", name, "b1", d])
    graph, assignment, got = (os.path.join(d, f) for f in ("g2.json", "a2.json", "got.npy"))
    imp = json.loads(run([doppler, "-q", "import", os.path.join(d, "model.onnx"), "--devices",
                          "2", "--inputs", "x=" + os.path.join(d, "x.npy"), "-o", graph,
                          "--json"]))
    run([doppler, "-q", "place", graph, "--devices", "2", "--method", "heft", "-o", assignment])
    text = run([doppler, "execute", graph, "--assignment", assignment, "--repeat", "5",
                "--warmup", "1", "--save", "y=" + got])
    makespan = re.search(r"makespan\s+median ([0-9.]+) (ms|s)", text)
    ms = float(makespan.group(1)) * (1e3 if makespan.group(2) == "s" else 1)
    want = np.load(os.path.join(d, "y.npy"))
    err = float(np.abs(np.load(got).reshape(want.shape) - want).max())
    return imp, ms, err, float(np.abs(want).max())


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    doppler = os.path.join(argv[0], "doppler")
    names = argv[2:] or ["r3d_18", "mc3_18", "r2plus1d_18"]
    print("| model | GFLOPs | blocks (2 devices) | engine, 2 devices (HEFT) | PyTorch, 2 threads "
          "| engine / PyTorch | max error (output scale) |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        imp, ms, err, scale = engine_row(doppler, argv[1], name)
        torch_ms = pytorch_ms(name)
        print(f"| {name} | {imp['total_flops'] / 1e9:.1f} | {imp['blocks']:,} | {ms:.0f} ms | "
              f"{torch_ms:.0f} ms | {ms / torch_ms:.2f} | {err:.1e} ({scale:.2f}) |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
