"""Per-dispatch floors of a whole-model run: which kernels of an inference run far from what the
device allows.

  python3 -m convc.tools.floors --record E2E.json --bundle BUNDLE [--bench BENCH.json] [--out FILE]

A kernel's floor is max(FLOPs / peak, bytes / bandwidth) per launch (docs/benchmarking.md's
layer floor): the FLOPs and the bytes it must move (its inputs, filter, epilogue operands and
output, once each; a copy's pieces read and written) come from the problem convc planned for it,
recorded per kernel name when `convc-e2e prepare` compiled the case (`dispatch_costs` in the
bundle's manifest); the device's ceilings from a convc-bench run on the same kind of device
(its 8192^3 bf16 matmul and 2 GiB copy; TF32 at half the 16-bit peak); the kernel times from a
convc-e2e record's CUPTI breakdown. Each kernel of 20 us or more per launch is listed with its
share of the floor; IREE's kernels (no problem of convc's) are listed without one.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from ..passes.problem import DTYPE_BYTES

MIN_US = 20.0           # the threshold: dispatches of 20 us or more
SHARE = 0.5             # below 50% of the floor


def problem_cost(p) -> dict:
    """FLOPs and bytes a ConvProblem's kernel must at least spend: each operand read once, the
    output written once (a pool or map: no FLOPs that count)."""
    b = DTYPE_BYTES[p.dtype]
    moved = p.N * p.H * p.W * p.C * b + p.gemm_m * p.F * DTYPE_BYTES[p.out_dtype]
    if p.filter >= 0:
        moved += p.F * p.R * p.S * (p.C // p.groups) * b
    for ld in p.operand_loads:
        size = {"full": p.gemm_m * p.F, "channel": p.F, "image": p.N * p.F, "row": 0}[ld.broadcast]
        moved += size * DTYPE_BYTES[ld.dtype]
    for st in p.prologue:
        for ld in st.loads:
            moved += (p.N * p.H * p.W * p.C if ld.broadcast == "full" else p.C) * DTYPE_BYTES[ld.dtype]
    kind = "map" if p.is_map else "pool" if p.pool else "conv"
    return {"kind": kind, "flops": 0 if p.pool else p.flops, "bytes": moved, "dtype": p.dtype}


def copy_cost(c) -> dict:
    return {"kind": "copy", "flops": 0, "bytes": 2 * sum(x.elements for x in c.pieces) * DTYPE_BYTES[c.dtype],
            "dtype": c.dtype}


def dispatch_costs(res) -> dict:
    """{kernel name: cost} of every dispatch convc planned in a CompileResult."""
    out = {}
    for r in res.reports:
        if r.path != "convc":
            continue
        if r.problem is not None:
            out[r.problem.name] = problem_cost(r.problem)
        elif r.copy is not None:
            out[r.copy.name] = copy_cost(r.copy)
    return out


def audit(kernels: list[dict], costs: dict, peak_tflops: float, bw_tbs: float) -> list[dict]:
    """One row per kernel (CUPTI totals and launch counts of one inference): its time per
    launch, floor and share of the floor where convc knows its cost."""
    rows = []
    for k in kernels:
        per = k["us"] / max(1, k.get("launches", 1))
        c = costs.get(k["name"])
        row = {"name": k["name"], "launches": k.get("launches", 1), "us_per_launch": round(per, 1)}
        if c is not None:
            peak = peak_tflops / (2 if c["dtype"] == "f32" else 1)
            floor = max(c["flops"] / (peak * 1e12), c["bytes"] / (bw_tbs * 1e12)) * 1e6
            row.update(kind=c["kind"], floor_us=round(floor, 2), share=round(floor / per, 3) if per else None,
                       bound="compute" if c["flops"] / (peak * 1e12) > c["bytes"] / (bw_tbs * 1e12) else "memory")
        else:
            row.update(kind="IREE or runtime", floor_us=None, share=None)
        rows.append(row)
    _concurrent_shares(rows, {k["name"]: k["concurrent"] for k in kernels if k.get("concurrent")})
    return rows


def _concurrent_shares(rows: list[dict], concurrent: dict) -> None:
    """A kernel that ran beside others (the e2e breakdown's `concurrent`: IREE's concurrent
    stream steps are parallel graph nodes) is judged with its group: the floors of all its
    launches and its partners' against the groups' span, since its own CUPTI duration counts
    the time it shared the GPU (the VAE decoder's 16384x512x256 1x1 showed 71.5 us beside a
    3x3 conv and 16.9 us alone under Nsight Compute)."""
    by_name = {r["name"]: r for r in rows}
    for name, c in concurrent.items():
        r = by_name.get(name)
        if r is None:
            continue
        members = c.get("launches") or {n: by_name[n]["launches"] for n in [name, *c["with"]] if n in by_name}
        r["concurrent_with"] = c["with"]
        if any(by_name.get(n) is None or by_name[n].get("floor_us") is None for n in members):
            continue
        floor = sum(by_name[n]["floor_us"] * count for n, count in members.items())
        r["group_span_us"] = c["span_us"]
        r["share"] = round(floor / c["span_us"], 3) if c["span_us"] else None
        r["share_basis"] = "concurrent group"


def flagged(rows: list[dict]) -> list[dict]:
    """Kernels of MIN_US or more per launch below SHARE of their floor (of their concurrent
    group's, for kernels that ran beside others), or without a floor."""
    return [r for r in rows if r["us_per_launch"] >= MIN_US and (r["share"] is None or r["share"] < SHARE)]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m convc.tools.floors", description=__doc__.splitlines()[0])
    p.add_argument("--record", required=True, help="a convc-e2e record (e2e.json)")
    p.add_argument("--bundle", required=True, help="the convc-e2e bundle its cases were compiled into (manifest.json)")
    p.add_argument("--bench", default="results/bench/h200_sm90a_latest.json",
                   help="a convc-bench result holding the device's ceilings (peak_tflops, bandwidth_tbs)")
    p.add_argument("--out", help="write the audit as JSON here")
    args = p.parse_args(argv)
    with open(args.record) as f:
        record = json.load(f)
    with open(f"{args.bundle}/manifest.json") as f:
        manifest = json.load(f)
    with open(args.bench) as f:
        bench = json.load(f)
    peak, bw = bench["peak_tflops"], bench["bandwidth_tbs"]
    costs = {e["case"]["name"]: e.get("dispatch_costs") for e in manifest["cases"]}
    out = {"record": args.record, "record_date": record.get("date"), "device": record.get("device"),
           "ceilings": {"peak_tflops": round(peak, 1), "bandwidth_tbs": round(bw, 3), "from": args.bench,
                        "date": bench.get("date")},
           "threshold": {"min_us_per_launch": MIN_US, "share": SHARE}, "cases": []}
    for case in record["cases"]:
        c = costs.get(case["name"])
        kernels = case.get("convc_breakdown", {}).get("kernels")
        if c is None or kernels is None:
            continue
        rows = audit(kernels, c, peak, bw)
        bad = flagged(rows)
        out["cases"].append({"name": case["name"], "kernels": rows, "flagged": [r["name"] for r in bad]})
        print(f"{case['name']}: {len(bad)} kernel(s) of {MIN_US:.0f}+ us per launch below {SHARE:.0%} of the floor"
              " or without one")
        for r in bad:
            share = f"{r['share']:.0%} of floor {r['floor_us']} us ({r['bound']}-bound)" if r["share"] is not None \
                else "no floor (IREE's or the runtime's)"
            print(f"  {r['name'][:70]:70s} {r['us_per_launch']:8.1f} us x{r['launches']}: {share}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
