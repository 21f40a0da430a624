"""convc-opt: run named convc passes on an MLIR file (IREE `flow`-phase IR) and print it.

  convc-opt --pass=convc-match-conv,convc-plan-schedule [--target sm_90a] [--split-input-file] FILE

With --split-input-file, cases separated by `// -----` run independently and are printed
separated the same way, so lit tests can hold many small cases per file.
"""

from __future__ import annotations

import argparse
import sys

from ..passes.ir import ir, walk_ops
from ..passes.registry import HAL_PHASE, INPUT_PHASE, PASSES, PassOptions, get_pass, UnknownPassError
from ..passes.target import UnknownTargetError, get_target

SPLIT = "// -----"


def _candidate(text: str | None) -> dict:
    """--candidate: an index (a tuning round's candidate) or settings (field=value,...)."""
    if text is None:
        return {}
    return {"candidate": int(text)} if text.isdigit() else {"candidate_settings": text}


def parse_arguments(argv=None):
    p = argparse.ArgumentParser(prog="convc-opt", description=__doc__.splitlines()[0])
    p.add_argument("input", help="MLIR file, or - for stdin")
    p.add_argument("--pass", dest="passes", required=True,
                   help=f"comma-separated pass names: {', '.join(PASSES)}")
    p.add_argument("--target", default="sm_90a", help="convc target the passes plan and lower for (default sm_90a)")
    p.add_argument("--split-input-file", action="store_true", help="run the passes on each `// -----`-separated part of FILE alone")
    p.add_argument("--tuning-cache", help="tuning cache to read (default: none)", default="none")
    p.add_argument("--candidate",
                   help="force a tuning candidate schedule: its index, or its settings as field=value,... of "
                        "Schedule or kernel config fields (the first candidate with them all), e.g. "
                        "kernel=sm90_ws_pingpong,block_m=64,swap_ab=false")
    p.add_argument("--precision", default="tf32", choices=["tf32", "fp32", "f16", "bf16"],
                   help="how f32 convs compute (convc --precision)")
    p.add_argument("--input-layout", default="nchw", choices=["nchw", "nhwc"],
                   help="how the model's 4-D inputs are taken (convc --input-layout)")
    p.add_argument("--output-layout", default="nchw", choices=["nchw", "nhwc"],
                   help="how the model's 4-D results are returned (convc --output-layout)")
    p.add_argument("-o", "--output", default="-", help="output file (default: standard output)")
    return p.parse_args(argv)


def run_on_text(text: str, passes: list[str], options: PassOptions) -> str:
    ctx = ir.Context()
    module = ir.Module.parse(text, ctx)
    if passes and passes[0] in HAL_PHASE and not any(True for _ in walk_ops(module.operation, "hal.device.memoize")) \
            and not any(True for _ in walk_ops(module.operation, "util.initializer")):
        raise ValueError(f"{passes[0]} works on IREE's hal-phase program (iree-compile --compile-to=hal) and this "
                         "input has no initializer")
    flow_pass = next((p for p in passes if p not in INPUT_PHASE and p not in HAL_PHASE), None)
    if (flow_pass and flow_pass == passes[0]
            and not any(True for _ in walk_ops(module.operation, "flow.executable"))):
        raise ValueError(f"{flow_pass} works on flow-phase IR (dispatches in flow.executable ops) and this input "
                         "has none: compile the model to that phase first (iree-compile --compile-to=flow), or "
                         f"run the input-phase passes ({', '.join(INPUT_PHASE)})")
    for name in passes:
        module = get_pass(name)(module, options)
    module.operation.verify()
    return str(module)


def main(args) -> int:
    try:
        get_target(args.target)
        passes = [p for p in args.passes.split(",") if p]
        for p in passes:
            get_pass(p)
        text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    except (UnknownPassError, UnknownTargetError, OSError) as e:
        print(f"convc-opt: error: {e}", file=sys.stderr)
        return 1
    chunks = text.split(SPLIT) if args.split_input_file else [text]
    outs, rc = [], 0
    for chunk in chunks:
        try:
            outs.append(run_on_text(chunk, passes, PassOptions(target=args.target, tuning_cache=args.tuning_cache,
                                                                 precision=args.precision, input_layout=args.input_layout,
                                                                 output_layout=args.output_layout, **_candidate(args.candidate))))
        except Exception as e:  # a malformed case is reported and the others still run
            msg = str(e).strip().splitlines()
            print(f"convc-opt: error: {msg[0] if msg else type(e).__name__}", file=sys.stderr)
            for line in msg[1:6]:
                print(f"  {line}", file=sys.stderr)
            outs.append("")
            rc = 1
    result = ("\n" + SPLIT + "\n").join(outs)
    if args.output == "-":
        sys.stdout.write(result)
    else:
        with open(args.output, "w") as f:
            f.write(result)
    return rc


def _cli_main():
    sys.exit(main(parse_arguments()))
