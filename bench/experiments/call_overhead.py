"""Experiment: where one inference's time goes outside its kernels, and how each side is timed.

  python3 bench/experiments/call_overhead.py prepare OUT          (here: tiny modules -> OUT)
  python3 bench/experiments/call_overhead.py run --tiny OUT --bundle B --only a,b   (GPU, after env.sh)

Tiny modules (compiled by convc, so the same target and runtime path as a model):
  one    - one elementwise dispatch on 256 floats: a call's fixed cost with ~no kernel time;
  chain  - 32 dependent 16x16 matmuls (32 dispatches): the per-dispatch replay cost;
each built as IREE records it (binding table) and with convc-record-once (`NAME_ro`).

For each tiny module and each case of a convc-e2e bundle:
  * iree-benchmark-module's median (every call waits for its result before the next starts),
    with CUDA streams and with --cuda_use_streams=false (CUDA graphs);
  * a CUPTI timeline (torch.profiler, host and device) of 5 synchronous calls from Python: per
    call, host time to the first launch, first kernel start, last kernel end, and the call's
    return; the launch API calls counted.
For each case also torch.compile(mode="reduce-overhead") timed both ways: back to back with one
synchronization (the harness's way) and synchronized after every call.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

class _One:
    """one elementwise dispatch on 256 floats"""
    def __new__(cls):
        import torch

        class One(torch.nn.Module):
            def forward(self, x):
                return x * 2.0 + 1.0
        return One(), (torch.zeros(256),), ["256xf32=0.5"]


def _chain(n: int = 32):
    """n dependent 16x16 matmuls (weights embedded): n dispatches"""
    import torch
    torch.manual_seed(0)
    layers = [torch.nn.Linear(16, 16, bias=False) for _ in range(n)]
    for m in layers:
        torch.nn.init.orthogonal_(m.weight)
    return torch.nn.Sequential(*layers).eval(), (torch.zeros(16, 16),), ["16x16xf32=0.01"]


TINY = {"one": _One, "chain": _chain}


def prepare(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    from convc.compiler.pytorch import export_mlir
    for name, make in TINY.items():
        model, example, inputs = make()
        src = os.path.join(out, f"{name}.mlir")
        with open(src, "w") as f:
            f.write(export_mlir(model, example))
        for suffix, record in (("", "off"), ("_ro", "on")):
            subprocess.run([sys.executable, "-m", "convc.compiler.cli", src, "-o", os.path.join(out, f"{name}{suffix}.vmfb"),
                            "--record-once", record], check=True)
        with open(os.path.join(out, f"{name}.json"), "w") as f:
            json.dump({"inputs": inputs}, f)


def _bench(vmfb: str, inputs: list, params: str | None, flags: tuple, reps: int = 7) -> float | None:
    """iree-benchmark-module's median in us; flags may hold --batch_size=N (then `main$async`,
    the calls chained by their fences, one host wait per N: the time is per call)."""
    import re
    import iree.runtime as rt
    tool = os.path.join(os.path.dirname(rt.__file__), "..", "_runtime_libs", "iree-benchmark-module")
    fn = "main$async" if any(f.startswith("--batch_size=") for f in flags) else "main"
    cmd = [tool, f"--module={vmfb}", "--device=cuda", f"--function={fn}", f"--benchmark_repetitions={reps}",
           "--benchmark_report_aggregates_only=true", *[f"--input={i}" for i in inputs], *flags]
    if params:
        cmd.append(f"--parameters=model={params}")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    for line in out.stdout.splitlines():
        m = re.match(r"BM_\S+/process_time/real_time_median\s+([0-9.]+) (ms|us)", line)
        if m:
            return float(m.group(1)) * (1000.0 if m.group(2) == "ms" else 1.0)
    print("bench failed:", (out.stderr or out.stdout).strip().splitlines()[-1:], file=sys.stderr)
    return None


BENCH = {"streams": (), "graphs": ("--cuda_use_streams=false",)}

# --sweep: how IREE's runtime options move a call's cost (graph mode throughout, as convc runs a
# record-once build). Stream-ordered allocation (the default) takes the result from a CUDA memory
# pool and, when the caller drops it, frees it with cuMemFree; without it the device allocator
# serves it (cuMemAlloc, or IREE's caching allocator that keeps freed blocks).
SWEEP = {
    "graphs": ("--cuda_use_streams=false",),
    "graphs_sync_alloc": ("--cuda_use_streams=false", "--cuda_async_allocations=false"),
    "graphs_sync_alloc_caching": ("--cuda_use_streams=false", "--cuda_async_allocations=false",
                                  "--device_allocator=caching"),
    "graphs_caching": ("--cuda_use_streams=false", "--device_allocator=caching"),
    # IREE's own program (dynamic shapes: its command buffer recorded per call) on streams
    "streams_sync_alloc_caching": ("--cuda_async_allocations=false", "--device_allocator=caching"),
}


def _sweep(vmfb: str, inputs: list, params: str | None, chained: bool) -> dict:
    """Each SWEEP flag set per call and (record-once builds) pipelined, 16 calls per wait."""
    out = {}
    for k, fl in SWEEP.items():
        out[k] = _bench(vmfb, inputs, params, fl)
        if chained:
            out[k + "_pipelined"] = _bench(vmfb, inputs, params, fl + ("--batch_size=16",))
    return out


def _trace(call, n: int = 5) -> dict:
    """Per synchronous call from Python: host microseconds from the call to its first launch API
    call, to the first kernel's start, from the last kernel's end to the call's return; launches."""
    from torch.profiler import ProfilerActivity, profile, record_function
    for _ in range(3):
        call()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(n):
            with record_function(f"call{i}"):
                call()
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        prof.export_chrome_trace(tmp.name)
        with open(tmp.name) as f:
            trace = json.load(f)
    evs = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    calls = sorted((e for e in evs if e["name"].startswith("call")), key=lambda e: e["ts"])
    rows = []
    for c in calls:
        t0, t1 = c["ts"], c["ts"] + c["dur"]
        inside = [e for e in evs if t0 <= e["ts"] <= t1]
        api = [e for e in inside if e.get("cat") in ("cuda_driver", "cuda_runtime")]
        launches = [e for e in api if "Launch" in e["name"]]
        kern = [e for e in evs if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and t0 <= e["ts"] <= t1]
        names: dict = {}
        for e in api:
            names[e["name"]] = names.get(e["name"], 0) + 1
        row = {"call_us": round(c["dur"], 1), "launch_calls": len(launches), "kernels": len(kern), "api": names}
        if launches:
            row["to_first_launch_us"] = round(launches[0]["ts"] - t0, 1)
            row["last_launch_end_us"] = round(launches[-1]["ts"] + launches[-1]["dur"] - t0, 1)
            row["launch_api_us"] = round(sum(e["dur"] for e in launches), 1)
        if kern:
            first, last = min(e["ts"] for e in kern), max(e["ts"] + e["dur"] for e in kern)
            row["to_first_kernel_us"] = round(first - t0, 1)
            row["span_us"] = round(last - first, 1)
            row["kernel_us"] = round(sum(e["dur"] for e in kern), 1)
            row["after_last_kernel_us"] = round(t1 - last, 1)
        rows.append(row)
    keys = [k for k in rows[0] if k != "api"] if rows else []
    summary = {k: statistics.median(r[k] for r in rows if k in r) for k in keys}
    summary["api"] = rows[len(rows) // 2]["api"] if rows else {}
    return summary


def _two_ways(fn, iters: int) -> dict:
    """PyTorch's call fn() timed back to back with one synchronization (convc-e2e's
    _time_torch: CUDA events, median of 5 rounds) and synchronized after every call (host clock)."""
    import torch
    from convc.tools.gpu.e2e import _time_torch
    back_to_back = _time_torch(lambda _: fn(), None, iters)
    synced = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
            torch.cuda.synchronize()
        synced.append((time.perf_counter() - t0) * 1e6 / iters)
    return {"back_to_back_us": round(back_to_back, 1), "synchronized_us": round(statistics.median(synced), 1)}


def _torch_two_ways(model, x, iters: int = 50) -> dict:
    import torch
    torch._dynamo.reset()
    compiled = torch.compile(model, mode="reduce-overhead")
    for _ in range(3):          # reduce-overhead records its graph on a later call
        compiled(x)
    return _two_ways(lambda: compiled(x), iters)


def _torch_graph_floor(iters: int = 200) -> dict:
    """PyTorch's side of `one`: the same elementwise op captured in a CUDA graph and replayed."""
    import torch
    x = torch.full((256,), 0.5, device="cuda")
    x * 2.0 + 1.0               # warm-up outside the capture
    g = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        x * 2.0 + 1.0
    return {"module": "torch_cuda_graph_one", **_two_ways(g.replay, iters)}


def run(args) -> None:
    import numpy as np
    import iree.runtime as rt
    if args.runtime_flags:
        rt.flags.parse_flags(*args.runtime_flags.split())
    from convc.tools.gpu.e2e import _DT, _torch_model
    from convc.runtime.module import LoadedModule
    rows = []
    if args.tiny:
        rows.append(_torch_graph_floor())
        print(json.dumps(rows[-1]), flush=True)
        for name in [n + suffix for n in TINY for suffix in ("", "_ro")]:
            vmfb = os.path.join(args.tiny, f"{name}.vmfb")
            with open(os.path.join(args.tiny, f"{name.removesuffix('_ro')}.json")) as f:
                inputs = json.load(f)["inputs"]
            row = {"module": name, **{k: _bench(vmfb, inputs, None, fl) for k, fl in BENCH.items()}}
            if args.sweep:
                row["sweep"] = _sweep(vmfb, inputs, None, chained=name.endswith("_ro"))
            lm = LoadedModule(vmfb, "cuda")
            arrays = [np.full([int(d) for d in s.split("=")[0].split("x")[:-1]], float(s.split("=")[1]), np.float32)
                      for s in inputs]
            fn, dev = lm.function("main"), [lm.to_device(a, "f32") for a in arrays]
            if not args.no_trace:
                row["trace"] = _trace(lambda: fn(*dev))
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.bundle:
        import torch
        with open(os.path.join(args.bundle, "manifest.json")) as f:
            manifest = json.load(f)
        for entry in manifest["cases"]:
            case = entry["case"]
            if args.only and case["name"] not in args.only.split(","):
                continue
            dt, np_dt = _DT[case.get("dtype", "float16")]
            model = _torch_model(case)          # on the GPU only where PyTorch's side runs in this process
            model = (model if args.no_torch else model.cuda()).to(getattr(torch, case.get("dtype", "float16")))
            model = model.to(memory_format=torch.channels_last)
            params = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()
                      if k in set(entry["parameters"])}
            shape = list(case["input_shape"])
            nhwc = entry.get("convc_input_layout") == "nhwc"
            xshape = [shape[0], shape[2], shape[3], shape[1]] if nhwc else shape
            vmfb = os.path.join(args.bundle, entry["convc_vmfb"])
            row = {"case": case["name"]}
            with tempfile.TemporaryDirectory() as tmp:
                import iree.runtime as rt
                index = rt.ParameterIndex()
                for k, v in params.items():
                    index.add_buffer(k, np.ascontiguousarray(v).tobytes())
                irpa = os.path.join(tmp, "params.irpa")
                index.create_archive_file(irpa)
                inp = [f"{'x'.join(map(str, xshape))}x{dt}=0.5"]
                for k, fl in BENCH.items():
                    row[k] = _bench(vmfb, inp, irpa, fl)
                if args.sweep:
                    row["sweep"] = _sweep(vmfb, inp, irpa, chained=any(st.get("fixed_buffers") for st in entry.get("structure") or []))
            lm = LoadedModule(vmfb, "cuda", parameters=params)
            x_np = np.full(xshape, 0.5, np_dt)
            fn, dev = lm.function("main"), [lm.to_device(x_np, dt)]
            # the Python-timed path of convc-e2e (convc_us): synchronous calls, input on the device
            from convc.tools.gpu.e2e import _time_iree
            row["python_us"] = round(_time_iree(fn, dev, 20), 1)
            if not args.no_trace:
                row["trace"] = _trace(lambda: fn(*dev))
            if args.no_torch:
                rows.append(row)
                print(json.dumps(row), flush=True)
                continue
            x = torch.full(shape, 0.5, device="cuda", dtype=getattr(torch, case.get("dtype", "float16")))
            x = x.contiguous(memory_format=torch.channels_last)
            with torch.no_grad():
                row["reduce_overhead"] = _torch_two_ways(model, x)
            # as convc-e2e times it: after PyTorch's baselines ran in the same process
            row["python_us_after_torch"] = round(_time_iree(fn, dev, 20), 1)
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("prepare")
    pp.add_argument("out")
    pr = sub.add_parser("run")
    pr.add_argument("--tiny", default="")
    pr.add_argument("--bundle", default="")
    pr.add_argument("--only", default="")
    pr.add_argument("--out", default="")
    pr.add_argument("--sweep", action="store_true", help="also time the SWEEP runtime-flag sets")
    pr.add_argument("--no-trace", action="store_true", help="skip the CUPTI traces and PyTorch's side")
    pr.add_argument("--no-torch", action="store_true", help="skip PyTorch's side of the bundle cases")
    pr.add_argument("--runtime-flags", default="", help="IREE runtime flags for the traced calls")
    args = p.parse_args(argv)
    if args.cmd == "prepare":
        prepare(args.out)
    else:
        run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
