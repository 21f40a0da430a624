"""The whole end-to-end record in one run: every case of a convc-e2e bundle, each in its own
process, spread over the machine's GPUs, merged into one e2e.json + e2e.png.

  python -m convc.tools.gpu.e2e_record --bundle DIR --out OUT [--gpus N] [--baselines ...]

Cases whose PyTorch side is the same (e2e._torch_key: a dynamic-batch build run at a
static case's batch, the NCHW-input build) go to the same GPU and share one measurement of it
through a per-GPU --torch-cache file (torch.compile's compiles dominate a case's time). Groups
are dealt to GPUs longest first, so the GPUs finish together; comparisons stay within a case,
which runs on one GPU. Each GPU's cases run one after another, one process per case (a
crashing case costs only itself; CUDA graphs of one case never share a pool with another's).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

from .e2e import TORCH_BASELINES, _torch_key, write_result

# relative cost of a case: its PyTorch baselines measured, or reused from the cache
COST_MEASURED, COST_REUSED = 5, 1


def gpu_count() -> int:
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return max(1, sum(1 for line in out.stdout.splitlines() if line.startswith("GPU ")))


def core_sets(n: int) -> list[set[int]]:
    """This process's CPUs in n disjoint contiguous sets, one per GPU's worker, so that one
    GPU's torch.compile (Inductor compiles on every core) does not share cores with a case
    timed on another GPU. Host-timed numbers in a four-worker run stayed noisy with it (convc's
    Python-timed call up to 2.4x its time alone, pinned or not; bench/experiments/
    call_overhead.py): compare iree-benchmark-module's medians and CUDA-event times there."""
    cpus = sorted(os.sched_getaffinity(0))
    per = max(1, len(cpus) // max(1, n))
    return [set(cpus[i * per:(i + 1) * per] if i < n - 1 else cpus[i * per:]) or set(cpus) for i in range(n)]


def shards(cases: list[dict], baselines: tuple, gpus: int) -> list[list[str]]:
    """Case names per GPU: groups sharing a _torch_key together, largest groups first onto the
    least loaded GPU; within a GPU, manifest order."""
    groups: dict[str, list[dict]] = {}
    for c in cases:
        groups.setdefault(_torch_key(c, baselines), []).append(c)
    cost = lambda g: (COST_MEASURED if baselines else COST_REUSED) + COST_REUSED * (len(g) - 1)   # noqa: E731
    load, out = [0] * gpus, [[] for _ in range(gpus)]
    for g in sorted(groups.values(), key=cost, reverse=True):
        i = load.index(min(load))
        load[i] += cost(g)
        out[i] += g
    order = {c["name"]: k for k, c in enumerate(cases)}
    return [sorted((c["name"] for c in s), key=order.get) for s in out]


def merge(dirs: list[str], out: str) -> int:
    """One e2e.json + e2e.png from the case directories of several record runs (of one bundle,
    one device kind): each case from the last directory holding it; the device and PyTorch
    version from the cases, which must agree."""
    found: dict[str, dict] = {}
    for d in dirs:
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name, "e2e.json")
            if os.path.isfile(path):
                with open(path) as f:
                    found[name] = json.load(f)
    if not found:
        print(f"e2e_record: error: no case results under {', '.join(dirs)}", file=sys.stderr)
        return 1
    devices = {(r["device"], r["torch"]) for r in found.values()}
    if len(devices) != 1:
        print(f"e2e_record: error: cases from different devices or PyTorch versions: {sorted(devices)}", file=sys.stderr)
        return 1
    (device, torch_version), = devices
    # each case keeps the commit and date of the run that measured it
    rows = [{**c, "commit": c.get("commit", r.get("commit")), "date": c.get("date", r.get("date"))}
            for r in found.values() for c in r["cases"]]
    os.makedirs(out, exist_ok=True)
    write_result(out, {"device": device, "torch": torch_version, "merged_from": [os.path.basename(os.path.normpath(d)) for d in dirs],
                       "cases": rows})
    bad = [r["name"] for r in rows if not r.get("correct", {}).get("convc")]
    print(f"{len(rows)} cases merged, {len(rows) - len(bad)} correct" + (f"; wrong or failed: {', '.join(bad)}" if bad else ""))
    return 0 if not bad else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="e2e_record", description=__doc__.splitlines()[0])
    p.add_argument("--bundle", help="bundle made by convc-e2e prepare")
    p.add_argument("--out", required=True, help="directory for e2e.json, e2e.png and each case's log")
    p.add_argument("--gpus", type=int, default=0, help="GPUs to use (default: all nvidia-smi lists)")
    p.add_argument("--baselines", default=",".join(TORCH_BASELINES),
                   help=f"PyTorch baselines (default {','.join(TORCH_BASELINES)}; '' for none)")
    p.add_argument("--only", help="comma-separated case names (default: every case of the bundle)")
    p.add_argument("--variants", default="convc", help="IREE variants to run (default convc)")
    p.add_argument("--iters", type=int, default=20, help="inferences per timing round")
    p.add_argument("--merge", nargs="+", metavar="DIR",
                   help="run nothing: merge the per-case results under these record directories (a record "
                        "split over several calls; the latest directory wins a case) into --out")
    args = p.parse_args(argv)
    if args.merge:
        return merge(args.merge, args.out)
    if not args.bundle:
        p.error("--bundle is required (or --merge)")
    with open(os.path.join(args.bundle, "manifest.json")) as f:
        manifest = json.load(f)
    baselines = tuple(b for b in args.baselines.split(",") if b)
    cases = [e["case"] for e in manifest["cases"] if not args.only or e["case"]["name"] in args.only.split(",")]
    plan = shards(cases, baselines, args.gpus or gpu_count())
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    workers = []
    busy = [g for g, names in enumerate(plan) if names]
    cores = core_sets(len(busy))
    for gpu, names in enumerate(plan):
        if not names:
            continue
        mine = cores[busy.index(gpu)]
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu), OMP_NUM_THREADS=str(len(mine)),
                   TORCHINDUCTOR_COMPILE_THREADS=str(len(mine)))
        script = []
        for name in names:
            cmd = [sys.executable, "-m", "convc.tools.gpu.e2e", "--bundle", args.bundle,
                   "--out", os.path.join(args.out, name), "--only", name, "--variants", args.variants,
                   "--iters", str(args.iters), "--torch-cache", os.path.join(args.out, f"torch_cache_gpu{gpu}.json")]
            cmd += ["--baselines", ",".join(baselines)] if baselines else ["--iree-only"]
            script.append(cmd)
        log = open(os.path.join(args.out, f"gpu{gpu}.log"), "w")
        # one shell per GPU runs its cases in turn, one process each
        shell = " ; ".join(shlex.join(c) for c in script)
        workers.append((gpu, names, subprocess.Popen(["bash", "-c", shell], env=env, stdout=log, stderr=subprocess.STDOUT,
                                                     preexec_fn=lambda c=mine: os.sched_setaffinity(0, c))))
        print(f"gpu {gpu} (cores {min(mine)}-{max(mine)}): {', '.join(names)}", flush=True)
    for gpu, names, proc in workers:
        proc.wait()
        print(f"gpu {gpu} done (rc {proc.returncode}) at {time.time() - t0:.0f} s", flush=True)
    rows, missing = [], []
    for c in cases:
        path = os.path.join(args.out, c["name"], "e2e.json")
        try:
            with open(path) as f:
                got = json.load(f)["cases"]
            rows += got
        except (OSError, ValueError, KeyError):
            missing.append(c["name"])
    write_result(args.out, {"gpus": len(workers), "commit": manifest.get("commit"), "wall_s": round(time.time() - t0),
                            "shards": plan, "missing": missing, "cases": rows})
    bad = [r["name"] for r in rows if not r.get("correct", {}).get("convc")]
    print(f"{len(rows)}/{len(cases)} cases measured, {len(rows) - len(bad)} correct"
          + (f"; wrong or failed: {', '.join(bad)}" if bad else "") + (f"; missing: {', '.join(missing)}" if missing else ""))
    return 0 if not bad and not missing else 1


if __name__ == "__main__":
    sys.exit(main())
