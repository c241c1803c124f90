#!/usr/bin/env python3
"""Markdown tables from the JSON files of scripts/pretrain_results.sh: one table per problem,
one row per method (mean +- std over seeds of the simulated makespan, its ratio to local-search
with 20,000 calls, simulator calls and wall-clock seconds per run). With --summary: one table,
a row per problem, a column per method, each cell the mean makespan relative to local-search
with 20,000 calls."""
import collections
import json
import pathlib
import sys

args = [a for a in sys.argv[1:] if a != "--summary"]
summary = "--summary" in sys.argv[1:]
runs = pathlib.Path(args[0] if args else "pretrain-results/runs")
order = ["critical-path", "heft", "etf", "local-search 1k", "local-search 20k", "zero-shot K=1",
         "zero-shot K=64", "fine-tune 200", "fine-tune 1000", "scratch 1k"]
rows = collections.defaultdict(dict)
meta = {}
for f in sorted(runs.glob("*.json")):
    problem, label = f.stem.split(".", 1)
    label = label.replace("_", " ")
    j = json.loads(f.read_text())
    ref = j["unit"] == "reference"
    meta[problem] = (j["graph"], j["ops"], j["devices"], j["model"], ref)
    for m in j["methods"]:
        rows[problem][label] = m
if summary:
    print("| problem (ops, devices, model) | " + " | ".join(order) + " |")
    print("|---|" + "---:|" * len(order))
    for problem in sorted(rows):
        g, ops, p, model, ref = meta[problem]
        base = rows[problem].get("local-search 20k", {}).get("mean")
        cells = [f"{100 * (rows[problem][l]['mean'] / base - 1):+.1f}%"
                 if base and l in rows[problem] else "-" for l in order]
        print(f"| {problem} ({ops}, {p}, {model}) | " + " | ".join(cells) + " |")
    sys.exit(0)
for problem in sorted(rows):
    g, ops, p, model, ref = meta[problem]
    scale, unit = (1e10, " / 1e10") if ref else (1e-3, " (ms)")
    base = rows[problem].get("local-search 20k", {}).get("mean")
    print(f"\n#### {problem}: {g} ({ops} ops), {p} devices, {model}\n")
    print(f"| method | makespan{unit} | vs LS 20k | calls | seconds |")
    print("|---|---:|---:|---:|---:|")
    for label in order:
        m = rows[problem].get(label)
        if m is None:
            continue
        std = f" ± {m['std'] / scale:.3g}" if m["std"] > 0 else ""
        vs = f"{100 * (m['mean'] / base - 1):+.1f}%" if base else "-"
        calls = m.get("evaluations_mean", m.get("evaluations", "-"))
        print(f"| {label} | {m['mean'] / scale:.4g}{std} | {vs} | {calls} | "
              f"{m['seconds_mean']:.3g} |")
