"""Run a vmfb's function on given or random inputs and print (or save) its results.

  python3 -m convc.runtime.invoke MODEL.vmfb --input x.npy [--input 3x32x8x8xf16 ...]
          [--driver cuda|local-task|hip] [--function NAME] [--output out.npy]
          [--batches 1,5] [--count 2]

Each --input is one argument: a `.npy` file, an ONNX `.pb` tensor (as ONNX's model zoo and
backend tests ship them), or `DxDx...xTYPE` (f16, bf16, f32) for random data. The function is
the module's one exported function unless --function names another (an ONNX model exports its
graph's name). --driver: `cuda` (NVIDIA GPU, the default), `local-task` (CPU, for vmfbs compiled
with --target llvm-cpu), `hip` (AMD). --output saves the first result (`.npy`); more results
get `_1`, `_2`, ... suffixes. --batches runs random inputs once per leading size (a
dynamic-batch vmfb). Prints each result's shape, type, a NaN check and its first values; a
runtime error is a one-line message and a nonzero exit.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from .module import LoadedModule, ModuleError

_NP = {"f16": np.float16, "bf16": np.float32, "f32": np.float32}
_TYPES = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32"}


def parse_input(spec: str) -> tuple[tuple[int, ...], str]:
    *dims, dtype = spec.split("x")
    if dtype not in _NP or not dims or not all(d.isdigit() for d in dims):
        raise ValueError(f"bad --input {spec!r}: expected a .npy or .pb file, or DxDx...xTYPE with TYPE f16, bf16 "
                         "or f32")
    return tuple(int(d) for d in dims), dtype


def load_input(path: str) -> tuple[np.ndarray, str]:
    """An input array from a .npy file or an ONNX TensorProto (.pb), with its element type."""
    if path.endswith(".pb"):
        try:
            import onnx
            from onnx import numpy_helper
        except ImportError:
            raise ValueError(f"reading {path} needs the onnx package (python3 -m pip install onnx)") from None
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        a = numpy_helper.to_array(t)
    else:
        a = np.load(path)
    if a.dtype == np.float64:
        a = a.astype(np.float32)
    if a.dtype not in _TYPES:
        raise ValueError(f"{path}: element type {a.dtype} is not one convc models take (float16, float32)")
    return a, _TYPES[a.dtype]


def _inputs(specs, rng, batch):
    out = []
    for spec in specs:
        if isinstance(spec, tuple) and isinstance(spec[0], np.ndarray):
            out.append(spec)
        else:
            shape, dt = spec
            shape = shape if batch is None else (batch, *shape[1:])
            out.append((rng.standard_normal(shape).astype(_NP[dt]), dt))
    return out


def _describe(a: np.ndarray) -> str:
    flat = a.reshape(-1)
    head = ", ".join(f"{float(v):.5g}" for v in flat[:6])
    return (f"{'x'.join(map(str, a.shape))} {a.dtype} nan={bool(np.isnan(a.astype(np.float32)).any())} "
            f"[{head}{', ...' if flat.size > 6 else ''}]")


def _save(path: str, results: list) -> list[str]:
    stem, ext = os.path.splitext(path)
    names = [path] + [f"{stem}_{i}{ext or '.npy'}" for i in range(1, len(results))]
    for name, r in zip(names, results):
        np.save(name, r)
    return names


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="invoke", description=__doc__.splitlines()[0])
    p.add_argument("vmfb", help="the module to run")
    p.add_argument("--input", action="append", default=[],
                   help="one argument: a .npy or ONNX .pb file, or DxDx...xTYPE for random data (repeatable)")
    p.add_argument("--batches", default="", help="comma-separated leading sizes to run random inputs at")
    p.add_argument("--count", type=int, default=1, help="invocations per batch size")
    p.add_argument("--driver", default="cuda",
                   help="IREE HAL driver: cuda (default), local-task (CPU: --target llvm-cpu builds), hip")
    p.add_argument("--function", default=None, help="exported function (default: the module's one function)")
    p.add_argument("--output", help="save the results here (.npy; further results get _1, _2, ... suffixes)")
    p.add_argument("--no-mmap", action="store_true",
                   help="load a heap copy of the vmfb instead of mapping it (for compute-sanitizer)")
    args = p.parse_args(argv)
    try:
        specs = [load_input(s) if s.endswith((".npy", ".pb")) else parse_input(s) for s in args.input]
    except (ValueError, OSError) as e:
        print(f"invoke: error: {e}", file=sys.stderr)
        return 2
    if not os.path.isfile(args.vmfb):
        print(f"invoke: error: no such module: {args.vmfb}", file=sys.stderr)
        return 2
    try:
        module = LoadedModule(args.vmfb, args.driver, mmap=not args.no_mmap)
        name = args.function or module.entry
        rng = np.random.default_rng(0)
        for b in [int(x) for x in args.batches.split(",") if x] or [None]:
            inputs = _inputs(specs, rng, b)
            for _ in range(args.count):
                results = module.call(name, inputs, all_results=True)
            print(f"{name}({', '.join('x'.join(map(str, x.shape)) + 'x' + t for x, t in inputs)})"
                  + (f" at batch {b}" if b is not None else ""), flush=True)
            for i, r in enumerate(results):
                print(f"  result {i}: {_describe(r)}", flush=True)
        if args.output:
            print("saved " + ", ".join(_save(args.output, results)))
    except ModuleError as e:
        print(f"invoke: error: {e}", file=sys.stderr)
        return 1
    except (RuntimeError, ValueError) as e:     # IREE: a driver that is absent, a call it rejects
        first = next((x for x in str(e).splitlines() if x.strip()), str(e)).strip()
        print(f"invoke: error: {first.split('; ', 1)[-1] if 'invocation.c' in first else first}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
