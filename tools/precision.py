"""How much packed-f16 accumulation costs a depthwise conv's accuracy, emulated in numpy.

The direct kernel sums each filter row's S taps in packed f16 (fma.rn.f16x2: one rounding per
fused multiply-add) and the rows in f32 ("f16_rows"); summing more rows in f16 would cut its
conversions and f32 adds (the issue-bound 7x7 layers' overhead, bench/NOTES.md). This emulates
each accumulation order exactly (every f16 FMA computed in f64 and rounded once to f16, the f32
adds rounded to f32, the output rounded to f16) on random windows (inputs N(0, 1), one filter
N(0, 1/(R*S)) shared by all windows, as a trained depthwise filter is shared by a channel's
pixels) and reports the error against the exact sum: relative L2 and the largest error over the
output's RMS, beside the f16 output rounding alone.

    python3 -m convc.tools.precision --out results/precision/depthwise_accumulation.json
"""

from __future__ import annotations

import argparse
import datetime
import json
from dataclasses import asdict, dataclass

import numpy as np

from .bundle import git_commit

WINDOWS = ((3, 3), (5, 5), (7, 7))


@dataclass(frozen=True)
class AccumulationError:
    window: str
    order: str            # "output rounding", "f16 per N rows" (N = R: all in f16)
    rows_in_f16: int      # filter rows summed in f16 before an f32 add (0: exact sum, then rounding)
    rel_l2: float
    max_over_rms: float


def accumulate(x: np.ndarray, w: np.ndarray, rows_in_f16: int) -> np.ndarray:
    """Sum x[:, r, s] * w[r, s] in f16 FMAs over `rows_in_f16` filter rows at a time, those
    partial sums in f32, the result rounded to f16 (returned in f64)."""
    n, R, S = x.shape
    total = np.zeros(n, np.float32)
    for r0 in range(0, R, rows_in_f16):
        part = np.zeros(n, np.float16)
        for r in range(r0, min(R, r0 + rows_in_f16)):
            for s in range(S):
                part = (x[:, r, s].astype(np.float64) * float(w[r, s]) + part.astype(np.float64)).astype(np.float16)
        total = (total.astype(np.float64) + part.astype(np.float64)).astype(np.float32)
    return total.astype(np.float16).astype(np.float64)


def study(windows=WINDOWS, samples: int = 200_000, seed: int = 0) -> list[AccumulationError]:
    rng = np.random.default_rng(seed)
    out = []
    for R, S in windows:
        x = rng.standard_normal((samples, R, S)).astype(np.float16)
        w = (rng.standard_normal((R, S)) / np.sqrt(R * S)).astype(np.float16)
        exact = np.einsum("nrs,rs->n", x.astype(np.float64), w.astype(np.float64))
        rms = np.sqrt(np.mean(exact ** 2))

        def row(order, k, got):
            err = got - exact
            return AccumulationError(f"{R}x{S}", order, k, float(np.linalg.norm(err) / np.linalg.norm(exact)),
                                     float(np.max(np.abs(err)) / rms))

        out.append(row("output rounding", 0, exact.astype(np.float16).astype(np.float64)))
        for k in sorted({1, 2, R}):
            order = "all in f16" if k == R else ("f16 per row" if k == 1 else f"f16 per {k} rows")
            out.append(row(order, k, accumulate(x, w, k)))
    return out


def _cli_main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the table as JSON")
    args = ap.parse_args(argv)
    rows = study(samples=args.samples, seed=args.seed)
    for r in rows:
        print(f"{r.window}  {r.order:18s}  rel L2 {r.rel_l2:.2e}  max/rms {r.max_over_rms:.2e}")
    if args.out:
        commit = git_commit()          # before the file is rewritten (the tree is then dirty)
        with open(args.out, "w") as f:
            json.dump({"date": datetime.date.today().isoformat(), "device": "CPU (numpy emulation)",
                       "commit": commit, "samples": args.samples, "seed": args.seed,
                       "method": __doc__.split("\n\n")[1].replace("\n", " "),
                       "rows": [asdict(r) for r in rows]}, f, indent=1)


if __name__ == "__main__":
    _cli_main()
