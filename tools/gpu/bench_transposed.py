"""Device side of the transposed-conv bench (bundle: `python3 -m convc.tools.transposed prepare`).

  python3 -m convc.tools.gpu.bench_transposed --bundle B --out DIR [--iters 50] [--rotate 4]

Per layer: convc's vmfb (every dispatch of the function: the sub-pixel phase convs, the copies
that interleave their outputs, the bias + ReLU map) against PyTorch's `conv_transpose2d` on
channels_last tensors (cuDNN; with its bias, and with the ReLU after it as a second number),
kernel time summed per iteration from CUPTI (median), inputs rotated over `rotate` sets so no
run finds its input in L2. The output is checked against PyTorch fp32 (TF32 off) of the same
filter: a wrong result is a FAIL, not a number.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys

import numpy as np

from ...runtime.module import LoadedModule
from .bench import kernel_time_us
from .check import TOLERANCE, device_name
from .reference import rel_l2


def bench_layer(bundle: str, entry: dict, iters: int, rotate: int) -> dict:
    import torch
    import torch.nn.functional as F
    L = entry["layer"]
    name = L["name"]
    row = {"name": name, "layer": L, "phase_convs": entry["phase_convs"], "dispatches": entry["dispatches"]}
    w = np.load(os.path.join(bundle, f"{name}.w.npy"))
    b = np.load(os.path.join(bundle, f"{name}.b.npy"))
    dt = {"f16": torch.float16, "f32": torch.float32}[L["dtype"]]
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal((L["N"], L["C"], L["H"], L["W"])).astype(np.float32) for _ in range(rotate)]
    args = dict(stride=L["stride"], padding=L["pad"], output_padding=L["output_padding"])
    # reference: fp32, no TF32
    torch.backends.cudnn.allow_tf32 = False
    wt, bt = torch.from_numpy(w.astype(np.float32)).cuda(), torch.from_numpy(b.astype(np.float32)).cuda()
    with torch.no_grad():
        ref = F.relu(F.conv_transpose2d(torch.from_numpy(xs[0]).cuda(), wt, bt, **args)).permute(0, 2, 3, 1).cpu().numpy()
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    # convc
    lm = LoadedModule(os.path.join(bundle, entry["vmfb"]), "cuda")
    f = lm.function(None)
    storage = np.float16 if L["dtype"] == "f16" else np.float32
    dev = [lm.to_device(np.ascontiguousarray(x.transpose(0, 2, 3, 1)).astype(storage), L["dtype"]) for x in xs]
    out = np.asarray(f(dev[0]).to_host()).astype(np.float32)
    row["rel_l2"] = float(rel_l2(out, ref))
    row["correct"] = bool(out.shape == ref.shape and np.isfinite(out).all() and row["rel_l2"] <= TOLERANCE[L["dtype"]])
    t, names = kernel_time_us(lambda i: f(dev[i % rotate]), iters)
    row["convc_us"], row["convc_kernels"] = t, names
    # cuDNN (channels_last, like convc's NHWC)
    xt = [torch.from_numpy(x).to(dt).cuda().contiguous(memory_format=torch.channels_last) for x in xs]
    wq, bq = wt.to(dt).contiguous(memory_format=torch.channels_last), bt.to(dt)
    with torch.no_grad():
        row["cudnn_us"], row["cudnn_kernels"] = kernel_time_us(lambda i: F.conv_transpose2d(xt[i % rotate], wq, bq, **args), iters)
        row["cudnn_relu_us"], _ = kernel_time_us(lambda i: F.relu(F.conv_transpose2d(xt[i % rotate], wq, bq, **args)), iters)
    flops = 2 * L["N"] * L["H"] * L["W"] * L["C"] * L["F"] * L["K"] * L["K"]
    row["convc_tflops"] = round(flops / row["convc_us"] / 1e6, 1) if row["convc_us"] else None
    row["convc_over_cudnn"] = round(row["convc_us"] / row["cudnn_us"], 3) if row["convc_us"] and row["cudnn_us"] else None
    return row


def run_bench(argv, prog: str, doc: str, bench_layer, result_file: str) -> int:
    """The bench loop of a layer bundle (this one, and convc.tools.gpu.bench_conv3d): every
    layer through bench_layer(bundle, entry, iters, rotate), one failure reported without
    stopping the others, the geomean of convc / cuDNN, the rows in OUT/result_file."""
    p = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    p.add_argument("--bundle", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--rotate", type=int, default=4)
    p.add_argument("--only", help="comma-separated layer names")
    args = p.parse_args(argv)
    with open(os.path.join(args.bundle, "manifest.json")) as fh:
        manifest = json.load(fh)
    rows = []
    for entry in manifest["layers"]:
        if args.only and entry["layer"]["name"] not in args.only.split(","):
            continue
        try:
            rows.append(bench_layer(args.bundle, entry, args.iters, args.rotate))
        except Exception as e:      # one layer's failure is reported, the others still run
            rows.append({"name": entry["layer"]["name"], "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"})
        r = rows[-1]
        print(f"{r['name']:22s} " + (f"convc {r['convc_us']:.1f} us ({r['convc_tflops']} TFLOP/s), cuDNN {r['cudnn_us']:.1f} "
                                     f"(+ReLU {r['cudnn_relu_us']:.1f}), ratio {r['convc_over_cudnn']}, "
                                     f"{'ok' if r['correct'] else 'WRONG'} (rel. L2 {r['rel_l2']:.1e})"
                                     if "error" not in r else f"FAIL {r['error']}"), flush=True)
    ratios = [r["convc_over_cudnn"] for r in rows if r.get("convc_over_cudnn")]
    geo = float(np.exp(np.mean(np.log(ratios)))) if ratios else None
    result = {"date": datetime.date.today().isoformat(), "device": device_name("cuda"), "iters": args.iters,
              "rotate": args.rotate, "tolerance": TOLERANCE, "geomean_convc_over_cudnn": geo,
              "method": doc.split("\n\n")[1].replace("\n", " "), "layers": rows}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, result_file), "w") as fh:
        json.dump(result, fh, indent=1)
    bad = [r["name"] for r in rows if not r.get("correct")]
    print(f"geomean convc / cuDNN {geo:.3f}" if geo else "no ratio", f"; {len(rows) - len(bad)}/{len(rows)} correct")
    return 0 if not bad else 1


def main(argv=None) -> int:
    return run_bench(argv, "bench_transposed", __doc__, bench_layer, "transposed.json")

if __name__ == "__main__":
    sys.exit(main())
