"""The producer of the sm_90a warp-specialized kernels (sm90_ws.py): one thread of warpgroup 0
walks this CTA's work and issues every TMA into the ring (k-tiles; the residual slices of each
tile's epilogue, into residual slots or into the ring stages lent to the consumers)."""

from __future__ import annotations

from ...ir import arith_d
from .primitives import I32, I64, i64, index_to, mbarrier_arrive, mbarrier_arrive_expect_tx, tma_load
from .sm90_ws_state import WsState
from .tma_loader import ConvTmaLoader, acquire_descriptor, epilogue_panel


class Producer:
    """The producer role (tiles, or stream-K segments), on the kernel's shared state."""

    def __init__(self, k: WsState):
        self.k, self.mode = k, k.mode

    def run(self) -> None:
        k, mode = self.k, self.mode
        p, s, e = mode.p, mode.s, k.e
        prime = min(s.stages, mode.ktiles)
        with e.for_(0, k.tiles.local_count(), 1) as (j, _, _y):
            m0, n0 = k.tiles.origin(j)
            loader = ConvTmaLoader(e, p, s, k.slots[0], k.slots[1], m0, n0, k.extents)
            with e.for_(0, mode.ktiles, 1) as (kt, _, _y2):
                direct = e.all_of(e.cmp("eq", j, 0), e.cmp("slt", kt, mode.direct)) if mode.direct else None
                self._issue(loader, kt, e.add(e.mul(j, mode.per_tile), kt), cluster_rank=k.tiles.rank,
                            direct=direct)
                if mode.res and not mode.in_ring:
                    with e.if_(e.cmp("eq", kt, prime - 1)):
                        with e.if_(e.cmp("eq", j, 0)):
                            acquire_descriptor(k.slots[3])
                        self._load_residual(j, m0, n0)
            if mode.in_ring:
                if mode.res:
                    with e.if_(e.cmp("eq", j, 0)):
                        acquire_descriptor(k.slots[3])
                for w in range(2):
                    self._lend_stage(j, w, m0, n0)
        k.trace.stamp("producer_done")
        k.trace.stamp("tiles", index_to(k.tiles.local_count(), I64()))

    def _issue(self, loader, kt, it, cluster_rank=None, direct=None) -> None:
        """k-tile kt into ring iteration it's stage, once the consumers released it. Where
        `direct` holds, the consumers loaded it themselves (direct_loads.py): just complete
        the stage's `full` phase."""
        k = self.k
        e, lay, ring = k.e, self.mode.lay, k.ring
        st, phase = ring.slot(it)
        ring.acquire(st, phase)
        full = ring.full(st)

        def tma():
            loader.load(kt, k.smem.element(lay.a, st), k.smem.element(lay.b, st), full,
                        cluster_rank=cluster_rank)
        if direct is None:
            tma()
        else:
            with e.if_else(direct) as (loaded, fetch):
                with loaded:
                    mbarrier_arrive(full)
                with fetch:
                    tma()
        if k.trace.on:
            with e.if_(e.cmp("eq", it, 0)):
                k.trace.stamp("first_issue")

    def _lend_stage(self, j, w, m0, n0) -> None:
        """Epilogue in the ring: once the consumers released the stage of warpgroup w's
        epilogue iteration of tile j, TMA that warpgroup's residual rows into it (arming
        `full` for their bytes), or, without a residual, just complete its `full` phase."""
        k = self.k
        e, ring = k.e, k.ring
        st, phase = ring.slot(k.epilogue_iteration(j, w))
        ring.acquire(st, phase)
        full = ring.full(st)
        if not self.mode.res:
            mbarrier_arrive(full)
            return
        self._tma_residual(st, full, e.c(w), m0, n0)

    def _tma_residual(self, slot_index, full, w, m0, n0) -> None:
        """Arm `full` for consumer warpgroup w's residual slice of the tile at (m0, n0) and TMA
        it into residual slot slot_index (in_ring: ring stage slot_index's lent part), one box
        per epilogue panel."""
        k, mode = self.k, self.mode
        e, lay = k.e, mode.lay
        mbarrier_arrive_expect_tx(full, lay.res_slot)
        dm, dn = k.slice(w)
        row0, col0 = e.add(m0, dm), e.add(n0, dn)
        slot = k.smem.element(lay.res, slot_index)
        for off, ch in epilogue_panel(mode.res.dtype, lay.cols).boxes(lay.cols, lay.rows):
            tma_load(arith_d.addi(slot, i64(off)), k.slots[3],
                     [index_to(e.add(col0, ch), I32()), index_to(row0, I32())], full)

    def _load_residual(self, j, m0, n0) -> None:
        """TMA the residual rows of tile j for each consumer warpgroup that computes them."""
        k = self.k
        e = k.e
        n = self.mode.lay.consumers
        targets = [(e.c(w), j) for w in range(2)] if self.mode.coop else [(e.rem(j, n), e.div(j, n))]
        for w, use in targets:
            slot_index, parity = k.res_slot(w, use)
            k.res_ring.acquire(slot_index, parity)
            self._tma_residual(slot_index, k.res_ring.full(slot_index), w, m0, n0)

    def run_streamk(self) -> None:
        """The k-tiles of this CTA's stream-K segments (tile_scheduler.StreamKWork), in ring
        order."""
        k, mode = self.k, self.mode
        p, s, e = mode.p, mode.s, k.e
        with e.for_(0, k.work.count(), 1) as (si, _, _y):
            t, k0, k1, it0 = k.work.segment(si)
            m0, n0 = k.tiles.origin_of(t)
            loader = ConvTmaLoader(e, p, s, k.slots[0], k.slots[1], m0, n0, k.extents)
            with e.for_(k0, k1, 1) as (kt, _, _y2):
                self._issue(loader, kt, e.add(it0, e.sub(kt, k0)))
        k.trace.stamp("producer_done")
        k.trace.stamp("tiles", index_to(k.work.count(), I64()))
