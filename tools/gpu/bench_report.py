"""Benchmark tables and chart from a convc-bench results JSON (pure Python + matplotlib)."""

from __future__ import annotations

import math


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def _f(x, fmt="{:.1f}"):
    return fmt.format(x) if isinstance(x, (int, float)) and math.isfinite(x) else "-"


def summarize(res: dict) -> dict:
    """Per-group geomeans of the ratios (convc time / other time: < 1 means convc is faster).
    cuDNN-fused (conv + bias (+ residual) + relu in cuDNN) covers only the layers whose
    epilogue cuDNN can fuse."""
    groups = {}
    for r in res["layers"]:
        groups.setdefault(r["group"], []).append(r)
    out = {}
    for g, rows in groups.items():
        out[g] = {k: geomean([r.get(k) for r in rows])
                  for k in ("convc_vs_cudnn", "convc_vs_cudnn_fused", "convc_vs_iree", "convc_vs_torch_eager",
                            "convc_tflops", "pct_of_floor")}
    return out


def print_report(res: dict) -> None:
    print(f"device {res['device']}  date {res['date']}  commit {res['commit']}  "
          f"peak {res['peak_tflops']:.0f} TFLOP/s  bandwidth {res['bandwidth_tbs']:.2f} TB/s  "
          f"timing: {res.get('timing_method', '')}")
    hdr = (f"{'layer':26s} {'convc':>8s} {'IREE':>8s} {'cuDNN':>8s} {'eager':>8s} {'floor':>7s} "
           f"{'TFLOP/s':>8s} {'%floor':>7s} {'/cuDNN':>7s} {'/fused':>7s} {'/IREE':>7s} {'/eager':>7s}  ok   "
           f"kernel            regs  smem   st")
    print(hdr)
    for r in res["layers"]:
        print(f"{r['name']:26s} {_f(r.get('convc_us')):>8s} {_f(r.get('iree_us')):>8s} "
              f"{_f(r.get('cudnn_us')):>8s} {_f(r.get('torch_eager_us')):>8s} {_f(r.get('floor_us')):>7s} "
              f"{_f(r.get('convc_tflops')):>8s} {_f(r.get('pct_of_floor')):>7s} "
              f"{_f(r.get('convc_vs_cudnn'), '{:.2f}'):>7s} {_f(r.get('convc_vs_cudnn_fused'), '{:.2f}'):>7s} "
              f"{_f(r.get('convc_vs_iree'), '{:.2f}'):>7s} "
              f"{_f(r.get('convc_vs_torch_eager'), '{:.2f}'):>7s}  {'PASS' if r.get('correct') else 'FAIL'} "
              f"{str(r.get('kernel') or '-'):17s} {str(r.get('registers', '-')):>4s} "
              f"{str(r.get('smem_bytes') or '-'):>6s} {str(r.get('stages') or '-'):>3s}")
    print("geomean per group (convc time / other time; < 1: convc faster):")
    for g, s in summarize(res).items():
        print(f"  {g:10s} convc/cuDNN {_f(s['convc_vs_cudnn'], '{:.2f}')}  "
              f"convc/cuDNN-fused {_f(s['convc_vs_cudnn_fused'], '{:.2f}')}  convc/IREE "
              f"{_f(s['convc_vs_iree'], '{:.3f}')}  convc/eager {_f(s['convc_vs_torch_eager'], '{:.2f}')}  "
              f"convc {_f(s['convc_tflops'])} TFLOP/s  {_f(s['pct_of_floor'])}% of floor")


def plot(res: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = res["layers"]
    names = [r["name"] for r in rows]
    x = range(len(rows))
    fig, ax = plt.subplots(figsize=(max(10, len(rows) * 0.55), 5.5))
    w = 0.2
    series = [("convc_us", "convc"), ("cudnn_us", "cuDNN (conv only)"), ("iree_us", "IREE sm_80"),
              ("torch_eager_us", "PyTorch eager")]
    for i, (k, label) in enumerate(series):
        ax.bar([j + (i - 1.5) * w for j in x], [r.get(k) or 0 for r in rows], w, label=label)
    ax.plot(list(x), [r.get("floor_us") or 0 for r in rows], "k_", markersize=14, label="floor")
    ax.set_yscale("log")
    ax.set_ylabel("kernel time (us, log)")
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=75, ha="right", fontsize=7)
    ax.set_title(f"convc vs cuDNN / IREE / eager on {res['device']} ({res['date'][:10]}, {res['commit']})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
