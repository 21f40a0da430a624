"""Persistent tile scheduling: which output tiles a CTA computes, and in what order.

A persistent grid of at most one CTA per SM walks the linear tile index t = pid + j * grid.
Tiles are rasterized in groups of `PersistentConfig.raster` M-tiles: inside a group the M-tile varies
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
from ...kernel_configs import PersistentConfig
from ...schedule import Schedule
from ..common.emit import cdiv


def tile_counts(p: ConvProblem, s: Schedule) -> tuple[int, int]:
    """(M tiles, N tiles) of the output."""
    return cdiv(p.gemm_m, s.block_m), cdiv(p.F, s.block_n)


class PersistentTiles:
    """rows: None (the problem's M), or the output rows when the batch is dynamic (an index
    value; an int in the tests' IntOps model): the tile count is then computed from it at run
    time, and CTAs past it get no tile."""

    def __init__(self, e, p: ConvProblem, s: Schedule, pid, rows=None):
        self.e, self.s = e, s
        c = s.config_as(PersistentConfig)
        self.cluster_m, self.raster = c.cluster_m, c.raster
        self.n_tiles = cdiv(p.F, s.block_n)
        self.dynamic = rows is not None
        if not self.dynamic:
            m_tiles, _ = tile_counts(p, s)
            self.m_tiles = cdiv(m_tiles, c.cluster_m)        # cluster tiles along M
            self.count = self.m_tiles * self.n_tiles
        else:
            rows_per_cluster_tile = s.block_m * c.cluster_m
            self.m_tiles = e.div(e.add(rows, rows_per_cluster_tile - 1), rows_per_cluster_tile)
            self.count = e.mul(self.m_tiles, self.n_tiles)
        self.grid = s.grid[0] // c.cluster_m                # clusters
        self.pid = e.div(pid, c.cluster_m)                  # this CTA's cluster
        self.rank = e.rem(pid, c.cluster_m)                 # ... and rank in it

    def local_count(self):
        """How many tiles this CTA computes: ceil((count - pid) / grid), 0 past the count."""
        e = self.e
        n = e.div(e.add(e.sub(self.count, self.pid), self.grid - 1), self.grid)
        if not self.dynamic and self.count >= self.grid:
            return n
        return e.select(e.cmp("slt", self.pid, self.count), n, 0)

    def origin(self, j):
        """(m0, n0): first output row and channel of this CTA's j-th tile."""
        return self.origin_of(self.e.add(self.pid, self.e.mul(j, self.grid)))

    def origin_of(self, t):
        """(m0, n0) of linear (cluster) tile t."""
        e, s = self.e, self.s
        g = self.raster if self.dynamic else min(self.raster, self.m_tiles)
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
        mt = e.add(e.mul(mt, self.cluster_m), self.rank)
        return e.mul(mt, s.block_m), e.mul(nt, s.block_n)


def origin_model(p: ConvProblem, s: Schedule, t: int, rank: int = 0) -> tuple[int, int]:
    """Pure-Python twin of PersistentTiles.origin for cluster tile t and cluster rank (tests
    check it covers every tile exactly once)."""
    c = s.config_as(PersistentConfig)
    m_tiles, n_tiles = tile_counts(p, s)
    m_tiles = cdiv(m_tiles, c.cluster_m)
    g = min(c.raster, m_tiles)
    group, r = divmod(t, g * n_tiles)
    rows = min(g, m_tiles - group * g)
    return ((group * g + r % rows) * c.cluster_m + rank) * s.block_m, (r // rows) * s.block_n


class StreamKWork:
    """Stream-K in k-lockstep: T output tiles (fewer than the G CTAs, at least half as many)
    shared by up to 2T CTAs, every CTA running about K * (m - 1) / m of the K k-tiles of
    a tile instead of K.

    Measured on an H100: the persistent kernel slows by ~1.6x when its CTAs walk K from
    different starting points (the data-parallel kernel with each CTA's k-order rotated:
    l4 3x3/512 18.7 -> 30 us); every CTA reading the same k-slice at the same time is what
    keeps the operands flowing. Classic stream-K (CTA c starts at iteration c * W / G) spreads
    the CTAs over all of K and measured that slow. Here the CTAs form chains: a chain of m
    CTAs computes m - 1 tiles, tile j of the chain split at h(j) = (m - 1 - j) * K // m into
    a head [0, h(j)) and a tail [h(j), K). CTA j of the chain runs the head of tile j (k = i
    at its step i) and then the tail of tile j - 1 (k = i + ~K/m): every CTA is on one of two
    k-slices at any time. The head's partial goes to the next CTA in the chain through the
    scratch buffer; that CTA adds it after its tail's main loop, long after it was written.

    G' = T + c CTAs in c = min(G - T, T) chains: the first r = T % c chains have q + 1 tiles,
    the rest q = T // c. Works on index values through the Emitter, or on ints with IntOps
    (the tests' model)."""

    def __init__(self, e, tiles: int, ktiles: int, grid: int, pid):
        self.e, self.K, self.T = e, ktiles, tiles
        c = self.chains = grid - tiles
        q, r = divmod(tiles, c)
        self.q, self.r = q, r
        long_ctas = r * (q + 2)
        is_long = e.cmp("slt", pid, long_ctas)
        rest = e.sub(pid, long_ctas)
        self.m = e.select(is_long, q + 2, q + 1)
        chain = e.select(is_long, e.div(pid, q + 2), e.add(r, e.div(rest, q + 1)))
        self.j = e.select(is_long, e.rem(pid, q + 2), e.rem(rest, q + 1))
        self.tile0 = e.select(is_long, e.mul(chain, q + 1), e.add(r * (q + 1), e.mul(e.sub(chain, r), q)))
        self.has_head = e.cmp("slt", self.j, e.sub(self.m, 1))
        self.has_tail = e.cmp("sgt", self.j, 0)
        self.pid = pid

    @staticmethod
    def grid_for(tiles: int, sms: int) -> int:
        """CTAs the chains use: one more than tiles per chain, at most two per tile."""
        return tiles + min(sms - tiles, tiles)

    @staticmethod
    def why_not(tiles: int, ktiles: int, sms: int) -> str | None:
        """Why the chains cannot serve this tile grid (None: they can)."""
        if tiles >= sms:
            return f"{tiles} tiles fill the {sms} SMs"
        longest = tiles // min(sms - tiles, tiles) + 2     # CTAs in the longest chain
        if ktiles < longest:
            return f"{ktiles} k-tiles cannot be split {longest} ways"
        return None

    def split(self, j):
        """h(j): where tile j of the chain splits into head and tail."""
        e = self.e
        return e.div(e.mul(e.sub(e.sub(self.m, 1), j), self.K), self.m)

    def count(self):
        """Segments of this CTA: 1 (chain ends) or 2."""
        e = self.e
        return e.add(e.select(self.has_head, 1, 0), e.select(self.has_tail, 1, 0))

    def segment(self, si):
        """(tile, k0, k1, first ring iteration) of segment si: k-tiles [k0, k1) of tile. The
        head (if any) first, then the tail."""
        e = self.e
        head = e.all_of(e.cmp("eq", si, 0), self.has_head)
        h = self.split(self.j)
        t = e.select(head, e.add(self.tile0, self.j), e.sub(e.add(self.tile0, self.j), 1))
        k0 = e.select(head, 0, self.split(e.sub(self.j, 1)))
        k1 = e.select(head, h, self.K)
        it0 = e.select(head, 0, e.select(self.has_head, h, 0))
        return t, k0, k1, it0


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

    @staticmethod
    def all_of(*conds):
        return all(conds)
