#!/usr/bin/env python3
"""Markdown table of scripts/onnx_results.sh's output directory (one row per exported model).

Usage: onnx_results_table.py OUT_DIR
Columns: ONNX ops and blocks, parameters, FLOPs, import time, the engine output's largest
difference from PyTorch's (HEFT placement, CPU engine), then every method's mean simulated
makespan (std over seeds when randomised) and its ratio to the best method of the row.
"""
import json
import os
import sys

import numpy as np


def label(spec):
    """Short column name of a method spec."""
    if spec.startswith("doppler:"):
        return "Doppler zero-shot (" + spec.split("samples=")[-1] + " samples)"
    if spec.startswith("doppler-sim:") and "policy=" in spec:
        sim = spec.split("sim=")[-1].split(",")[0]
        return f"Doppler fine-tune {sim}"
    return spec


def fmt_time(s):
    return f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} us"


def row(d):
    imp = json.load(open(os.path.join(d, "import.json")))
    cmp_ = json.load(open(os.path.join(d, "compare.json")))
    got, want = np.load(os.path.join(d, "got.npy")), np.load(os.path.join(d, "y.npy"))
    err = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
    best = min(m["mean"] for m in cmp_["methods"])
    cells = [os.path.basename(d), str(imp["ops_before"]), str(imp["blocks"]),
             f"{imp['parameters'] / 1e6:.2f} M", f"{imp['total_flops'] / 1e9:.3g} G",
             f"{imp['import_seconds']:.2f} s", f"{err:.1e}"]
    for m in cmp_["methods"]:
        std = f" ± {fmt_time(m['std'])}" if len(m["makespans"]) > 1 else ""
        cells.append(f"{fmt_time(m['mean'])}{std} ({m['mean'] / best:.3f})")
    times = [os.path.basename(d)] + [f"{m['seconds_mean']:.2g} s ({m['evaluations']})"
                                     for m in cmp_["methods"]]
    return [label(m["method"]) for m in cmp_["methods"]], cells, cmp_, times


def main():
    out = sys.argv[1]
    dirs = sorted(d for d in (os.path.join(out, x) for x in os.listdir(out))
                  if os.path.isfile(os.path.join(d, "compare.json")))
    order = {f"{m}-{s}": i for i, (m, s) in enumerate(
        (m, s) for m in ("mlp", "encoder", "gpt", "lm") for s in ("small", "large"))}
    dirs.sort(key=lambda d: order.get(os.path.basename(d), 99))
    rows = [row(d) for d in dirs]
    methods, _, first, _ = rows[0]
    head = ["model", "ONNX ops", "blocks", "constants", "FLOPs", "import", "max |engine - torch|"]
    print(f"{first['devices']} devices, {first['model']}; mean simulated makespan over "
          f"{first['seeds']} seeds (ratio to the row's best); search budget "
          f"{first['budget_evaluations']} simulator calls\n")
    print("| " + " | ".join(head + methods) + " |")
    print("|" + "|".join(["---"] + ["---:"] * (len(head) + len(methods) - 1)) + "|")
    for _, cells, _, _ in rows:
        print("| " + " | ".join(cells) + " |")
    print("\nPlacement time per run (simulator calls, training included):\n")
    print("| " + " | ".join(["model"] + methods) + " |")
    print("|" + "|".join(["---"] + ["---:"] * len(methods)) + "|")
    for _, _, _, times in rows:
        print("| " + " | ".join(times) + " |")


if __name__ == "__main__":
    main()
