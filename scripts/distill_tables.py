#!/usr/bin/env python3
"""Tables of distillation runs (doppler pretrain --distill) from their log.jsonl files: one row
per expert-iteration round (the learning curve; with several runs, one row per run and round): the labels' mean gap to critical path, the policy's greedy and best-of-K gaps to the
labels on the evaluated pool problems, and its greedy and best-of-K gaps to local-search on the
held-out problems (per problem and mean).
Usage: distill_tables.py RUN/log.jsonl [RUN2/log.jsonl ...]"""
import json
import os
import sys


def rounds(path):
    """[(labels entry, round_eval entry)] per round, and the sum of update seconds."""
    out, labels, seconds = [], None, 0.0
    with open(path) as f:
        for line in f:
            j = json.loads(line)
            seconds += j.get("seconds", 0)
            if "labels" in j:
                labels = j["labels"]
            if "round_eval" in j:
                out.append((labels, j["round_eval"], j["calls"], seconds))
    return out


def pct(x):
    return f"{100 * x:+.1f}%"


def held_cells(ev):
    problems = ev.get("held_out", {}).get("problems", [])
    return [f"{pct(p['gap_local_search'])} / {pct(p.get('best_gap_local_search', float('nan')))}"
            for p in problems], [p["name"].split(".txt")[0].replace("gdp_", "") for p in problems]


def row(name, labels, ev, calls, seconds):
    cells, _ = held_cells(ev)
    return (f"| {name} | {labels['source']} | {pct(labels['label_gap_critical_path'])} | "
            f"{labels['improved']} | {pct(ev['pool_greedy_gap_label'])} | "
            f"{pct(ev['pool_best_gap_label'])} | " + " | ".join(cells) +
            f" | {calls / 1e6:.1f} M | {seconds / 60:.1f} |")


def header(first, ev):
    _, names = held_cells(ev)
    h = (f"| {first} | labels from | labels vs critical path | labels improved | "
         "pool greedy vs labels | pool best-of-K vs labels | " +
         " | ".join(f"{n} greedy / best-of-K vs LS" for n in names) +
         " | simulator calls (cumulative) | minutes of updates (cumulative) |")
    return h + "\n" + "|---" * (h.count("|") - 1) + "|"


def main(paths):
    runs = [(os.path.basename(os.path.dirname(os.path.abspath(p))), rounds(p)) for p in paths]
    runs = [(n, r) for n, r in runs if r]
    if not runs:
        sys.exit("no round evaluations in the logs")
    if len(runs) == 1:
        name, rs = runs[0]
        print(header("round", rs[0][1]))
        for k, (labels, ev, calls, seconds) in enumerate(rs):
            print(row(str(k), labels, ev, calls, seconds))
        return
    print(header("run, round", runs[0][1][-1][1]))
    for name, rs in runs:
        for k, r in enumerate(rs):
            print(row(f"{name}, {k}", *r))


if __name__ == "__main__":
    main(sys.argv[1:])
