"""The persistent tile order visits every output tile exactly once, for any rasterization and
cluster shape."""

import pytest

from convc.passes.plan.kernels.sm90_ws import plan_sm90_ws
from convc.passes.problem import ConvProblem
from convc.passes.target import get_target
from convc.passes.lower.nvidia.tile_scheduler import origin_model, tile_counts


def _cdiv(a, b):
    return -(-a // b)


@pytest.mark.parametrize("cluster", [1, 2])
@pytest.mark.parametrize("raster", [1, 2, 3, 4, 16])
@pytest.mark.parametrize("shape", [(32, 56, 56, 64, 256), (1, 7, 7, 512, 512), (2, 33, 33, 256, 192),
                                   (1, 15, 15, 64, 128)])
def test_every_tile_once(shape, raster, cluster):
    n, h, w, c, f = shape
    p = ConvProblem(N=n, H=h, W=w, C=c, F=f, R=3, S=3, pad=(1, 1, 1, 1))
    s = plan_sm90_ws(p, get_target("sm_90a"), raster=raster, cluster_m=cluster)
    m_tiles, n_tiles = tile_counts(p, s)
    units = _cdiv(m_tiles, cluster) * n_tiles                  # cluster tiles
    seen = [origin_model(p, s, t, r) for t in range(units) for r in range(cluster)]
    real = [(m0, n0) for m0, n0 in seen if m0 < p.gemm_m]      # a cluster's extra M-tile is all out of bounds
    assert len(real) == len(set(real)) == m_tiles * n_tiles
    assert all(m0 % s.block_m == 0 and n0 % s.block_n == 0 and n0 < p.F for m0, n0 in seen)
    # clusters of the persistent grid split the cluster tiles evenly; every CTA of a cluster
    # walks the same count
    clusters = s.grid[0] // cluster
    assert s.grid[0] % cluster == 0 and s.grid[0] <= 132
    per = [len(range(cid, units, clusters)) for cid in range(clusters)]
    assert max(per) - min(per) <= 1


@pytest.mark.parametrize("batch", [1, 2, 5, 40])
def test_dynamic_batch_walks_every_tile_once(batch):
    """A dynamic batch: a schedule planned for N = 8 on a fixed grid of one CTA per SM walks
    the tiles of the runtime batch exactly once (the IntOps model of the emitted arithmetic);
    CTAs past the tile count get none."""
    from convc.passes.lower.nvidia.tile_scheduler import IntOps, PersistentTiles
    from convc.passes.plan.plan_schedule import plan_schedule_for
    p = ConvProblem(N=8, H=14, W=14, C=256, F=256, R=3, S=3, pad=(1, 1, 1, 1), batch_constant=0, num_constants=1)
    s = plan_schedule_for(p, get_target("sm_90a"))
    assert s.kernel == "sm90_ws_pingpong" and s.grid[0] == get_target("sm_90a").num_sms
    rows = batch * p.Ho * p.Wo
    seen = []
    for pid in range(s.grid[0]):
        tiles = PersistentTiles(IntOps, p, s, pid, rows)
        seen += [tiles.origin(j) for j in range(tiles.local_count())]
    want = {(m * s.block_m, n * s.block_n) for m in range(-(-rows // s.block_m)) for n in range(p.F // s.block_n)}
    assert sorted(seen) == sorted(want)
