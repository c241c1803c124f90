#!/usr/bin/env python3
"""Table of scripts/equal_seconds.sh: per graph and time budget, every method's mean makespan
(the best in bold), the calls it spent, and auto on N threads as its own row.

    equal_seconds_table.py OUT           a table per graph and budget
    equal_seconds_table.py OUT --wide    a table per budget: a row per graph, a column per method
                                         (makespan and ratio to the row's best), then the calls
"""
import glob
import json
import os
import re
import sys


def show(x, unit):
    return f"{x * 1e3:.3g} ms" if unit == "seconds" else f"{x / 1e10:.4g}"


def load(out):
    """(graph, seconds) -> {"unit", "rows": [(label, mean, std, calls)]} of every run file."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        m = re.match(r"(.+)-([0-9.]+)s(-auto(\d+))?\.json$", os.path.basename(path))
        if not m:
            continue
        j = json.load(open(path))
        key = (m.group(1), float(m.group(2)))
        rows = runs.setdefault(key, {"unit": j["unit"], "rows": []})["rows"]
        for r in j["methods"]:
            method = re.sub(r"policy=[^,]*(,|$)", "", r["method"]).rstrip(":")  # no paths
            label = method + (f" ({m.group(4)} threads)" if m.group(3) else "")
            rows.append((label, r["mean"], r["std"], sum(r["calls"]) // len(r["calls"])))
    return runs


def wide(runs):
    for t in sorted({t for _, t in runs}):
        graphs = sorted(g for g, u in runs if u == t)
        labels = []
        for g in graphs:
            for label, *_ in runs[(g, t)]["rows"]:
                if label not in labels:
                    labels.append(label)
        print(f"\n### {t:g} s per method\n")
        print("| graph | " + " | ".join(labels) + " |")
        print("|---|" + "---:|" * len(labels))
        calls = []
        for g in graphs:
            v = runs[(g, t)]
            got = {label: (mean, c) for label, mean, _, c in v["rows"]}
            best = min(m for m, _ in got.values())
            cells, counts = [], []
            for label in labels:
                if label not in got:
                    cells.append("-")
                    counts.append("-")
                    continue
                mean, c = got[label]
                cell = f"{show(mean, v['unit'])} ({mean / best:.3f})"
                cells.append(f"**{cell}**" if mean == best else cell)
                counts.append(f"{c:,}")
            print(f"| {g} | " + " | ".join(cells) + " |")
            calls.append(f"| {g} | " + " | ".join(counts) + " |")
        print(f"\nSimulator calls spent in {t:g} s:\n")
        print("| graph | " + " | ".join(labels) + " |")
        print("|---|" + "---:|" * len(labels))
        print("\n".join(calls))


def main(out):
    runs = load(out)
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
    if "--wide" in sys.argv[2:]:
        wide(load(sys.argv[1]))
    else:
        main(sys.argv[1])
