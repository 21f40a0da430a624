"""3-D conv bench layers: video and volumetric convs convc runs as 2-D convs (convc-conv3d).

  python3 -m convc.tools.conv3d prepare --out BUNDLE [--only a,b]   (here)
  python3 -m convc.tools.conv3d fuzz --seed S --count N --out BUNDLE  (here: random layers)
  tools/device/bench_conv3d.sh BUNDLE [OUTDIR]                       (GPU machine)

Each layer is an ONNX model as a user's network has it: `Conv` over an NCDHW volume (filter
and bias initializers), a ReLU, and a Transpose to NDHWC so that, compiled with
`--input-layout nhwc`, nothing moves data before or after the kernels: the device side
(convc.tools.gpu.bench_conv3d) times every dispatch of the function (CUPTI: the conv, and for
a depth im2col its copy kernel) against PyTorch's `conv3d` on channels_last_3d tensors (cuDNN),
and checks the output against PyTorch fp32. The filter and bias are written beside the model.

The layers: R(2+1)D-18's stem and (2+1)D halves (1xkxk spatial, 3x1x1 temporal) and its strided
1x1x1 downsample, C3D/I3D-style and 3-D U-Net 3x3x3 convs (depth im2col), a strided 3x3x3.
`fuzz` draws random layers instead (draw_layers: taps 1-5 per axis, strides 1-3, dilations 1-2,
pads 0-3, channels around the kernels' alignment boundaries, f16/bf16/f32, small volumes), for
the same device check: every output against PyTorch fp32.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np

from ..compiler.driver import CompileOptions, compile_file
from ..compiler.errors import ConvcError


@dataclass(frozen=True)
class Conv3dLayer:
    """A Conv of C -> F channels over N x D x H x W, taps (T, R, S), strides, pads (the same
    before and after on each axis)."""
    name: str
    N: int
    D: int
    H: int
    W: int
    C: int
    F: int
    taps: tuple[int, int, int]
    stride: tuple[int, int, int] = (1, 1, 1)
    pad: tuple[int, int, int] = (0, 0, 0)
    dtype: str = "f16"
    dilation: tuple[int, int, int] = (1, 1, 1)

    def out(self) -> tuple[int, int, int]:
        return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                     for n, p, k, s, d in zip((self.D, self.H, self.W), self.pad, self.taps, self.stride, self.dilation))

    @property
    def flops(self) -> int:
        return 2 * self.N * int(np.prod(self.out())) * self.F * self.C * int(np.prod(self.taps))


LAYERS = [
    Conv3dLayer("r2p1d_stem_s", 8, 16, 112, 112, 3, 45, (1, 7, 7), (1, 2, 2), (0, 3, 3)),
    Conv3dLayer("r2p1d_stem_t", 8, 16, 56, 56, 45, 64, (3, 1, 1), (1, 1, 1), (1, 0, 0)),
    Conv3dLayer("r2p1d_l1_s", 8, 16, 56, 56, 64, 144, (1, 3, 3), (1, 1, 1), (0, 1, 1)),
    Conv3dLayer("r2p1d_l1_t", 8, 16, 56, 56, 144, 64, (3, 1, 1), (1, 1, 1), (1, 0, 0)),
    Conv3dLayer("r2p1d_l3_s", 8, 4, 14, 14, 256, 576, (1, 3, 3), (1, 1, 1), (0, 1, 1)),
    Conv3dLayer("r2p1d_l3_t", 8, 4, 14, 14, 576, 256, (3, 1, 1), (1, 1, 1), (1, 0, 0)),
    Conv3dLayer("r2p1d_l2_down", 8, 16, 56, 56, 64, 128, (1, 1, 1), (2, 2, 2)),
    Conv3dLayer("c3d_conv2", 8, 16, 56, 56, 64, 128, (3, 3, 3), (1, 1, 1), (1, 1, 1)),
    Conv3dLayer("unet3d_64_64", 2, 32, 64, 64, 64, 64, (3, 3, 3), (1, 1, 1), (1, 1, 1)),
    Conv3dLayer("unet3d_128_128", 2, 16, 32, 32, 128, 128, (3, 3, 3), (1, 1, 1), (1, 1, 1)),
    Conv3dLayer("unet3d_256_256", 2, 8, 16, 16, 256, 256, (3, 3, 3), (1, 1, 1), (1, 1, 1)),
    Conv3dLayer("i3d_down_64_128", 4, 16, 56, 56, 64, 128, (3, 3, 3), (2, 2, 2), (1, 1, 1)),
]


def weights(L: Conv3dLayer, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The layer's [F, C, T, R, S] filter (ONNX and PyTorch layout) and bias, scaled so the
    outputs stay O(1) in f16."""
    rng = np.random.default_rng(seed + sum(map(ord, L.name)))
    w = (rng.standard_normal((L.F, L.C, *L.taps)) / np.sqrt(L.C * np.prod(L.taps))).astype(np.float32)
    b = (rng.standard_normal(L.F) * 0.1).astype(np.float32)
    if L.dtype == "f16":
        return w.astype(np.float16), b.astype(np.float16)
    if L.dtype == "bf16":       # bf16 values, kept as float32 (numpy has no bf16)
        return _bf16(w), _bf16(b)
    return w, b


def _bf16(a: np.ndarray) -> np.ndarray:
    """a rounded to bfloat16 (to nearest even), as float32."""
    u = a.astype(np.float32).view(np.uint32)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def onnx_model(L: Conv3dLayer, w: np.ndarray, b: np.ndarray):
    """Conv -> Relu -> Transpose to NDHWC, with w and b as initializers."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    t = {"f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16, "f32": TensorProto.FLOAT}[L.dtype]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["t"], kernel_shape=list(L.taps), strides=list(L.stride),
                              pads=list(L.pad) * 2, dilations=list(L.dilation)),
             helper.make_node("Relu", ["t"], ["r"]),
             helper.make_node("Transpose", ["r"], ["y"], perm=[0, 2, 3, 4, 1])]
    g = helper.make_graph(nodes, L.name, [helper.make_tensor_value_info("x", t, [L.N, L.C, L.D, L.H, L.W])],
                          [helper.make_tensor_value_info("y", t, [L.N, *L.out(), L.F])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def _initializer(a: np.ndarray, name: str, dtype: str):
    from onnx import TensorProto, helper, numpy_helper
    if dtype != "bf16":
        return numpy_helper.from_array(a, name)
    bits = (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return helper.make_tensor(name, TensorProto.BFLOAT16, a.shape, bits.tobytes(), raw=True)


def draw_layers(seed: int, count: int) -> list[Conv3dLayer]:
    """Random 3-D layers (small volumes: a check, not a bench), each with a non-empty output."""
    import random
    rng = random.Random(seed)
    bounds = (8, 16, 32, 64)

    def channels():
        x = rng.random()
        if x < 0.4:
            return rng.choice(bounds)
        if x < 0.75:
            return max(1, rng.choice(bounds) + rng.choice([-3, -1, 1, 5]))
        return rng.choice([1, 3, 4, 12, 24, 40, 96])

    out = []
    while len(out) < count:
        taps = tuple(rng.choice([1, 1, 2, 3, 3, 5]) for _ in range(3))
        L = Conv3dLayer(f"fz{seed}_{len(out)}", rng.choice([1, 1, 2, 3]), rng.randint(1, 9), rng.randint(3, 20),
                        rng.randint(3, 20), channels(), channels(), taps,
                        tuple(rng.choice([1, 1, 2, 3]) for _ in range(3)), tuple(rng.choice([0, 0, 1, 2, 3]) for _ in range(3)),
                        rng.choice(["f16", "f16", "bf16", "f32"]), tuple(rng.choice([1, 1, 1, 2]) for _ in range(3)))
        if min(L.out()) >= 1:
            out.append(L)
    return out


def compile_layer(L: Conv3dLayer, out: str, target: str = "sm_90a") -> dict:
    """NAME.onnx, NAME.w.npy, NAME.b.npy and NAME.vmfb in out; the manifest entry."""
    import onnx
    w, b = weights(L)
    src = os.path.join(out, f"{L.name}.onnx")
    onnx.save(onnx_model(L, w, b), src)
    np.save(os.path.join(out, f"{L.name}.w.npy"), w)
    np.save(os.path.join(out, f"{L.name}.b.npy"), b)
    t0 = time.perf_counter()
    # a layer bench keeps IREE's program (record-once adds copies in and out of the kernels);
    # --input-layout nhwc: the model's 5-D input is taken NDHWC
    res = compile_file(src, os.path.join(out, f"{L.name}.vmfb"),
                       CompileOptions(target=target, input_layout="nhwc", record_once="off", tuning_cache="none"))
    convs = res.by_kind()["convs"]
    return {"layer": asdict(L), "vmfb": f"{L.name}.vmfb", "compile_s": round(time.perf_counter() - t0, 2),
            "convs": [r.line() for r in convs], "on_convc": bool(convs) and all(r.path == "convc" for r in convs),
            "copies": [r.line() for r in res.by_kind()["copies"]],
            "iree_dispatches": [r.dispatch for r in res.reports if r.path == "IREE"],
            "transposes": [t for t, _ in res.transposes], "dispatches": len(res.reports)}


def prepare(out: str, only: list[str] | None = None, target: str = "sm_90a", layers=None, **extra) -> dict:
    os.makedirs(out, exist_ok=True)
    entries = []
    for L in [L for L in (layers or LAYERS) if not only or L.name in only]:
        e = compile_layer(L, out, target)
        entries.append(e)
        print(f"{L.name:18s} convs on {'convc' if e['on_convc'] else 'IREE (some)'}, {len(e['copies'])} copy kernels, "
              f"{len(e['iree_dispatches'])} IREE dispatches, {len(e['transposes'])} transposes, {e['compile_s']} s",
              flush=True)
    manifest = {"target": target, "kind": "conv3d", **extra, "layers": entries}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m convc.tools.conv3d", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["prepare", "fuzz", "list"])
    p.add_argument("--seed", type=int, default=1, help="fuzz: the draw's seed")
    p.add_argument("--count", type=int, default=40, help="fuzz: layers to draw")
    p.add_argument("--out", help="bundle directory (prepare)")
    p.add_argument("--only", help="comma-separated layer names")
    p.add_argument("--target", default="sm_90a")
    args = p.parse_args(argv)
    if args.action == "list":
        for L in LAYERS:
            print(f"{L.name:18s} N={L.N} {L.D}x{L.H}x{L.W} C={L.C} F={L.F} taps={L.taps} s={L.stride} p={L.pad} "
                  f"-> {'x'.join(map(str, L.out()))}, {L.flops / 1e9:.2f} GFLOP")
        return 0
    if not args.out:
        p.error(f"{args.action} needs --out")
    if args.action == "fuzz":
        prepare(args.out, None, args.target, draw_layers(args.seed, args.count), seed=args.seed)
        return 0
    names = args.only.split(",") if args.only else None
    unknown = [n for n in names or [] if n not in {L.name for L in LAYERS}]
    if unknown:
        print(f"conv3d: error: unknown layer {', '.join(unknown)}", file=sys.stderr)
        return 2
    try:
        prepare(args.out, names, args.target)
    except ConvcError as e:
        print(f"conv3d: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
