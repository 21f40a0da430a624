"""`convc MODEL.mlir -o OUT.vmfb`: compile a model with convc kernels for every conv."""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import PackageNotFoundError, version

from .. import __version__
from ..passes.target import TARGETS, UnknownTargetError
from .driver import CompileOptions, compile_file
from .errors import ConvcError
from .precision import PRECISIONS


def _version() -> str:
    try:
        iree = version("iree-base-compiler")
    except PackageNotFoundError:
        iree = "unknown"
    return f"convc {__version__} (iree-base-compiler {iree})"


def parse_arguments(argv=None) -> argparse.Namespace:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(
        prog="convc",
        description="Compile an MLIR model with IREE, replacing conv dispatches by convc kernels.")
    p.add_argument("--version", action="version", version=_version())
    p.add_argument("input", help="model: MLIR text (linalg on tensors, or torch/ONNX-imported IR) or .onnx")
    p.add_argument("-o", "--output", required=True, help="output .vmfb")
    p.add_argument("--target", default="sm_90a",
                   help=f"one of {', '.join(TARGETS)} (default sm_90a)")
    p.add_argument("--dump-dir", help="write the IR after each stage and the final PTX/assembly here")
    p.add_argument("--report", action="store_true", help="print one line per dispatch")
    p.add_argument("--no-fallback", action="store_true",
                   help="fail instead of leaving an unsupported conv to IREE")
    p.add_argument("--tuning-cache", metavar="FILE",
                   help="winners measured by convc-tune (default: $CONVC_TUNING_CACHE, else "
                        "~/.cache/convc/tuning.json if present; 'none' disables)")
    p.add_argument("--tuning-device", metavar="NAME",
                   help="use cache entries measured on this device (default: the most recent)")
    p.add_argument("--precision", choices=PRECISIONS, default="tf32",
                   help="f32 convs: tf32 (tensor cores, f32 accumulation; default) or fp32 (exact); "
                        "f16/bf16 demote the model (see docs/models.md, Precision)")
    p.add_argument("--input-layout", choices=("nchw", "nhwc"), default="nchw",
                   help="nhwc: the compiled function takes the model's 4-D inputs channels-last "
                        "([N, H, W, C]: image decoders' HWC pixels, torch.channels_last tensors), so no "
                        "transpose runs before the first conv (default nchw: as the model declares them)")
    p.add_argument("--output-layout", choices=("nchw", "nhwc"), default="nchw",
                   help="nhwc: the compiled function returns the model's 4-D results channels-last "
                        "([N, H, W, C], as torch.channels_last results lie in memory), so no transpose "
                        "runs after the last conv (default nchw: as the model declares them)")
    p.add_argument("--record-once", choices=("auto", "on", "off"), default="auto",
                   help="record each inference's command buffer once against fixed device buffers, so "
                        "that IREE's CUDA runtime replays it as one CUDA graph with --cuda_use_streams=false "
                        "(default auto: on for CUDA targets)")
    p.epilog = "Arguments after `--` are passed to iree-compile unchanged."
    args = p.parse_args(argv)
    args.extra_flags = extra
    return args


def main(args: argparse.Namespace) -> int:
    opts = CompileOptions(target=args.target, dump_dir=args.dump_dir,
                          no_fallback=args.no_fallback, extra_flags=tuple(args.extra_flags),
                          tuning_cache=args.tuning_cache, tuning_device=args.tuning_device,
                          precision=args.precision, input_layout=args.input_layout,
                          output_layout=args.output_layout, record_once=args.record_once)
    try:
        result = compile_file(args.input, args.output, opts)
    except (ConvcError, UnknownTargetError) as e:
        print(f"convc: error: {e}", file=sys.stderr)
        return 1
    if args.report:
        for r in result.reports:
            print(r.line())
        for line in result.summary_lines():
            print(line)
        print(result.timing_line())
    return 0


def _cli_main() -> None:
    try:
        sys.exit(main(parse_arguments()))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    _cli_main()
