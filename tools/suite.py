"""convc-suite: write or compile the conv layer suite as a bundle the GPU check runs.

  convc-suite mlir --out DIR                       one model per layer
  convc-suite compile --target sm_90a --out DIR    + a vmfb per layer and DIR/manifest.json

The manifest records, per layer, its vmfb, the path each dispatch took (convc or IREE and
why) and the compile time, plus the target, date and commit of the compile.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import sys
import time

from ..compiler.driver import CompileOptions, compile_file
from ..compiler.errors import ConvcError
from .bundle import LAYER_RECORD_ONCE, git_commit, record_compile
from .families import families_bundle
from .layers import Layer, layer_mlir, load_suite, random_grouped_layers, random_narrow_layers


def select(layers: list[Layer], only: str | None) -> list[Layer]:
    if not only:
        return layers
    names = set(only.split(","))
    unknown = names - {L.name for L in layers}
    if unknown:
        raise ConvcError(f"unknown layer(s): {', '.join(sorted(unknown))}")
    return [L for L in layers if L.name in names]


def write_models(layers: list[Layer], out: str) -> list[str]:
    os.makedirs(out, exist_ok=True)
    paths = []
    for L in layers:
        p = os.path.join(out, f"{L.name}.mlir")
        with open(p, "w") as f:
            f.write(layer_mlir(L, output_arg=True))
        paths.append(p)
    return paths


def _keep_ptx(dump_dir: str, dest: str) -> bool:
    """Copies the PTX IREE wrote for this model (NVIDIA targets) next to the vmfb."""
    import glob
    import shutil
    ptx = glob.glob(os.path.join(dump_dir, "binaries", "*.ptx"))
    if ptx:
        shutil.copyfile(ptx[0], dest)
    return bool(ptx)


def compile_suite(layers: list[Layer], target: str, out: str, verbose: bool = True,
                  keep_ptx: bool = False, tuning_cache: str = "none") -> dict:
    """tuning_cache: "none" (default schedules, reproducible) or a convc-tune cache file."""
    paths = write_models(layers, out)
    entries = []
    for L, src in zip(layers, paths):
        vmfb = os.path.join(out, f"{L.name}.vmfb")
        t0 = time.perf_counter()
        entry = {"layer": dataclasses.asdict(L), "vmfb": os.path.basename(vmfb)}
        dump = os.path.join(out, f".dump_{L.name}") if keep_ptx else None
        try:
            res = compile_file(src, vmfb, CompileOptions(target=target, dump_dir=dump, tuning_cache=tuning_cache,
                                                         record_once=LAYER_RECORD_ONCE))
            if dump and _keep_ptx(dump, os.path.join(out, f"{L.name}.ptx")):
                entry["ptx"] = f"{L.name}.ptx"
            entry["compile_s"] = round(time.perf_counter() - t0, 3)
            record_compile(entry, res)
        except ConvcError as e:
            entry.update(ok=False, error=str(e), compile_s=round(time.perf_counter() - t0, 3))
        if dump:
            import shutil
            shutil.rmtree(dump, ignore_errors=True)
        entries.append(entry)
        if verbose:
            print(f"{L.name:28s} {entry.get('path', 'FAILED'):6s} {entry['compile_s']:6.2f} s"
                  + ("" if entry["ok"] else f"  {entry['error']}"), flush=True)
    manifest = {"target": target, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "commit": git_commit(), "tuning_cache": tuning_cache, "layers": entries}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def parse_arguments(argv=None):
    p = argparse.ArgumentParser(prog="convc-suite", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["mlir", "compile", "random-grouped", "random-narrow", "families"],
                   help="mlir: write the models; compile: a bundle; random-grouped: write a suite JSON "
                        "of randomized grouped/depthwise layers (--seed, --count) to --out; random-narrow: "
                        "the same of dense layers with few or odd output channels; families: a "
                        "bundle of one layer per kernel family and variant flag (for the sanitizers)")
    p.add_argument("--out", required=True,
                   help="bundle directory (mlir, compile) or suite JSON file (random-grouped, random-narrow) to write")
    p.add_argument("--suite", help="suite JSON (default: the bundled copy of the project suite)")
    p.add_argument("--target", default="sm_90a", help="convc target (default sm_90a)")
    p.add_argument("--only", help="comma-separated layer names")
    p.add_argument("--ptx", action="store_true", help="keep each layer's PTX in the bundle")
    p.add_argument("--seed", type=int, default=0, help="random-grouped, random-narrow: the seed")
    p.add_argument("--count", type=int, default=40, help="random-grouped, random-narrow: how many layers")
    p.add_argument("--wide", action="store_true",
                   help="random-grouped: depthwise layers with windows of 7-9 columns (layers.random_grouped_layers)")
    p.add_argument("--tuning-cache", default="none",
                   help="convc-tune cache whose winners replace the default schedules (default: none)")
    return p.parse_args(argv)


def main(args) -> int:
    try:
        if args.action == "random-grouped":
            layers = random_grouped_layers(args.seed, args.count, args.wide)
            with open(args.out, "w") as f:
                json.dump({"about": f"convc-suite random-grouped --seed {args.seed} --count {args.count}"
                                    + (" --wide" if args.wide else ""),
                           "layers": [dataclasses.asdict(L) for L in layers]}, f, indent=1)
            return 0
        if args.action == "random-narrow":
            with open(args.out, "w") as f:
                json.dump({"about": f"convc-suite random-narrow --seed {args.seed} --count {args.count}",
                           "layers": [dataclasses.asdict(L) for L in random_narrow_layers(args.seed, args.count)]},
                          f, indent=1)
            return 0
        if args.action == "families":
            m = families_bundle(args.out, args.target, set(args.only.split(",")) if args.only else None)
            bad = [e["layer"]["name"] for e in m["layers"] if not e["ok"]]
            print(f"{len(m['layers']) - len(bad)}/{len(m['layers'])} variants compiled" + (f"; failed: {bad}" if bad else ""))
            return 1 if bad else 0
        layers = select(load_suite(args.suite), args.only)
        if args.action == "mlir":
            for p in write_models(layers, args.out):
                print(p)
            return 0
        m = compile_suite(layers, args.target, args.out, keep_ptx=args.ptx, tuning_cache=args.tuning_cache)
    except (ConvcError, OSError, ValueError, KeyError) as e:
        print(f"convc-suite: error: {e}", file=sys.stderr)
        return 1
    bad = [e for e in m["layers"] if not e["ok"]]
    times = [e["compile_s"] for e in m["layers"] if e["ok"]]
    if times:
        print(f"compiled {len(times)}/{len(m['layers'])} layers for {args.target}; compile time per conv "
              f"dispatch: median {sorted(times)[len(times) // 2]:.2f} s, max {max(times):.2f} s")
    return 1 if bad else 0


def _cli_main():
    sys.exit(main(parse_arguments()))
