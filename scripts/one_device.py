#!/usr/bin/python3
"""The best placement of each row of scripts/vision_results.sh's output against one device, and
the unpartitioned model placed.

Usage: scripts/one_device.py BUILD_DIR OUT_DIR [OUT_DIR ...]

For every OUT_DIR/<model>-<size>/ with a model.onnx: the model imported for one device
(`doppler import --devices 1`: every op one block, no partition), simulated on one device of each
profile the row was placed on (`doppler simulate --devices 1 --hardware HW`, the whole graph on
device 0), and placed on all of the profile's devices by `local-search` and
`multilevel:inner=dsc` (2,000 calls, seed 0; `doppler compare`), beside the best mean makespan
of the row's methods on the partitioned graph (its compare*.json files, pooled as
scripts/vision_results_table.py pools them). Prints a Markdown table; the ratios are to one
device (above 1: the one device is faster).
"""
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vision_results_table import label, pooled  # noqa: E402  (scripts/vision_results_table.py)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"one_device.py: {' '.join(cmd)} failed: {r.stderr.strip()}")
    return r.stdout


def one_device_seconds(doppler, onnx_dir, hw):
    graph, assignment = (os.path.join(onnx_dir, f) for f in ("one-device.json", "one-device-a.json"))
    if not os.path.isfile(graph):
        run([doppler, "-q", "import", os.path.join(onnx_dir, "model.onnx"), "--devices", "1",
             "-o", graph])
    nodes = len(json.load(open(graph))["nodes"])
    with open(assignment, "w") as f:
        json.dump([0] * nodes, f)
    text = run([doppler, "simulate", graph, "--assignment", assignment, "--devices", "1",
                "--hardware", hw])
    value, unit = re.search(r"makespan\s+([0-9.]+) (us|ms|s)\b", text).groups()
    return float(value) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[unit], nodes


def whole_ops_placed(doppler, onnx_dir, hw, devices):
    """The best of local-search and multilevel:inner=dsc placing the unpartitioned model on
    `devices` devices of `hw` (2,000 calls, seed 0): (seconds, method)."""
    out = os.path.join(onnx_dir, f"one-device-{hw}-compare.json")
    if not os.path.isfile(out):
        run([doppler, "-q", "compare", os.path.join(onnx_dir, "one-device.json"), "--devices",
             str(devices), "--hardware", hw, "--methods", "local-search,multilevel:inner=dsc",
             "--budget", "2000", "--seeds", "1", "--json-file", out])
    return min((m["makespans"][0], m["method"]) for m in json.load(open(out))["methods"])


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    doppler = os.path.join(argv[0], "doppler")
    print("| model | batch | profile | best placement (method) | one device, unpartitioned "
          "(ops) | best / one device | unpartitioned, placed (method) | placed / one device |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for out in argv[1:]:
        for onnx_dir in sorted(glob.glob(os.path.join(out, "*-b*"))):
            if not os.path.isfile(os.path.join(onnx_dir, "model.onnx")):
                continue
            model, size = os.path.basename(onnx_dir).rsplit("-", 1)
            for hw in sorted(os.listdir(onnx_dir)):
                files = sorted(glob.glob(os.path.join(onnx_dir, hw, "compare*.json")))
                if not files:
                    continue
                cmp_ = pooled(files)
                ms = [(sum(m["makespans"]) / len(m["makespans"]), label(m["method"]))
                      for m in cmp_["methods"] if m["makespans"]]
                best, method = min(ms)
                one, ops = one_device_seconds(doppler, onnx_dir, hw)
                whole, how = whole_ops_placed(doppler, onnx_dir, hw, cmp_["devices"])
                print(f"| {model} | {size[1:]} | {cmp_['devices']} x {hw} | {best * 1e3:.3g} ms "
                      f"({method}) | {one * 1e3:.3g} ms ({ops}) | {best / one:.2f} | "
                      f"{whole * 1e3:.3g} ms ({how}) | {whole / one:.2f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
