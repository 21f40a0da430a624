"""The epilogue of the sm_90a warp-specialized kernels (sm90_ws.py): accumulators + bias +
residual -> relu/casts in registers -> swizzled staging tile in shared memory -> TMA store.
The staging tile is a slot of the consumer warpgroup's own (epilogue_slots >= 1), or the ring
stage the producer lent it (epilogue_slots = 0)."""

from __future__ import annotations

from ...ir import arith_d
from .primitives import (I32, async_proxy_fence, bulk_commit, bulk_wait_read, i64, index_to, named_barrier,
                         tma_store)
from .tma_loader import epilogue_panel
from .warp_roles import WARPGROUP, stage_fragments, stage_fragments_swapped


class Epilogue:
    """Mixin of Sm90WarpSpecialized: a consumer warpgroup's epilogue of one tile."""

    def _epilogue(self, accs, cw, j, use, m0, n0, wtid, elected, channel_ops, first_tile=None) -> None:
        """Residual wait, fragments -> staging slot, TMA store of the slot to the warpgroup's
        slice of the output at (m0, n0)."""
        p, s, e, lay = self.p, self.s, self.e, self.lay
        if self.in_ring:
            # the lent stage: its `full` phase says the producer has it (and its residual landed)
            k, parity = self.ring.slot(self._epilogue_iteration(j, cw))
            self.ring.wait(k, parity)
        else:
            k, parity = self._slot(cw, use)
            with e.if_(elected):
                bulk_wait_read(lay.slots - 1)    # the previous store from this slot has read it
            named_barrier(e.add(cw, 1), WARPGROUP)
            if self.res:
                self.res_ring.wait(k, parity)
        if self.res:
            self.trace.consumer(e, cw, "residual", first_tile)
        out_slot = self.smem.element(lay.out, k)
        res_slot = self.smem.element(lay.res, k) if self.res else None
        lane = e.rem(wtid, 32)
        if self.swap:
            stage_fragments_swapped(e, p, accs, lay.rows, out_slot, lay.cols, e.div(wtid, 32), lane, channel_ops,
                                    res_slot)
        else:
            stage_fragments(e, p, accs, s.block_n, out_slot, lay.rows, e.div(wtid, 32), lane, channel_ops, res_slot)
        self.trace.consumer(e, cw, "staged", first_tile)
        if self.res and not lay.res_in_place:
            self.res_ring.release(k)    # residual slot may be refilled
        async_proxy_fence()            # st.shared -> visible to the TMA store
        named_barrier(e.add(cw, 1), WARPGROUP)
        with e.if_(elected):
            panel = epilogue_panel(p.out_dtype, lay.cols)
            for off, ch in panel.boxes(lay.cols, lay.rows):
                tma_store(self.slots[2], arith_d.addi(out_slot, i64(off)),
                          [index_to(e.add(n0, ch), I32()), index_to(m0, I32())])
            bulk_commit()
        if self.in_ring:
            # observe the other warpgroup's lent stage too: every consumer thread then waits on
            # every phase of every stage's `full` barrier, as in the main loop
            other, other_parity = self.ring.slot(self._epilogue_iteration(j, e.sub(1, cw)))
            self.ring.wait(other, other_parity)
