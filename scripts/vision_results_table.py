#!/usr/bin/env python3
"""Markdown table of scripts/vision_results.sh's output (one row per model, size and profile).

Usage: vision_results_table.py OUT_DIR
A row's seeds may come from several `doppler compare` runs (compare.json, compare-from<N>.json
written with --first-seed N): their makespans are pooled per method, a deterministic method
counted once, and a seed found twice is an error.
Columns: seeds, ONNX ops, blocks, FLOPs (Conv FLOPs beside, with the independent count of the ONNX
file), import time, then every method's mean simulated makespan (std over seeds when
randomised) and its ratio to the row's best method; a second table gives placement times.
"""
import glob
import json
import math
import os
import sys

ORDER = ["resnet18", "resnet50", "mobilenet_v3_small", "inception_v3", "vit_b_16",
         "lraspp_mobilenet_v3_large", "fcn_resnet50", "unet",
         "r3d_18", "mc3_18", "r2plus1d_18"]


def label(spec):
    if spec.startswith("doppler:"):
        return "Doppler zero-shot"
    if spec.startswith("doppler-sim:"):
        return "Doppler fine-tune " + spec.split("sim=")[-1].split(",")[0]
    return spec


def fmt_gflops(x):
    g = x / 1e9
    return f"{g:,.0f}" if g >= 1000 else f"{g:.3g}"


def fmt_time(s):
    return f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} us"


def mean_std(xs):
    m = sum(xs) / len(xs)
    v = sum((x - m) ** 2 for x in xs) / (len(xs) - 1) if len(xs) > 1 else 0.0
    return m, math.sqrt(v)


def pooled(paths):
    """One compare result pooling the seeds of every file (the first file's method order)."""
    parts = [json.load(open(p)) for p in paths]
    out = dict(parts[0])
    methods = []
    for first in parts[0]["methods"]:
        name = first["method"]
        rows_ = [m for part in parts for m in part["methods"] if m["method"] == name]
        if any(m.get("deterministic") for m in rows_) or len(rows_) == 1:
            methods.append(dict(first))
            continue
        seeds, makespans, seconds = [], [], 0.0
        for part, m in zip(parts, rows_):
            got = m.get("seeds") or list(range(part.get("first_seed", 0),
                                               part.get("first_seed", 0) + len(m["makespans"])))
            if set(got) & set(seeds):
                sys.exit(f"vision_results_table.py: {name}: seed(s) {sorted(set(got) & set(seeds))}"
                         f" in more than one of {paths}")
            seeds += got
            makespans += m["makespans"]
            seconds += m["seconds_mean"] * len(m["makespans"])
        mean, std = mean_std(makespans)
        methods.append(dict(first, makespans=makespans, seeds=seeds, mean=mean, std=std,
                            seconds_mean=seconds / len(makespans),
                            evaluations=max(m["evaluations"] for m in rows_)))
    out["methods"] = methods
    out["seeds"] = max(len(m["makespans"]) for m in methods)
    return out


def rows(out):
    for model in ORDER:
        for size in ("b1", "b32"):
            onnx = os.path.join(out, f"{model}-{size}")
            if not os.path.isdir(onnx):
                continue
            conv_check = float(open(os.path.join(onnx, "conv.txt")).read())
            for hw in sorted(os.listdir(onnx)):
                d = os.path.join(onnx, hw)
                if not os.path.isfile(os.path.join(d, "compare.json")):
                    continue
                imp = json.load(open(os.path.join(d, "import.json")))
                extra = sorted(glob.glob(os.path.join(d, "compare-from*.json")))
                cmp_ = pooled([os.path.join(d, "compare.json")] + extra)
                yield model, size, hw, imp, cmp_, conv_check


def main():
    out = sys.argv[1]
    data = list(rows(out))
    if not data:
        sys.exit("vision_results_table.py: no compare.json under " + out)
    methods = [label(m["method"]) for m in data[0][4]["methods"]]
    first = data[0][4]
    print("mean simulated makespan over the row's seeds (ratio to the row's best); "
          f"search and learned budget {first['budget_evaluations']} simulator calls\n")
    head = ["model", "batch", "profile", "seeds", "ONNX ops", "blocks", "GFLOPs (Conv)", "import"]
    print("| " + " | ".join(head + methods) + " |")
    print("|" + "|".join(["---"] * 3 + ["---:"] * (len(head) - 3 + len(methods))) + "|")
    times = []
    for model, size, hw, imp, cmp_, conv_check in data:
        best = min(m["mean"] for m in cmp_["methods"])
        conv = imp["conv_flops"]
        mark = "" if conv == conv_check else " (!)"
        cells = [model, size[1:], f"{cmp_['devices']} x {hw}", str(cmp_["seeds"]),
                 str(imp["ops_before"]),
                 str(imp["blocks"]), f"{fmt_gflops(imp['total_flops'])} ({fmt_gflops(conv)}){mark}",
                 f"{imp['import_seconds']:.2f} s"]
        for m in cmp_["methods"]:
            std = f" ± {fmt_time(m['std'])}" if len(m["makespans"]) > 1 else ""
            cells.append(f"{fmt_time(m['mean'])}{std} ({m['mean'] / best:.3f})")
        print("| " + " | ".join(cells) + " |")
        times.append([model, size[1:], hw] + [f"{m['seconds_mean']:.2g} s ({m['evaluations']})"
                                               for m in cmp_["methods"]])
    print("\nPlacement time per run (simulator calls, training included):\n")
    print("| " + " | ".join(["model", "batch", "profile"] + methods) + " |")
    print("|" + "|".join(["---"] * 3 + ["---:"] * len(methods)) + "|")
    for t in times:
        print("| " + " | ".join(t) + " |")


if __name__ == "__main__":
    main()
