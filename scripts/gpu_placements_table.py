#!/usr/bin/env python3
"""The simulated side of issue 49's table from scripts/gpu-placements.sh's OUT_DIR: per graph,
every method's simulated makespan on PROFILE (mean and std over its seeds), against the best
row, the lower bound and one partition alone (OUT_DIR/one-<graph>.json: compare's JSON on one
device), with its seconds per run and simulator calls; then the equal-time rows (OUT_DIR/
sim-<graph>-equal-time.json: searches given doppler-sim's seconds and no call limit). Prints
Markdown.

    scripts/gpu_placements_table.py OUT_DIR
"""
import json
import pathlib
import sys


def rows(sim, one, timed=None):
    """The table's lines for one compare JSON; `one` is the one-device makespan (s) or None,
    `timed` the equal-time compare JSON or None."""
    methods = sim["methods"] + [dict(m, method=m["method"] + "-equal-time")
                                for m in (timed or {}).get("methods", [])]
    best = min(m["mean"] for m in methods)
    lines = [f"#### {sim['graph']} ({sim['ops']} nodes), {sim['devices']} partitions of "
             f"{sim['model']}, budget {sim['budget_evaluations']:,} simulator calls, "
             f"{sim['seeds']} seed{'s' if sim['seeds'] != 1 else ''}; lower bound {sim['lower_bound'] * 1e3:.2f} ms"
             + (f", one partition alone {one * 1e3:.2f} ms" if one else ""),
             "",
             "| method | simulated (ms) | vs best | vs lower bound | vs one partition "
             "| seconds per run | calls |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for m in methods:
        spread = "" if m["deterministic"] else f" ± {m['std'] * 1e3:.2f}"
        speed = f"{one / m['mean']:.2f}x" if one else "-"
        lines.append(f"| {m['method']} | {m['mean'] * 1e3:.2f}{spread} | {m['mean'] / best:.3f} "
                     f"| {m['mean'] / sim['lower_bound']:.3f} | {speed} "
                     f"| {m['seconds_mean']:.3g} | {m['evaluations']:,} |")
    return lines + [""]


def one_partition(out_dir, graph):
    """The graph's simulated makespan on one device (s), or None without its file."""
    path = pathlib.Path(out_dir) / f"one-{graph}.json"
    return json.loads(path.read_text())["methods"][0]["mean"] if path.exists() else None


def main(out_dir):
    for path in sorted(pathlib.Path(out_dir).glob("sim-*.json")):
        if path.stem.endswith("-equal-time"):
            continue
        sim = json.loads(path.read_text())
        timed = path.with_name(path.stem + "-equal-time.json")
        print("\n".join(rows(sim, one_partition(out_dir, sim["graph"]),
                             json.loads(timed.read_text()) if timed.exists() else None)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
