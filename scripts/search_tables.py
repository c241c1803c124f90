#!/usr/bin/env python3
"""Tables from the runs of scripts/search_results.sh (one `doppler place --json` file per
problem, row and seed: RUNS/<problem>.<label>.s<seed>.json, and RUNS/<problem>.info.json).

Prints Markdown on stdout: a summary (a row per problem, a column per budget, each cell
doppler-search's mean makespan relative to local-search's at that budget) and one table per
problem (a row per method: mean ± std of the makespan over seeds, wall-clock seconds of place(),
simulator calls). With a second argument, also writes every row as CSV there.
Usage: search_tables.py RUNS [CSV]"""
import collections
import csv
import json
import pathlib
import statistics
import sys

ORDER = ["etf", "greedy", "zero-shot K=64"]
BUDGETS = ["1k", "4k", "20k", "1 s", "10 s"]
for b in BUDGETS:
    ORDER += [f"local-search {b}", f"doppler-search {b}"]


def mean_std(xs):
    return (statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0)


def load(runs):
    """{problem: {label: [run json...]}}, {problem: info json}"""
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    info = {}
    for f in sorted(runs.glob("*.json")):
        problem, rest = f.name[:-len(".json")].split(".", 1)
        if rest == "info":
            info[problem] = json.loads(f.read_text())
            continue
        label = rest.rsplit(".s", 1)[0].replace("_", " ")
        rows[problem][label].append(json.loads(f.read_text()))
    return rows, info


def scale_of(runs):
    """(divisor, unit note) for the makespans of a problem's runs."""
    j = runs[0]
    if "makespan_div_1e10" in j:
        return 1e10, "makespan / 1e10"
    if j["model"] == "reference":
        return 1.0, "makespan (reference units)"
    return 1e-3, "makespan (ms)"


def summarise(label, runs):
    ms = mean_std([r["makespan"] for r in runs])
    secs = mean_std([r["placement_seconds"] for r in runs])
    calls = statistics.fmean([r["evaluations"] for r in runs])
    return {"label": label, "method": runs[0]["method"], "seeds": len(runs),
            "makespan_mean": ms[0], "makespan_std": ms[1], "seconds_mean": secs[0],
            "seconds_std": secs[1], "evaluations_mean": calls,
            "lower_bound": runs[0]["lower_bound"]}


def fmt(x):
    return f"{x:.4g}"


def main():
    runs = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "search-results/runs")
    rows, info = load(runs)
    table = []
    for problem in sorted(rows):
        for label in ORDER + sorted(set(rows[problem]) - set(ORDER)):
            if label in rows[problem]:
                j = rows[problem][label][0]
                s = {"problem": problem, "graph": j["graph"],
                     "ops": info.get(problem, {}).get("placed_ops", ""), "devices": j["devices"],
                     "model": j["model"]}
                s.update(summarise(label, rows[problem][label]))
                table.append(s)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(table[0].keys()) if table else ["problem"])
            w.writeheader()
            w.writerows(table)
    by = {(r["problem"], r["label"]): r for r in table}
    print("### doppler-search vs local-search (mean makespan, relative; negative: doppler-search "
          "is better)\n")
    print("| problem (ops, devices, model) | " + " | ".join(BUDGETS) + " |")
    print("|---|" + "---:|" * len(BUDGETS))
    for problem in sorted(rows):
        cells = []
        for b in BUDGETS:
            ls, ds = by.get((problem, f"local-search {b}")), by.get((problem, f"doppler-search {b}"))
            cells.append(f"{100 * (ds['makespan_mean'] / ls['makespan_mean'] - 1):+.1f}%"
                         if ls and ds else "-")
        j = rows[problem][next(iter(rows[problem]))][0]
        ops = info.get(problem, {}).get("placed_ops", "?")
        print(f"| {problem} ({ops}, {j['devices']}, {j['model']}) | " + " | ".join(cells) + " |")
    for problem in sorted(rows):
        first = rows[problem][next(iter(rows[problem]))]
        scale, unit = scale_of(first)
        ops = info.get(problem, {}).get("placed_ops", "?")
        lb = first[0]["lower_bound"] / scale
        print(f"\n#### {problem}: {first[0]['graph']} ({ops} ops), {first[0]['devices']} devices, "
              f"{first[0]['model']}; lower bound {fmt(lb)}\n")
        print(f"| method | {unit} | seconds | calls | seeds |")
        print("|---|---:|---:|---:|---:|")
        for r in table:
            if r["problem"] != problem:
                continue
            std = f" ± {fmt(r['makespan_std'] / scale)}" if r["makespan_std"] > 0 else ""
            secs = f"{r['seconds_mean']:.3g}" + (f" ± {r['seconds_std']:.2g}"
                                                 if r["seconds_std"] > 0 else "")
            print(f"| {r['label']} | {fmt(r['makespan_mean'] / scale)}{std} | {secs} | "
                  f"{r['evaluations_mean']:.0f} | {r['seeds']} |")


if __name__ == "__main__":
    main()
