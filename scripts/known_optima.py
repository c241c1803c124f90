#!/usr/bin/env python3
"""Placers against known optima on a folder of classic task graphs (issue 51): Sinnen-group DOT
files (node and edge `Weight`), the device count from the file's `Processors` attribute or its
name's `<P>p_` prefix, the optimum stated by the set (classic model: a schedule may hold a ready
task back) from a CSV `file,processors,optimum`, and the optimum on Doppler's work-conserving
runtime proven by `optimal` (branch and bound) here. Each method places every graph at SECONDS
seconds; prints the gaps (mean, worst, instances at the optimum) per method against both optima
as Markdown, and writes OUT/rows.jsonl (one line per instance, resumable: done lines are kept).

    scripts/known_optima.py BUILD OUT DIR [STATED.csv]
    env: SECONDS_BUDGET=1 OPTIMAL_SECONDS=20 ONLY="regex on file names"
         METHODS="auto@2 local-search@1 multilevel:inner=dsc@1 dsc@1"  (method@threads)
"""
import csv
import json
import os
import re
import subprocess
import sys

if len(sys.argv) < 4:
    sys.exit(__doc__)
build, out, folder = sys.argv[1:4]
stated_csv = sys.argv[4] if len(sys.argv) > 4 else None
doppler = os.path.join(build, "doppler")
env = os.environ.get
seconds = env("SECONDS_BUDGET", "1")
methods = [m.rsplit("@", 1) for m in
           env("METHODS", "auto@2 local-search@1 multilevel:inner=dsc@1 dsc@1").split()]
only = re.compile(env("ONLY", ".*"))
os.makedirs(out, exist_ok=True)

stated = {}
if stated_csv:
    with open(stated_csv) as f:
        for r in csv.DictReader(f):
            stated[(r["file"], int(r["processors"]))] = float(r["optimum"])


def devices_of(path):
    """The file's Processors attribute, else its name's <P>p_ prefix."""
    m = re.search(r'\b(?:Processors|"Number of processors")\s*=\s*"?(\d+)', open(path).read())
    if m:
        return int(m.group(1))
    m = re.match(r"(\d+)p_", os.path.basename(path))
    if not m:
        sys.exit(f"{path}: no Processors attribute and no <P>p_ prefix in the name")
    return int(m.group(1))


def place(graph, devices, method, extra):
    cmd = [doppler, "-q", "place", graph, "--devices", str(devices), "--method", method, "--json"]
    done = subprocess.run(cmd + extra, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd + extra)}: {done.stderr.strip()}")
    return json.loads(done.stdout)


rows_path = os.path.join(out, "rows.jsonl")
rows = {}
if os.path.exists(rows_path):
    for line in open(rows_path):
        r = json.loads(line)
        rows[r["file"]] = r
files = sorted(f for f in os.listdir(folder) if f.endswith(".dot") and only.search(f))
with open(rows_path, "a") as log:
    for i, name in enumerate(files):
        if name in rows:
            continue
        path = os.path.join(folder, name)
        p = devices_of(path)
        opt = place(path, p, f"optimal:seconds={env('OPTIMAL_SECONDS', '20')}", ["--threads", "1"])
        row = {"file": name, "devices": p,
               "stated": stated.get((name, p)),
               "runtime_optimum": opt["makespan"] if opt.get("status", "").startswith("proven")
               else None, "optimal_best": opt["makespan"]}
        for m, t in methods:
            r = place(path, p, m, ["--time-budget", seconds, "--threads", t])
            row[m] = r["makespan"]
        rows[name] = row
        log.write(json.dumps(row) + "\n")
        log.flush()
        print(f"[{i + 1}/{len(files)}] {name} P={p} stated={row['stated']} "
              f"runtime={row['runtime_optimum']} " +
              " ".join(f"{m}={row[m]:g}" for m, _ in methods), file=sys.stderr)


def summary(title, key):
    sel = [r for r in rows.values() if r.get(key)]
    if not sel:
        return
    print(f"\n{title}: {len(sel)} instances\n")
    print("| method | mean gap | worst gap (instance) | at the optimum |")
    print("|---|---:|---:|---:|")
    for m, k in [("reference `optimal` (best found)", "optimal_best")] + [(m, m) for m, _ in methods]:
        gaps = [(r[k] / r[key] - 1, r["file"], r["devices"]) for r in sel]
        worst = max(gaps)
        at = sum(g <= 1e-9 for g, _, _ in gaps)
        print(f"| {m} | {100 * sum(g for g, _, _ in gaps) / len(gaps):.2f}% | "
              f"{100 * worst[0]:.1f}% ({worst[1]}, {worst[2]}) | {at} / {len(gaps)} |")


summary("Against the optimum the set states (classic model)", "stated")
summary("Against the optimum proven on the work-conserving runtime", "runtime_optimum")
both = [r for r in rows.values() if r.get("stated") and r.get("runtime_optimum")]
if both:
    above = [r for r in both if r["runtime_optimum"] > r["stated"] + 1e-9]
    print(f"\nRuntime optimum above the stated one on {len(above)} of {len(both)} instances "
          f"(mean {100 * sum(r['runtime_optimum'] / r['stated'] - 1 for r in both) / len(both):.2f}%,"
          f" worst {100 * max(r['runtime_optimum'] / r['stated'] - 1 for r in both):.1f}%); below"
          f" on {sum(r['runtime_optimum'] < r['stated'] - 1e-9 for r in both)} (would contradict the"
          " stated optimum).")
