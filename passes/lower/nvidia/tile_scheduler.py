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
        return self.origin_of(self.e.add(self.pid, self.e.mul(j, self.grid)))

    def origin_of(self, t):
        """(m0, n0) of linear (cluster) tile t."""
        e, s = self.e, self.s
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


class StreamKWork:
    """Stream-K: the W = tiles * ktiles (tile, k-tile) iterations are split evenly over the G
    persistent CTAs, CTA c running iterations [c*W//G, (c+1)*W//G) in order, so every SM gets
    the same share of MACs whatever the tile count. A CTA's range is a run of segments, one per
    tile it touches. A tile split between CTAs is finished (partials added, epilogue) by the
    CTA holding its k = 0 segment: the lowest of them, which reaches that segment last, after
    the others wrote theirs first thing (so nobody waits on a CTA that is waiting). Each CTA
    writes at most one partial (its first segment, when that starts past k = 0).

    Works on index values through the Emitter, or on ints with IntOps (the tests' model)."""

    def __init__(self, e, tiles: int, ktiles: int, grid: int, pid):
        self.e, self.K, self.G = e, ktiles, grid
        self.W = tiles * ktiles
        self.pid = pid
        self.b = e.div(e.mul(pid, self.W), grid)
        self.end = e.div(e.mul(e.add(pid, 1), self.W), grid)
        self.t_first = e.div(self.b, ktiles)

    def count(self):
        """Segments of this CTA (tiles its range touches; 0 for an empty range)."""
        e = self.e
        t_last_plus1 = e.div(e.add(self.end, self.K - 1), self.K)
        n = e.sub(t_last_plus1, self.t_first)
        return e.select(e.cmp("sgt", self.end, self.b), n, 0)

    def segment(self, si):
        """(tile, k0, k1, first ring iteration) of segment si: k-tiles [k0, k1) of tile."""
        e = self.e
        t = e.add(self.t_first, si)
        base = e.mul(t, self.K)
        k0 = e.select(e.cmp("sgt", self.b, base), e.sub(self.b, base), 0)
        rest = e.sub(self.end, base)
        k1 = e.select(e.cmp("slt", rest, self.K), rest, self.K)
        return t, k0, k1, e.sub(e.add(base, k0), self.b)

    def owner(self, i):
        """The CTA whose range holds iteration i."""
        e = self.e
        return e.sub(e.div(e.add(e.mul(e.add(i, 1), self.G), self.W - 1), self.W), 1)

    def last_peer(self, t):
        """The highest CTA holding part of tile t."""
        return self.owner(self.e.add(self.e.mul(t, self.K), self.K - 1))


class IntOps:
    """The Emitter's integer methods on Python ints (models of the emitted arithmetic)."""
    add = staticmethod(lambda a, b: a + b)
    sub = staticmethod(lambda a, b: a - b)
    mul = staticmethod(lambda a, b: a * b)
    div = staticmethod(lambda a, b: a // b)
    rem = staticmethod(lambda a, b: a % b)
    xor = staticmethod(lambda a, b: a ^ b)

    @staticmethod
    def select(c, a, b):
        return a if c else b

    @staticmethod
    def cmp(pred, a, b):
        return {"sgt": a > b, "slt": a < b, "eq": a == b, "sge": a >= b}[pred]
