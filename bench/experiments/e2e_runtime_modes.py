"""Experiment: one inference's time under IREE runtime modes, per convc-e2e bundle and case.

  python3 bench/experiments/e2e_runtime_modes.py BUNDLE[,BUNDLE...] --only a,b   (GPU side, after env.sh)

For every case of every bundle (bundles built with different iree-compile flags, e.g.
--iree-hal-indirect-command-buffers=false), iree-benchmark-module's median with the default
runtime (CUDA streams) and with --cuda_use_streams=false (CUDA graph command buffers), and the
vmfb's program structure (submissions, waits, allocations, dispatches recorded per call).
Tells whether a mode replays a recorded inference or records it on every call.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

MODES = {"streams": (), "graphs": ("--cuda_use_streams=false",)}


def main(argv=None) -> int:
    from convc.compiler.structure import program_structure
    from convc.tools.gpu.e2e import _DT, _benchmark_module, _torch_model
    p = argparse.ArgumentParser()
    p.add_argument("bundles")
    p.add_argument("--only", default="")
    args = p.parse_args(argv)
    rows = []
    for bundle in args.bundles.split(","):
        with open(os.path.join(bundle, "manifest.json")) as f:
            manifest = json.load(f)
        for entry in manifest["cases"]:
            case = entry["case"]
            if args.only and case["name"] not in args.only.split(","):
                continue
            model = _torch_model(case)
            dt = _DT[case.get("dtype", "float16")][0]
            import torch
            model = model.to(getattr(torch, case.get("dtype", "float16")))
            params = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()
                      if k in set(entry["parameters"])}
            vmfb = os.path.join(bundle, entry["convc_vmfb"])
            row = {"bundle": os.path.basename(bundle), "iree_flags": manifest.get("iree_flags"), "case": case["name"],
                   "structure": [s.line() for s in program_structure(vmfb)]}
            for mode, flags in MODES.items():
                row[mode] = _benchmark_module(vmfb, params, case["input_shape"], dt, flags=flags)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
