"""End-to-end benchmark on the GPU machine: whole networks through convc, stock IREE (sm_80),
PyTorch eager (channels_last, cudnn.benchmark) and torch.compile (default mode).

  python3 -m convc.tools.gpu.e2e --bundle DIR --out OUTDIR

Every variant gets the same synthetic weights (tools/e2e_models.synthetic_weights, by
state_dict key; the IREE variants through an IREE parameter index) and the same input, and is
checked against PyTorch in fp32 (TF32 off). Times are wall-clock per inference over
back-to-back runs (CUDA events for PyTorch; for IREE, the calls' wall time with the last
result read back), medians of 5 rounds. The convc variant is also profiled (CUPTI via
torch.profiler): its kernels split into convc's conv kernels and IREE's other dispatches,
and the gap between the kernels' sum and the wall time (launch and runtime overhead).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time

import numpy as np

from ...passes.problem import KERNEL_NAME_PREFIXES
from ...runtime.module import RECORD_ONCE_FLAGS, LoadedModule, records_once
from .bench import device_events, wait_for
from .reference import rel_l2

TOLERANCE = 2e-2        # f16 (or TF32) model against fp32 PyTorch (rel. L2 of the logits/image)
_DT = {"float16": ("f16", np.float16), "float32": ("f32", np.float32)}


def torch_models():
    """tools/e2e_models.py, imported on first use: it defines the models in PyTorch, which only
    the GPU machine and convc-e2e's prepare need (the one deferred import of it)."""
    from .. import e2e_models
    return e2e_models


def _torch_model(case: dict):
    models = torch_models()
    if case["model"] in ("resnet50", "mobilenet_v2", "convnext_tiny", "resnext50_32x4d", "efficientnet_b0",
                         "mobilenet_v3_large", "densenet121", "shufflenet_v2_x1_0", "r2plus1d_18", "inception_v3",
                         "efficientnet_v2_s"):
        try:
            import torchvision
            import torchvision.models.video
            zoo = torchvision.models.video if case["model"] == "r2plus1d_18" else torchvision.models
            model = getattr(zoo, case["model"])(weights=None)   # the real one, where present
        except ImportError:
            model = models.MODELS[case["model"]]()
    else:
        model = models.MODELS[case["model"]]()
    return models.load_synthetic(model, case["seed"]).eval()


def _time_torch(fn, x, iters: int, rounds: int = 5) -> float:
    import torch
    for _ in range(5):
        fn(x)
    torch.cuda.synchronize()
    per = []
    for _ in range(rounds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(iters):
            fn(x)
        b.record()
        torch.cuda.synchronize()
        per.append(a.elapsed_time(b) * 1e3 / iters)
    return statistics.median(per)


def _time_torch_synchronized(fn, x, iters: int, rounds: int = 5) -> float:
    """PyTorch's counterpart of iree-benchmark-module's per-call median: every call waits for
    its result (torch.cuda.synchronize) before the next starts; host clock, median of rounds."""
    import torch
    for _ in range(5):
        fn(x)
    torch.cuda.synchronize()
    per = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn(x)
            torch.cuda.synchronize()
        per.append((time.perf_counter() - t0) * 1e6 / iters)
    return statistics.median(per)


def _time_iree(f, args, iters: int, rounds: int = 5) -> float:
    for _ in range(3):
        wait_for(f(*args))
    per = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(iters):
            r = f(*args)
        wait_for(r)
        per.append((time.perf_counter() - t0) * 1e6 / iters)
    return statistics.median(per)


# convc's kernels, by the names ConvProblem.name gives them
CONVC_KERNELS = KERNEL_NAME_PREFIXES


def _breakdown(f, args, wall_us: float, iters: int = 5) -> dict:
    """Per-inference kernel time of the convc variant by kind, and what the kernels leave; every
    kernel's time and launches per inference (`kernels`, slowest first)."""
    evs = [e for e in device_events(lambda i: f(*args), iters, 2)
           if "HtoD" not in e.name and "DtoH" not in e.name and not e.name.startswith("[memory]")]
    by_name: dict = {}
    launches: dict = {}
    for e in evs:
        by_name[e.name] = by_name.get(e.name, 0.0) + e.time_range.elapsed_us() / iters
        launches[e.name] = launches.get(e.name, 0) + 1
    conv = sum(v for k, v in by_name.items() if k.startswith(CONVC_KERNELS))
    other = {k: v for k, v in by_name.items() if not k.startswith(CONVC_KERNELS)}
    top = sorted(other.items(), key=lambda kv: -kv[1])[:8]
    convs = sorted(((k, v) for k, v in by_name.items() if k.startswith(CONVC_KERNELS)), key=lambda kv: -kv[1])[:8]
    kernels = conv + sum(other.values())
    concurrent = _concurrent(evs, iters)
    return {"convc_conv_us": round(conv, 1), "other_dispatch_us": round(sum(other.values()), 1),
            "kernels_us": round(kernels, 1), "wall_us": round(wall_us, 1),
            "gaps_us": round(wall_us - kernels, 1),
            "timeline": _timeline(evs, iters),
            "conv_launches": sum(1 for e in evs if e.name.startswith(CONVC_KERNELS)) // iters,
            "other_launches": sum(1 for e in evs if not e.name.startswith(CONVC_KERNELS)) // iters,
            "top_other": [{"name": k[:90], "us": round(v, 1)} for k, v in top],
            "top_conv": [{"name": k[:90], "us": round(v, 1)} for k, v in convs],
            "kernels": [dict({"name": k[:90], "us": round(v, 1), "launches": launches[k] // iters},
                             **({"concurrent": concurrent[k]} if k in concurrent else {}))
                        for k, v in sorted(by_name.items(), key=lambda kv: -kv[1])]}


def _concurrent(evs: list, iters: int) -> dict:
    """Kernels that ran at the same time as others (IREE puts independent dispatches of a
    stream region in one concurrent step: a CUDA graph's parallel nodes): per kernel name, the
    kernels its launches overlapped (`with`) and the span from the first start to the last end
    of each overlapping group it was in (`span_us`, per inference) and the launches of every
    member of those groups per inference (`launches`, itself included). Such a kernel's CUPTI
    duration includes the time it shared the GPU: its own cost is the group's span."""
    evs = sorted(evs, key=lambda e: e.time_range.start)
    groups, cur = [], []
    end = None
    for e in evs:                       # connected runs of overlapping launches
        if cur and e.time_range.start < end:
            cur.append(e)
            end = max(end, e.time_range.end)
        else:
            if len(cur) > 1:
                groups.append(cur)
            cur, end = [e], e.time_range.end
    if len(cur) > 1:
        groups.append(cur)
    out: dict = {}
    for g in groups:
        span = max(e.time_range.end for e in g) - g[0].time_range.start      # us, as CUPTI's ranges
        names = [e.name[:90] for e in g]
        for n in set(names):
            row = out.setdefault(n, {"span_us": 0.0, "members": {}})
            row["span_us"] += span / iters
            for m in names:
                row["members"][m] = row["members"].get(m, 0) + 1 / iters
    return {n: {"with": sorted(m for m in r["members"] if m != n), "span_us": round(r["span_us"], 1),
                "launches": {m: round(c, 2) for m, c in r["members"].items()}} for n, r in out.items()}


TORCH_BASELINES = ("eager", "compile", "reduce-overhead")


def _timeline(evs: list, iters: int) -> dict:
    """One inference's device timeline, from `iters` inferences' kernels in issue order: the
    span from the first kernel's start to the last one's end, the idle time between kernels
    inside it (medians over inferences), and the largest idle gaps of the median inference
    with the kernel that followed each."""
    evs = sorted(evs, key=lambda e: e.time_range.start)
    k = len(evs) // iters if iters else 0
    if not k or len(evs) % iters:
        return {}
    spans, idles, per = [], [], []
    for j in range(iters):
        run = evs[j * k:(j + 1) * k]
        spans.append(run[-1].time_range.end - run[0].time_range.start)
        gaps = [(max(0.0, b.time_range.start - a.time_range.end), b.name) for a, b in zip(run, run[1:])]
        idles.append(sum(g for g, _ in gaps))
        per.append(gaps)
    mid = sorted(range(iters), key=lambda j: idles[j])[iters // 2]
    top = sorted(per[mid], key=lambda g: -g[0])[:6]
    gaps_sorted = sorted(g for g, _ in per[mid])
    return {"span_us": round(statistics.median(spans), 1), "idle_us": round(statistics.median(idles), 1),
            "median_gap_us": round(gaps_sorted[len(gaps_sorted) // 2], 2) if gaps_sorted else 0.0,
            "largest_gaps": [{"before": n[:70], "us": round(g, 1)} for g, n in top]}


def _torch_kernels(fn, x, iters: int = 5) -> dict:
    """Kernels per inference of a PyTorch callable (CUPTI): launches and summed device time."""
    evs = [e for e in device_events(lambda i: fn(x), iters, 3)
           if "HtoD" not in e.name and "DtoH" not in e.name and not e.name.startswith("[memory]")]
    return {"kernels": len(evs) // iters, "kernel_us": round(sum(e.time_range.elapsed_us() for e in evs) / iters, 1),
            "timeline": _timeline(evs, iters)}


def _torch_baselines(model, x, ref, iters, checks, times, row, which=TORCH_BASELINES) -> None:
    """PyTorch eager, torch.compile's default mode and mode="reduce-overhead" (CUDA graphs:
    the strongest easy inference setup), each checked against the fp32 reference; the
    reduce-overhead one is also profiled (its kernel count and kernel time per inference)."""
    import torch
    if "eager" in which:
        eager = lambda t: model(t)
        checks["torch_eager"] = rel_l2(eager(x).float().cpu().numpy(), ref)
        times["torch_eager_us"] = _time_torch(eager, x, iters)
    for mode, key in (("default", "torch_compile"), ("reduce-overhead", "torch_compile_reduce_overhead")):
        if (mode == "default" and "compile" not in which) or (mode != "default" and mode not in which):
            continue
        try:
            torch._dynamo.reset()
            compiled = torch.compile(model, mode=None if mode == "default" else mode)
            for _ in range(3):          # reduce-overhead records its graph on a later call
                compiled(x)
            checks[key] = rel_l2(compiled(x).float().cpu().numpy(), ref)
            times[f"{key}_us"] = _time_torch(compiled, x, iters)
            if mode != "default":
                times[f"{key}_synchronized_us"] = _time_torch_synchronized(compiled, x, iters)
                row["torch_reduce_overhead_profile"] = _torch_kernels(compiled, x)
        except Exception as e:  # a failing baseline is reported, not fatal
            row[f"{key}_error"] = str(e).splitlines()[0][:200]


def _torch_key(case: dict, baselines) -> str:
    """What PyTorch's side of a case depends on: cases that differ only in convc's build (a
    dynamic batch run at a static case's batch, the NCHW input build) share it."""
    return json.dumps([case["model"], case["seed"], list(case["input_shape"]), case.get("dtype", "float16"),
                       sorted(baselines)])


def _cached_torch_baselines(model, x, ref, iters, checks, times, row, baselines, case, cache_path) -> None:
    """_torch_baselines, or with cache_path (a JSON file shared by the cases of one run, each in
    its own process) the results of the case measured first with the same _torch_key, marked
    `torch_baselines_from` with its name: torch.compile's two compiles dominate a case's time."""
    key = _torch_key(case, baselines)
    cache = {}
    if cache_path and os.path.exists(cache_path):
        with open(cache_path) as f:
            cache = json.load(f)
    if key in cache:
        got = cache[key]
        checks.update(got["checks"]), times.update(got["times"]), row.update(got["row"])
        row["torch_baselines_from"] = got["case"]
        return
    before = set(row)
    _torch_baselines(model, x, ref, iters, checks, times, row, baselines)
    if cache_path:
        cache[key] = {"case": case["name"], "checks": {k: float(v) for k, v in checks.items()}, "times": times,
                      "row": {k: row[k] for k in set(row) - before}}
        with open(cache_path, "w") as f:
            json.dump(cache, f)


def _benchmark_module(vmfb: str, params: dict, x_shape, dt: str = "f16", reps: int = 20,
                      flags: tuple = (), batch: int = 1, device: str = "cuda", function: str = "main") -> dict:
    """The same invocation timed by IREE's C benchmark tool (no Python): the parameters are
    written to an .irpa archive first. Separates Python call overhead from the runtime's.
    flags: IREE runtime flags (e.g. --cuda_use_streams=false). batch > 1: `main$async` with
    --batch_size=batch, the calls chained by their fences and one host wait per batch (how
    PyTorch is timed here: back to back, one synchronization); the function must say it takes
    fences (convc-record-once's builds do)."""
    import re
    import subprocess
    import tempfile
    import iree.runtime as rt
    tool = os.path.join(os.path.dirname(rt.__file__), "..", "_runtime_libs", "iree-benchmark-module")
    function = function if batch == 1 else function + "$async"
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [tool, f"--module={vmfb}", f"--device={device}", f"--function={function}",
               f"--input={'x'.join(map(str, x_shape))}x{dt}=0.5", f"--benchmark_repetitions={reps}",
               "--benchmark_report_aggregates_only=true", f"--batch_size={batch}", *flags]
        if params:
            index = rt.ParameterIndex()
            for name, value in params.items():
                index.add_buffer(name, np.ascontiguousarray(value).tobytes())
            irpa = os.path.join(tmp, "params.irpa")
            index.create_archive_file(irpa)
            cmd.append(f"--parameters=model={irpa}")
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    times = {}
    for line in out.stdout.splitlines():
        m = re.match(r"BM_\S+/process_time/real_time_(mean|median|stddev)\s+([0-9.]+) ms", line)
        if m:
            times[m.group(1) + "_ms"] = float(m.group(2))
    return times or {"error": (out.stderr or out.stdout).strip().splitlines()[-1:]}


def invoke_case(bundle: str, entry: dict, count: int) -> None:
    """Calls a case's convc build `count` times with its parameters and a random input, as
    run_case loads it, and nothing else: a profiler's view of the model's own kernels."""
    case = entry["case"]
    model = _torch_model(case)
    dt, np_dt = _DT[case.get("dtype", "float16")]
    x = np.random.default_rng(case["seed"]).standard_normal(case["input_shape"]).astype(np_dt)
    if entry.get("convc_input_layout") == "nhwc":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    params = {k: v.detach().cpu().numpy().astype(np_dt) if v.is_floating_point() else v.detach().cpu().numpy()
              for k, v in model.state_dict().items() if k in set(entry["parameters"])}
    xdt = entry.get("convc_input_dtype", dt)
    # stream mode: a profiler replays each kernel of the recorded command buffer alone
    lm = LoadedModule(os.path.join(bundle, entry["convc_vmfb"]), "cuda", parameters=params, cuda_graphs=False)
    for _ in range(count):
        lm.call(entry.get("function", "main"), [(x.astype(np.float32) if xdt != dt else x, xdt)])


def run_case(bundle: str, entry: dict, iters: int, baselines=TORCH_BASELINES,
             variants: tuple = ("convc", "iree"), runtime_flags: tuple = (), torch_cache: str | None = None) -> dict:
    import torch
    case = entry["case"]
    row = {"name": case["name"], "input_shape": case["input_shape"], "convs": entry["convs"],
           "convs_on_convc": entry["convs_on_convc"], "transposes": len(entry["transposes"]),
           "runtime_transposes": sum(1 for t in entry["transposes"] if not t["why"].startswith("module init")),
           "executables": entry.get("executables", entry.get("dispatches")), "structure": entry.get("structure"),
           "stock_structure": entry.get("stock_structure")}
    model = _torch_model(case).cuda()
    rng = np.random.default_rng(case["seed"])
    dt, np_dt = _DT[case.get("dtype", "float16")]
    x_np = rng.standard_normal(case["input_shape"]).astype(np_dt)
    x32 = torch.from_numpy(x_np.astype(np.float32)).cuda()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    with torch.no_grad():
        ref = model.float()(x32).float().cpu().numpy()
    # channels-last for images, channels_last_3d for clips and volumes (3-D convs)
    fmt = torch.channels_last_3d if x32.dim() == 5 else torch.channels_last
    model = model.to(getattr(torch, case.get("dtype", "float16"))).to(memory_format=fmt)
    x = x32.to(getattr(torch, case.get("dtype", "float16"))).contiguous(memory_format=fmt)
    params = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items() if k in set(entry["parameters"])}
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = True          # PyTorch's defaults for convs; f32 matmuls too
    torch.backends.cuda.matmul.allow_tf32 = True
    checks, times = {}, {}
    with torch.no_grad():
        if baselines:
            _cached_torch_baselines(model, x, ref, iters, checks, times, row, baselines, case, torch_cache)
    config = None
    for variant, key in (("convc", "convc_vmfb"), ("iree", "iree_vmfb")):
        if variant not in variants:
            continue
        if key not in entry:
            row[f"{variant}_error"] = entry.get(f"{variant}_error", "not compiled")
            continue
        try:
            lm = LoadedModule(os.path.join(bundle, entry[key]), "cuda", config=config, parameters=params)
            config = lm.config
            # a channels-last build takes the image as [N, H, W, C], as PyTorch's channels_last
            # input is laid out (converted here, outside the timing, as PyTorch's is)
            nhwc = variant == "convc" and entry.get("convc_input_layout") == "nhwc"
            xv = np.ascontiguousarray(np.moveaxis(x_np, 1, -1)) if nhwc else x_np    # NHWC, or NDHWC for a clip
            xdt = entry.get("convc_input_dtype", dt) if variant == "convc" else dt
            if xdt != dt:                      # a QDQ model takes f32 (the same values)
                xv = xv.astype(np.float32)
            fname = entry.get("function", "main")       # an ONNX model exports its graph's name
            out = lm.call(fname, [(xv, xdt)])
            if variant == "convc" and entry.get("convc_output_layout") == "nhwc":
                out = np.moveaxis(out, -1, 1)      # a channels-last result, compared as NCHW
            if variant == "convc" and entry.get("expected"):
                # a QDQ model: against onnxruntime's run of the same model (prepared with it)
                checks[variant] = rel_l2(out.astype(np.float32), np.load(os.path.join(bundle, entry["expected"])))
                row["convc_reference"] = entry.get("reference")
            else:
                checks[variant] = rel_l2(out.astype(np.float32), ref)
            f, args = lm.function(fname), [lm.to_device(xv, xdt)]
            times[f"{variant}_us"] = _time_iree(f, args, iters)
            if variant == "convc":
                row["convc_breakdown"] = _breakdown(f, args, times["convc_us"])
                vmfb = os.path.join(bundle, entry[key])
                flags = tuple(runtime_flags)
                if records_once(vmfb):          # as LoadedModule runs it, unless the caller says
                    given = {f.split("=")[0] for f in flags}
                    flags += tuple(f for f in RECORD_ONCE_FLAGS if f.split("=")[0] not in given)
                row["convc_benchmark_module"] = _benchmark_module(vmfb, params, xv.shape, xdt, flags=flags,
                                                                  function=fname)
                row["convc_runtime_flags"] = " ".join(flags)
                if records_once(vmfb):     # also timed as PyTorch is: calls back to back
                    row["convc_benchmark_module_chained"] = _benchmark_module(vmfb, params, xv.shape, xdt,
                                                                              flags=flags, batch=16, function=fname)
                row["convc_input_layout"] = entry.get("convc_input_layout", "nchw")
        except Exception as e:
            row[f"{variant}_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    row["rel_l2_vs_fp32"] = {k: float(v) for k, v in checks.items()}
    row["correct"] = {k: bool(v <= (entry.get("tolerance", TOLERANCE) if k == "convc" else TOLERANCE))
                      for k, v in checks.items()}
    row.update({k: round(v, 1) for k, v in times.items()})
    for base in ("torch_compile_reduce_overhead_us", "torch_compile_us", "torch_eager_us", "iree_us"):
        if base in times and "convc_us" in times:
            row[f"convc_over_{base[:-3]}"] = round(times["convc_us"] / times[base], 3)
    return row


def _png(rows: list, path: str) -> None:
    """Bars per case: convc (iree-benchmark-module's median where measured, else the Python-timed
    call; and with its calls pipelined where measured), torch.compile mode="reduce-overhead"
    (synchronized after every call, and back to back),
    torch.compile's default mode, eager, stock IREE."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def convc(r):
        ms = r.get("convc_benchmark_module", {}).get("median_ms")
        return ms * 1e3 if ms else r.get("convc_us", 0)

    def chained(r):
        ms = r.get("convc_benchmark_module_chained", {}).get("median_ms")
        return ms * 1e3 if ms else 0

    keys = [(convc, "convc, per call"), (chained, "convc, calls pipelined (--batch_size=16)"),
            (lambda r: r.get("torch_compile_reduce_overhead_synchronized_us", 0),
             "torch.compile reduce-overhead, synchronized per call"),
            (lambda r: r.get("torch_compile_reduce_overhead_us", 0), "torch.compile reduce-overhead, back to back"),
            (lambda r: r.get("torch_compile_us", 0), "torch.compile default"),
            (lambda r: r.get("torch_eager_us", 0), "PyTorch eager"), (lambda r: r.get("iree_us", 0), "stock IREE (sm_80)")]
    keys = [(value, label) for value, label in keys if any(value(r) for r in rows)]     # measured series only
    fig, ax = plt.subplots(figsize=(max(9, 0.7 * len(rows)), 4.5))
    w = 0.14
    for i, (value, label) in enumerate(keys):
        ax.bar([j + i * w for j in range(len(rows))], [value(r) / 1e3 for r in rows], w, label=label)
    ax.set_xticks([j + (len(keys) - 1) * w / 2 for j in range(len(rows))], [r["name"] for r in rows], rotation=60, ha="right")
    ax.set_ylabel("ms per inference (lower is better)")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title("End to end (f16; f32 rows: TF32), same weights and input")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="convc.tools.gpu.e2e", description=__doc__.splitlines()[0])
    p.add_argument("--bundle", required=True, help="bundle made by convc-e2e prepare")
    p.add_argument("--out", required=True, help="directory for e2e.json, e2e.png and the log")
    p.add_argument("--iters", type=int, default=20, help="inferences per timing round (default 20)")
    p.add_argument("--only", help="comma-separated case names")
    p.add_argument("--iree-only", action="store_true", help="time the IREE variants alone (no PyTorch baselines)")
    p.add_argument("--baselines", default=",".join(TORCH_BASELINES),
                   help=f"PyTorch baselines to time (default {','.join(TORCH_BASELINES)})")
    p.add_argument("--variants", default="convc,iree", help="IREE variants to run (convc, iree)")
    p.add_argument("--runtime-flags", default="", help="IREE runtime flags, e.g. --cuda_use_streams=true")
    p.add_argument("--torch-cache", help="JSON file of PyTorch baselines shared by the cases of one run: a case "
                                         "whose PyTorch side was measured already (same model, seed, shape, "
                                         "dtype) reuses it")
    p.add_argument("--invoke-only", metavar="CASE", help="only call CASE's convc build --count times (no timing, "
                                                       "no baselines): for Nsight Compute (tools/device/profile_model.sh)")
    p.add_argument("--count", type=int, default=3, help="calls for --invoke-only (default 3)")
    args = p.parse_args(argv)
    if args.runtime_flags:
        import iree.runtime as rt
        rt.flags.parse_flags(*args.runtime_flags.split())
    with open(os.path.join(args.bundle, "manifest.json")) as f:
        manifest = json.load(f)
    if args.invoke_only:
        entry = next((e for e in manifest["cases"] if e["case"]["name"] == args.invoke_only), None)
        if entry is None:
            p.error(f"no case {args.invoke_only!r} in {args.bundle}")
        invoke_case(args.bundle, entry, args.count)
        return 0
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for entry in manifest["cases"]:
        if args.only and entry["case"]["name"] not in args.only.split(","):
            continue
        row = run_case(args.bundle, entry, args.iters,
                       baselines=() if args.iree_only else tuple(args.baselines.split(",")),
                       variants=tuple(args.variants.split(",")), runtime_flags=tuple(args.runtime_flags.split()),
                       torch_cache=args.torch_cache)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "convc_breakdown"}), flush=True)
        if "convc_breakdown" in row:
            print("  breakdown:", json.dumps(row["convc_breakdown"]), flush=True)
    write_result(args.out, {"runtime_flags": args.runtime_flags, "commit": manifest.get("commit"), "cases": rows})
    return 0


METHOD = ("PyTorch: back to back with CUDA events, median of 5 rounds, and reduce-overhead also synchronized after "
          "every call; convc: the Python-timed call, and iree-benchmark-module's median per call and pipelined "
          "(--batch_size=16); f16 (f32 cases: TF32 everywhere), channels_last for PyTorch, cudnn.benchmark and TF32 on")


def write_result(out: str, fields: dict) -> dict:
    """e2e.json (fields with the date, device, torch version, tolerance and METHOD) and e2e.png
    of its cases, in out."""
    if "device" not in fields:      # merged on another machine: the cases' device and torch
        import torch
        fields = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, **fields}
    result = {"date": datetime.date.today().isoformat(), "tolerance": TOLERANCE, "method": METHOD, **fields}
    with open(os.path.join(out, "e2e.json"), "w") as f:
        json.dump(result, f, indent=1)
    try:
        _png(result["cases"], os.path.join(out, "e2e.png"))
    except ImportError:
        pass
    return result


if __name__ == "__main__":
    sys.exit(main())
