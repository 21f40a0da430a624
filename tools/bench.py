"""convc-bench: time convc kernels against stock IREE, cuDNN and PyTorch eager on a GPU.

  convc-bench prepare [--suite FILE] [--only a,b] --out BUNDLE     (here: compiles everything)
  tools/device/bench.sh BUNDLE                                      (on the GPU machine)
  convc-bench report BUNDLE_RESULTS.json [--png chart.png]          (tables from a results file)

`prepare` compiles every layer twice: with convc (default schedule, sm_90a) and with stock
IREE 3.13 (`--iree-hal-target-device=cuda --iree-cuda-target=sm_80`, what IREE users on Hopper
get today). The bundle is self-contained: models, vmfbs and a manifest; the device side
(`convc.tools.gpu.bench`) needs only iree-base-runtime and PyTorch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from ..compiler.errors import ConvcError
from ..compiler.iree_tools import iree_compile
from .gpu.bench_report import plot, print_report
from .layers import load_suite
from .suite import compile_suite, select

STOCK_IREE_FLAGS = ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"]


def prepare(layers, out: str, target: str = "sm_90a", tuning_cache: str = "none") -> dict:
    manifest = compile_suite(layers, target, out, keep_ptx=True, tuning_cache=tuning_cache)
    for entry in manifest["layers"]:
        name = entry["layer"]["name"]
        src = os.path.join(out, f"{name}.mlir")
        vmfb = f"{name}.iree_sm80.vmfb"
        t0 = time.perf_counter()
        try:
            iree_compile([src, *STOCK_IREE_FLAGS, "-o", os.path.join(out, vmfb)], "the stock IREE baseline")
            entry["iree_vmfb"] = vmfb
        except ConvcError as e:
            entry["iree_error"] = str(e)
        entry["iree_compile_s"] = round(time.perf_counter() - t0, 3)
        print(f"{name:28s} stock IREE {entry['iree_compile_s']:.2f} s", flush=True)
    manifest["baseline_flags"] = STOCK_IREE_FLAGS
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def parse_arguments(argv=None):
    p = argparse.ArgumentParser(prog="convc-bench", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="action", required=True)
    pp = sub.add_parser("prepare")
    pp.add_argument("--out", required=True, help="bundle directory to write")
    pp.add_argument("--suite", help="suite JSON (default: the bundled project suite)")
    pp.add_argument("--only", help="comma-separated layer names")
    pp.add_argument("--target", default="sm_90a", help="convc target (default sm_90a)")
    pp.add_argument("--tuning-cache", default="none",
                    help="compile with the winners of a convc-tune cache (default: default schedules)")
    pr = sub.add_parser("report")
    pr.add_argument("results", help="bench.json written by tools/device/bench.sh")
    pr.add_argument("--png", help="also draw the chart to this PNG file")
    return p.parse_args(argv)


def main(args) -> int:
    try:
        if args.action == "prepare":
            m = prepare(select(load_suite(args.suite), args.only), args.out, args.target, args.tuning_cache)
            return 0 if all(e["ok"] and "iree_vmfb" in e for e in m["layers"]) else 1
        with open(args.results) as f:
            res = json.load(f)
        print_report(res)
        if args.png:
            plot(res, args.png)
        return 0
    except (ConvcError, OSError, ValueError, KeyError) as e:
        print(f"convc-bench: error: {e}", file=sys.stderr)
        return 1


def _cli_main():
    sys.exit(main(parse_arguments()))
