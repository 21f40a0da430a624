"""Transposed-conv bench layers: the decoder upsamplers convc runs as sub-pixel convs.

  python3 -m convc.tools.transposed prepare --out BUNDLE [--only a,b]   (here)
  tools/device/bench_transposed.sh BUNDLE [OUTDIR]                       (GPU machine)

Each layer is an ONNX model as a user's decoder has it: `ConvTranspose` (its filter and bias
initializers, so the sub-pixel filter slices are load-time constants as in a real model) and a
ReLU, ending in a Transpose to NHWC so that, compiled with `--input-layout nhwc`, nothing
moves data before or after the kernels: the device side times every dispatch of the function
(CUPTI, convc.tools.gpu.bench_transposed) against PyTorch's `conv_transpose2d` on
channels_last tensors (cuDNN), and checks the output against PyTorch fp32. The filter and bias
are written beside the model (`NAME.w.npy`, `NAME.b.npy`) for the reference.

The layers: U-Net's 2x2/2 up-convolutions, DCGAN's 4x4/2 pad-1 generator layers, the 3x3/2
output-padding-1 upsamplers of FCN-style and super-resolution heads, a stride-4 and a
stride-3 one.
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
class TransposedLayer:
    """A ConvTranspose of C -> F channels over an N x H x W input (its own sizes, not the
    zero-inserted ones): K x K filter, stride, pad on every side, output padding."""
    name: str
    N: int
    H: int
    W: int
    C: int
    F: int
    K: int
    stride: int
    pad: int = 0
    output_padding: int = 0
    dtype: str = "f16"

    @property
    def Ho(self) -> int:
        return (self.H - 1) * self.stride - 2 * self.pad + self.K + self.output_padding

    @property
    def Wo(self) -> int:
        return (self.W - 1) * self.stride - 2 * self.pad + self.K + self.output_padding

    @property
    def flops(self) -> int:
        """Useful MACs x 2: every input pixel times every filter tap (the zeros not counted)."""
        return 2 * self.N * self.H * self.W * self.C * self.F * self.K * self.K


LAYERS = [
    TransposedLayer("unet_up_1024_512_28", 4, 28, 28, 1024, 512, 2, 2),
    TransposedLayer("unet_up_512_256_56", 4, 56, 56, 512, 256, 2, 2),
    TransposedLayer("unet_up_256_128_112", 4, 112, 112, 256, 128, 2, 2),
    TransposedLayer("unet_up_128_64_224", 4, 224, 224, 128, 64, 2, 2),
    TransposedLayer("dcgan_512_256_8", 64, 8, 8, 512, 256, 4, 2, 1),
    TransposedLayer("dcgan_256_128_16", 64, 16, 16, 256, 128, 4, 2, 1),
    TransposedLayer("dcgan_128_64_32", 64, 32, 32, 128, 64, 4, 2, 1),
    TransposedLayer("fcn_up3_256_128_32", 16, 32, 32, 256, 128, 3, 2, 1, 1),
    TransposedLayer("sr_up3_64_64_128", 8, 128, 128, 64, 64, 3, 2, 1, 1),
    TransposedLayer("up4_k4_128_64_32", 8, 32, 32, 128, 64, 4, 4),
    TransposedLayer("up3_k3_96_96_40", 8, 40, 40, 96, 96, 3, 3),
]


def weights(L: TransposedLayer, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The layer's [C, F, K, K] filter (ONNX and PyTorch ConvTranspose layout) and bias,
    scaled so the outputs stay O(1) in f16."""
    rng = np.random.default_rng(seed + sum(map(ord, L.name)))
    np_dt = np.float16 if L.dtype == "f16" else np.float32
    scale = 1.0 / np.sqrt(L.C * L.K * L.K / (L.stride * L.stride))
    w = (rng.standard_normal((L.C, L.F, L.K, L.K)) * scale).astype(np_dt)
    b = (rng.standard_normal(L.F) * 0.1).astype(np_dt)
    return w, b


def onnx_model(L: TransposedLayer, w: np.ndarray, b: np.ndarray):
    """ConvTranspose -> Relu -> Transpose to NHWC, with w and b as initializers."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    t = TensorProto.FLOAT16 if L.dtype == "f16" else TensorProto.FLOAT
    attrs = dict(strides=[L.stride] * 2, pads=[L.pad] * 4, kernel_shape=[L.K] * 2)
    if L.output_padding:
        attrs["output_padding"] = [L.output_padding] * 2
    nodes = [helper.make_node("ConvTranspose", ["x", "w", "b"], ["t"], **attrs),
             helper.make_node("Relu", ["t"], ["r"]),
             helper.make_node("Transpose", ["r"], ["y"], perm=[0, 2, 3, 1])]
    g = helper.make_graph(nodes, L.name, [helper.make_tensor_value_info("x", t, [L.N, L.C, L.H, L.W])],
                          [helper.make_tensor_value_info("y", t, [L.N, L.Ho, L.Wo, L.F])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def compile_layer(L: TransposedLayer, out: str, target: str = "sm_90a") -> dict:
    """NAME.onnx, NAME.w.npy, NAME.b.npy and NAME.vmfb in out; the manifest entry."""
    import onnx
    w, b = weights(L)
    src = os.path.join(out, f"{L.name}.onnx")
    onnx.save(onnx_model(L, w, b), src)
    np.save(os.path.join(out, f"{L.name}.w.npy"), w)
    np.save(os.path.join(out, f"{L.name}.b.npy"), b)
    t0 = time.perf_counter()
    # a layer bench keeps IREE's program (record-once adds copies in and out of the kernels)
    res = compile_file(src, os.path.join(out, f"{L.name}.vmfb"),
                       CompileOptions(target=target, input_layout="nhwc", record_once="off", tuning_cache="none"))
    convs = res.by_kind()["convs"]
    return {"layer": asdict(L), "vmfb": f"{L.name}.vmfb", "compile_s": round(time.perf_counter() - t0, 2),
            "convs": [r.line() for r in convs], "phase_convs": sum(r.sites for r in convs),
            "on_convc": all(r.path == "convc" for r in convs),
            "transposes": [t for t, _ in res.transposes], "dispatches": len(res.reports)}


def prepare(out: str, only: list[str] | None = None, target: str = "sm_90a") -> dict:
    os.makedirs(out, exist_ok=True)
    layers = [L for L in LAYERS if not only or L.name in only]
    entries = []
    for L in layers:
        e = compile_layer(L, out, target)
        entries.append(e)
        print(f"{L.name:22s} {e['phase_convs']} phase convs on {'convc' if e['on_convc'] else 'IREE (some)'}, "
              f"{e['dispatches']} dispatches, {len(e['transposes'])} transposes, {e['compile_s']} s", flush=True)
    manifest = {"target": target, "layers": entries}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m convc.tools.transposed", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["prepare", "list"])
    p.add_argument("--out", help="bundle directory (prepare)")
    p.add_argument("--only", help="comma-separated layer names")
    p.add_argument("--target", default="sm_90a")
    args = p.parse_args(argv)
    if args.action == "list":
        for L in LAYERS:
            print(f"{L.name:22s} N={L.N} {L.H}x{L.W} C={L.C} F={L.F} K={L.K} s={L.stride} p={L.pad} "
                  f"op={L.output_padding} -> {L.Ho}x{L.Wo}, {L.flops / 1e9:.2f} GFLOP")
        return 0
    if not args.out:
        p.error("prepare needs --out")
    names = args.only.split(",") if args.only else None
    unknown = [n for n in names or [] if n not in {L.name for L in LAYERS}]
    if unknown:
        print(f"transposed: error: unknown layer {', '.join(unknown)}", file=sys.stderr)
        return 2
    try:
        prepare(args.out, names, args.target)
    except ConvcError as e:
        print(f"transposed: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
