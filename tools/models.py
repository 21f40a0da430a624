"""convc-models: whole models, compiled here and checked on the GPU machine.

  convc-models prepare --out BUNDLE [--target sm_90a] [--precision tf32] [--only resnet50,...]
  tools/device/model_check.sh BUNDLE            # on the GPU machine

`prepare` compiles the real networks the `onnx` wheel ships with their expected outputs
(onnx/backend/test/data/light/: ResNet-50, DenseNet-121, Inception v1/v2, SqueezeNet, VGG-19,
AlexNet, ZFNet-512, ShuffleNet), each from its .onnx file through `convc`, and writes per
model the vmfb, the input (ONNX's own backend-test input: arange(n)/n in the input's shape),
the expected output (.npy) and, in manifest.json, which conv dispatches took convc and why
the others did not. runtime/model_check.py runs them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import numpy as np

from ..compiler.driver import CompileOptions, compile_file, prepare_input
from ..compiler.errors import ConvcError
from ..compiler.frontends import read_model
from ..compiler.structure import stream_structure
from ..passes.target import get_target
from .suite import git_commit

LIGHT_MODELS = ("resnet50", "densenet121", "inception_v1", "inception_v2", "squeezenet", "vgg19",
                "bvlc_alexnet", "zfnet512", "shufflenet")

# rel. L2 bound against the shipped fp32 outputs, per --precision (docs/models.md, Precision)
TOLERANCE = {"fp32": 1e-4, "tf32": 1e-2, "f16": 5e-2, "bf16": 5e-2}


def light_dir() -> str:
    try:
        import onnx
    except ImportError:
        raise ConvcError("the ONNX models need the onnx package: python3 -m pip install onnx (or, in the convc checkout, python3 -m pip install -e '.[onnx]')") from None
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def model_io(path: str) -> tuple[np.ndarray, np.ndarray, str]:
    """The input ONNX's backend test feeds a light model, its shipped expected output, and
    the name of the function its import exports (the graph's name)."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(path)
    inits = {i.name for i in model.graph.initializer}
    (inp,) = [i for i in model.graph.input if i.name not in inits]
    shape = tuple(d.dim_value or 1 for d in inp.type.tensor_type.shape.dim)
    n = int(np.prod(shape))
    x = (np.arange(n).reshape(shape) / n).astype(np.float32)
    t = onnx.TensorProto()
    with open(os.path.splitext(path)[0] + "_output_0.pb", "rb") as f:
        t.ParseFromString(f.read())
    return x, numpy_helper.to_array(t), model.graph.name


def _stock_structure(src: str, target: str):
    """Stock IREE's program for the same model (no convc pass), read at its stream phase."""
    with tempfile.TemporaryDirectory(prefix="convc-stock-") as tmp:
        path = os.path.join(tmp, "model.mlir")
        with open(path, "w") as f:
            f.write(prepare_input(read_model(src, tmp), get_target(target)))
        return stream_structure(path)


def prepare(out: str, target: str, precision: str, only: list[str] | None) -> dict:
    os.makedirs(out, exist_ok=True)
    entries = []
    for name in only or LIGHT_MODELS:
        src = os.path.join(light_dir(), f"light_{name}.onnx")
        x, y, function = model_io(src)
        np.save(os.path.join(out, f"{name}.input.npy"), x)
        np.save(os.path.join(out, f"{name}.expected.npy"), y)
        entry = {"name": name, "function": function, "input_shape": list(x.shape), "output_shape": list(y.shape)}
        try:
            res = compile_file(src, os.path.join(out, f"{name}.vmfb"),
                               CompileOptions(target=target, precision=precision, tuning_cache="none"))
        except ConvcError as e:
            entry.update(ok=False, error=str(e))
            entries.append(entry)
            print(f"{name:14s} compile failed: {e}", flush=True)
            continue
        convs = [r for r in res.reports if r.problem is not None or r.reason.startswith("conv")]
        entry.update(ok=True, compile_s=round(res.timings["total"], 2),
                     convs=len(convs), convs_on_convc=sum(r.path == "convc" for r in convs),
                     declined=[{"dispatch": r.dispatch, "reason": r.reason} for r in convs if r.path != "convc"],
                     kernels=sorted({r.schedule.kernel for r in convs if r.schedule}),
                     transposes=[{"dispatch": d, "why": w} for d, w in res.transposes],
                     structure=[s.as_dict() for s in res.structure],
                     stock_structure=[s.as_dict() for s in _stock_structure(src, target)])
        entries.append(entry)
        prog = "; ".join(f"{s.submissions} submissions, {s.host_waits} waits, {s.allocations} allocations "
                         f"(stock IREE {k['submissions']}, {k['host_waits']}, {k['allocations']})"
                         for s, k in zip(res.structure, entry["stock_structure"]))
        print(f"{name:14s} {entry['convs_on_convc']}/{entry['convs']} conv dispatches on convc, "
              f"{len(res.transposes)} transposes, {prog}, {entry['compile_s']} s", flush=True)
    manifest = {"target": target, "precision": precision, "tolerance": TOLERANCE[precision],
                "commit": git_commit(), "models": entries}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="convc-models", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["prepare"], help="prepare: compile the light ONNX models into a bundle for tools/device/model_check.sh")
    p.add_argument("--out", required=True, help="bundle directory to write")
    p.add_argument("--target", default="sm_90a", help="convc target (default sm_90a)")
    p.add_argument("--precision", default="tf32", choices=sorted(TOLERANCE), help="f32 conv precision")
    p.add_argument("--only", help="comma-separated model names (default: all light models)")
    args = p.parse_args(argv)
    only = args.only.split(",") if args.only else None
    unknown = [m for m in only or [] if m not in LIGHT_MODELS]
    if unknown:
        print(f"convc-models: error: unknown model {', '.join(unknown)} (the light models: {', '.join(LIGHT_MODELS)})",
              file=sys.stderr)
        return 2
    try:
        prepare(args.out, args.target, args.precision, only)
    except ConvcError as e:
        print(f"convc-models: error: {e}", file=sys.stderr)
        return 1
    return 0


def _cli_main():
    sys.exit(main())


if __name__ == "__main__":
    _cli_main()
