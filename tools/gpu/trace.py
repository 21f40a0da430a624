"""Per-phase timeline of the warp-specialized kernel on a GPU (developer diagnostic).

  CONVC_TRACE=1 convc-suite compile --ptx --only LAYERS --out BUNDLE      (here)
  python3 -m convc.tools.gpu.trace --bundle BUNDLE                   (GPU machine, CuPy)

Launches each layer's PTX directly (CuPy; the same kernel IREE would launch, with a scratch
buffer large enough for the trace records of passes/lower/nvidia/trace.py), then prints, per
event, the time from the kernel's first CTA start across CTAs (min / median / max, us), and
the kernel's own time measured with CUDA events over repeated launches. --cold evicts L2
(writes a buffer larger than it) before the traced launch, as convc-bench's rotating inputs
leave most operands in DRAM.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re

import numpy as np

from ...passes.problem import DTYPE_BYTES
from ...passes.trace_events import EVENTS, RECORD_BYTES
from ..layers import Layer

MAX_DYNAMIC_SMEM = 232448


def _buffer_bytes(layer: dict) -> int:
    """Every operand/output buffer gets the largest tensor's size (reads stay in the maps)."""
    L = Layer(**layer)
    sizes = [math.prod(shape) * DTYPE_BYTES[dt] for shape, dt in L.input_shapes()]
    return max(sizes + [math.prod(L.output_shape()) * DTYPE_BYTES[L.out_dtype]])


L2_EVICT_BYTES = 256 << 20          # several times any Hopper L2


def trace_layer(bundle: str, entry: dict, iters: int, cold: bool = False, per_cta: bool = False) -> dict:
    import cupy as cp
    s, L = entry["schedule"], entry["layer"]
    ptx = open(os.path.join(bundle, entry["ptx"])).read()
    name = re.search(r"\.entry\s+(\w+)\(", ptx).group(1)
    nparams = len(re.findall(r"\.param \.u64", ptx.split(".entry", 1)[1].split(")", 1)[0]))
    mod = cp.RawModule(path=os.path.join(bundle, entry["ptx"]))
    kern = mod.get_function(name)
    smem = min(s["smem_bytes"] + 1024, MAX_DYNAMIC_SMEM)
    kern.max_dynamic_shared_size_bytes = smem
    nbytes = _buffer_bytes(L)
    bufs = [cp.asarray(np.random.default_rng(i).standard_normal(nbytes // 2).astype(np.float16)).view(cp.uint8)
            for i in range(nparams - 1)]
    grid = s["grid"][0]
    scratch = cp.zeros(s["scratch_bytes"] + grid * RECORD_BYTES, dtype=cp.uint8)
    args = tuple(bufs) + (scratch,)
    launch = lambda: kern((grid, 1, 1), (s["threads"], 1, 1), args, shared_mem=smem)
    for _ in range(5):
        launch()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(iters):
        launch()
    stop.record()
    stop.synchronize()
    kernel_us = cp.cuda.get_elapsed_time(start, stop) * 1000 / iters
    scratch[s["scratch_bytes"]:] = 0
    if cold:
        cp.empty(L2_EVICT_BYTES, dtype=cp.uint8).fill(1)
    launch()
    cp.cuda.Device().synchronize()
    rec = cp.asnumpy(scratch[s["scratch_bytes"]:]).view(np.uint64).reshape(grid, RECORD_BYTES // 8)
    t0 = rec[:, EVENTS.index("start")].min()
    out = {"layer": L["name"], "kernel": entry["dispatches"][0]["kernel"], "kernel_us": kernel_us, "events": {}}
    for i, ev in enumerate(EVENTS):
        col = rec[:, i]
        if ev == "tiles":
            out["tiles"] = [int(col.min()), int(col.max())]
            continue
        valid = col[col > 0].astype(np.int64) - int(t0)
        if valid.size:
            out["events"][ev] = [float(valid.min()) / 1e3, float(np.median(valid)) / 1e3,
                                 float(valid.max()) / 1e3, int(valid.size)]
            if per_cta:
                # per CTA (by block index), us from the first start; None where not stamped
                out.setdefault("per_cta", {})[ev] = [round((int(v) - int(t0)) / 1e3, 3) if v > 0 else None
                                                     for v in col]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="convc.tools.gpu.trace", description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", required=True, help="bundle compiled with CONVC_TRACE=1 and --ptx")
    ap.add_argument("--out", help="JSON file for the per-phase times")
    ap.add_argument("--iters", type=int, default=20, help="traced launches (default 20)")
    ap.add_argument("--cold", action="store_true", help="evict L2 before the traced launch")
    ap.add_argument("--per-cta", action="store_true", help="also write every CTA's event times (--out)")
    args = ap.parse_args(argv)
    man = json.load(open(os.path.join(args.bundle, "manifest.json")))
    results = []
    for entry in man["layers"]:
        s = entry.get("schedule") or {}
        if not entry.get("ptx") or not s.get("kernel", "").startswith("sm90_ws"):
            continue
        try:
            r = trace_layer(args.bundle, entry, args.iters, args.cold, args.per_cta)
        except Exception as e:               # report and go on with the next layer
            print(f"{entry['layer']['name']}: {type(e).__name__}: {e}", flush=True)
            continue
        results.append(r)
        print(f"\n{r['layer']}  {r['kernel']}  kernel {r['kernel_us']:.1f} us  tiles/CTA {r['tiles']}")
        print(f"  {'event':16s} {'min':>7s} {'median':>7s} {'max':>7s}  CTAs   (us from the first CTA start)")
        for ev, (lo, med, hi, n) in r["events"].items():
            print(f"  {ev:16s} {lo:7.2f} {med:7.2f} {hi:7.2f}  {n}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"commit": man.get("commit"), "cold_l2": args.cold, "layers": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
