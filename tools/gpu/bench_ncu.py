"""Merges an Nsight Compute gpu__time_duration cross-check into a convc-bench results file.

  python3 -m convc.tools.gpu.bench_ncu bench.json ncu.csv LAYER
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import statistics
import sys


def parse_ncu_csv(text: str) -> list[float]:
    """gpu__time_duration.sum values in microseconds from `ncu --csv` output."""
    start = text.find('"ID"')
    rows = list(csv.DictReader(io.StringIO(text[start:]))) if start >= 0 else []
    out = []
    for r in rows:
        if r.get("Metric Name") == "gpu__time_duration.sum":
            v = float(r["Metric Value"].replace(",", ""))
            unit = r.get("Metric Unit", "ns")
            out.append(v / 1000.0 if unit in ("nsecond", "ns") else v if unit in ("usecond", "us") else v * 1000.0)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="bench_ncu", description="Adds Nsight Compute's kernel times for one layer "
                                "to a bench.json (the timer cross-check).")
    p.add_argument("bench_json", help="bench.json written by convc.tools.gpu.bench (updated in place)")
    p.add_argument("ncu_csv", help="ncu --csv output with gpu__time_duration.sum for the layer's kernels")
    p.add_argument("layer", help="the layer ncu profiled")
    args = p.parse_args(argv)
    bench_json, ncu_csv, layer = args.bench_json, args.ncu_csv, args.layer
    with open(ncu_csv) as f:
        vals = parse_ncu_csv(f.read())
    with open(bench_json) as f:
        res = json.load(f)
    row = next((r for r in res["layers"] if r["name"] == layer), None)
    res["ncu_cross_check"] = {"layer": layer, "ncu_gpu_time_duration_us": vals,
                              "ncu_median_us": statistics.median(vals) if vals else None,
                              "profiler_median_us": row.get("convc_us") if row else None}
    with open(bench_json, "w") as f:
        json.dump(res, f, indent=1)
    print(f"ncu cross-check {layer}: ncu median {res['ncu_cross_check']['ncu_median_us']} us, "
          f"profiler {res['ncu_cross_check']['profiler_median_us']} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
