#!/usr/bin/env python3
"""Place a torchvision model on 4 V100s with doppler.from_torch: the five lines below `main`.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/place_torchvision.py
    ... --model mobilenet_v2 --devices 8 --hardware a100 --seconds 10 --json

ResNet-18 (random weights: placement needs shapes, not trained values), batch 1, 224 x 224,
exported through ONNX and blocked for the devices; `place` runs the default method, `auto`, for
a few seconds. Prints the simulated makespan, the lower bound and the list scheduler HEFT's
makespan for comparison. Needs Debian's python3-torch and python3-torchvision.
"""
import argparse
import json

import torch
import torchvision

import doppler


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="resnet18", help="a torchvision.models constructor")
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--hardware", default="v100", help="a hardware profile (docs/hardware.md)")
    ap.add_argument("--seconds", type=float, default=5.0, help="time budget of the placement")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of text")
    args = ap.parse_args()

    model = getattr(torchvision.models, args.model)(weights=None)
    graph = doppler.from_torch(model, torch.randn(1, 3, 224, 224), devices=args.devices)
    problem = doppler.Problem(graph, devices=args.devices, hardware=args.hardware)
    placement = doppler.place(problem, time_budget=args.seconds, seed=0)
    heft = doppler.place(problem, "heft")

    out = {"model": args.model, "ops": graph.num_ops, "devices": args.devices,
           "hardware": args.hardware, "makespan": placement.makespan,
           "lower_bound": problem.lower_bound, "heft": heft.makespan,
           "method": placement.method, "note": placement.note,
           "ops_per_device": [int((placement.assignment == d).sum())
                              for d in range(args.devices)]}
    if args.json:
        print(json.dumps(out))
        return
    print(f"{args.model}: {graph.num_ops} ops on {args.devices} x {args.hardware}")
    print(f"makespan     {placement.makespan * 1e3:.3f} ms  "
          f"({placement.method}, {args.seconds:g} s)")
    print(f"lower bound  {problem.lower_bound * 1e3:.3f} ms")
    print(f"heft         {heft.makespan * 1e3:.3f} ms")
    print(f"ops/device   {' / '.join(map(str, out['ops_per_device']))}")


if __name__ == "__main__":
    main()
