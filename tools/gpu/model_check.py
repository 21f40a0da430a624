"""Whole-model check: run each model of a `convc-models prepare` bundle through the IREE
runtime and compare with its expected output.

  python3 -m convc.tools.gpu.model_check --bundle DIR [--driver cuda] [--json OUT.json]

Per model: the result must have the expected shape, no NaN, and a rel. L2 error against the
expected output within the bundle's tolerance (per precision). (Imported models return their
result; the layer checks poison every kernel's output buffer.)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys

import numpy as np

from ...runtime.module import LoadedModule
from .reference import rel_l2


def check_model(bundle: str, entry: dict, driver: str, tolerance: float) -> dict:
    row = {k: entry.get(k) for k in ("name", "convs", "convs_on_convc", "kernels", "declined", "transposes")}
    if not entry.get("ok"):
        row.update(correct=False, error=entry.get("error", "compile failed"))
        return row
    x = np.load(os.path.join(bundle, f"{entry['name']}.input.npy"))
    expected = np.load(os.path.join(bundle, f"{entry['name']}.expected.npy"))
    try:
        got = LoadedModule(os.path.join(bundle, f"{entry['name']}.vmfb"), driver).call(
            entry["function"], [(x, "f32")])
    except Exception as e:  # a runtime failure is a failed check, reported, not a crash
        row.update(correct=False, error=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        return row
    if got.shape != expected.shape:
        row.update(correct=False, error=f"output shape {got.shape}, expected {expected.shape}")
        return row
    err = rel_l2(got.astype(np.float32), expected.astype(np.float32))
    nan = bool(np.isnan(got).any())
    row.update(rel_l2=float(err), nan=nan, correct=(not nan and err <= tolerance),
               max_abs_err=float(np.nanmax(np.abs(got - expected))))
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="model_check", description=__doc__.splitlines()[0])
    p.add_argument("--bundle", required=True, help="bundle made by convc-models prepare")
    p.add_argument("--driver", default="cuda", help="IREE HAL driver (default cuda)")
    p.add_argument("--json", help="write results here")
    args = p.parse_args(argv)
    with open(os.path.join(args.bundle, "manifest.json")) as f:
        manifest = json.load(f)
    rows = []
    for entry in manifest["models"]:
        row = check_model(args.bundle, entry, args.driver, entry.get("tolerance", manifest["tolerance"]))
        rows.append(row)
        status = "ok" if row["correct"] else "FAIL"
        detail = f"rel_l2={row['rel_l2']:.2e}" if "rel_l2" in row else row.get("error", "")
        print(f"{row['name']:14s} {status:4s} {detail}  convs on convc {row['convs_on_convc']}/{row['convs']}",
              flush=True)
    device = None
    try:
        import torch
        device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except ImportError:
        pass
    result = {"date": datetime.date.today().isoformat(), "device": device, "host": platform.node(),
              "commit": manifest.get("commit"), "target": manifest["target"], "precision": manifest["precision"],
              "tolerance": manifest["tolerance"], "passed": sum(r["correct"] for r in rows),
              "total": len(rows), "models": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    print(f"{result['passed']}/{result['total']} models match their expected outputs")
    return 0 if result["passed"] == result["total"] else 1


if __name__ == "__main__":
    sys.exit(main())
