"""Calling a compiled layer the wrong way: each misuse must raise IREE's error (a Python
exception), never crash the process or return numbers, and the module must still give the
right answer afterwards. An output *storage* buffer larger than the result is not a misuse
(iree.abi.output takes storage of at least the result's bytes): that call must return the
right result.

  python3 -m convc.tools.gpu.wrong_use --bundle B [--only a,b] [--driver cuda] [--json OUT]

Each misuse runs in a child process (a crash is then a finding, not the end of the check):
the child makes one good call, the misuse, then another good call, and reports whether the
misuse raised and whether both good calls agree bitwise.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys

import numpy as np

from ...runtime.arrays import digest, layer_arguments
from ...runtime.module import LoadedModule
from ..layers import Layer

MISUSES = ("input_shape", "input_dtype", "input_rank", "filter_shape", "missing_argument", "extra_argument",
           "output_too_small", "batch", "output_storage_larger")
ACCEPTED = ("output_storage_larger",)       # must give the right result, not an error


def _misuse(kind: str, L: Layer, inputs, out):
    """The argument list of one misuse (inputs as (array, type) pairs; `out` the output pair)."""
    inputs = list(inputs)
    x, xt = inputs[0]
    other = "f32" if xt != "f32" else "f16"
    if kind == "input_shape":
        inputs[0] = (np.zeros((x.shape[0], x.shape[1] + 1, *x.shape[2:]), x.dtype), xt)
    elif kind == "input_dtype":
        inputs[0] = (np.zeros(x.shape, np.float32 if other == "f32" else np.float16), other)
    elif kind == "input_rank":
        inputs[0] = (x.reshape(x.shape[0], -1), xt)
    elif kind == "filter_shape":
        w, wt = inputs[1]
        inputs[1] = (np.zeros((*w.shape[:-1], w.shape[-1] + 1), w.dtype), wt)
    elif kind == "missing_argument":
        inputs = inputs[:-1]
    elif kind == "extra_argument":
        inputs = inputs + [inputs[-1]]
    elif kind == "output_too_small":
        o, ot = out
        out = (o.reshape(-1)[:-1].copy(), ot)
    elif kind == "output_storage_larger":
        o, ot = out
        out = (np.concatenate([o.reshape(-1), o.reshape(-1)[:64]]), ot)
    elif kind == "batch":
        inputs = [(np.concatenate([a, a]) if i in (0, 3) else a, t) for i, (a, t) in enumerate(inputs)]
        out = (np.concatenate([out[0], out[0]]), out[1])
    return inputs, out


def _child(vmfb: str, layer: dict, kind: str, driver: str) -> dict:
    L = Layer(**layer)
    rng = np.random.default_rng(0)
    inputs, out = layer_arguments(L, rng)
    mod = LoadedModule(vmfb, driver)

    def good():
        return digest(mod.call("main", inputs, (out[0].copy(), out[1])))

    before = good()
    bad_inputs, bad_out = _misuse(kind, L, inputs, out)
    right = None
    try:
        got = mod.call("main", bad_inputs, bad_out)
        raised = None
        right = digest(got.reshape(-1)[:out[0].size].reshape(out[0].shape)) == before
    except Exception as e:
        raised = str(e).splitlines()[0][:200]
    try:
        after_ok = good() == before
    except Exception as e:
        after_ok = f"good call failed after the misuse: {str(e).splitlines()[0][:200]}"
    return {"raised": raised, "right_result": right, "good_call_after": after_ok}


def check(bundle: str, only, driver: str) -> list[dict]:
    with open(os.path.join(bundle, "manifest.json")) as f:
        manifest = json.load(f)
    rows = []
    for e in manifest["layers"]:
        if not e.get("ok") or (only and e["layer"]["name"] not in only):
            continue
        for kind in MISUSES:
            if kind == "batch" and e["layer"]["N"] > 1:
                continue
            p = subprocess.run([sys.executable, "-m", "convc.tools.gpu.wrong_use", "--child",
                                json.dumps([os.path.join(bundle, e["vmfb"]), e["layer"], kind, driver])],
                               capture_output=True, text=True, timeout=300)
            try:
                res = json.loads(p.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                res = {"raised": None, "good_call_after": None,
                       "crash": f"exit status {p.returncode}: {p.stderr.strip().splitlines()[-1:] }"}
            expected = (res.get("right_result") is True and not res.get("raised")) if kind in ACCEPTED \
                else bool(res.get("raised"))
            ok = expected and res.get("good_call_after") is True and "crash" not in res
            rows.append({"layer": e["layer"]["name"], "misuse": kind, "ok": ok, **res})
            print(f"  {e['layer']['name']:22s} {kind:16s} {'OK' if ok else 'FAIL'}  {res.get('raised') or res}",
                  flush=True)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="wrong_use", description=__doc__.splitlines()[0])
    p.add_argument("--bundle", help="bundle directory with manifest.json")
    p.add_argument("--only", help="comma-separated layer names")
    p.add_argument("--driver", default="cuda", help="IREE HAL driver (default cuda)")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(_child(*json.loads(args.child))))
        return 0
    if not args.bundle:
        p.error("--bundle is required")
    rows = check(args.bundle, set(args.only.split(",")) if args.only else None, args.driver)
    bad = [r for r in rows if not r["ok"]]
    print(f"{len(rows) - len(bad)}/{len(rows)} misuses raised IREE's error and left the module correct")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                       "driver": args.driver, "rows": rows, "ok": not bad}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
