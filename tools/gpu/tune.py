"""Device side of convc-tune: times every candidate build of a tuning bundle on one GPU.

  python3 -m convc.tools.gpu.tune --bundle B --out DIR [--iters 50] [--rotate 4]

Per model: random inputs (output buffers NaN-poisoned), the stock IREE reference build run
once, then every candidate round: its outputs must match the reference (rel. L2 within the
GPU check's tolerance, no NaN) and each convc kernel's time is the median over `iters`
back-to-back runs (CUPTI through torch.profiler, per kernel name) that cycle through `rotate`
input sets, as convc-bench does: with one set, a layer whose tensors fit the L2 cache is timed
hot, which favoured schedules that lost once their operands came from DRAM (H200: a swapped
1x1 schedule tuned at 6.7 us against 7.7 timed 9.6-9.7 both ways in the benchmark). Prints progress; writes
DIR/tune.json, which `convc-tune collect` turns into tuning-cache entries.

Each model runs in a child process that reports every finished round. A candidate that hangs
(no round finished within --round-timeout seconds) or kills its process (a faulting kernel
poisons the CUDA context) is recorded as failed, with the reason, and the model resumes in a
fresh process at the next round: one bad build never stalls or ends a tuning run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from ...runtime.arrays import poison, random_input, storage_dtype, to_f32
from ...runtime.module import LoadedModule
from .bench import device_events
from .check import TOLERANCE, device_name
from .reference import rel_l2


def kernel_times_by_name(fn, iters: int, warmup: int = 3, seen: dict | None = None) -> dict[str, float]:
    """Median device time (us) per kernel name over `iters` calls fn(i).

    CUPTI sometimes delivers an IREE kernel's records in a later profiling session; every
    kernel a round compiles has a unique name, so records are also pooled by name in `seen`
    and a round's time is taken from the pool when its own session missed them."""
    per: dict[str, list[float]] = {}
    for e in device_events(fn, iters, warmup):
        per.setdefault(e.name, []).append(e.time_range.elapsed_us())
    if seen is not None:
        for k, v in per.items():
            seen.setdefault(k, []).extend(v)
    return {k: statistics.median(v) for k, v in per.items()}


PROFILE_ATTEMPTS = 3
ROTATE = 4                      # input sets timed in turn (convc-bench's default too)


def _lookup(times: dict, kernel: str):
    """Time of the kernel named `kernel` (IREE may append a suffix)."""
    return next((v for name, v in times.items() if name == kernel or name.startswith(kernel + "_")), None)


def _run(mod: LoadedModule, fn_name: str, args_spec, array_sets):
    """Runs the function once on the first input set; returns (call(i): a run on set
    i % len(array_sets), that run's outputs on the host)."""
    sets = [[mod.to_device(a, s["dtype"]) for a, s in zip(arrays, args_spec)] for arrays in array_sets]
    fn = mod.function(fn_name)
    res = fn(*sets[0])
    res = list(res) if isinstance(res, (list, tuple)) else [res]
    outs = [np.array(r.to_host(), copy=True) for r in res]
    return (lambda i: fn(*sets[i % len(sets)])), outs


def _to_f32(host: np.ndarray, dtype: str) -> np.ndarray:
    return to_f32(host.view(storage_dtype(dtype)) if host.dtype != storage_dtype(dtype) else host, dtype)


def tune_model(bundle: str, m: dict, iters: int, seed: int, log=print, seen: dict | None = None,
               config=None, start: int = 0, on_round=None, rotate: int = ROTATE) -> dict:
    """{problem: [candidate rows]} for one model of the bundle, rounds from `start` on;
    on_round(r, {problem: row}) after each. Outputs are checked on the first of `rotate`
    input sets; times cycle through all of them."""
    rng = np.random.default_rng(seed)
    spec = m["args"]
    array_sets = [[poison(s["shape"], s["dtype"]) if s["output"] else random_input(rng, s["shape"], s["dtype"])
                   for s in spec] for _ in range(max(1, rotate))]
    out_dtypes = m["results"]
    # One device (one CUDA context) for every build: CUPTI loses kernel records of contexts
    # created and destroyed between profiling sessions.
    config = config or __import__("iree.runtime", fromlist=["Config"]).Config("cuda")
    keep = [LoadedModule(os.path.join(bundle, m["reference"]), "cuda", config)]
    _, ref = _run(keep[0], m["function"], spec, array_sets[:1])
    rows: dict[str, list] = {}
    for r, rnd in enumerate(m["rounds"]):
        if r < start:
            continue
        mod = LoadedModule(os.path.join(bundle, rnd["vmfb"]), "cuda", config)
        keep.append(mod)
        call, outs = _run(mod, m["function"], spec, array_sets)
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
        if on_round is not None:
            on_round(r, {prob: rows[prob][-1] for prob in rnd["kernels"]})
    return rows


def failed_rows(rnd: dict, r: int, why: str) -> dict:
    """Rows for a round whose process hung or died: not a winner, reason kept."""
    return {prob: {"knobs": k["knobs"], "schedule": k["schedule"], "us": None, "ok": False, "error": why,
                   "round": r, "round_candidate": rnd["candidate"]} for prob, k in rnd["kernels"].items()}


def tune_model_isolated(m: dict, spawn, round_timeout: float, log=print, poll: float = 0.5) -> dict:
    """{problem: [rows]} for model m, each attempt in a child process: spawn(start, rows_path)
    -> Popen running rounds from `start` and appending one JSON line per finished round to
    rows_path. A child silent for round_timeout seconds is killed; the round it was on (and a
    round a dead child was on) is recorded as failed and the next attempt starts after it."""
    import tempfile
    rows: dict[str, list] = {}
    start, n = 0, len(m["rounds"])
    while start < n:
        with tempfile.NamedTemporaryFile("w+", suffix=".jsonl", delete=False) as tf:
            path = tf.name
        proc = spawn(start, path)
        done, used, last_progress, why = start, 0, time.monotonic(), None
        while True:
            rc = proc.poll()
            with open(path) as f:
                text = f.read()
            lines = [json.loads(x) for x in text[:text.rfind("\n") + 1].splitlines() if x.strip()]
            for rec in lines[used:]:
                used += 1
                last_progress = time.monotonic()
                if "late" in rec:
                    for prob, rs in rows.items():
                        for c in rs:
                            hit = rec["late"].get(f"{prob}|{c['round_candidate']}")
                            if hit and c["us"] is None:
                                c["us"], c["late_records"] = hit
                                c.pop("kernels_seen", None)
                    continue
                for prob, row in rec["rows"].items():
                    rows.setdefault(prob, []).append(row)
                done = rec["round"] + 1
            if rc is not None:
                if rc != 0 and done < n:
                    why = f"process exited with {rc} during this candidate"
                break
            if time.monotonic() - last_progress > round_timeout:
                proc.kill()
                proc.wait()
                why = f"no result within {round_timeout:.0f} s (hung); process killed"
                break
            time.sleep(poll)
        os.unlink(path)
        if why is None:
            break
        log(f"  {m['name']}: round {done + 1}/{n} FAILED: {why}")
        for prob, row in failed_rows(m["rounds"][done], done, why).items():
            rows.setdefault(prob, []).append(row)
        start = done + 1
    return rows


def run_model_rounds(bundle: str, index: int, start: int, rows_path: str, iters: int, rotate: int = ROTATE) -> int:
    """Child process: model `index` of the bundle from round `start`; one JSON line per
    finished round, then one line with the times of kernels whose CUPTI records arrived in a
    later profiling session than their own."""
    with open(os.path.join(bundle, "tune_manifest.json")) as f:
        m = json.load(f)["models"][index]
    seen: dict[str, list] = {}
    missing: list[tuple[str, dict]] = []
    with open(rows_path, "a") as out:
        def on_round(r, rows):
            out.write(json.dumps({"round": r, "rows": rows}) + "\n")
            out.flush()
            missing.extend((prob, c) for prob, c in rows.items() if c["us"] is None)
        tune_model(bundle, m, iters, seed=3000 + index, log=lambda s: print(s, flush=True), seen=seen,
                   start=start, on_round=on_round, rotate=rotate)
        kernel_times_by_name(lambda i: None, 1, warmup=0, seen=seen)   # flush late records
        late = {}
        for prob, c in missing:
            v = seen.get(f"{prob}_cand{c['round_candidate']}")
            if v:
                late[f"{prob}|{c['round_candidate']}"] = [statistics.median(v), len(v)]
        out.write(json.dumps({"late": late}) + "\n")
    return 0


def tune_bundle(bundle: str, iters: int = 50, log=print, round_timeout: float = 120.0, rotate: int = ROTATE) -> dict:
    with open(os.path.join(bundle, "tune_manifest.json")) as f:
        manifest = json.load(f)
    problems: dict[str, dict] = {}
    for i, m in enumerate(manifest["models"]):
        log(f"[{i + 1}/{len(manifest['models'])}] {m['name']}: {len(m['rounds'])} candidates")

        def spawn(start, path, i=i):
            return subprocess.Popen([sys.executable, "-m", "convc.tools.gpu.tune", "--bundle", bundle,
                                     "--model", str(i), "--start", str(start), "--rows", path,
                                     "--iters", str(iters), "--rotate", str(rotate)])
        for prob, rows in tune_model_isolated(m, spawn, round_timeout, log=log).items():
            problems.setdefault(prob, {"candidates": []})["candidates"].extend(rows)
    late = sum(1 for r in problems.values() for c in r["candidates"] if c.get("late_records"))
    log(f"{late} candidate times recovered from late profiler records")
    return {"device": device_name("cuda"), "target": manifest["target"], "commit": manifest["commit"],
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "iters": iters, "rotate": rotate, "problems": problems}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="convc-tune-device", description=__doc__.splitlines()[0])
    p.add_argument("--bundle", required=True, help="bundle made by convc-tune prepare")
    p.add_argument("--out", default="tune_out", help="directory for the tuning results (default tune_out)")
    p.add_argument("--iters", type=int, default=50, help="timed iterations per candidate (default 50)")
    p.add_argument("--rotate", type=int, default=ROTATE, help="input sets the timed runs cycle through")
    p.add_argument("--round-timeout", type=float, default=120.0,
                   help="seconds a candidate may take before it counts as hung")
    p.add_argument("--model", type=int, help=argparse.SUPPRESS)     # child process: this model
    p.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--rows", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.model is not None:
        rc = run_model_rounds(a.bundle, a.model, a.start, a.rows, a.iters, a.rotate)
        sys.stdout.flush()
        os._exit(rc)     # skip runtime/profiler teardown at exit (it can abort after the results are out)
    res = tune_bundle(a.bundle, a.iters, log=lambda s: print(s, flush=True), round_timeout=a.round_timeout,
                      rotate=a.rotate)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tune.json"), "w") as f:
        json.dump(res, f, indent=1)
    wrong = sum(1 for r in res["problems"].values() for c in r["candidates"] if not c["ok"] and "error" not in c)
    failed = sum(1 for r in res["problems"].values() for c in r["candidates"] if "error" in c)
    print(f"{len(res['problems'])} problems, {sum(len(r['candidates']) for r in res['problems'].values())} "
          f"candidates timed, {wrong} wrong, {failed} hung or crashed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
