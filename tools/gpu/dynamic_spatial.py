"""Convs with runtime image sizes on the GPU: one build, several heights and widths, against numpy.

  python3 -m convc.tools.gpu.dynamic_spatial prepare --out DIR [--target sm_90a]   (here)
  python3 -m convc.tools.gpu.dynamic_spatial check --bundle DIR [--driver cuda]     (there)

The model (NHWC, f16, H and W dynamic) is a padded 3x3 conv with bias and ReLU, then a 3x3
stride-2 conv whose epilogue adds a residual input shaped like its output: the persistent
kernel's im2col map takes H, W and their strides in-kernel, its output and residual maps the
rows. `check` runs it at sizes that leave partial tiles, odd widths, a single pixel, and an
image smaller than the strided window's reach, outputs poisoned (NaN) before each call,
against a float64 numpy reference.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

MODEL = """
func.func @main(%x: tensor<2x?x?x64xf16>, %w1: tensor<128x3x3x64xf16>, %b: tensor<128xf16>,
                %w2: tensor<64x3x3x128xf16>, %r: tensor<2x?x?x64xf16>) -> tensor<2x?x?x64xf16> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f16
  %h = tensor.dim %x, %c1 : tensor<2x?x?x64xf16>
  %w = tensor.dim %x, %c2 : tensor<2x?x?x64xf16>
  %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f16
  } : tensor<2x?x?x64xf16> to tensor<2x?x?x64xf16>
  %e1 = tensor.empty(%h, %w) : tensor<2x?x?x128xf16>
  %a1 = linalg.fill ins(%zero : f16) outs(%e1 : tensor<2x?x?x128xf16>) -> tensor<2x?x?x128xf16>
  %y1 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%xp, %w1 : tensor<2x?x?x64xf16>, tensor<128x3x3x64xf16>) outs(%a1 : tensor<2x?x?x128xf16>) -> tensor<2x?x?x128xf16>
  %r1 = linalg.generic {indexing_maps = [affine_map<(n, i, j, c) -> (n, i, j, c)>, affine_map<(n, i, j, c) -> (c)>,
                                         affine_map<(n, i, j, c) -> (n, i, j, c)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%y1, %b : tensor<2x?x?x128xf16>, tensor<128xf16>) outs(%e1 : tensor<2x?x?x128xf16>) {
  ^bb0(%v: f16, %bv: f16, %o: f16):
    %s = arith.addf %v, %bv : f16
    %m = arith.maximumf %s, %zero : f16
    linalg.yield %m : f16
  } -> tensor<2x?x?x128xf16>
  %rp = tensor.pad %r1 low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f16
  } : tensor<2x?x?x128xf16> to tensor<2x?x?x128xf16>
  %ho = tensor.dim %r, %c1 : tensor<2x?x?x64xf16>
  %wo = tensor.dim %r, %c2 : tensor<2x?x?x64xf16>
  %e2 = tensor.empty(%ho, %wo) : tensor<2x?x?x64xf16>
  %a2 = linalg.fill ins(%zero : f16) outs(%e2 : tensor<2x?x?x64xf16>) -> tensor<2x?x?x64xf16>
  %y2 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
        ins(%rp, %w2 : tensor<2x?x?x128xf16>, tensor<64x3x3x128xf16>) outs(%a2 : tensor<2x?x?x64xf16>) -> tensor<2x?x?x64xf16>
  %out = linalg.generic {indexing_maps = [affine_map<(n, i, j, c) -> (n, i, j, c)>, affine_map<(n, i, j, c) -> (n, i, j, c)>,
                                          affine_map<(n, i, j, c) -> (n, i, j, c)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%y2, %r : tensor<2x?x?x64xf16>, tensor<2x?x?x64xf16>) outs(%e2 : tensor<2x?x?x64xf16>) {
  ^bb0(%v: f16, %rv: f16, %o: f16):
    %s = arith.addf %v, %rv : f16
    linalg.yield %s : f16
  } -> tensor<2x?x?x64xf16>
  return %out : tensor<2x?x?x64xf16>
}
"""

# (H, W): partial tiles, odd sizes, one pixel, a large image
SIZES = ((16, 16), (33, 20), (7, 129), (1, 1), (2, 3), (96, 160))


def reference(x, w1, b, w2, r):
    from .reference import conv_nhwc_fhwc_numpy
    f = lambda a: a.astype(np.float64)
    y1 = np.maximum(conv_nhwc_fhwc_numpy(f(x), f(w1), (1, 1), (1, 1), (1, 1, 1, 1)) + f(b), 0)
    y1 = y1.astype(np.float16).astype(np.float64)       # the model keeps f16 between the convs
    return conv_nhwc_fhwc_numpy(y1, f(w2), (2, 2), (1, 1), (1, 1, 1, 1)) + f(r)


def inputs(h: int, w: int, seed: int = 0):
    rng = np.random.default_rng([seed, h, w])
    ho, wo = (h - 1) // 2 + 1, (w - 1) // 2 + 1
    return [rng.standard_normal((2, h, w, 64)).astype(np.float16),
            (rng.standard_normal((128, 3, 3, 64)) / 24).astype(np.float16),
            (rng.standard_normal(128) / 4).astype(np.float16),
            (rng.standard_normal((64, 3, 3, 128)) / 34).astype(np.float16),
            rng.standard_normal((2, ho, wo, 64)).astype(np.float16)]


def prepare(out: str, target: str) -> dict:
    from ...compiler.driver import CompileOptions, compile_file
    os.makedirs(out, exist_ok=True)
    src = os.path.join(out, "dynamic_spatial.mlir")
    with open(src, "w") as f:
        f.write(MODEL)
    res = compile_file(src, os.path.join(out, "dynamic_spatial.vmfb"), CompileOptions(target=target))
    convs = res.by_kind()["convs"]
    info = {"target": target, "convs": [r.line() for r in convs],
            "on_convc": sum(1 for r in convs if r.path == "convc")}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(info, f, indent=1)
    return info


def check(bundle: str, driver: str, tolerance: float = 5e-3) -> list[dict]:
    from ...runtime.module import LoadedModule
    m = LoadedModule(os.path.join(bundle, "dynamic_spatial.vmfb"), driver)
    rows = []
    for h, w in SIZES:
        args = inputs(h, w)
        got = m.call("main", [(a, "f16") for a in args]).astype(np.float64)
        ref = reference(*args)
        err = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-12)) if got.shape == ref.shape else None
        ok = err is not None and err <= tolerance and bool(np.isfinite(got).all())
        rows.append({"h": h, "w": w, "shape": list(got.shape), "rel_l2": err, "ok": ok})
        print(f"H={h:3d} W={w:3d} -> {tuple(got.shape)} rel_l2={err if err is None else f'{err:.2e}'} "
              f"{'ok' if ok else 'FAIL'}", flush=True)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m convc.tools.gpu.dynamic_spatial", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["prepare", "check"])
    p.add_argument("--out", help="prepare: the bundle directory")
    p.add_argument("--bundle", help="check: the bundle directory")
    p.add_argument("--target", default="sm_90a")
    p.add_argument("--driver", default="cuda")
    p.add_argument("--json", help="check: write the rows here")
    args = p.parse_args(argv)
    if args.action == "prepare":
        info = prepare(args.out, args.target)
        print(f"{info['on_convc']}/{len(info['convs'])} convs on convc -> {args.out}")
        for line in info["convs"]:
            print("  " + line)
        return 0
    rows = check(args.bundle, args.driver)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows}, f, indent=1)
    bad = [r for r in rows if not r["ok"]]
    print(f"{len(rows) - len(bad)}/{len(rows)} sizes correct")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
