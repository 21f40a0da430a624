"""tools/precision.py: the f16 accumulation orders it emulates, checked against direct f16 math.

- One f16 FMA per tap is one rounding of the exact a*b+c (checked against numpy's float16 on
  products exact in f16, where a rounded product and an FMA agree).
- On random 7x7 windows the error grows with the rows summed in f16 and stays above the output
  rounding alone; the exact-sum row is the f16 rounding of the float64 sum.
"""

import numpy as np

from convc.tools.precision import accumulate, study


def test_fma_rounds_once():
    # x * w exact in f16 (small integers times powers of two): FMA and f16 arithmetic agree
    rng = np.random.default_rng(1)
    x = rng.integers(-8, 8, (1000, 3, 3)).astype(np.float16)
    w = (rng.integers(-4, 4, (3, 3)) / 4).astype(np.float16)
    ref = np.zeros(1000, np.float16)
    for r in range(3):
        for s in range(3):
            ref = ref + x[:, r, s] * w[r, s]
    assert np.array_equal(accumulate(x, w, 3), ref.astype(np.float64))


def test_error_grows_with_rows_in_f16():
    rows = {(r.window, r.rows_in_f16): r for r in study(windows=((7, 7),), samples=20_000, seed=3)}
    rounding, per_row, per_two, all_f16 = (rows[("7x7", k)] for k in (0, 1, 2, 7))
    assert rounding.rel_l2 < per_row.rel_l2 < per_two.rel_l2 < all_f16.rel_l2 < 5e-3
    assert 1e-4 < rounding.rel_l2 < 5e-4          # f16's half-ulp over a sum of N(0, 1) terms
