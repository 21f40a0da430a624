"""GPU check: run every compiled suite layer through the IREE runtime and compare with an
fp32 PyTorch reference (numpy where PyTorch is absent).

  python -m convc.tools.gpu.check --bundle DIR [--driver cuda] [--json OUT.json]

Per layer: fresh random inputs, the output buffer poisoned with NaN and handed to the
function (iree.abi.output), then: no NaN left (every element written, none invalid) and
rel. L2 error <= 1e-2 for f16/bf16 outputs (1e-3 for f32). Prints a table, writes JSON.

Every layer of one process shares one device (one CUDA context: thousands of fuzz pairs in
minutes). A kernel fault poisons that context, so `--isolate` runs the layers in child
processes: a child stops at its first runtime error (or dies), the fault is recorded on that
layer, and a fresh child goes on with the next one.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import queue
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from ...runtime.arrays import FP8, poison, random_input, storage_dtype, to_f32
from ...runtime.module import LoadedModule, ModuleError, require_driver
from ..layers import Layer
from .reference import apply_epilogue, conv_nhwc_fhwc_numpy, conv_nhwc_fhwc_torch, int8_reference, rel_l2

# i32: an int8 conv's raw accumulator, exact; i8: its requantization (a value one step off
# where f32 rounding meets a half: rel. L2 of a few such in a tensor is ~1e-4)
TOLERANCE = {"f16": 1e-2, "bf16": 1e-2, "f32": 1e-3, "i32": 0.0, "i8": 2e-3}
# f32 inputs on the tensor cores (TF32: 10 mantissa bits, rounded by the TMA): their relative
# rounding error is that of f16 operands, whatever the output type (measured 2.3-2.7e-4)
TF32_TOLERANCE = 1e-2
# fp8 operands (exact products, f32 output) on sm_90a's fp8 wgmma: the sums' rel. L2 against
# f32 sums of the decoded values grows as sqrt(K) (H200: 5.8e-4 at K = 1152, 9.0e-4 at 2304,
# 1.37e-3 at 4608, results/bench/h200_int8_latest.json), consistent with (not yet isolated as)
# fp8 tensor-core accumulation in fewer bits than f32; far below the operands' own rounding (3 mantissa bits: ~6%)
FP8_TOLERANCE = 3e-3


def tolerance(layer, kernel: str | None) -> float:
    if layer.dtype == "f32" and kernel and not kernel.startswith("portable"):
        return TF32_TOLERANCE
    if layer.dtype in FP8:
        return FP8_TOLERANCE
    return TOLERANCE[layer.out_dtype]


def _layer_from(d):
    return Layer(**d)


def reference(layer, inputs, device):
    if layer.dtype == "i8":                     # exact integer sums (numpy float64)
        return int8_reference(layer, inputs)
    f = [to_f32(a, t) for a, (_, t) in zip(inputs, layer.input_shapes())]
    extra = f[2:] + [None] * (4 - len(f))
    if device == "numpy":
        y = conv_nhwc_fhwc_numpy(f[0], f[1], layer.stride, layer.dilation, layer.pad, layer.groups,
                                 layer.filter_layout)
        return apply_epilogue(y, layer.epilogue, *extra)
    import torch
    t = [torch.from_numpy(np.ascontiguousarray(a)).to(device) for a in f]
    y = conv_nhwc_fhwc_torch(t[0], t[1], layer.stride, layer.dilation, layer.pad, layer.groups, layer.filter_layout)
    y = apply_epilogue(y, layer.epilogue, *(t[2:] + [None] * (4 - len(t))))
    torch.cuda.synchronize() if device == "cuda" else None
    return y.cpu().numpy()


def check_layer(bundle: str, entry: dict, driver: str, ref_device: str, seed: int, repeats: int = 0,
                config=None) -> dict:
    layer = _layer_from(entry["layer"])
    row = {"name": layer.name, "group": layer.group, "path": entry.get("path"),
           "kernel": next((d["kernel"] for d in entry.get("dispatches", []) if d["path"] == "convc"), None),
           "compile_s": entry.get("compile_s")}
    if not entry.get("ok"):
        row.update(correct=False, error=entry.get("error", "compile failed"))
        return row
    rng = np.random.default_rng(seed)
    inputs = [random_input(rng, s, t) for s, t in layer.input_shapes()]
    out_t = layer.out_dtype
    out = poison(layer.output_shape(), out_t)
    try:
        mod = LoadedModule(os.path.join(bundle, entry["vmfb"]), driver, config=config)
        t0 = time.perf_counter()
        got = mod.call("main", list(zip(inputs, [t for _, t in layer.input_shapes()])), (out, out_t))
        row["first_call_s"] = round(time.perf_counter() - t0, 4)
    except Exception as e:  # a runtime failure is a FAIL, recorded, not a crash of the check
        row.update(correct=False, error=f"runtime: {str(e).splitlines()[0]}")
        return row
    if repeats:
        # whole-invocation time with inputs already on the device (launch overhead included)
        args = [mod.to_device(a, t) for a, (_, t) in zip(inputs, layer.input_shapes())]
        args.append(mod.to_device(out, out_t))
        fn = mod.function("main")
        fn(*args)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - t0)
        row["invoke_us"] = round(float(np.median(times)) * 1e6, 1)
        row["invoke_tflops"] = round(layer.flops / (row["invoke_us"] * 1e-6) / 1e12, 2)
    got = to_f32(got.view(storage_dtype(out_t)), out_t)
    ref = reference(layer, inputs, ref_device)
    nan = int(np.isnan(got).sum())
    err = rel_l2(np.nan_to_num(got, nan=0.0), ref)
    row.update(rel_l2=err, nan=nan, unwritten_or_nan=nan,
               correct=bool(nan == 0 and err <= tolerance(layer, row["kernel"]) and got.shape == ref.shape))
    return row


def device_name(driver: str) -> str:
    try:
        import torch
        if torch.cuda.is_available():
            return torch.cuda.get_device_name(0)
    except Exception:
        pass
    return f"{platform.processor() or platform.machine()} ({driver})"


def _default_reference() -> str:
    try:
        import torch
        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "numpy"


def _selected(manifest: dict, only, shard: tuple[int, int] = (0, 1)) -> list[tuple[int, dict]]:
    """The layers to check: those named in `only` (all if None), of shard w of k (index % k == w)."""
    w, k = shard
    return [(i, e) for i, e in enumerate(manifest["layers"])
            if (not only or e["layer"]["name"] in only) and i % k == w]


def _print_row(r: dict, done: int, total: int, t0: float, counted: int | None = None) -> None:
    """`counted` rows took the time since t0 (default: `done`); the ETA extrapolates from them."""
    eta = (time.perf_counter() - t0) / max(counted or done, 1) * (total - done) if t0 else 0.0
    print(f"  [{done}/{total} eta {eta:.0f}s] {r['name']:28s} {'PASS' if r['correct'] else 'FAIL'}"
          f"  rel_l2={r.get('rel_l2', float('nan')):.2e} nan={r.get('nan', '-')} {r.get('error', '')}", flush=True)


def _check_rows(bundle, manifest, driver, ref_device, only, repeats, start=0, stop_on_runtime_error=False,
                rows_out=None, shard=(0, 1)):
    """Checks the selected layers from index `start` in this process (one shared device);
    yields rows. With stop_on_runtime_error, stops after the first row whose error is a
    runtime failure (the context may be poisoned)."""
    import iree.runtime as rt
    config = rt.Config(driver)
    for i, entry in _selected(manifest, only, shard):
        if i < start:
            continue
        row = check_layer(bundle, entry, driver, ref_device, seed=1000 + i, repeats=repeats, config=config)
        row["index"] = i
        if rows_out:
            rows_out.write(json.dumps(row) + "\n")
            rows_out.flush()
        yield row
        if stop_on_runtime_error and str(row.get("error", "")).startswith("runtime:"):
            return


def _isolated_rows(bundle, manifest, driver, ref_device, only, repeats, hang_s: float = 90.0,
                   shard=(0, 1)):
    """Runs `_check_rows` in child processes, restarting after a fault (see the module doc). A
    child that writes no row for `hang_s` seconds is killed: the layer it was on is a hang."""
    todo = [i for i, _ in _selected(manifest, only, shard)]
    done: dict[int, dict] = {}
    while True:
        left = [i for i in todo if i not in done]
        if not left:
            return
        with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as rows:
            cmd = [sys.executable, "-m", "convc.tools.gpu.check", "--bundle", bundle, "--driver", driver,
                   "--reference", ref_device, "--repeats", str(repeats), "--child-start", str(left[0]),
                   "--child-rows", rows.name, "--child-shard", f"{shard[0]}/{shard[1]}"]
            if only:
                cmd += ["--only", ",".join(sorted(only))]
            proc = subprocess.Popen(cmd)
            got, last, hung = [], time.monotonic(), False
            while True:
                status = proc.poll()
                for line in rows.readlines():
                    if line.strip():
                        got.append(json.loads(line))
                        last = time.monotonic()
                        done[got[-1]["index"]] = got[-1]
                        yield got[-1]
                if status is not None:
                    break
                if time.monotonic() - last > hang_s:
                    proc.kill()
                    proc.wait()
                    hung = True
                    break
                time.sleep(0.2)
        rest = [i for i in left if i not in done]
        if rest and (hung or proc.returncode != 0 or len(got) == 0):
            # the child died (or hung) on this layer without writing its row
            i = rest[0]
            entry = manifest["layers"][i]
            why = f"hung (no result in {hang_s:.0f} s)" if hung else f"died (exit status {proc.returncode})"
            r = {"name": entry["layer"]["name"], "group": entry["layer"].get("group", ""), "index": i,
                 "path": entry.get("path"), "correct": False, "error": f"runtime: the checking process {why}"}
            done[i] = r
            _print_row(r, len(done), len(todo), 0.0)
            yield r


def _parallel_isolated_rows(bundle, manifest, driver, ref_device, only, repeats, workers: int):
    """`workers` isolating loops at once, each over one shard of the layers (loading a module
    JIT-compiles its PTX on the host CPU, which dominates a check of small layers)."""
    q: queue.Queue = queue.Queue()

    def run(w):
        try:
            for r in _isolated_rows(bundle, manifest, driver, ref_device, only, repeats, shard=(w, workers)):
                q.put(r)
        finally:
            q.put(None)

    threads = [threading.Thread(target=run, args=(w,), daemon=True) for w in range(workers)]
    for t in threads:
        t.start()
    finished = 0
    while finished < workers:
        r = q.get()
        if r is None:
            finished += 1
        else:
            yield r


def run_check(bundle: str, driver: str, ref_device: str | None = None, only=None, repeats: int = 0,
              isolate: bool = False, workers: int = 1, rows_out: str | None = None) -> dict:
    """rows_out: also append each row to this JSONL file as it arrives (a run cut short keeps
    what it checked)."""
    with open(os.path.join(bundle, "manifest.json")) as f:
        manifest = json.load(f)
    ref_device = ref_device or _default_reference()
    total = len(_selected(manifest, only))
    rows, t0 = [], time.perf_counter()
    if workers > 1:
        isolate = True
        source = _parallel_isolated_rows(bundle, manifest, driver, ref_device, only, repeats, workers)
    elif isolate:
        source = _isolated_rows(bundle, manifest, driver, ref_device, only, repeats)
    else:
        source = _check_rows(bundle, manifest, driver, ref_device, only, repeats)
    sink = open(rows_out, "a") if rows_out else None
    for r in source:
        rows.append(r)
        if sink:
            sink.write(json.dumps(r) + "\n")
            sink.flush()
        if not isolate:                    # children print their own rows
            _print_row(r, len(rows), total, t0)
    if sink:
        sink.close()
    rows.sort(key=lambda r: r["index"])
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": device_name(driver), "driver": driver, "reference": f"fp32 ({ref_device})",
            "target": manifest["target"], "commit": manifest["commit"], "compiled": manifest["date"],
            "seed": manifest.get("seed"), "distribution": manifest.get("distribution"),
            "isolated": isolate, "workers": workers, "check_s": round(time.perf_counter() - t0, 1),
            "passed": sum(r["correct"] for r in rows), "total": len(rows), "layers": rows}


def print_table(result: dict) -> None:
    print(f"\n{'layer':28s} {'group':9s} {'path':6s} {'rel_l2':>9s} {'nan':>5s} {'compile':>8s} {'invoke':>9s}  result")
    for r in result["layers"]:
        print(f"{r['name']:28s} {r['group']:9s} {str(r['path']):6s} {r.get('rel_l2', float('nan')):9.2e} "
              f"{str(r.get('nan', '-')):>5s} {r.get('compile_s') or 0:7.2f}s "
              f"{(str(r['invoke_us']) + 'us') if 'invoke_us' in r else '-':>9s}  {'PASS' if r['correct'] else 'FAIL'}")
    print(f"{result['passed']} passed, {result['total'] - result['passed']} failed")


def parse_arguments(argv=None):
    p = argparse.ArgumentParser(prog="convc-gpu-check", description=__doc__.splitlines()[0])
    p.add_argument("--bundle", required=True, help="directory written by `convc-suite compile`")
    p.add_argument("--driver", default="cuda", help="IREE runtime driver (cuda, hip, local-task)")
    p.add_argument("--reference", default=None, help="cuda | cpu | numpy (default: cuda if available)")
    p.add_argument("--json", help="write results here")
    p.add_argument("--only", help="comma-separated layer names")
    p.add_argument("--repeats", type=int, default=0,
                   help="also time this many whole invocations per layer (median)")
    p.add_argument("--isolate", action="store_true",
                   help="run the layers in child processes that restart after a kernel fault")
    p.add_argument("--workers", type=int, default=1,
                   help="check this many shards of the layers at once, each isolated (implies --isolate)")
    p.add_argument("--rows", help="also append each layer's row to this JSONL file as it is checked")
    p.add_argument("--child-start", type=int, help=argparse.SUPPRESS)   # --isolate's children
    p.add_argument("--child-shard", default="0/1", help=argparse.SUPPRESS)
    p.add_argument("--child-rows", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(args) -> int:
    only = set(args.only.split(",")) if args.only else None
    if args.child_start is not None:            # one child of --isolate: rows to a file, stop at a fault
        with open(os.path.join(args.bundle, "manifest.json")) as f:
            manifest = json.load(f)
        with open(args.child_rows, "a") as rows_out:
            shard = tuple(int(x) for x in args.child_shard.split("/"))
            total = len(_selected(manifest, only, shard))
            t0 = time.perf_counter()
            position = {i: n for n, (i, _) in enumerate(_selected(manifest, only, shard), 1)}
            for n, r in enumerate(_check_rows(args.bundle, manifest, args.driver, args.reference, only,
                                              args.repeats, args.child_start, True, rows_out, shard), 1):
                _print_row(r, position[r["index"]], total, t0, n)
        return 0
    try:
        require_driver(args.driver)
    except ModuleError as e:
        print(f"convc-gpu-check: error: {e}", file=sys.stderr)
        return 2
    result = run_check(args.bundle, args.driver, args.reference, only, args.repeats, args.isolate, args.workers,
                       args.rows)
    print_table(result)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if result["passed"] == result["total"] else 1


def _cli_main():
    sys.exit(main(parse_arguments()))


if __name__ == "__main__":
    _cli_main()
