"""Device side of the 3-D conv bench (bundle: `python3 -m convc.tools.conv3d prepare`).

  python3 -m convc.tools.gpu.bench_conv3d --bundle B --out DIR [--iters 50] [--rotate 4]

Per layer: convc's vmfb (every dispatch of the function: the 2-D conv, and for a depth im2col
the copy kernel assembling its frames, or IREE's strided copy of a depth stride) against
PyTorch's `conv3d` on channels_last_3d tensors (cuDNN; with its bias, and with the ReLU after it
as a second number), kernel time summed per iteration from CUPTI (median), inputs rotated over
`rotate` sets so no run finds its input in L2. The output is checked against PyTorch fp32 (TF32
off) of the same filter: a wrong result is a FAIL, not a number.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from ...runtime.arrays import from_f32, to_f32
from ...runtime.module import LoadedModule
from .bench import kernel_time_us
from .bench_transposed import run_bench
from .check import TOLERANCE
from .reference import rel_l2


def bench_layer(bundle: str, entry: dict, iters: int, rotate: int) -> dict:
    import torch
    import torch.nn.functional as F
    L = entry["layer"]
    name = L["name"]
    row = {"name": name, "layer": L, "convs": entry["convs"], "copies": entry["copies"],
           "iree_dispatches": entry["iree_dispatches"], "dispatches": entry["dispatches"]}
    w = np.load(os.path.join(bundle, f"{name}.w.npy"))
    b = np.load(os.path.join(bundle, f"{name}.b.npy"))
    dt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[L["dtype"]]
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal((L["N"], L["C"], L["D"], L["H"], L["W"])).astype(np.float32) for _ in range(rotate)]
    args = dict(stride=tuple(L["stride"]), padding=tuple(L["pad"]), dilation=tuple(L.get("dilation", (1, 1, 1))))
    torch.backends.cudnn.allow_tf32 = False
    wt, bt = torch.from_numpy(w.astype(np.float32)).cuda(), torch.from_numpy(b.astype(np.float32)).cuda()
    with torch.no_grad():
        ref = F.relu(F.conv3d(torch.from_numpy(xs[0]).cuda(), wt, bt, **args)).permute(0, 2, 3, 4, 1).cpu().numpy()
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    lm = LoadedModule(os.path.join(bundle, entry["vmfb"]), "cuda")
    f = lm.function(None)
    dev = [lm.to_device(from_f32(np.ascontiguousarray(x.transpose(0, 2, 3, 4, 1)), L["dtype"]), L["dtype"]) for x in xs]
    out = to_f32(np.asarray(f(dev[0]).to_host()), L["dtype"])
    row["rel_l2"] = float(rel_l2(out, ref))
    row["correct"] = bool(out.shape == ref.shape and np.isfinite(out).all() and row["rel_l2"] <= TOLERANCE[L["dtype"]])
    t, names = kernel_time_us(lambda i: f(dev[i % rotate]), iters)
    row["convc_us"], row["convc_kernels"] = t, names
    xt = [torch.from_numpy(x).to(dt).cuda().contiguous(memory_format=torch.channels_last_3d) for x in xs]
    wq, bq = wt.to(dt).contiguous(memory_format=torch.channels_last_3d), bt.to(dt)
    with torch.no_grad():
        row["cudnn_us"], row["cudnn_kernels"] = kernel_time_us(lambda i: F.conv3d(xt[i % rotate], wq, bq, **args), iters)
        row["cudnn_relu_us"], _ = kernel_time_us(lambda i: F.relu(F.conv3d(xt[i % rotate], wq, bq, **args)), iters)
    out_vox = 1
    for n, p, k, s, d in zip((L["D"], L["H"], L["W"]), L["pad"], L["taps"], L["stride"], L.get("dilation", (1, 1, 1))):
        out_vox *= (n + 2 * p - d * (k - 1) - 1) // s + 1
    flops = 2 * L["N"] * out_vox * L["F"] * L["C"] * int(np.prod(L["taps"]))
    row["convc_tflops"] = round(flops / row["convc_us"] / 1e6, 1) if row["convc_us"] else None
    row["convc_over_cudnn"] = round(row["convc_us"] / row["cudnn_us"], 3) if row["convc_us"] and row["cudnn_us"] else None
    return row


def main(argv=None) -> int:
    return run_bench(argv, "bench_conv3d", __doc__, bench_layer, "conv3d.json")


if __name__ == "__main__":
    sys.exit(main())
