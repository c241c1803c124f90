#!/usr/bin/env python3
"""The table of scripts/parallel_results.sh from its rows.jsonl: per graph, the best
single-thread method at T s, the same method on N threads at a share of T as N chains and as
N speculative lanes (and when each curve first reached the single-thread result), and auto on N
threads at T s with its ratio to the single-thread result, when it first reached that result
and the member that won."""
import json
import sys


def reached(curve, target):
    """Seconds at which a curve first reached `target` (None if never)."""
    for seconds, _calls, makespan in curve:
        if makespan <= target * (1 + 1e-12):
            return seconds
    return None


def show(x, seconds_unit):
    return f"{x * 1e3:.2f} ms" if seconds_unit else f"{x / 1e10:.2f}"


def winner(row):
    note = row.get("status", "")
    return note.split("; best ")[-1].split(",")[0] if "; best " in note else note[:40]


def main(path):
    rows = [json.loads(line) for line in open(path)]
    print("| graph | method | 1 thread, T s | N chains, share of T (first reach the 1-thread "
          "result at) | N lanes, share of T (first reach at) | auto, N threads, T s (first reach "
          "at) | auto / 1-thread | auto's winner |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for g in dict.fromkeys(r["graph"] for r in rows):
        rs = [r for r in rows if r["graph"] == g]
        one = next(r for r in rs if r["threads"] == 1)
        many = [r for r in rs if r["threads"] > 1 and r["method"] == one["method"]]
        chains = next(r for r in many if r.get("lanes", 1) == 1)
        lanes = next((r for r in many if r.get("lanes", 1) > 1), None)
        auto = next(r for r in rs if r["method"] == "auto")
        sec = one["model"] != "reference"

        def cell(r):
            if r is None:
                return "-"
            t = reached(r.get("curve", []), one["makespan"])
            when = f"{t:.1f} s" if t is not None else "not within the run"
            return f"{show(r['makespan'], sec)} ({r['budget_seconds']:g} s; {when})"

        print(f"| {g} ({sum(one['ops_per_device']):,} ops, {one['devices']} devices) | "
              f"{one['method']} | {show(one['makespan'], sec)} ({one['budget_seconds']:g} s) | "
              f"{cell(chains)} | {cell(lanes)} | {cell(auto)} | "
              f"{auto['makespan'] / one['makespan']:.3f} | {winner(auto)} |")


if __name__ == "__main__":
    main(sys.argv[1])
