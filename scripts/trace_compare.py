#!/usr/bin/env python3
"""Op-by-op comparison of an engine trace and a simulated trace of the same assignment.

    scripts/trace_compare.py GRAPH.json MEASURED_TRACE.json SIMULATED_TRACE.json

The traces are `doppler execute --trace` and `doppler simulate --trace` outputs (Chrome trace
events: pid 0 = ops with args.op and args.ready, pid 1 = copies). Prints, for both: summed op
time, per-op duration ratios, per-device busy share of its span, copies, and the latency from a
producer's finish to its consumer's ready time when the consumer's last input is local or comes
from another device (where a CPU engine's copy worker has to wake up and share a core).
"""
import json
import statistics as st
import sys


def load_ops(path):
    ev = json.load(open(path))
    if isinstance(ev, dict):
        ev = ev.get("traceEvents", [])
    ops, copies = {}, []
    for e in ev:
        if e.get("ph") != "X":
            continue
        if e["pid"] == 0:
            ops[e["args"]["op"]] = (e["ts"], e["dur"], e["args"]["ready"], e["tid"])
        else:
            copies.append(e["dur"])
    return ops, copies


def input_latency(ops, preds):
    """(local, remote) lists of consumer ready time minus its last producer's finish (us)."""
    local, remote = [], []
    for v, (_, _, ready, dev) in ops.items():
        ps = [u for u in preds.get(v, []) if u in ops]
        if not ps:
            continue
        u = max(ps, key=lambda u: ops[u][0] + ops[u][1])
        (local if ops[u][3] == dev else remote).append(ready - (ops[u][0] + ops[u][1]))
    return local, remote


def report(name, ops, copies, preds):
    total = sum(d for _, d, _, _ in ops.values())
    print(f"{name}: {len(ops)} ops, summed op time {total / 1e3:.3f} ms, "
          f"{len(copies)} copy records taking {sum(copies) / 1e3:.3f} ms")
    for dev in sorted({o[3] for o in ops.values()}):
        mine = [o for o in ops.values() if o[3] == dev]
        busy = sum(o[1] for o in mine)
        span = max(o[0] + o[1] for o in mine) - min(o[0] for o in mine)
        print(f"  device {dev}: busy {busy / 1e3:.3f} of {span / 1e3:.3f} ms ({100 * busy / span:.0f}%)")
    local, remote = input_latency(ops, preds)
    for what, xs in (("local", local), ("remote", remote)):
        if xs:
            print(f"  last input {what}: {len(xs)} ops, ready after the producer's finish: "
                  f"median {st.median(xs):.1f} us, total {sum(xs) / 1e3:.3f} ms")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    g = json.load(open(sys.argv[1]))
    preds = {}
    for e in g["edges"]:
        preds.setdefault(e[1], []).append(e[0])
    measured, mc = load_ops(sys.argv[2])
    simulated, sc = load_ops(sys.argv[3])
    report("measured", measured, mc, preds)
    report("simulated", simulated, sc, preds)
    common = [v for v in measured if v in simulated and simulated[v][1] > 0]
    ratios = sorted(measured[v][1] / simulated[v][1] for v in common)
    if ratios:
        print(f"per-op duration measured / simulated: median {st.median(ratios):.2f}, "
              f"p10 {ratios[len(ratios) // 10]:.2f}, p90 {ratios[9 * len(ratios) // 10]:.2f}")


if __name__ == "__main__":
    main()
