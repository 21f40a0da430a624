"""Invoke every layer of a bundle once, in one process, for compute-sanitizer.

  compute-sanitizer --tool memcheck python3 -m convc.tools.gpu.sanitize --bundle B [--only a,b]

One process per sanitizer tool keeps the run short (the sanitizer's start-up dominates a small
kernel); a `== layer NAME` line precedes each layer's launch so a report can be read against
it, and `--only` reruns one layer alone to attribute a finding. Inputs are random, the output
is poisoned; the vmfb is loaded as a heap copy (a read-only mapping makes the CUDA HAL issue a
failing host-register call, which memcheck would report although the runtime recovers).
Correctness is the GPU check's job; this only launches.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import iree.runtime as rt
import numpy as np

from ...runtime.arrays import layer_arguments
from ...runtime.module import LoadedModule
from ..layers import Layer


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="convc.tools.gpu.sanitize", description=__doc__.splitlines()[0])
    p.add_argument("--bundle", required=True, help="bundle directory with manifest.json")
    p.add_argument("--only", help="comma-separated layer names")
    p.add_argument("--driver", default="cuda", help="IREE HAL driver (default cuda)")
    p.add_argument("--count", type=int, default=1, help="invocations per layer (default 1)")
    args = p.parse_args(argv)
    with open(os.path.join(args.bundle, "manifest.json")) as f:
        manifest = json.load(f)
    only = set(args.only.split(",")) if args.only else None
    config = rt.Config(args.driver)
    failed = 0
    for i, entry in enumerate(manifest["layers"]):
        L = Layer(**entry["layer"])
        if (only and L.name not in only) or not entry.get("ok"):
            continue
        kernel = next((d["kernel"] for d in entry.get("dispatches", []) if d.get("kernel")), "IREE")
        print(f"== layer {L.name}: {kernel}", flush=True)
        rng = np.random.default_rng(i)
        inputs, out = layer_arguments(L, rng)
        try:
            mod = LoadedModule(os.path.join(args.bundle, entry["vmfb"]), args.driver, config=config, mmap=False)
            for _ in range(args.count):
                mod.call("main", inputs, (out[0].copy(), out[1]))
        except Exception as e:       # keep going: the sanitizer's report is the verdict
            failed += 1
            print(f"== layer {L.name}: runtime error: {str(e).splitlines()[0]}", flush=True)
    print(f"== done, {failed} runtime errors", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
