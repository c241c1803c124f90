#!/usr/bin/env python3
"""The summary of scripts/threads-check.sh from its rows.jsonl: per graph, the best one-thread
method's result at T1 seconds on one thread, the same method's on N threads at TN seconds, when
the N-thread curve first reached the one-thread result and the speedup that gives (T1 over that
time), and `auto` on N threads where it ran. Writes OUT/threads.md and OUT/threads.json.

    scripts/threads_table.py ROWS_JSONL OUT CORES
"""
import json
import sys

from parallel_table import reached  # when a curve first reached a makespan


def show(x, reference_model):
    return f"{x / 1e10:.2f}" if reference_model else f"{x * 1e3:.2f} ms"


def summarise(rows):
    """One entry per graph with a one-thread run: the figures of the table."""
    out = []
    for g in dict.fromkeys(r["graph"] for r in rows):
        rs = [r for r in rows if r["graph"] == g]
        one = next((r for r in rs if r["threads_asked"] == 1), None)
        if one is None:
            continue
        many = next((r for r in rs if r["threads_asked"] > 1 and r["method"] == one["method"]),
                    None)
        auto = next((r for r in rs if r["method"] == "auto"), None)
        e = {"graph": g, "method": one["method"], "model": one["model"],
             "one_thread": {"seconds": one["budget_seconds"], "makespan": one["makespan"],
                            "calls": one.get("evaluations")}}
        if many:
            t = reached(many.get("curve", []), one["makespan"])
            e["many_threads"] = {"threads": many["threads_asked"],
                                 "seconds": many["budget_seconds"],
                                 "makespan": many["makespan"], "calls": many.get("evaluations"),
                                 "reached_at": t,
                                 "speedup": one["budget_seconds"] / t if t else None}
        if auto:
            e["auto"] = {"threads": auto["threads_asked"], "seconds": auto["budget_seconds"],
                         "makespan": auto["makespan"],
                         "ratio": auto["makespan"] / one["makespan"]}
        out.append(e)
    return out


def table(entries, cores):
    lines = [f"Machine: {cores} cores. Per row the best one-thread method; speedup = the one-thread "
             "seconds over the seconds at which the many-thread curve first reached the "
             "one-thread result.", "",
             "| graph | method | 1 thread | N threads | first reached at | speedup | auto, N threads |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for e in entries:
        ref = e["model"] == "reference"
        o, m, a = e["one_thread"], e.get("many_threads"), e.get("auto")
        many = when = speed = auto = "-"
        if m:
            many = f"{show(m['makespan'], ref)} ({m['threads']} threads, {m['seconds']:g} s)"
            when = f"{m['reached_at']:.1f} s" if m["reached_at"] else f"not within {m['seconds']:g} s"
            speed = f"{m['speedup']:.1f} x" if m["speedup"] else f"< {o['seconds'] / m['seconds']:.1f} x"
        if a:
            auto = f"{show(a['makespan'], ref)} ({a['ratio']:.3f} x 1 thread)"
        lines.append(f"| {e['graph']} | {e['method']} | {show(o['makespan'], ref)} "
                     f"({o['seconds']:g} s) | {many} | {when} | {speed} | {auto} |")
    return "\n".join(lines) + "\n"


def main(rows_path, out, cores):
    rows = [json.loads(line) for line in open(rows_path) if line.strip()]
    entries = summarise(rows)
    json.dump({"cores": int(cores), "rows": entries}, open(f"{out}/threads.json", "w"), indent=2)
    md = table(entries, cores)
    open(f"{out}/threads.md", "w").write(md)
    print(md, end="")


if __name__ == "__main__":
    main(*sys.argv[1:4])
