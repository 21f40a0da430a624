"""convc-e2e: whole networks timed end to end against stock IREE, PyTorch eager and torch.compile.

  convc-e2e prepare --out BUNDLE [--only resnet50_b32,...]     (here, needs PyTorch on the CPU)
  tools/device/e2e.sh BUNDLE                                    (on the GPU machine)

`prepare` exports each case through the PyTorch route with its weights as named IREE
parameters (so a bundle stays small; both sides build the same synthetic weights from a seed,
tools/e2e_models.py), then compiles it with convc (sm_90a) and with stock IREE 3.13 (sm_80
flags, what IREE users on Hopper get today). tools/gpu/e2e.py runs every variant on the
same input, checks them against each other and times them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass

from .floors import dispatch_costs
from ..compiler.driver import CompileOptions, compile_file
from ..compiler.errors import ConvcError
from ..compiler.iree_tools import iree_compile
from ..compiler.pytorch import export_mlir
from ..compiler.structure import stream_structure
from .bench import STOCK_IREE_FLAGS
from .gpu.e2e import torch_models
from .models import QDQ_TOLERANCE      # a QDQ case's rel. L2 bound against onnxruntime
from .suite import git_commit


@dataclass(frozen=True)
class Case:
    name: str
    model: str                  # key of tools/e2e_models.MODELS (torchvision's name on the GPU side)
    input_shape: tuple
    dtype: str = "float16"
    seed: int = 0
    dynamic: str = ""           # a dynamic-batch build shared by the cases naming it ("": static)
    # how convc's build takes the image: "nhwc" (channels-last, as the PyTorch baselines get theirs:
    # torch.channels_last) or "nchw" (the model's declared layout; a transpose runs first)
    input_layout: str = "nhwc"
    # convc runs the model quantized to QDQ int8 here (tools.quantized, the same synthetic
    # weights), checked against onnxruntime's CPU run of that QDQ model; PyTorch runs the float
    # model in `dtype`
    quantized: bool = False
    # a quantized case's format (tools.quantized.FORMATS): "qdq" (symmetric int8 activations) or
    # "qdq_u8" (uint8 activations with zero points, onnxruntime's default)
    qformat: str = "qdq"
    # the shared dynamic build (`dynamic`) takes the image's height and width at run time too
    dynamic_spatial: bool = False
    # how convc's build returns the result: "nchw" (the model's declared layout: a transpose runs
    # after the last conv) or "nhwc" (channels-last, as PyTorch's channels_last result lies in memory)
    output_layout: str = "nchw"


CASES = [
    Case("resnet50_b32", "resnet50", (32, 3, 224, 224)),
    Case("resnet50_b1", "resnet50", (1, 3, 224, 224)),
    # the image as the model declares it (NCHW): convc transposes it first (IREE's dispatch)
    Case("resnet50_b32_nchw", "resnet50", (32, 3, 224, 224), input_layout="nchw"),
    Case("vae_decoder_b1", "vae_decoder", (1, 4, 64, 64)),
    # its RGB output conv padded to 8 channels (convc-pad-channels): f32 on 32-channel TF32
    # tiles, and a dynamic batch (persistent ping-pong 32-channel tiles) run at two batches
    Case("vae_decoder_b1_f32", "vae_decoder", (1, 4, 64, 64), dtype="float32"),
    Case("vae_decoder_dyn_b1", "vae_decoder", (1, 4, 64, 64), dynamic="vae_decoder_dyn"),
    Case("vae_decoder_dyn_b2", "vae_decoder", (2, 4, 64, 64), dynamic="vae_decoder_dyn"),
    Case("resnet50_b32_f32", "resnet50", (32, 3, 224, 224), dtype="float32"),   # TF32, as cuDNN's default
    # one vmfb compiled with a dynamic batch, run at several batches
    Case("resnet50_dyn_b1", "resnet50", (1, 3, 224, 224), dynamic="resnet50_dyn"),
    Case("resnet50_dyn_b7", "resnet50", (7, 3, 224, 224), dynamic="resnet50_dyn"),
    Case("resnet50_dyn_b32", "resnet50", (32, 3, 224, 224), dynamic="resnet50_dyn"),
    Case("resnet50_dyn_f32_b5", "resnet50", (5, 3, 224, 224), dtype="float32", dynamic="resnet50_dyn_f32"),
    # depthwise convs (direct_grouped); the dynamic build run at two batches
    Case("mobilenet_v2_b32", "mobilenet_v2", (32, 3, 224, 224)),
    Case("mobilenet_v2_b1", "mobilenet_v2", (1, 3, 224, 224)),
    Case("mobilenet_v2_dyn_b1", "mobilenet_v2", (1, 3, 224, 224), dynamic="mobilenet_v2_dyn"),
    Case("mobilenet_v2_dyn_b16", "mobilenet_v2", (16, 3, 224, 224), dynamic="mobilenet_v2_dyn"),
    # 7x7 depthwise convs: batch 32 (direct_grouped), batch 1 (the 56 px ones on depthwise_mma)
    Case("convnext_tiny_b32", "convnext_tiny", (32, 3, 224, 224)),
    Case("convnext_tiny_b1", "convnext_tiny", (1, 3, 224, 224)),
    # grouped 3x3 convs of 4-32 channels per group (grouped_mma)
    Case("resnext50_b32", "resnext50_32x4d", (32, 3, 224, 224)),
    Case("resnext50_b1", "resnext50_32x4d", (1, 3, 224, 224)),
    # 3x3 and 5x5 depthwise convs at stride 1 and 2, SiLU epilogues, squeeze-excitation
    Case("efficientnet_b0_b32", "efficientnet_b0", (32, 3, 224, 224)),
    Case("efficientnet_b0_b1", "efficientnet_b0", (1, 3, 224, 224)),
    # 3x3/5x5 depthwise with hard-swish epilogues, squeeze-excitation with a hard-sigmoid scale
    Case("mobilenet_v3_large_b32", "mobilenet_v3_large", (32, 3, 224, 224)),
    Case("mobilenet_v3_large_b1", "mobilenet_v3_large", (1, 3, 224, 224)),
    # 2x2 stride-2 transposed convs (convc-subpixel-conv: four 1x1 phase convs each), channel concats
    Case("unet_b4", "unet", (4, 3, 256, 256)),
    # concatenation-heavy with pre-activation BatchNorm + ReLU; channel split and shuffle
    Case("densenet121_b32", "densenet121", (32, 3, 224, 224)),
    Case("densenet121_b1", "densenet121", (1, 3, 224, 224)),
    Case("shufflenet_v2_b32", "shufflenet_v2_x1_0", (32, 3, 224, 224)),
    Case("shufflenet_v2_b1", "shufflenet_v2_x1_0", (1, 3, 224, 224)),
    # asymmetric filters (1x7/7x1, 1x3/3x1), unpadded stems, four- to six-branch concats with
    # average-pool branches, at its native 299 x 299
    Case("inception_v3_b32", "inception_v3", (32, 3, 299, 299)),
    # fused-MBConv stages (full 3x3 expand convs) then MBConv with squeeze-excitation, at 384 x 384
    Case("efficientnet_v2_s_b32", "efficientnet_v2_s", (32, 3, 384, 384)),
    # a video network: 3-D convs (convc-conv3d), 16 frames of 112 x 112
    Case("r2plus1d_18_b8", "r2plus1d_18", (8, 3, 16, 112, 112)),
    # int8: QDQ models (symmetric int8 activations, per-channel weights) against PyTorch in f16
    Case("resnet50_qdq_b32", "resnet50", (32, 3, 224, 224), quantized=True),
    Case("mobilenet_v2_qdq_b32", "mobilenet_v2", (32, 3, 224, 224), quantized=True),
    # onnxruntime's default activations: uint8 with zero points (padded convs pad with the zero point)
    Case("resnet50_qdq_u8_b32", "resnet50", (32, 3, 224, 224), quantized=True, qformat="qdq_u8"),
    # a YOLOv8-s style backbone and neck (C2f channel chunks, SPPF, upsampling, concatenations)
    # served at several resolutions: one build with dynamic H and W run at three, next to
    # static builds at 320 and 640
    Case("csp_backbone_b4_320", "csp_backbone", (4, 3, 320, 320)),
    Case("csp_backbone_b4_640", "csp_backbone", (4, 3, 640, 640)),
    Case("csp_backbone_b4_960", "csp_backbone", (4, 3, 960, 960)),
    Case("csp_dynhw_b4_320", "csp_backbone", (4, 3, 320, 320), dynamic="csp_dynhw", dynamic_spatial=True),
    Case("csp_dynhw_b4_640", "csp_backbone", (4, 3, 640, 640), dynamic="csp_dynhw", dynamic_spatial=True),
    Case("csp_dynhw_b4_960", "csp_backbone", (4, 3, 960, 960), dynamic="csp_dynhw", dynamic_spatial=True),
    # the same with channels-last results (--output-layout nhwc: no transpose after the last conv)
    Case("csp_dynhw_nhwc_b4_640", "csp_backbone", (4, 3, 640, 640), dynamic="csp_dynhw_nhwc", dynamic_spatial=True,
         output_layout="nhwc"),
    Case("csp_backbone_nhwc_b4_640", "csp_backbone", (4, 3, 640, 640), output_layout="nhwc"),
    # depthwise convs with runtime image sizes (the direct kernel): one MobileNetV2 build, two
    # sizes, next to static builds of both
    Case("mobilenet_v2_b16_224", "mobilenet_v2", (16, 3, 224, 224)),
    Case("mobilenet_v2_b16_320", "mobilenet_v2", (16, 3, 320, 320)),
    Case("mobilenet_v2_dynhw_b16_224", "mobilenet_v2", (16, 3, 224, 224), dynamic="mobilenet_v2_dynhw",
         dynamic_spatial=True),
    Case("mobilenet_v2_dynhw_b16_320", "mobilenet_v2", (16, 3, 320, 320), dynamic="mobilenet_v2_dynhw",
         dynamic_spatial=True),
]



def prepare_quantized_case(case: Case, out: str, extra_flags: tuple = ()) -> dict:
    """A QDQ case: the float model (synthetic weights) exported to ONNX, quantized here
    (tools.quantized.qdq_quantize), compiled with convc; the input the GPU side feeds (its
    seed's normal draw, rounded to `dtype` as PyTorch's input is) and onnxruntime's CPU output
    for it are saved beside the vmfb."""
    import numpy as np
    import torch
    from .quantized import ort_reference, quantize
    models = torch_models()
    model = models.load_synthetic(models.MODELS[case.model](), case.seed).float().eval()
    fsrc, qsrc = os.path.join(out, f"{case.name}.float.onnx"), os.path.join(out, f"{case.name}.qdq.onnx")
    torch.onnx.export(model, (torch.zeros(case.input_shape),), fsrc, dynamo=False, opset_version=17,
                      input_names=["x"], output_names=["y"])
    quantize(fsrc, qsrc, case.qformat, count=2, seed=case.seed)
    os.remove(fsrc)
    np_dt = {"float16": np.float16, "float32": np.float32}[case.dtype]
    x = np.random.default_rng(case.seed).standard_normal(case.input_shape).astype(np_dt).astype(np.float32)
    (expected,) = ort_reference(qsrc, {"x": x})
    np.save(os.path.join(out, f"{case.name}.expected.npy"), expected)
    res = compile_file(qsrc, os.path.join(out, f"{case.name}.convc.vmfb"),
                       CompileOptions(target="sm_90a", tuning_cache="none", extra_flags=tuple(extra_flags),
                                      input_layout=case.input_layout))
    import onnx
    function = onnx.load(qsrc, load_external_data=False).graph.name     # what the import exports
    os.remove(qsrc)
    kinds = res.by_kind()
    convs = kinds["convs"]
    return {"case": asdict(case), "parameters": [], "convc_vmfb": f"{case.name}.convc.vmfb",
            "convc_input_layout": case.input_layout, "convc_input_dtype": "f32", "function": function,
            "expected": f"{case.name}.expected.npy", "tolerance": QDQ_TOLERANCE,
            "reference": "onnxruntime CPU, the same QDQ model and input",
            "compile_s": round(res.timings["total"], 1), **res.counts(),
            "int8_convs": sum(1 for r in convs if r.problem is not None and r.problem.dtype == "i8"),
            "declined": [r.line() for r in convs if r.path != "convc"],
            "transposes": [{"dispatch": d, "why": w} for d, w in res.transposes],
            "kernels": {r.dispatch: r.schedule.describe() for rs in kinds.values() for r in rs if r.schedule},
            "executables": len(res.reports), "dispatch_costs": dispatch_costs(res),
            "structure": [s.as_dict() for s in res.structure],
            "iree_error": "no stock IREE build of a QDQ case"}


def prepare_case(case: Case, out: str, extra_flags: tuple = (), stock: bool = True) -> dict:
    if case.quantized:
        return prepare_quantized_case(case, out, extra_flags)
    import torch
    models = torch_models()

    dtype = getattr(torch, case.dtype)
    model = models.load_synthetic(models.MODELS[case.model](), case.seed).to(dtype).eval()
    params: list = []
    if case.dynamic:
        made = os.path.join(out, f"{case.dynamic}.json")
        if os.path.exists(made):            # built for an earlier case of the same build
            with open(made) as f:
                return dict(json.load(f), case=asdict(case))
    # torch.export specializes a batch of 1: a dynamic build is traced at batch 2 (a build with
    # dynamic image sizes keeps the case's batch)
    shape = case.input_shape if case.dynamic_spatial or not case.dynamic else (2, *case.input_shape[1:])
    text = export_mlir(model, (torch.zeros(shape, dtype=dtype),), parameters=params,
                       dynamic_batch=bool(case.dynamic) and not case.dynamic_spatial,
                       dynamic_spatial=case.dynamic_spatial)
    name = case.dynamic or case.name
    src = os.path.join(out, f"{name}.mlir")
    with open(src, "w") as f:
        f.write(text)
    entry = {"case": asdict(case), "parameters": [p[0] for p in params]}
    res = compile_file(src, os.path.join(out, f"{name}.convc.vmfb"),
                       CompileOptions(target="sm_90a", tuning_cache="none", extra_flags=tuple(extra_flags),
                                      input_layout=case.input_layout, output_layout=case.output_layout))
    kinds = res.by_kind()
    convs = kinds["convs"]
    entry.update(convc_vmfb=f"{name}.convc.vmfb", convc_input_layout=case.input_layout,
                 convc_output_layout=case.output_layout, compile_s=round(res.timings["total"], 1),
                 **res.counts(),
                 declined=[r.line() for r in convs if r.path != "convc"],
                 transposes=[{"dispatch": d, "why": w} for d, w in res.transposes],
                 kernels={r.dispatch: r.schedule.describe() for rs in kinds.values() for r in rs if r.schedule},
                 executables=len(res.reports),
                 dispatch_costs=dispatch_costs(res),      # per kernel name: FLOPs and bytes (tools/floors.py)
                 structure=[s.as_dict() for s in res.structure],
                 stock_structure=[s.as_dict() for s in stream_structure(src, STOCK_IREE_FLAGS)])
    if case.dynamic:
        entry["iree_error"] = "no stock IREE build of the dynamic cases (the static ones have it)"
        with open(os.path.join(out, f"{case.dynamic}.json"), "w") as f:
            json.dump(entry, f)
    elif not stock:
        entry["iree_error"] = "stock IREE build skipped (--no-stock)"
    else:
        try:
            iree_compile([src, *STOCK_IREE_FLAGS, "-o", os.path.join(out, f"{case.name}.iree_sm80.vmfb")],
                         "the stock IREE baseline")
            entry["iree_vmfb"] = f"{case.name}.iree_sm80.vmfb"
        except ConvcError as e:
            entry["iree_error"] = str(e)
    os.remove(src)          # the MLIR is large and the GPU side does not need it
    return entry


def table(result: dict) -> str:
    """A markdown table of an e2e.json: per case, what one inference runs and costs on convc
    (kernel launches, kernel time, iree-benchmark-module's median per call and pipelined)
    against torch.compile mode="reduce-overhead" (CUDA graphs): its kernels, kernel time, and
    its wall time timed the same two ways. Ratios pair like with like: convc per call over
    PyTorch synchronized after every call, convc pipelined over PyTorch back to back."""
    head = ("| case | convc launches | convc kernels (us) | convc per call / pipelined (us) | reduce-overhead "
            "kernels | their time (us) | reduce-overhead synchronized / back to back (us) | "
            "ratio per call / pipelined | correct |\n|---|---|---|---|---|---|---|---|---|")
    rows = [head]
    fmt = lambda v, d=0: "-" if v is None else f"{v:.{d}f}"
    ms = lambda r, k: r.get(k, {}).get("median_ms") and r[k]["median_ms"] * 1e3
    for r in result["cases"]:
        b = r.get("convc_breakdown", {})
        per_call = ms(r, "convc_benchmark_module") or r.get("convc_us")
        piped = ms(r, "convc_benchmark_module_chained")
        ro, ro_sync = r.get("torch_compile_reduce_overhead_us"), r.get("torch_compile_reduce_overhead_synchronized_us")
        prof = r.get("torch_reduce_overhead_profile", {})
        launches = b.get("conv_launches", 0) + b.get("other_launches", 0)
        ratio = lambda a, c: a / c if a and c else None
        rows.append(f"| {r['name']} | {launches or '-'} | {fmt(b.get('kernels_us'))} | {fmt(per_call)} / {fmt(piped)} | "
                    f"{prof.get('kernels', '-')} | {fmt(prof.get('kernel_us'))} | {fmt(ro_sync)} / {fmt(ro)} | "
                    f"{fmt(ratio(per_call, ro_sync), 2)} / {fmt(ratio(piped, ro), 2)} | "
                    f"{'yes' if r.get('correct', {}).get('convc') else 'NO'} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="convc-e2e", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["prepare", "table"],
                   help="prepare: compile the end-to-end cases into a bundle for tools/device/e2e.sh; "
                        "table: print a markdown table of an e2e.json (--out names the file)")
    p.add_argument("--out", required=True, help="bundle directory to write (table: the e2e.json to read)")
    p.add_argument("--only", help="comma-separated case names (default: all)")
    p.add_argument("--iree-flag", action="append", default=[], help="extra iree-compile flag for the convc build")
    p.add_argument("--no-stock", action="store_true", help="skip the stock IREE (sm_80) builds")
    args = p.parse_args(argv)
    if args.action == "table":
        try:
            with open(args.out) as f:
                print(table(json.load(f)))
        except (OSError, ValueError, KeyError) as e:
            print(f"convc-e2e: error: cannot read {args.out}: {e}", file=sys.stderr)
            return 1
        return 0
    cases = [c for c in CASES if not args.only or c.name in args.only.split(",")]
    unknown = [n for n in (args.only.split(",") if args.only else []) if n not in {c.name for c in CASES}]
    if unknown:
        print(f"convc-e2e: error: unknown case {', '.join(unknown)} (cases: {', '.join(c.name for c in CASES)})",
              file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    entries = []
    try:
        for case in cases:
            entries.append(prepare_case(case, args.out, args.iree_flag, stock=not args.no_stock))
            e = entries[-1]
            prog = "; ".join(f"{s['submissions']} submissions, {s['host_waits']} waits, {s['allocations']} allocations"
                             for s in e["structure"])
            more = "".join(f", {e[k + '_on_convc']}/{e[k]} {what}" for k, what in (("gemms", "Linear GEMMs"),
                                                                                 ("pools", "pools"), ("maps", "maps")) if e.get(k))
            print(f"{case.name:16s} {e['convs_on_convc']}/{e['convs']} conv executables on convc{more}, "
                  f"{e['executables']} executables, {len(e['transposes'])} transposes, {prog}, {e['compile_s']} s",
                  flush=True)
    except (ConvcError, ImportError) as e:
        print(f"convc-e2e: error: {e}", file=sys.stderr)
        return 1
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"commit": git_commit(), "iree_flags": args.iree_flag, "cases": entries}, f, indent=1)
    return 0


def _cli_main():
    sys.exit(main())


if __name__ == "__main__":
    _cli_main()
