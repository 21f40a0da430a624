"""Convs with runtime image sizes on the GPU: one build, several heights and widths, against numpy.

  python3 -m convc.tools.gpu.dynamic_spatial prepare --out DIR [--target sm_90a]   (here)
  python3 -m convc.tools.gpu.dynamic_spatial check --bundle DIR [--driver cuda]     (there)
  python3 -m convc.tools.gpu.dynamic_spatial prepare-random --out DIR --seed S --count N
  python3 -m convc.tools.gpu.dynamic_spatial check-random --bundle DIR [--driver cuda]

The model (NHWC, f16, H and W dynamic) is a padded 3x3 conv with bias and ReLU, then a 3x3
stride-2 conv whose epilogue adds a residual input shaped like its output: the persistent
kernel's im2col map takes H, W and their strides in-kernel, its output and residual maps the
rows. `check` runs it at sizes that leave partial tiles, odd widths, a single pixel, and an
image smaller than the strided window's reach, outputs poisoned (NaN) before each call,
against a float64 numpy reference. The random draws (random_convs) add windows up to 5x5,
strides, dilations, asymmetric pads and channel windows of wider inputs, one build each, then
RGB stems (STEM_CONVS) and depthwise convs and max-pools (WINDOW_OPS, the direct kernel).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import dataclasses
from dataclasses import dataclass

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


@dataclass(frozen=True)
class RandomConv:
    """One random conv with runtime H and W: an NHWC f16 input of `window` channels of which the
    conv reads C from `offset` (a channel window when window > C), a window of R x S taps,
    strides, dilations and asymmetric zero pads, bias and ReLU."""
    C: int
    F: int
    R: int
    S: int
    stride: tuple
    dilation: tuple
    pad: tuple          # (top, left, bottom, right)
    window: int
    offset: int
    N: int = 2          # images (1: IREE drops the unit batch in its dispatches)

    def model(self) -> str:
        """The MLIR model: x [N, ?, ?, window] (sliced to C channels), w [F, R, S, C], b [F]."""
        pt, pl, pb, pr = self.pad
        c, f, win, n = self.C, self.F, self.window, self.N
        xs = f"tensor<{n}x?x?x{win}xf16>"
        xc = f"tensor<{n}x?x?x{c}xf16>"
        ys = f"tensor<{n}x?x?x{f}xf16>"
        eff_h = self.dilation[0] * (self.R - 1) + 1
        eff_w = self.dilation[1] * (self.S - 1) + 1
        slice_ = (f"  %xs = tensor.extract_slice %x[0, 0, 0, {self.offset}] [{n}, %h, %w, {c}] [1, 1, 1, 1] : {xs} to {xc}\n"
                  if win != c else "")
        src = "%xs" if win != c else "%x"
        return f"""
func.func @main(%x: {xs}, %wt: tensor<{f}x{self.R}x{self.S}x{c}xf16>, %b: tensor<{f}xf16>) -> {ys} {{
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f16
  %h = tensor.dim %x, %c1 : {xs}
  %w = tensor.dim %x, %c2 : {xs}
{slice_}  %xp = tensor.pad {src} low[0, {pt}, {pl}, 0] high[0, {pb}, {pr}, 0] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f16
  }} : {xc} to tensor<{n}x?x?x{c}xf16>
  %ho0 = affine.apply affine_map<()[s0] -> ((s0 + {pt + pb - eff_h}) floordiv {self.stride[0]} + 1)>()[%h]
  %wo0 = affine.apply affine_map<()[s0] -> ((s0 + {pl + pr - eff_w}) floordiv {self.stride[1]} + 1)>()[%w]
  %e = tensor.empty(%ho0, %wo0) : {ys}
  %a = linalg.fill ins(%zero : f16) outs(%e : {ys}) -> {ys}
  %y = linalg.conv_2d_nhwc_fhwc {{dilations = dense<[{self.dilation[0]}, {self.dilation[1]}]> : tensor<2xi64>,
                                 strides = dense<[{self.stride[0]}, {self.stride[1]}]> : tensor<2xi64>}}
        ins(%xp, %wt : tensor<{n}x?x?x{c}xf16>, tensor<{f}x{self.R}x{self.S}x{c}xf16>) outs(%a : {ys}) -> {ys}
  %r = linalg.generic {{indexing_maps = [affine_map<(n, i, j, k) -> (n, i, j, k)>, affine_map<(n, i, j, k) -> (k)>,
                                        affine_map<(n, i, j, k) -> (n, i, j, k)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%y, %b : {ys}, tensor<{f}xf16>) outs(%e : {ys}) {{
  ^bb0(%v: f16, %bv: f16, %o: f16):
    %s = arith.addf %v, %bv : f16
    %m = arith.maximumf %s, %zero : f16
    linalg.yield %m : f16
  }} -> {ys}
  return %r : {ys}
}}
"""

    def min_size(self) -> tuple[int, int]:
        """The smallest H, W with one output pixel."""
        return (max(1, self.dilation[0] * (self.R - 1) + 1 - self.pad[0] - self.pad[2]),
                max(1, self.dilation[1] * (self.S - 1) + 1 - self.pad[1] - self.pad[3]))

    def arguments(self, rng, h: int, w: int) -> list[np.ndarray]:
        """The model's f16 arguments for an h x w image: x, the filter, the bias."""
        x = rng.standard_normal((self.N, h, w, self.window)).astype(np.float16)
        wt = (rng.standard_normal((self.F, self.R, self.S, self.C)) / np.sqrt(self.R * self.S * self.C)).astype(np.float16)
        return [x, wt, (rng.standard_normal(self.F) / 4).astype(np.float16)]

    def reference(self, x, w, b):
        from .reference import conv_nhwc_fhwc_numpy
        f = lambda a: a.astype(np.float64)
        xs = x[..., self.offset:self.offset + self.C]
        return np.maximum(conv_nhwc_fhwc_numpy(f(xs), f(w), self.stride, self.dilation, self.pad) + f(b), 0)


def random_convs(seed: int, count: int) -> list[RandomConv]:
    """Random runtime-H/W convs: channels multiples of 8 (some of 16 or 64: the TMA kernels'),
    windows 1x1 to 5x5, strides and dilations 1-2, pads 0-2 per side, half of them reading a
    channel window of a wider input."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        C = int(rng.choice([8, 16, 32, 48, 64, 128]))
        F = int(rng.choice([8, 16, 32, 64, 96, 128]))
        R, S = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        dilation = (int(rng.integers(1, 3)) if R > 1 else 1, int(rng.integers(1, 3)) if S > 1 else 1)
        pad = tuple(int(x) for x in rng.integers(0, 3, 4))
        window, offset = C, 0
        if rng.random() < 0.5:
            window = C * int(rng.integers(2, 4))
            offset = C * int(rng.integers(0, window // C))
        out.append(RandomConv(C, F, R, S, stride, dilation, pad, window, offset, int(rng.integers(1, 3))))
    return out


# RGB stems with runtime image sizes (TMA cannot read their 6- or 8-byte pixels): 3x3s on the
# grouped tensor-core kernel, the 7x7 on the gathered im2col kernel
STEM_CONVS = (RandomConv(3, 32, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1), 3, 0, 4),
              RandomConv(3, 16, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 3, 0, 1),
              RandomConv(4, 32, 3, 3, (2, 2), (1, 1), (0, 0, 1, 1), 4, 0, 2),
              RandomConv(3, 64, 7, 7, (2, 2), (1, 1), (3, 3, 3, 3), 3, 0, 2))


@dataclass(frozen=True)
class WindowOp:
    """A depthwise conv (filter [R, S, C], bias, ReLU) or a max-pool with runtime H and W, on the
    direct kernel: x [N, ?, ?, C] f16, zero (depthwise) or -inf (max) padding."""
    kind: str           # "depthwise" or "max"
    C: int
    R: int
    S: int
    stride: tuple
    pad: tuple          # (top, left, bottom, right)
    N: int = 2

    def model(self) -> str:
        pt, pl, pb, pr = self.pad
        c, n = self.C, self.N
        xs = f"tensor<{n}x?x?x{c}xf16>"
        pad_value = "0.0" if self.kind == "depthwise" else "0xFC00"
        st = f"dense<[{self.stride[0]}, {self.stride[1]}]> : tensor<2xi64>"
        head = f"""
func.func @main(%x: {xs}{f', %wt: tensor<{self.R}x{self.S}x{c}xf16>, %b: tensor<{c}xf16>' if self.kind == 'depthwise' else ''}) -> {xs} {{
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f16
  %padv = arith.constant {pad_value} : f16
  %h = tensor.dim %x, %c1 : {xs}
  %w = tensor.dim %x, %c2 : {xs}
  %xp = tensor.pad %x low[0, {pt}, {pl}, 0] high[0, {pb}, {pr}, 0] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %padv : f16
  }} : {xs} to {xs}
  %ho0 = affine.apply affine_map<()[s0] -> ((s0 + {pt + pb - self.R}) floordiv {self.stride[0]} + 1)>()[%h]
  %wo0 = affine.apply affine_map<()[s0] -> ((s0 + {pl + pr - self.S}) floordiv {self.stride[1]} + 1)>()[%w]
  %e = tensor.empty(%ho0, %wo0) : {xs}
"""
        if self.kind == "max":
            return head + f"""  %a = linalg.fill ins(%padv : f16) outs(%e : {xs}) -> {xs}
  %win = tensor.empty() : tensor<{self.R}x{self.S}xf16>
  %y = linalg.pooling_nhwc_max {{dilations = dense<1> : tensor<2xi64>, strides = {st}}}
        ins(%xp, %win : {xs}, tensor<{self.R}x{self.S}xf16>) outs(%a : {xs}) -> {xs}
  return %y : {xs}
}}
"""
        return head + f"""  %a = linalg.fill ins(%zero : f16) outs(%e : {xs}) -> {xs}
  %y = linalg.depthwise_conv_2d_nhwc_hwc {{dilations = dense<1> : tensor<2xi64>, strides = {st}}}
        ins(%xp, %wt : {xs}, tensor<{self.R}x{self.S}x{c}xf16>) outs(%a : {xs}) -> {xs}
  %r = linalg.generic {{indexing_maps = [affine_map<(n, i, j, k) -> (n, i, j, k)>, affine_map<(n, i, j, k) -> (k)>,
                                        affine_map<(n, i, j, k) -> (n, i, j, k)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%y, %b : {xs}, tensor<{c}xf16>) outs(%e : {xs}) {{
  ^bb0(%v: f16, %bv: f16, %o: f16):
    %s = arith.addf %v, %bv : f16
    %m = arith.maximumf %s, %zero : f16
    linalg.yield %m : f16
  }} -> {xs}
  return %r : {xs}
}}
"""

    def min_size(self) -> tuple[int, int]:
        return max(1, self.R - self.pad[0] - self.pad[2]), max(1, self.S - self.pad[1] - self.pad[3])

    def arguments(self, rng, h: int, w: int) -> list[np.ndarray]:
        """The model's f16 arguments for an h x w image: x (and a depthwise conv's filter, bias)."""
        out = [rng.standard_normal((self.N, h, w, self.C)).astype(np.float16)]
        if self.kind == "depthwise":
            out += [(rng.standard_normal((self.R, self.S, self.C)) / self.R).astype(np.float16),
                    (rng.standard_normal(self.C) / 4).astype(np.float16)]
        return out

    def reference(self, x, wt=None, b=None):
        pt, pl, pb, pr = self.pad
        f = x.astype(np.float64)
        fill = 0.0 if self.kind == "depthwise" else -np.inf
        xp = np.pad(f, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill)
        ho = (xp.shape[1] - self.R) // self.stride[0] + 1
        wo = (xp.shape[2] - self.S) // self.stride[1] + 1
        out = np.full((self.N, ho, wo, self.C), fill if self.kind == "max" else 0.0)
        for r in range(self.R):
            for s_ in range(self.S):
                tap = xp[:, r:r + self.stride[0] * (ho - 1) + 1:self.stride[0],
                         s_:s_ + self.stride[1] * (wo - 1) + 1:self.stride[1], :]
                out = np.maximum(out, tap) if self.kind == "max" else out + tap * wt[r, s_].astype(np.float64)
        return out if self.kind == "max" else np.maximum(out + b.astype(np.float64), 0)


WINDOW_OPS = (WindowOp("max", 256, 5, 5, (1, 1), (2, 2, 2, 2), 4),        # SPPF's pool
              WindowOp("max", 64, 3, 3, (2, 2), (1, 1, 1, 1), 1),         # ResNet's stem pool
              WindowOp("depthwise", 96, 3, 3, (1, 1), (1, 1, 1, 1), 2),
              WindowOp("depthwise", 144, 3, 3, (2, 2), (0, 0, 1, 1), 1),
              WindowOp("depthwise", 32, 5, 5, (2, 2), (2, 2, 2, 2), 2),
              WindowOp("depthwise", 64, 7, 7, (1, 1), (3, 3, 3, 3), 2))


def check_build(item, vmfb: str, driver: str, sizes, seed: int = 0, tolerance: float = 5e-3) -> list[dict]:
    """A RandomConv's or WindowOp's build at each (H, W) against its numpy reference (fresh
    arguments per size); outputs must have numpy's shape and be finite."""
    from ...runtime.module import LoadedModule
    m = LoadedModule(vmfb, driver)
    rows = []
    for h, w in sizes:
        args = item.arguments(np.random.default_rng([seed, h, w]), h, w)
        got = m.call("main", [(a, "f16") for a in args]).astype(np.float64)
        ref = item.reference(*args)
        err = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-12)) if got.shape == ref.shape else None
        rows.append({"h": h, "w": w, "shape": list(got.shape), "rel_l2": err,
                     "ok": err is not None and err <= tolerance and bool(np.isfinite(got).all())})
    return rows


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


def prepare_random(out: str, target: str, seed: int, count: int) -> list[dict]:
    """One build per random_convs draw, with the draw in the manifest (`random.json`)."""
    from ...compiler.driver import CompileOptions, compile_file
    os.makedirs(out, exist_ok=True)
    built = {"convs": [], "windows": []}
    for group, key, prefix, items in (("convs", "conv", "random", random_convs(seed, count) + list(STEM_CONVS)),
                                      ("windows", "op", "window", WINDOW_OPS)):
        for i, item in enumerate(items):
            src = os.path.join(out, f"{prefix}_{i}.mlir")
            with open(src, "w") as f:
                f.write(item.model())
            res = compile_file(src, os.path.join(out, f"{prefix}_{i}.vmfb"), CompileOptions(target=target))
            os.remove(src)
            kinds = res.by_kind()
            (r,) = kinds["convs"] + kinds["pools"]
            built[group].append({key: dataclasses.asdict(item), "vmfb": f"{prefix}_{i}.vmfb", "report": r.line()})
    with open(os.path.join(out, "random.json"), "w") as f:
        json.dump({"seed": seed, "target": target, **built}, f, indent=1)
    return built["convs"] + built["windows"]


def check_random_bundle(bundle: str, driver: str) -> list[dict]:
    with open(os.path.join(bundle, "random.json")) as f:
        manifest = json.load(f)
    out = []
    for key, cls, entries in (("conv", RandomConv, manifest["convs"]), ("op", WindowOp, manifest.get("windows", []))):
        for e in entries:
            item = cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in e[key].items()})
            mh, mw = item.min_size()
            rows = check_build(item, os.path.join(bundle, e["vmfb"]), driver,
                               [(mh, mw), (mh + 5, mw + 3), (17, 23), (64, 97)])
            ok = all(x["ok"] for x in rows)
            print(f"{'ok  ' if ok else 'FAIL'} {item} {[(x['h'], x['w'], x['rel_l2']) for x in rows] if not ok else ''}",
                  flush=True)
            out.append({key: e[key], "report": e["report"], "rows": rows, "ok": ok})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m convc.tools.gpu.dynamic_spatial", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["prepare", "check", "prepare-random", "check-random"])
    p.add_argument("--seed", type=int, default=0, help="prepare-random: the draw's seed")
    p.add_argument("--count", type=int, default=24, help="prepare-random: how many convs")
    p.add_argument("--out", help="prepare: the bundle directory")
    p.add_argument("--bundle", help="check: the bundle directory")
    p.add_argument("--target", default="sm_90a")
    p.add_argument("--driver", default="cuda")
    p.add_argument("--json", help="check: write the rows here")
    args = p.parse_args(argv)
    if args.action == "prepare-random":
        entries = prepare_random(args.out, args.target, args.seed, args.count)
        print(f"{len(entries)} random runtime-size convs -> {args.out}")
        return 0
    if args.action == "check-random":
        rows = check_random_bundle(args.bundle, args.driver)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"convs": rows}, f, indent=1)
        print(f"{sum(r['ok'] for r in rows)}/{len(rows)} random convs, stems and window ops correct at every size")
        return 0 if all(r["ok"] for r in rows) else 1
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
