#!/usr/bin/env python3
"""The summary (docs/results/distillation.md) of scripts/search_results.sh runs: per problem, the policy's greedy
placement against ETF, zero-shot best of 64 against local-search with 20,000 calls, and
doppler-search against local-search at equal calls and equal seconds, for one model or two
(the second: the same script run with DOPPLER_MODEL set to another model, same seeds).
Usage: search_summary.py OUT/results.csv [OTHER/results.csv NAME NAME2]"""
import csv
import sys


def load(path):
    out = {}
    for r in csv.DictReader(open(path)):
        out[(r["problem"], r["label"])] = r
    return out


def rel(a, b):
    return f"{100 * (float(a) / float(b) - 1):+.1f}%"


def cells(t, p):
    etf = t[(p, "etf")]["makespan_mean"]
    ls20 = t[(p, "local-search 20k")]["makespan_mean"]
    c = [rel(t[(p, "greedy")]["makespan_mean"], etf),
         rel(t[(p, "zero-shot K=64")]["makespan_mean"], ls20)]
    for b in ["1k", "4k", "20k", "1 s", "10 s"]:
        d, l = t.get((p, f"doppler-search {b}")), t.get((p, f"local-search {b}"))
        c.append(rel(d["makespan_mean"], l["makespan_mean"]) if d and l else "-")
    return c


def main(args):
    a = load(args[0])
    b = load(args[1]) if len(args) > 1 else None
    names = args[2:4] if len(args) > 3 else ["", "other"]
    problems = sorted({p for p, _ in a})
    cols = ["greedy vs ETF", "K=64 vs LS 20k", "DS vs LS 1k", "4k", "20k", "1 s", "10 s"]
    head = "| problem (ops, devices, model) | " + " | ".join(cols)
    if b:
        head = head.replace("| greedy", f"| {names[0]}: greedy") + " | " + names[1] + ": " + \
            " | ".join(cols[:6])
    print(head + " |")
    print("|---" + "|---:" * (head.count("|") - 1) + "|")
    for p in problems:
        r = a[(p, "etf")]
        row = f"| {p} ({r['ops']}, {r['devices']}, {r['model']}) | " + " | ".join(cells(a, p))
        if b:
            row += " | " + " | ".join(cells(b, p)[:6])
        print(row + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
