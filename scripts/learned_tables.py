#!/usr/bin/env python3
"""Markdown tables from the JSON files of scripts/learned_results.sh: one table per problem,
one row per method, one column per budget (mean +- std over seeds, and seconds per run)."""
import collections
import json
import pathlib
import sys

runs = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "learned-results/runs")
cells = collections.defaultdict(dict)  # problem -> (method, budget) -> text
meta = {}
budgets = collections.defaultdict(set)
order = ["critical-path", "heft", "etf", "enumopt", "local-search", "placeto", "gdp",
         "doppler-sim:preset=paper", "doppler-sim", "doppler-search:train=0.5"]
for f in sorted(runs.glob("*.json")):
    problem, budget = f.name.split(".")[:2]
    j = json.loads(f.read_text())
    ref = j["unit"] == "reference"
    scale, unit = (1e10, "") if ref else (1e-3, " ms")
    meta[problem] = (j["graph"], j["ops"], j["devices"], j["model"], j["lower_bound"] / scale, unit)
    budgets[problem].add(int(budget))
    for m in j["methods"]:
        std = f" ± {m['std'] / scale:.3g}" if m["std"] > 0 else ""
        cells[problem][(m["method"], int(budget))] = (
            f"{m['mean'] / scale:.4g}{std} ({m['seconds_mean']:.3g} s)")
    for r in j.get("refused_over_budget", []):
        cells[problem][(r["method"], int(budget))] = f"over budget ({r['evaluations']} calls)"
for problem in sorted(cells):
    g, ops, p, model, lb, unit = meta[problem]
    bs = sorted(budgets[problem])
    print(f"\n#### {g} ({ops} ops), {p} devices, {model}: makespan{unit or ' / 1e10'}, "
          f"lower bound {lb:.4g}{unit}\n")
    print("| method | " + " | ".join(f"{b:,} calls" for b in bs) + " |")
    print("|---|" + "---:|" * len(bs))
    methods = [m for m in order if any((m, b) in cells[problem] for b in bs)]
    for m in methods:
        row = [cells[problem].get((m, b), "-") for b in bs]
        if m in ("critical-path", "heft", "etf"):  # deterministic, no simulator call
            v = next(c for c in row if c != "-")
            row = [v] * len(bs)
        print(f"| {m} | " + " | ".join(row) + " |")
