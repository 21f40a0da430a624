"""Device side of convc-bench: times every layer of a prepared bundle on one GPU.

  python3 -m convc.tools.gpu.bench --bundle B --out DIR [--iters 50] [--rotate 4]
  python3 -m convc.tools.gpu.bench --bundle B --invoke-only LAYER   (for ncu cross-checks)

Kernel time: every variant runs `iters` times back to back (after warm-up) on `rotate` input
sets in turn, so no run finds its inputs in L2 from the run before; kernels are captured with
CUPTI through torch.profiler, summed per iteration (IREE: all dispatches of the function,
its pad copy included), and the median is reported. Whole-invocation wall time (host overhead
included) is reported for convc and IREE too. Every timed output is checked against a
PyTorch fp32 reference: a fast wrong kernel is a FAIL, not a number. PyTorch (the GPU machine
has it) is imported where it is used, so the module and its --help load without it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import sys
import time

import numpy as np

from ...passes.kernel_configs import Sm90WsConfig
from ...passes.problem import DTYPE_BYTES
from ...passes.schedule import Schedule
from ...runtime.arrays import poison, random_input, storage_dtype, to_f32
from ...runtime.module import LoadedModule
from ..layers import Layer
from .bench_report import plot, print_report
from .check import TOLERANCE, device_name, tolerance
from .reference import fhwc_filter, apply_epilogue, conv_nhwc_fhwc_torch, layer_reference_numpy, rel_l2

_TORCH_DT = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}     # torch dtype names


# ------------------------------------------------------------------------ timing
def wait_for(result) -> None:
    """Blocks until the work that produced `result` finished: IREE runs on its own CUDA
    stream, which torch.cuda.synchronize() does not wait for, so the result is read back.
    (CUPTI can still deliver some of IREE's kernel records in a later profiling session;
    convc-tune therefore names kernels per candidate and pools records by name.)"""
    import torch
    torch.cuda.synchronize()
    r = result[0] if isinstance(result, (list, tuple)) and result else result
    if hasattr(r, "to_host"):
        r.to_host()


def device_events(fn, iters: int, warmup: int):
    """The device-side profiler events (CUPTI via torch.profiler) of `iters` calls fn(i), made
    after `warmup` untimed calls, with IREE's stream drained before and after."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    last = None
    for i in range(warmup):
        last = fn(i)
    if last is not None:
        wait_for(last)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(iters):
            last = fn(i)
        if last is not None:
            wait_for(last)
    return [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]


def kernel_time_us(fn, iters: int, warmup: int = 5):
    """Median over iterations of the summed device time of the kernels fn(i) launches."""
    # device work of every kind (kernels, device copies, fills); host<->device transfers excluded
    evs = [e for e in device_events(fn, iters, warmup)
           if "HtoD" not in e.name and "DtoH" not in e.name and not e.name.startswith("[memory]")]
    evs.sort(key=lambda e: e.time_range.start)
    if not evs:
        return None, []
    names = sorted({e.name for e in evs})
    if len(evs) % iters == 0:
        k = len(evs) // iters
        sums = [sum(e.time_range.elapsed_us() for e in evs[j * k:(j + 1) * k]) for j in range(iters)]
        return statistics.median(sums), names
    return sum(e.time_range.elapsed_us() for e in evs) / iters, names


def wall_time_us(fn, iters: int, warmup: int = 3):
    for i in range(warmup):
        fn(i)
    ts = []
    for i in range(iters):
        t0 = time.perf_counter()
        fn(i)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6


def ceilings():
    """Measured bf16 matmul TFLOP/s and device copy TB/s (read + write bytes)."""
    import torch
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    t_mm, _ = kernel_time_us(lambda i: a @ b, 10, 3)
    src = torch.empty(2 * 1024**3 // 2, device="cuda", dtype=torch.float16).uniform_()
    dst = torch.empty_like(src)
    t_cp, _ = kernel_time_us(lambda i: dst.copy_(src), 10, 3)
    torch.cuda.empty_cache()
    return 2 * n**3 / (t_mm * 1e-6) / 1e12, 2 * 2 * 1024**3 / (t_cp * 1e-6) / 1e12


# ------------------------------------------------------------------------ one layer
def _layer(d):
    return Layer(**d)


def _bytes(L) -> int:
    return sum(math.prod(s) * DTYPE_BYTES[t] for s, t in L.input_shapes()) + \
        math.prod(L.output_shape()) * DTYPE_BYTES[L.out_dtype]


def _floor_us(L, peak_tflops, bw_tbs):
    """FLOPs at the measured bf16 matmul ceiling (int8: twice that, Hopper's int8 rate) or bytes
    at the copy bandwidth, whichever is longer."""
    peak = peak_tflops * (2 if DTYPE_BYTES[L.dtype] == 1 else 1)
    return max(L.flops / (peak * 1e12), _bytes(L) / (bw_tbs * 1e12)) * 1e6


_COPY_BUFFERS: list = []


def copy_buffers(nbytes: int, rotate: int) -> None:
    """Allocates the copies' `rotate` source/destination pairs once, for up to nbytes, before any
    layer runs, so every layer's copy reads and writes the same buffers (where buffers land moves
    a copy's time by 20-30%: EfficientNet's 36 MB take 13.5 us rotated in a fresh process, 16.1-
    16.4 in a bench run, once 32.2 with buffers allocated per layer; docs/benchmarking.md)."""
    import torch
    n = max(nbytes // 4, 1)
    _COPY_BUFFERS[:] = [(torch.empty(n, device="cuda", dtype=torch.float16),
                         torch.empty(n, device="cuda", dtype=torch.float16)) for _ in range(rotate)]


def copy_us(nbytes: int, iters: int, rotate: int = 1) -> float:
    """Kernel time of a device copy moving the same bytes (half read, half written): the
    memory floor at this size, where launch and ramp-up weigh on small layers (the
    bandwidth-based floor assumes a large copy's rate). With `rotate` source/destination pairs
    used in turn, as the kernels' input sets: a layer whose half-size source fits in L2 but
    whose rotated inputs do not is then held to a copy that reads DRAM too, not one that finds
    its source in L2 on every repeat."""
    n = max(nbytes // 4, 1)
    if len(_COPY_BUFFERS) < rotate or _COPY_BUFFERS[0][0].numel() < n:
        copy_buffers(nbytes, rotate)
    pairs = [(s[:n], d[:n]) for s, d in _COPY_BUFFERS[:rotate]]
    t, _ = kernel_time_us(lambda i: pairs[i % rotate][1].copy_(pairs[i % rotate][0]), iters, 3)
    return t


def _iree_variant(vmfb, L, inputs_np, rotate):
    """Prepared IREE invocations: per input set, device args with a poisoned output buffer."""
    mod = LoadedModule(vmfb, "cuda")
    fn = mod.function("main")
    types = [t for _, t in L.input_shapes()]
    sets = []
    for inputs in inputs_np:
        args = [mod.to_device(a, t) for a, t in zip(inputs, types)]
        args.append(mod.to_device(poison(L.output_shape(), L.out_dtype), L.out_dtype))
        sets.append(args)
    first = fn(*sets[0])
    out = np.array(first.to_host(), copy=True).view(storage_dtype(L.out_dtype))
    return (lambda i: fn(*sets[i % rotate])), to_f32(out, L.out_dtype)


def _torch_inputs(L, inputs_np):
    import torch
    ts = []
    for a, (_, t) in zip(inputs_np, L.input_shapes()):
        f = torch.from_numpy(np.ascontiguousarray(to_f32(a, t))).cuda()
        ts.append(f)
    return ts


def _check(out, ref, dtype, tol: float | None = None):
    nan = int(np.isnan(out).sum())
    err = rel_l2(np.nan_to_num(out, nan=0.0), ref)
    return {"rel_l2": err, "nan": nan, "ok": bool(nan == 0 and err <= (TOLERANCE[dtype] if tol is None else tol))}


def ptxas_resources(ptx_path: str) -> dict:
    """Registers / spills / shared memory of the convc kernel, from `ptxas -v` (sm_90a)."""
    import re
    import subprocess
    try:
        out = subprocess.run(["ptxas", "-arch=sm_90a", "-v", ptx_path, "-o", os.devnull],
                             capture_output=True, text=True, timeout=120).stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": str(e)}
    res, current = {}, None
    for line in out.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'|Function properties for (\w+)", line)
        if m:
            current = m.group(1) or m.group(2)
        if current and current.startswith("conv_"):
            if (m := re.search(r"Used (\d+) registers", line)):
                res["registers"] = int(m.group(1))
            if (m := re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)):
                res["spill_bytes"] = int(m.group(1)) + int(m.group(2))
    return res


def bench_layer(bundle, entry, iters, rotate, peak, bw, seed):
    import torch
    import torch.nn.functional as Fn
    L = _layer(entry["layer"])
    row = {"name": L.name, "group": L.group, "flops": L.flops,
           "floor_us": _floor_us(L, peak, bw)}
    sched = Schedule.from_dict(entry["schedule"]) if entry.get("schedule") else None   # either record format
    ws = sched.config if sched and isinstance(sched.config, Sm90WsConfig) else Sm90WsConfig()
    row["kernel"] = str(sched.kernel) if sched else None
    row["smem_bytes"] = sched.smem_bytes if sched else None
    row["stages"] = sched.stages if sched else None
    row["tile"] = f"{sched.block_m}x{sched.block_n}x{sched.block_k}" if sched else None
    row["swap_ab"] = ws.swap_ab                 # tile = pixels x channels either way
    row["epilogue_slots"] = ws.epilogue_slots
    if entry.get("ptx"):
        row.update(ptxas_resources(os.path.join(bundle, entry["ptx"])))
    rng = np.random.default_rng(seed)
    inputs = [[random_input(rng, s, t) for s, t in L.input_shapes()] for _ in range(rotate)]
    if DTYPE_BYTES[L.dtype] == 1:        # int8 and fp8: no PyTorch conv to time
        return _bench_int8(bundle, entry, L, row, inputs, iters, rotate)
    f32 = [_torch_inputs(L, x) for x in inputs]          # fp32 copies of the rounded inputs
    ref_conv = conv_nhwc_fhwc_torch(f32[0][0], f32[0][1], L.stride, L.dilation, L.pad, L.groups, L.filter_layout)
    ref = apply_epilogue(ref_conv, L.epilogue, *(f32[0][2:] + [None] * (4 - len(f32[0]))))
    ref_conv = ref_conv.cpu().numpy()
    ref = ref.cpu().numpy()
    checks = {}

    for key, vmfb in (("convc", entry["vmfb"]), ("iree", entry.get("iree_vmfb"))):
        if not vmfb:
            checks[key] = {"ok": False, "error": entry.get("iree_error", "not compiled")}
            continue
        try:
            fn, out = _iree_variant(os.path.join(bundle, vmfb), L, inputs, rotate)
            checks[key] = _check(out, ref, L.out_dtype)
            row[f"{key}_us"], row[f"{key}_kernels"] = kernel_time_us(fn, iters)
            row[f"{key}_invoke_us"] = wall_time_us(fn, iters)
        except Exception as e:
            checks[key] = {"ok": False, "error": str(e).splitlines()[0]}
        if key == "convc":
            # the same-size copies next to convc's own timing, under the same conditions
            row["copy_us"] = copy_us(_bytes(L), iters, rotate)
            row["copy_one_buffer_us"] = copy_us(_bytes(L), iters)

    # cuDNN (conv only) and PyTorch eager (conv + epilogue), channels_last, f16/bf16
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dt = getattr(torch, _TORCH_DT[L.dtype])
    pt, pl, pb, pr = L.pad
    sym = pt == pb and pl == pr
    xs, xs_pre, ws, bs, rs = [], [], [], [], []
    for s in f32:
        x = s[0].to(dt).permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)
        xs.append(x)
        xs_pre.append(x if sym else Fn.pad(x, (pl, pr, pt, pb)).contiguous(memory_format=torch.channels_last))
        ws.append(fhwc_filter(s[1], L.filter_layout).to(dt).permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last))
        bs.append(s[2].to(dt).view(1, -1, 1, 1) if len(s) > 2 else None)
        rs.append(s[3].to(dt).permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)
                  if len(s) > 3 else None)
    padding = (pt, pl) if sym else (0, 0)

    def cudnn(i):
        j = i % rotate
        return Fn.conv2d(xs_pre[j], ws[j], None, L.stride, padding, L.dilation, L.groups)

    def eager(i):
        j = i % rotate
        x = xs[j] if sym else Fn.pad(xs[j], (pl, pr, pt, pb))
        y = Fn.conv2d(x, ws[j], None, L.stride, padding, L.dilation, L.groups)
        if L.epilogue == "none":
            return y.float()
        y = y + bs[j]
        if rs[j] is not None:
            y = y + rs[j]
        if L.epilogue in ("bias_relu", "bias_residual_relu"):
            y = torch.relu(y)
        return y

    def cudnn_fused(i):
        # cuDNN's own fused conv + bias (+ residual) + relu, the path PyTorch's fusers call
        j = i % rotate
        if rs[j] is not None:
            return torch.cudnn_convolution_add_relu(xs_pre[j], ws[j], rs[j], 1.0, bs[j].flatten(), L.stride,
                                                    padding, L.dilation, L.groups)
        return torch.cudnn_convolution_relu(xs_pre[j], ws[j], bs[j].flatten(), L.stride, padding, L.dilation,
                                            L.groups)

    if L.epilogue in ("bias_relu", "bias_residual_relu"):
        try:
            out = cudnn_fused(0).float().permute(0, 2, 3, 1).cpu().numpy()
            checks["cudnn_fused"] = _check(out, ref, L.out_dtype)
            row["cudnn_fused_us"], row["cudnn_fused_kernels"] = kernel_time_us(cudnn_fused, iters)
        except Exception as e:
            checks["cudnn_fused"] = {"ok": None, "error": str(e).splitlines()[0]}   # a baseline cuDNN lacks

    try:
        out = cudnn(0).float().permute(0, 2, 3, 1).cpu().numpy()
        checks["cudnn"] = _check(out, ref_conv, L.dtype)
        row["cudnn_us"], row["cudnn_kernels"] = kernel_time_us(cudnn, iters)
        out = eager(0).float().permute(0, 2, 3, 1).cpu().numpy()
        checks["torch_eager"] = _check(out, ref, L.out_dtype)
        row["torch_eager_us"], _ = kernel_time_us(eager, iters)
    except Exception as e:
        checks.setdefault("cudnn", {"ok": False, "error": str(e).splitlines()[0]})

    row["checks"] = checks
    row["correct"] = bool(checks.get("convc", {}).get("ok"))
    row["all_outputs_correct"] = all(c.get("ok") for c in checks.values() if c.get("ok") is not None)
    c = row.get("convc_us")
    if c:
        row["convc_tflops"] = L.flops / (c * 1e-6) / 1e12
        row["pct_of_floor"] = 100.0 * row["floor_us"] / c
        row["pct_of_copy"] = 100.0 * row["copy_us"] / c
        for k in ("cudnn", "cudnn_fused", "iree", "torch_eager"):
            if row.get(f"{k}_us"):
                row[f"convc_vs_{k}"] = c / row[f"{k}_us"]
    for k in ("convc_us", "iree_us", "cudnn_us", "cudnn_fused_us", "torch_eager_us"):
        row.setdefault(k, None)
    return row


def _bench_int8(bundle, entry, L, row, inputs, iters, rotate):
    """An i8 or fp8 layer: convc's kernel against the exact integer reference (fp8: numpy's f32
    sums of the decoded operands, whose products are exact); no PyTorch baseline (PyTorch has no
    int8 or fp8 conv to time here: the suite's f16 twin of the layer, timed in the same run, is
    the comparison)."""
    checks = {}
    try:
        fn, out = _iree_variant(os.path.join(bundle, entry["vmfb"]), L, inputs, rotate)
        checks["convc"] = _check(out, layer_reference_numpy(L, inputs[0]), L.out_dtype, tolerance(L, row["kernel"]))
        row["convc_us"], row["convc_kernels"] = kernel_time_us(fn, iters)
        row["convc_invoke_us"] = wall_time_us(fn, iters)
        row["copy_us"] = copy_us(_bytes(L), iters, rotate)
        row["copy_one_buffer_us"] = copy_us(_bytes(L), iters)
    except Exception as e:
        checks["convc"] = {"ok": False, "error": str(e).splitlines()[0]}
    row["checks"] = checks
    row["correct"] = row["all_outputs_correct"] = bool(checks["convc"].get("ok"))
    c = row.get("convc_us")
    if c:
        row["convc_tflops"] = L.flops / (c * 1e-6) / 1e12
        row["pct_of_floor"] = 100.0 * row["floor_us"] / c
        row["pct_of_copy"] = 100.0 * row["copy_us"] / c
    for k in ("convc_us", "iree_us", "cudnn_us", "cudnn_fused_us", "torch_eager_us"):
        row.setdefault(k, None)
    return row


def run(bundle, out_dir, iters, rotate, only=None):
    import torch
    with open(os.path.join(bundle, "manifest.json")) as f:
        manifest = json.load(f)
    peak, bw = ceilings()
    copy_buffers(max(_bytes(_layer(e["layer"])) for e in manifest["layers"]), rotate)
    print(f"ceilings: bf16 matmul {peak:.0f} TFLOP/s, copy {bw:.2f} TB/s", flush=True)
    rows = []
    for i, entry in enumerate(manifest["layers"]):
        if only and entry["layer"]["name"] not in only:
            continue
        r = bench_layer(bundle, entry, iters, rotate, peak, bw, seed=2000 + i)
        rows.append(r)
        print(f"  {r['name']:28s} convc {r.get('convc_us') or float('nan'):9.1f} us  "
              f"cuDNN {r.get('cudnn_us') or float('nan'):8.1f}  IREE {r.get('iree_us') or float('nan'):9.1f}  "
              f"{'PASS' if r['correct'] else 'FAIL'}", flush=True)
        torch.cuda.empty_cache()
    res = {"device": device_name("cuda"), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "commit": manifest["commit"], "tuning_cache": manifest.get("tuning_cache", "none"), "target": manifest["target"], "baseline_flags": manifest.get("baseline_flags"),
           "peak_tflops": peak, "bandwidth_tbs": bw, "iters": iters, "rotate": rotate,
           "copy_timing": f"same-size device copy, {rotate} buffer pairs in turn (copy_one_buffer_us: one pair)",
           "timing_method": "CUPTI kernel durations via torch.profiler, summed per iteration, median",
           "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(), "layers": rows}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "bench.json"), "w") as f:
        json.dump(res, f, indent=1)
    print_report(res)
    plot(res, os.path.join(out_dir, "bench.png"))
    return res


def invoke_only(bundle, name, count):
    """Runs one layer's convc vmfb `count` times (for an ncu cross-check of the timer)."""
    with open(os.path.join(bundle, "manifest.json")) as f:
        entry = next(e for e in json.load(f)["layers"] if e["layer"]["name"] == name)
    L = _layer(entry["layer"])
    rng = np.random.default_rng(0)
    inputs = [[random_input(rng, s, t) for s, t in L.input_shapes()] for _ in range(4)]
    fn, _ = _iree_variant(os.path.join(bundle, entry["vmfb"]), L, inputs, 4)
    for i in range(count):
        fn(i)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="convc-bench-device", description=__doc__.splitlines()[0])
    p.add_argument("--bundle", required=True, help="bundle made by convc-bench prepare")
    p.add_argument("--out", default="bench_out", help="directory for bench.json, bench.png and the log (default bench_out)")
    p.add_argument("--iters", type=int, default=50, help="timed iterations per variant (default 50)")
    p.add_argument("--rotate", type=int, default=4, help="input sets rotated between iterations, so none is found in L2 (default 4)")
    p.add_argument("--only", help="comma-separated layer names")
    p.add_argument("--invoke-only", help="just invoke this layer's convc vmfb --count times (for ncu / compute-sanitizer)")
    p.add_argument("--count", type=int, default=20, help="invocations for --invoke-only (default 20)")
    a = p.parse_args(argv)
    if a.invoke_only:
        invoke_only(a.bundle, a.invoke_only, a.count)
        return 0
    res = run(a.bundle, a.out, a.iters, a.rotate, set(a.only.split(",")) if a.only else None)
    return 0 if all(r["correct"] for r in res["layers"]) else 1


if __name__ == "__main__":
    sys.exit(main())
