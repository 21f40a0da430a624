"""Persistent tile scheduling: which output tiles a CTA computes, and in what order.

A persistent grid of at most one CTA per SM walks the linear tile index t = pid + j * grid.
Tiles are rasterized in groups of `Schedule.raster` M-tiles: inside a group the M-tile varies
fastest, so CTAs running at the same time share filter tiles (N) and, across the group, the
same activation rows (M) from L2. raster = 1 is plain N-fastest order (all channel tiles of an
output row block run together: each activation tile is fetched from DRAM once).

Producer and consumers evaluate the same arithmetic, so they agree on every tile without
communicating.
"""

from __future__ import annotations

from ...problem import ConvProblem
from ...schedule import Schedule


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def tile_counts(p: ConvProblem, s: Schedule) -> tuple[int, int]:
    """(M tiles, N tiles) of the output."""
    return _cdiv(p.gemm_m, s.block_m), _cdiv(p.F, s.block_n)


class PersistentTiles:
    def __init__(self, e, p: ConvProblem, s: Schedule, pid):
        self.e, self.s = e, s
        self.m_tiles, self.n_tiles = tile_counts(p, s)
        self.count = self.m_tiles * self.n_tiles
        self.grid = s.grid[0]
        self.pid = pid

    def local_count(self):
        """How many tiles this CTA computes: ceil((count - pid) / grid)."""
        e = self.e
        return e.div(e.add(e.sub(self.count, self.pid), self.grid - 1), self.grid)

    def origin(self, j):
        """(m0, n0): first output row and channel of this CTA's j-th tile."""
        e, s = self.e, self.s
        t = e.add(self.pid, e.mul(j, self.grid))
        g = min(s.raster, self.m_tiles)
        if g == 1:
            mt, nt = e.div(t, self.n_tiles), e.rem(t, self.n_tiles)
        else:
            per_group = g * self.n_tiles
            group = e.div(t, per_group)
            r = e.rem(t, per_group)
            first = e.mul(group, g)
            rows = e.select(e.cmp("slt", e.sub(self.m_tiles, first), g), e.sub(self.m_tiles, first), g)
            mt = e.add(first, e.rem(r, rows))
            nt = e.div(r, rows)
        return e.mul(mt, s.block_m), e.mul(nt, s.block_n)


def origin_model(p: ConvProblem, s: Schedule, t: int) -> tuple[int, int]:
    """Pure-Python twin of PersistentTiles.origin for tile t (tests check it covers every tile
    exactly once)."""
    m_tiles, n_tiles = tile_counts(p, s)
    g = min(s.raster, m_tiles)
    group, r = divmod(t, g * n_tiles)
    rows = min(g, m_tiles - group * g)
    return (group * g + r % rows) * s.block_m, (r // rows) * s.block_n
