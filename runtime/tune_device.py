"""Device side of convc-tune: times every candidate build of a tuning bundle on one GPU.

  python3 -m convc.runtime.tune_device --bundle B --out DIR [--iters 50]

Per model: random inputs (output buffers NaN-poisoned), the stock IREE reference build run
once, then every candidate round: its outputs must match the reference (rel. L2 within the
GPU check's tolerance, no NaN) and each convc kernel's time is the median over `iters`
back-to-back runs (CUPTI through torch.profiler, per kernel name). Prints progress; writes
DIR/tune.json, which `convc-tune collect` turns into tuning-cache entries.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys

import numpy as np

from .bench_device import device_events
from .arrays import poison, random_input, storage_dtype, to_f32
from .gpu_check import TOLERANCE, device_name
from .module import LoadedModule
from .reference import rel_l2


def kernel_times_by_name(fn, iters: int, warmup: int = 3, seen: dict | None = None) -> dict[str, float]:
    """Median device time (us) per kernel name over `iters` calls of fn.

    CUPTI sometimes delivers an IREE kernel's records in a later profiling session; every
    kernel a round compiles has a unique name, so records are also pooled by name in `seen`
    and a round's time is taken from the pool when its own session missed them."""
    per: dict[str, list[float]] = {}
    for e in device_events(lambda i: fn(), iters, warmup):
        per.setdefault(e.name, []).append(e.time_range.elapsed_us())
    if seen is not None:
        for k, v in per.items():
            seen.setdefault(k, []).extend(v)
    return {k: statistics.median(v) for k, v in per.items()}


PROFILE_ATTEMPTS = 3


def _lookup(times: dict, kernel: str):
    """Time of the kernel named `kernel` (IREE may append a suffix)."""
    return next((v for name, v in times.items() if name == kernel or name.startswith(kernel + "_")), None)


def _run(mod: LoadedModule, fn_name: str, args_spec, arrays):
    args = [mod.to_device(a, s["dtype"]) for a, s in zip(arrays, args_spec)]
    fn = mod.function(fn_name)
    res = fn(*args)
    res = list(res) if isinstance(res, (list, tuple)) else [res]
    outs = [np.array(r.to_host(), copy=True) for r in res]
    return (lambda: fn(*args)), outs


def _to_f32(host: np.ndarray, dtype: str) -> np.ndarray:
    return to_f32(host.view(storage_dtype(dtype)) if host.dtype != storage_dtype(dtype) else host, dtype)


def tune_model(bundle: str, m: dict, iters: int, seed: int, log=print, seen: dict | None = None,
               config=None) -> dict:
    """{problem: [candidate rows]} for one model of the bundle."""
    rng = np.random.default_rng(seed)
    spec = m["args"]
    arrays = [poison(s["shape"], s["dtype"]) if s["output"] else random_input(rng, s["shape"], s["dtype"])
              for s in spec]
    out_dtypes = m["results"]
    # One device (one CUDA context) for every build: CUPTI loses kernel records of contexts
    # created and destroyed between profiling sessions.
    config = config or __import__("iree.runtime", fromlist=["Config"]).Config("cuda")
    keep = [LoadedModule(os.path.join(bundle, m["reference"]), "cuda", config)]
    _, ref = _run(keep[0], m["function"], spec, arrays)
    rows: dict[str, list] = {}
    for r, rnd in enumerate(m["rounds"]):
        mod = LoadedModule(os.path.join(bundle, rnd["vmfb"]), "cuda", config)
        keep.append(mod)
        call, outs = _run(mod, m["function"], spec, arrays)
        ok, worst = True, 0.0
        for i, (got, want) in enumerate(zip(outs, ref)):
            dt = out_dtypes[i] if i < len(out_dtypes) else "f32"
            g, w = _to_f32(got, dt), _to_f32(want, dt)
            err = rel_l2(np.nan_to_num(g, nan=0.0), w)
            worst = max(worst, err)
            ok = ok and not np.isnan(g).any() and err <= TOLERANCE.get(dt, 1e-2)
        names = {prob: f"{prob}_cand{rnd['candidate']}" for prob in rnd["kernels"]}
        wanted = list(names.values())
        for _ in range(PROFILE_ATTEMPTS):      # CUPTI occasionally returns no kernel records
            times = kernel_times_by_name(call, iters, seen=seen)
            if all(_lookup(times, k) is not None for k in wanted):
                break
        for prob, k in rnd["kernels"].items():
            us = _lookup(times, names[prob])
            rows.setdefault(prob, []).append({"knobs": k["knobs"], "schedule": k["schedule"], "us": us,
                                              "ok": bool(ok), "rel_l2": worst, "round": r,
                                              "round_candidate": rnd["candidate"],
                                              **({} if us is not None else {"kernels_seen": sorted(times)[:4]})})
            log(f"  {m['name']}: round {r + 1}/{len(m['rounds'])} {k['schedule']:60s} "
                f"{us if us is not None else float('nan'):8.1f} us  {'ok' if ok else 'WRONG'}")
    return rows


def tune_bundle(bundle: str, iters: int = 50, log=print) -> dict:
    with open(os.path.join(bundle, "tune_manifest.json")) as f:
        manifest = json.load(f)
    problems: dict[str, dict] = {}
    seen: dict[str, list] = {}
    import iree.runtime as rt
    config = rt.Config("cuda")
    for i, m in enumerate(manifest["models"]):
        log(f"[{i + 1}/{len(manifest['models'])}] {m['name']}: {len(m['rounds'])} candidates")
        for prob, rows in tune_model(bundle, m, iters, seed=3000 + i, log=log, seen=seen, config=config).items():
            problems.setdefault(prob, {"candidates": []})["candidates"].extend(rows)
    kernel_times_by_name(lambda: None, 1, warmup=0, seen=seen)     # flush late records
    late = 0
    for prob, r in problems.items():
        for c in r["candidates"]:
            if c["us"] is None:
                v = seen.get(f"{prob}_cand{c['round_candidate']}")
                if v:
                    c["us"], c["late_records"] = statistics.median(v), len(v)
                    c.pop("kernels_seen", None)
                    late += 1
    log(f"{late} candidate times recovered from late profiler records")
    return {"device": device_name("cuda"), "target": manifest["target"], "commit": manifest["commit"],
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "iters": iters, "problems": problems}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="convc-tune-device", description=__doc__.splitlines()[0])
    p.add_argument("--bundle", required=True)
    p.add_argument("--out", default="tune_out")
    p.add_argument("--iters", type=int, default=50)
    a = p.parse_args(argv)
    res = tune_bundle(a.bundle, a.iters, log=lambda s: print(s, flush=True))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tune.json"), "w") as f:
        json.dump(res, f, indent=1)
    wrong = sum(1 for r in res["problems"].values() for c in r["candidates"] if not c["ok"])
    print(f"{len(res['problems'])} problems, {sum(len(r['candidates']) for r in res['problems'].values())} "
          f"candidates timed, {wrong} wrong")
    return 0


if __name__ == "__main__":
    sys.exit(main())
