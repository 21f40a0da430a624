"""Invoke a vmfb's function on random inputs of given shapes (e.g. under compute-sanitizer).

  python3 -m convc.runtime.invoke MODEL.vmfb --input 3x32x8x8xf16 [--input ...]
          [--batches 1,5] [--count 2] [--driver cuda] [--function main]

Each --input is one argument, `DxDx...xTYPE` (f16, bf16, f32). --batches runs the function
once per batch size, replacing every input's leading size (a dynamic-batch vmfb), in one
process. Prints each result's shape and whether it holds NaN; a runtime error is a nonzero
exit.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .module import LoadedModule

_NP = {"f16": np.float16, "bf16": np.float32, "f32": np.float32}


def parse_input(spec: str) -> tuple[tuple[int, ...], str]:
    *dims, dtype = spec.split("x")
    if dtype not in _NP or not dims:
        raise ValueError(f"bad --input {spec!r}: expected DxDx...xTYPE with TYPE f16, bf16 or f32")
    return tuple(int(d) for d in dims), dtype


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="invoke", description=__doc__.splitlines()[0])
    p.add_argument("vmfb", help="the module to run")
    p.add_argument("--input", action="append", default=[], help="DxDx...xTYPE of one argument (repeatable)")
    p.add_argument("--batches", default="", help="comma-separated leading sizes to run the inputs at")
    p.add_argument("--count", type=int, default=1, help="invocations per batch size")
    p.add_argument("--driver", default="cuda", help="IREE HAL driver (default cuda)")
    p.add_argument("--function", default="main", help="exported function (default main)")
    p.add_argument("--no-mmap", action="store_true",
                   help="load a heap copy of the vmfb instead of mapping it (for compute-sanitizer)")
    args = p.parse_args(argv)
    specs = [parse_input(s) for s in args.input]
    module = LoadedModule(args.vmfb, args.driver, mmap=not args.no_mmap)
    rng = np.random.default_rng(0)
    for b in [int(x) for x in args.batches.split(",") if x] or [None]:
        inputs = [(rng.standard_normal(shape if b is None else (b, *shape[1:])).astype(_NP[dt]), dt)
                  for shape, dt in specs]
        for _ in range(args.count):
            out = module.call(args.function, inputs)
        print(f"batch {b if b is not None else '-'}: {[x.shape for x, _ in inputs]} -> {out.shape} "
              f"nan={bool(np.isnan(out).any())}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
