"""Determinism, concurrency and soak checks of compiled layers through the IREE runtime.

  python3 -m convc.tools.gpu.stress --bundle B [--json OUT] [--runs 100] [--threads 8]
          [--soak 10000]

- determinism: each layer, the same inputs, `--runs` invocations: every output bitwise
  identical to the first (split-K and stream-K reduce in a fixed order, so they must be too).
- concurrency: `--threads` threads on the one GPU, invoking the same vmfb (half of them) and
  different vmfbs (the other half) at once, several rounds each: every output bitwise identical
  to that layer's sequential output. Each thread creates its own (uncached) IREE device and loads
  its module in the thread: IREE 3.13's CUDA HAL works in the CUDA context of the thread that
  created the device (allocations and module loads from another thread fail with
  CUDA_ERROR_INVALID_CONTEXT), and `rt.Config("cuda")` returns the process's cached device.
- soak: `--soak` back-to-back invocations in one process, round-robin over the layers, with
  device memory in use (NVML through nvidia-smi) and host RSS sampled every tenth of the run;
  after the first tenth (allocator pools warm) neither may grow by more than a small bound.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import threading
import time

import iree.runtime as rt
import numpy as np

from ...runtime.arrays import digest, layer_arguments, poison
from ...runtime.module import LoadedModule
from ..layers import Layer
from .check import device_name

DEVICE_GROWTH_MIB = 64        # allowed growth of device memory in use after warm-up
HOST_GROWTH_MIB = 64          # ... and of the host's resident set



def _manifest(bundle: str) -> dict:
    with open(os.path.join(bundle, "manifest.json")) as f:
        return json.load(f)


def _layers(bundle: str, only) -> list[tuple[Layer, str, list, tuple]]:
    manifest = _manifest(bundle)
    out = []
    for i, e in enumerate(manifest["layers"]):
        L = Layer(**e["layer"])
        if not e.get("ok") or (only and L.name not in only):
            continue
        rng = np.random.default_rng(100 + i)
        inputs, _ = layer_arguments(L, rng)
        out.append((L, os.path.join(bundle, e["vmfb"]), inputs, (L.output_shape(), L.out_dtype)))
    return out


def _call(mod: LoadedModule, inputs, out_spec) -> np.ndarray:
    shape, dtype = out_spec
    return mod.call("main", inputs, (poison(shape, dtype), dtype))


def determinism(config, driver: str, layers, runs: int) -> list[dict]:
    rows = []
    for L, vmfb, inputs, out_spec in layers:
        mod = LoadedModule(vmfb, driver, config=config)
        first = digest(_call(mod, inputs, out_spec))
        differing = sum(digest(_call(mod, inputs, out_spec)) != first for _ in range(runs - 1))
        rows.append({"layer": L.name, "runs": runs, "differing": differing, "digest": first})
        print(f"  determinism {L.name:22s} {runs} runs, {differing} differ", flush=True)
    return rows


def concurrency(config, driver: str, layers, threads: int, rounds: int = 20) -> dict:
    """Thread k runs layer 0 if k is even (the same vmfb), else layer (k // 2) % n (different ones)."""
    expected = {}
    for L, vmfb, inputs, out_spec in layers:
        expected[L.name] = digest(_call(LoadedModule(vmfb, driver, config=config), inputs, out_spec))
    picks = [layers[0] if k % 2 == 0 else layers[(k // 2) % len(layers)] for k in range(threads)]
    results: list[list[str]] = [[] for _ in range(threads)]
    errors: list[str] = []
    start = threading.Barrier(threads)

    def work(k):
        L, vmfb, inputs, out_spec = picks[k]
        try:
            own = rt.Config(device=rt.get_device(driver, cache=False))     # see the module doc
            mod = LoadedModule(vmfb, driver, config=own)
        except Exception as e:
            errors.append(f"thread {k} ({L.name}) load: {str(e).splitlines()[0]}")
            start.abort()
            return
        try:
            start.wait()
            for _ in range(rounds):
                results[k].append(digest(_call(mod, inputs, out_spec)))
        except Exception as e:           # recorded: a failure, not a crash of the check
            errors.append(f"thread {k} ({L.name}): {str(e).splitlines()[0]}")

    ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    mismatched = sum(d != expected[picks[k][0].name] for k in range(threads) for d in results[k])
    row = {"threads": threads, "rounds": rounds, "layers": [p[0].name for p in picks],
           "invocations": sum(len(r) for r in results), "mismatched": mismatched, "errors": errors}
    print(f"  concurrency {threads} threads x {rounds} rounds: {row['invocations']} invocations, "
          f"{mismatched} differ from sequential, {len(errors)} errors", flush=True)
    return row


def _device_mib() -> float | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0"],
                             capture_output=True, text=True, timeout=20).stdout
        return float(out.split()[0])
    except Exception:
        return None


def _host_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def soak(config, driver: str, layers, count: int) -> dict:
    mods = [(LoadedModule(vmfb, driver, config=config), inputs, out_spec) for _, vmfb, inputs, out_spec in layers]
    samples = []
    t0 = time.perf_counter()
    step = max(count // 10, 1)
    for n in range(count):
        mod, inputs, out_spec = mods[n % len(mods)]
        _call(mod, inputs, out_spec)
        if n % step == step - 1:
            samples.append({"invocations": n + 1, "device_mib": _device_mib(), "host_mib": round(_host_mib(), 1)})
            print(f"  soak {n + 1}/{count}: device {samples[-1]['device_mib']} MiB, host RSS "
                  f"{samples[-1]['host_mib']} MiB", flush=True)
    warm = samples[0]
    dev = [s["device_mib"] for s in samples if s["device_mib"] is not None]
    device_growth = (max(dev) - warm["device_mib"]) if dev and warm["device_mib"] is not None else None
    host_growth = max(s["host_mib"] for s in samples) - warm["host_mib"]
    return {"invocations": count, "seconds": round(time.perf_counter() - t0, 1), "samples": samples,
            "device_growth_mib": device_growth, "host_growth_mib": round(host_growth, 1),
            "ok": (device_growth is None or device_growth <= DEVICE_GROWTH_MIB) and host_growth <= HOST_GROWTH_MIB}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="convc.tools.gpu.stress", description=__doc__.splitlines()[0])
    p.add_argument("--bundle", required=True, help="bundle directory with manifest.json")
    p.add_argument("--only", help="comma-separated layer names")
    p.add_argument("--runs", type=int, default=100, help="determinism: invocations per layer (default 100)")
    p.add_argument("--threads", type=int, default=8, help="concurrency: threads (default 8)")
    p.add_argument("--soak", type=int, default=10000, help="soak: back-to-back invocations (default 10000)")
    p.add_argument("--driver", default="cuda", help="IREE HAL driver (default cuda)")
    p.add_argument("--parts", default="determinism,concurrency,soak", help="which checks to run (default all)")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args(argv)
    layers = _layers(args.bundle, set(args.only.split(",")) if args.only else None)
    config, driver = rt.Config(args.driver), args.driver
    parts = set(args.parts.split(","))
    det = determinism(config, driver, layers, args.runs) if "determinism" in parts else []
    con = concurrency(config, driver, layers, args.threads) if "concurrency" in parts else \
        {"mismatched": 0, "errors": [], "skipped": True}
    soa = soak(config, driver, layers, args.soak) if "soak" in parts else \
        {"ok": True, "device_growth_mib": None, "host_growth_mib": None, "invocations": 0, "skipped": True}
    ok = (all(r["differing"] == 0 for r in det) and con["mismatched"] == 0 and not con["errors"] and soa["ok"])
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "device": device_name(args.driver), "bundle": _manifest(args.bundle)["commit"],
              "determinism": det, "concurrency": con, "soak": soa, "ok": ok}
    print(f"determinism: {sum(r['differing'] == 0 for r in det)}/{len(det)} layers bitwise stable; concurrency: "
          f"{con['mismatched']} mismatches, {len(con['errors'])} errors; soak: device +{soa['device_growth_mib']} MiB, "
          f"host +{soa['host_growth_mib']} MiB over {soa['invocations']} invocations -> {'OK' if ok else 'FAIL'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
