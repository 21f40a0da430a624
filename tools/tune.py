"""convc-tune: time every candidate schedule of a model's convs on a GPU and cache the winners.

  convc-tune run MODEL.mlir... [--cache FILE]            one command, on a machine with a GPU
  convc-tune prepare MODEL.mlir... | --suite [--suite-file F] [--only a,b] --out BUNDLE   (no GPU)
  tools/device/tune.sh BUNDLE OUTDIR                     (on the GPU machine: OUTDIR/tune.json)
  convc-tune collect OUTDIR/tune.json [--cache FILE]     (winners -> the tuning cache)

`prepare` compiles each model once per candidate round: round i gives every conv its i-th
candidate (convc.passes.plan.plan_schedule.candidate_schedules; round 0 is the default), plus a stock IREE
build as the reference. On the GPU every round's outputs are checked against the reference
(a wrong candidate is never a winner) and each convc kernel is timed by name (CUPTI). The
cache is keyed by target, device and problem; later `convc` runs read it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile

from ..compiler.driver import CompileOptions, compile_file
from ..compiler.errors import ConvcError
from ..compiler.iree_tools import iree_compile
from ..passes.ir import ir, walk_ops
from ..passes.plan.plan_schedule import candidate_schedules, knobs_of
from ..passes.target import get_target
from ..passes.plan.tuning import TuningCache, TuningCacheError, default_cache_path
from ..runtime.module import ModuleError, require_driver
from .bench import STOCK_IREE_FLAGS
from .gpu.tune import tune_bundle
from .suite import git_commit, select, write_models
from .layers import load_suite

REFERENCE_FLAGS = {"nvidia": STOCK_IREE_FLAGS}     # stock IREE builds are the reference outputs
_DTYPES = {"f16", "bf16", "f32", "i8", "f8E4M3FN", "f8E5M2"}


def signature(text: str) -> dict:
    """The entry function's name and its tensor arguments (shape, element type, whether it is
    an iree.abi.output buffer)."""
    ctx = ir.Context()
    try:
        module = ir.Module.parse(text, ctx)
    except Exception as e:
        raise ConvcError(f"malformed input: {str(e).splitlines()[0]}") from None
    funcs = [op for op in walk_ops(module.operation, "func.func")
             if "sym_visibility" not in op.attributes or str(op.attributes["sym_visibility"]) == '"public"']
    if not funcs:
        raise ConvcError("no public function to tune")
    fn = next((f for f in funcs if str(f.attributes["sym_name"]) == '"main"'), funcs[0])
    name = str(fn.attributes["sym_name"]).strip('"')
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    arg_attrs = list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else []
    args = []
    for i, t in enumerate(ftype.inputs):
        st = ir.RankedTensorType(t)
        dt = str(st.element_type)
        if dt not in _DTYPES or not st.has_static_shape:
            raise ConvcError(f"argument {i} of @{name} is {t}: tuning feeds static f16/bf16/f32/i8/fp8 tensors only")
        out = i < len(arg_attrs) and "iree.abi.output" in str(arg_attrs[i])
        args.append({"shape": list(st.shape), "dtype": dt, "output": out})
    results = [str(ir.ShapedType(t).element_type) for t in ftype.results]
    return {"function": name, "args": args, "results": results}


def prepare(models: list[str], out: str, target: str = "sm_90a", verbose: bool = True) -> dict:
    t = get_target(target)
    os.makedirs(out, exist_ok=True)
    entries = []
    for path in models:
        stem = os.path.splitext(os.path.basename(path))[0]
        with open(path) as f:
            text = f.read()
        entry = {"name": stem, **signature(text), "rounds": []}
        shutil.copyfile(path, os.path.join(out, f"{stem}.mlir"))
        rounds = 1
        r = 0
        while r < rounds:
            vmfb = f"{stem}.cand{r}.vmfb"
            res = compile_file(path, os.path.join(out, vmfb),
                               CompileOptions(target=target, candidate=r, tuning_cache="none"))
            kernels = {}
            for rep in res.reports:
                if rep.schedule is None:
                    continue
                cands = candidate_schedules(rep.problem, t)
                rounds = max(rounds, len(cands))
                if r < len(cands):
                    kernels[rep.problem.name] = {"knobs": list(knobs_of(rep.schedule)),
                                                 "schedule": rep.schedule.describe()}
            if kernels:
                entry["rounds"].append({"vmfb": vmfb, "candidate": r, "kernels": kernels})
                if verbose:
                    print(f"{stem}: round {r + 1}/{rounds}: " + "; ".join(k["schedule"] for k in kernels.values()),
                          flush=True)
            r += 1
        if t.backend in REFERENCE_FLAGS:
            ref = f"{stem}.reference.vmfb"
            iree_compile([path, *REFERENCE_FLAGS[t.backend], "-o", os.path.join(out, ref)], "the reference build")
            entry["reference"] = ref
        entries.append(entry)
    manifest = {"target": target, "commit": git_commit(),
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "models": entries}
    with open(os.path.join(out, "tune_manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def collect(results: dict, cache: TuningCache) -> list[str]:
    """Records each problem's fastest correct candidate; returns one line per problem."""
    lines = []
    for prob, r in sorted(results["problems"].items()):
        ok = [c for c in r["candidates"] if c.get("ok") and c.get("us")]
        default = r["candidates"][0]
        if not ok:
            lines.append(f"{prob}: no correct candidate timed; cache unchanged")
            continue
        if not (default.get("ok") and default.get("us")):
            # a winner must beat the default it replaces, measured in the same run
            lines.append(f"{prob}: the default schedule was not timed; cache unchanged")
            continue
        best = min(ok, key=lambda c: c["us"])
        cache.record(results["target"], results["device"], prob, {
            "knobs": best["knobs"], "us": best["us"], "tried": len(r["candidates"]),
            "default_us": default.get("us"), "date": results["date"], "commit": results.get("commit"),
            "candidates": [{"knobs": c["knobs"], "us": c.get("us"), "ok": bool(c.get("ok"))} for c in r["candidates"]]})
        gain = f", default {default['us']:.1f} us" if default.get("us") else ""
        lines.append(f"{prob}: {best['schedule']} {best['us']:.1f} us{gain}")
    return lines


def parse_arguments(argv=None):
    p = argparse.ArgumentParser(prog="convc-tune", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="action", required=True)
    for name in ("prepare", "run"):
        sp = sub.add_parser(name)
        sp.add_argument("models", nargs="*", help="MLIR models")
        sp.add_argument("--suite", action="store_true", help="tune the bundled suite's layers")
        sp.add_argument("--suite-file", help="with --suite: a suite JSON instead of the bundled one (e.g. "
                                             "tools/data/depthwise_shapes.json)")
        sp.add_argument("--only", help="with --suite: comma-separated layer names")
        sp.add_argument("--target", default="sm_90a", help="convc target (default sm_90a)")
        if name == "prepare":
            sp.add_argument("--out", required=True, help="bundle directory to write")
        else:
            sp.add_argument("--cache", help="tuning cache to update (default: the default location)")
            sp.add_argument("--iters", type=int, default=50, help="timed iterations per candidate (default 50)")
    pc = sub.add_parser("collect")
    pc.add_argument("results", help="tune.json from the GPU run")
    pc.add_argument("--cache", help="tuning cache to update (default: the default location)")
    return p.parse_args(argv)


def _models(args, tmp: str) -> list[str]:
    models = list(args.models)
    if args.suite_file and not args.suite:
        raise ConvcError("--suite-file needs --suite")
    if args.suite:
        models += write_models(select(load_suite(args.suite_file), args.only), os.path.join(tmp, "suite_models"))
    if not models:
        raise ConvcError("nothing to tune: name models or --suite")
    for m in models:
        if not os.path.isfile(m):
            raise ConvcError(f"input file not found: {m}")
    return models


def _cache_path(arg: str | None) -> str:
    path = arg or default_cache_path()
    if not path:
        raise ConvcError("no tuning cache: pass --cache FILE (CONVC_TUNING_CACHE disables the default)")
    return path


def _update_cache(results: dict, cache_arg: str | None) -> int:
    path = _cache_path(cache_arg)
    cache = TuningCache.read(path)
    for line in collect(results, cache):
        print(line)
    print(f"tuning cache: {cache.write(path)}")
    return 0


def main(args) -> int:
    try:
        if args.action == "collect":
            with open(args.results) as f:
                return _update_cache(json.load(f), args.cache)
        with tempfile.TemporaryDirectory(prefix="convc-tune-") as tmp:
            models = _models(args, tmp)
            if args.action == "prepare":
                m = prepare(models, args.out, args.target)
                print(f"bundle: {args.out} ({len(m['models'])} models, "
                      f"{sum(len(e['rounds']) for e in m['models'])} candidate builds)")
                return 0
            require_driver("cuda")          # before compiling anything: timing needs the GPU
            bundle = os.path.join(tmp, "bundle")
            prepare(models, bundle, args.target)
            return _update_cache(tune_bundle(bundle, iters=args.iters), args.cache)
    except ImportError as e:
        print(f"convc-tune: error: timing needs a GPU runtime and PyTorch ({e})", file=sys.stderr)
        return 1
    except (ConvcError, TuningCacheError, ModuleError, OSError, ValueError, KeyError) as e:
        print(f"convc-tune: error: {e}", file=sys.stderr)
        return 1


def _cli_main():
    sys.exit(main(parse_arguments()))
