"""The producer of the sm_90a warp-specialized kernels (sm90_ws.py): one thread of warpgroup 0
walks this CTA's work and issues every TMA into the ring (k-tiles; the residual slices of each
tile's epilogue, into residual slots or into the ring stages lent to the consumers)."""

from __future__ import annotations

from ...ir import arith_d
from .primitives import I32, I64, i64, index_to, mbarrier_arrive, mbarrier_arrive_expect_tx, tma_load
from .tma_loader import ConvTmaLoader, acquire_descriptor, epilogue_panel


class Producer:
    """Mixin of Sm90WarpSpecialized: the producer role (tiles, or stream-K segments)."""

    def _producer(self) -> None:
        p, s, e = self.p, self.s, self.e
        prime = min(s.stages, self.ktiles)
        with e.for_(0, self.tiles.local_count(), 1) as (j, _, _y):
            m0, n0 = self.tiles.origin(j)
            loader = ConvTmaLoader(e, p, s, self.slots[0], self.slots[1], m0, n0)
            with e.for_(0, self.ktiles, 1) as (kt, _, _y2):
                direct = e.all_of(e.cmp("eq", j, 0), e.cmp("slt", kt, self.direct)) if self.direct else None
                self._issue(loader, kt, e.add(e.mul(j, self.per_tile), kt), cluster_rank=self.tiles.rank,
                            direct=direct)
                if self.res and not self.in_ring:
                    with e.if_(e.cmp("eq", kt, prime - 1)):
                        with e.if_(e.cmp("eq", j, 0)):
                            acquire_descriptor(self.slots[3])
                        self._load_residual(j, m0, n0)
            if self.in_ring:
                if self.res:
                    with e.if_(e.cmp("eq", j, 0)):
                        acquire_descriptor(self.slots[3])
                for w in range(2):
                    self._lend_stage(j, w, m0, n0)
        self.trace.stamp("producer_done")
        self.trace.stamp("tiles", index_to(self.tiles.local_count(), I64()))

    def _issue(self, loader, kt, it, cluster_rank=None, direct=None) -> None:
        """k-tile kt into ring iteration it's stage, once the consumers released it. Where
        `direct` holds, the consumers loaded it themselves (direct_loads.py): just complete
        the stage's `full` phase."""
        e, lay, ring = self.e, self.lay, self.ring
        st, phase = ring.slot(it)
        ring.acquire(st, phase)
        full = ring.full(st)

        def tma():
            loader.load(kt, self.smem.element(lay.a, st), self.smem.element(lay.b, st), full,
                        cluster_rank=cluster_rank)
        if direct is None:
            tma()
        else:
            with e.if_else(direct) as (loaded, fetch):
                with loaded:
                    mbarrier_arrive(full)
                with fetch:
                    tma()
        if self.trace.on:
            with e.if_(e.cmp("eq", it, 0)):
                self.trace.stamp("first_issue")

    def _epilogue_iteration(self, j, w):
        """Ring iteration of the stage that consumer warpgroup w stages tile j in (slots = 0)."""
        e = self.e
        return e.add(e.add(e.mul(j, self.per_tile), self.ktiles), w)

    def _lend_stage(self, j, w, m0, n0) -> None:
        """Epilogue in the ring: once the consumers released the stage of warpgroup w's
        epilogue iteration of tile j, TMA that warpgroup's residual rows into it (arming
        `full` for their bytes), or, without a residual, just complete its `full` phase."""
        e, ring = self.e, self.ring
        st, phase = ring.slot(self._epilogue_iteration(j, w))
        ring.acquire(st, phase)
        full = ring.full(st)
        if not self.res:
            mbarrier_arrive(full)
            return
        self._tma_residual(st, full, e.c(w), m0, n0)

    def _tma_residual(self, k, full, w, m0, n0) -> None:
        """Arm `full` for consumer warpgroup w's residual slice of the tile at (m0, n0) and TMA
        it into residual slot k (with slots = 0: ring stage k's lent part), one box per
        epilogue panel."""
        e, lay = self.e, self.lay
        mbarrier_arrive_expect_tx(full, lay.res_slot)
        dm, dn = self._slice(w)
        row0, col0 = e.add(m0, dm), e.add(n0, dn)
        slot = self.smem.element(lay.res, k)
        for off, ch in epilogue_panel(self.res.dtype, lay.cols).boxes(lay.cols, lay.rows):
            tma_load(arith_d.addi(slot, i64(off)), self.slots[3],
                     [index_to(e.add(col0, ch), I32()), index_to(row0, I32())], full)

    def _load_residual(self, j, m0, n0) -> None:
        """TMA the residual rows of tile j for each consumer warpgroup that computes them."""
        e = self.e
        targets = [(e.c(w), j) for w in range(2)] if self.coop else [(e.rem(j, 2), e.div(j, 2))]
        for w, use in targets:
            k, parity = self._slot(w, use)
            self.res_ring.acquire(k, parity)
            self._tma_residual(k, self.res_ring.full(k), w, m0, n0)

    def _producer_streamk(self) -> None:
        """The k-tiles of this CTA's stream-K segments (tile_scheduler.StreamKWork), in ring
        order."""
        p, s, e = self.p, self.s, self.e
        with e.for_(0, self.work.count(), 1) as (si, _, _y):
            t, k0, k1, it0 = self.work.segment(si)
            m0, n0 = self.tiles.origin_of(t)
            loader = ConvTmaLoader(e, p, s, self.slots[0], self.slots[1], m0, n0)
            with e.for_(k0, k1, 1) as (kt, _, _y2):
                self._issue(loader, kt, e.add(it0, e.sub(kt, k0)))
        self.trace.stamp("producer_done")
        self.trace.stamp("tiles", index_to(self.work.count(), I64()))
