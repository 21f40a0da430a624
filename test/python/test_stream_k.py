"""The k-lockstep stream-K partition (tile_scheduler.StreamKWork) evaluated on ints: every
(tile, k-tile) iteration is run by exactly one CTA, each split tile has one head (k = 0, its
CTA's first segment) and one tail (the next CTA's last segment), shares are about K(m-1)/m,
and at every step each CTA is on one of two k-slices (k = i in heads, k = i + ~K/m in tails)."""

import pytest

from convc.passes.lower.nvidia.tile_scheduler import IntOps, StreamKWork


@pytest.mark.parametrize("tiles,ktiles,sms", [(100, 72, 132), (98, 36, 132), (98, 16, 132), (100, 32, 132),
                                              (66, 9, 132), (131, 8, 132), (70, 40, 132), (4, 72, 132),
                                              (5, 7, 8)])
def test_partition(tiles, ktiles, sms):
    if StreamKWork.why_not(tiles, ktiles, sms):
        assert (tiles, ktiles) == (131, 8)             # one chain of 132 CTAs needs K >= 132
        return
    grid = StreamKWork.grid_for(tiles, sms)
    assert tiles < grid <= min(sms, 2 * tiles)
    seen, heads, tails, shares = {}, {}, {}, []
    for c in range(grid):
        w = StreamKWork(IntOps, tiles, ktiles, grid, c)
        share = 0
        for si in range(w.count()):
            t, k0, k1, it0 = w.segment(si)
            assert 0 <= k0 < k1 <= ktiles and it0 == share and 0 <= t < tiles
            for i, k in enumerate(range(k0, k1)):
                assert (t, k) not in seen
                seen[(t, k)] = c
            if k0 == 0:
                assert si == 0 and k1 < ktiles          # a head: the CTA's first segment
                heads[t] = c
            else:
                assert k1 == ktiles and si == w.count() - 1
                tails[t] = (c, k0 - it0)                # k at step i is i + offset
            share += k1 - k0
        shares.append(share)
    assert len(seen) == tiles * ktiles
    assert set(heads) == set(tails) == set(range(tiles))
    for t, (c, offset) in tails.items():
        assert heads[t] == c - 1                        # the partial comes from the previous CTA
        assert offset >= 0
    longest = max(shares)
    assert longest <= ktiles - ktiles // (tiles // (grid - tiles) + 2) + 1
    offsets = {o for _, o in tails.values()}
    assert max(offsets) - min(offsets) <= max(1, ktiles // (tiles // (grid - tiles) + 1) - ktiles // (tiles // (grid - tiles) + 2) + 1)


def test_refusals():
    assert "fill" in StreamKWork.why_not(132, 72, 132)
    assert "split" in StreamKWork.why_not(131, 8, 132)
    assert StreamKWork.why_not(100, 72, 132) is None


def test_planner_schedules():
    """The planner sizes the grid and scratch from the same StreamKWork / streamk_scratch the
    kernel uses, declines what the kernel cannot do, and defaults to stream-K only under half a
    wave of tiles with a long K."""
    from convc.passes.lower.nvidia.stream_k import streamk_scratch
    from convc.passes.plan.plan_schedule import PlanError
    from convc.passes.plan.kernels.sm90 import plan_sm90
    from convc.passes.plan.kernels.sm90_ws import plan_sm90_ws
    from convc.passes.target import get_target
    from convc.tools.layers import load_suite
    t = get_target("sm_90a")
    suite = {L.name: L.expected_problem() for L in load_suite()}
    s = plan_sm90_ws(suite["r50_l4_3x3_512"], t, "sm90_ws_streamk", 64, 128)
    assert s.grid[0] == StreamKWork.grid_for(100, t.num_sms) == 132
    assert s.scratch_bytes == streamk_scratch(132, 64, 128, 132 * 4 * 128).total
    with pytest.raises(PlanError, match="residual"):
        plan_sm90_ws(suite["r50_l4_1x1_512_2048"], t, "sm90_ws_streamk", 64, 128)
    with pytest.raises(PlanError, match="cluster"):
        plan_sm90_ws(suite["r50_l4_3x3_512"], t, "sm90_ws_streamk", 64, 128, cluster_m=2)
    with pytest.raises(PlanError, match="fill"):
        plan_sm90_ws(suite["r50_l2_3x3_128"], t, "sm90_ws_streamk", 64, 128)
    defaults = {name for name, p in suite.items() if plan_sm90(p, t).kernel == "sm90_ws_streamk"}
    assert defaults == {"n1_3x3_512_7x7", "s2_5x5_96"}
