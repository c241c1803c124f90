#!/usr/bin/env python3
"""Table of scripts/equal_seconds.sh: per graph and time budget, every method's mean makespan
(the best in bold), the calls it spent, and auto on N threads as its own row."""
import glob
import json
import os
import re
import sys


def show(x, unit):
    return f"{x * 1e3:.3g} ms" if unit == "seconds" else f"{x / 1e10:.4g}"


def main(out):
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        m = re.match(r"(.+)-([0-9.]+)s(-auto(\d+))?\.json$", os.path.basename(path))
        if not m:
            continue
        j = json.load(open(path))
        key = (m.group(1), float(m.group(2)))
        rows = runs.setdefault(key, {"unit": j["unit"], "rows": []})["rows"]
        for r in j["methods"]:
            label = r["method"] + (f" ({m.group(4)} threads)" if m.group(3) else "")
            rows.append((label, r["mean"], r["std"], sum(r["calls"]) // len(r["calls"])))
    for (graph, t), v in sorted(runs.items()):
        best = min(x[1] for x in v["rows"])
        print(f"\n### {graph}, {t:g} s per method\n")
        print("| method | makespan | std | vs best | simulator calls |")
        print("|---|---:|---:|---:|---:|")
        for label, mean, std, calls in v["rows"]:
            cell = show(mean, v["unit"])
            cell = f"**{cell}**" if mean == best else cell
            print(f"| {label} | {cell} | {show(std, v['unit'])} | {mean / best:.3f} | {calls:,} |")


if __name__ == "__main__":
    main(sys.argv[1])
