"""The persistent tile order visits every output tile exactly once, for any rasterization."""

import pytest

from convc.passes.plan import plan_sm90_ws
from convc.passes.problem import ConvProblem
from convc.passes.target import get_target
from convc.passes.lower.nvidia.tile_scheduler import origin_model, tile_counts


@pytest.mark.parametrize("raster", [1, 2, 3, 4, 16])
@pytest.mark.parametrize("shape", [(32, 56, 56, 64, 256), (1, 7, 7, 512, 512), (2, 33, 33, 256, 192)])
def test_every_tile_once(shape, raster):
    n, h, w, c, f = shape
    p = ConvProblem(N=n, H=h, W=w, C=c, F=f, R=3, S=3, pad=(1, 1, 1, 1))
    s = plan_sm90_ws(p, get_target("sm_90a"), raster=raster)
    m_tiles, n_tiles = tile_counts(p, s)
    seen = [origin_model(p, s, t) for t in range(m_tiles * n_tiles)]
    assert len(set(seen)) == m_tiles * n_tiles
    assert all(m0 % s.block_m == 0 and m0 < p.gemm_m and n0 % s.block_n == 0 and n0 < p.F for m0, n0 in seen)
    # CTAs of the persistent grid split the tiles evenly (counts differ by at most one)
    per_cta = [len(range(pid, m_tiles * n_tiles, s.grid[0])) for pid in range(s.grid[0])]
    assert max(per_cta) - min(per_cta) <= 1
