"""Persistent tile scheduling: which output tiles a CTA computes, and in what order.

A persistent grid of at most one CTA per SM walks the linear tile index t = pid + j * grid.
Tiles are rasterized in groups of `Schedule.raster` M-tiles: inside a group the M-tile varies
fastest, so CTAs running at the same time share filter tiles (N) and, across the group, the
same activation rows (M) from L2. raster = 1 is plain N-fastest order (all channel tiles of an
output row block run together: each activation tile is fetched from DRAM once).

With a cluster of `cluster_m` CTAs along M, the unit of work is a cluster tile: cluster_m
M-tiles sharing one filter tile (multicast); rank r of the cluster takes M-tile
cluster_m * mt + r. Every CTA of a cluster walks the same number of cluster tiles, in lock
step (an M-tile past the output is all out-of-bounds: zero loads, clipped stores).

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
        m_tiles, self.n_tiles = tile_counts(p, s)
        self.m_tiles = _cdiv(m_tiles, s.cluster_m)        # cluster tiles along M
        self.count = self.m_tiles * self.n_tiles
        self.grid = s.grid[0] // s.cluster_m                # clusters
        self.pid = e.div(pid, s.cluster_m)                  # this CTA's cluster
        self.rank = e.rem(pid, s.cluster_m)                 # ... and rank in it

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
        mt = e.add(e.mul(mt, s.cluster_m), self.rank)
        return e.mul(mt, s.block_m), e.mul(nt, s.block_n)


def origin_model(p: ConvProblem, s: Schedule, t: int, rank: int = 0) -> tuple[int, int]:
    """Pure-Python twin of PersistentTiles.origin for cluster tile t and cluster rank (tests
    check it covers every tile exactly once)."""
    m_tiles, n_tiles = tile_counts(p, s)
    m_tiles = _cdiv(m_tiles, s.cluster_m)
    g = min(s.raster, m_tiles)
    group, r = divmod(t, g * n_tiles)
    rows = min(g, m_tiles - group * g)
    return ((group * g + r % rows) * s.cluster_m + rank) * s.block_m, (r // rows) * s.block_n
