"""Stream-K partition (tile_scheduler.StreamKWork) evaluated on ints: every (tile, k-tile)
iteration is run by exactly one CTA, shares differ by at most one, each CTA writes at most one
partial (its first segment), and each split tile's finisher is the CTA holding k = 0, whose
peers are exactly the CTAs holding the tile's other segments, each at the start of its range."""

import pytest

from convc.passes.lower.nvidia.tile_scheduler import IntOps, StreamKWork


@pytest.mark.parametrize("tiles,ktiles,grid", [(52, 32, 132), (49, 16, 132), (100, 72, 132), (52, 72, 132),
                                               (3, 5, 132), (7, 1, 4), (200, 9, 132), (1, 72, 132)])
def test_partition(tiles, ktiles, grid):
    grid = min(grid, tiles * ktiles)        # the planner never launches more CTAs than iterations
    seen = {}
    partials = {}
    finishers = {}
    shares = []
    for c in range(grid):
        w = StreamKWork(IntOps, tiles, ktiles, grid, c)
        n = w.count()
        share = 0
        for si in range(n):
            t, k0, k1, it0 = w.segment(si)
            assert 0 <= k0 < k1 <= ktiles and it0 == share
            for k in range(k0, k1):
                assert (t, k) not in seen
                seen[(t, k)] = c
            share += k1 - k0
            if k0 > 0:
                assert si == 0, "only a CTA's first segment can start past k = 0"
                partials[t] = partials.get(t, []) + [c]
            elif k1 < ktiles:
                finishers[t] = (c, list(range(c + 1, w.last_peer(t) + 1)))
            else:
                assert w.last_peer(t) == c
        shares.append(share)
    assert len(seen) == tiles * ktiles
    assert max(shares) - min(shares) <= 1
    assert set(partials) == set(finishers)
    for t, (c, peers) in finishers.items():
        assert peers == partials[t]
        assert seen[(t, 0)] == c
