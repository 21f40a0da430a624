"""The epilogue of the sm_90a warp-specialized kernels (sm90_ws.py): accumulators + bias +
residual -> relu/casts in registers -> swizzled staging tile in shared memory -> TMA store.
The staging tile is a slot of the consumer warpgroup's own (epilogue_slots >= 1), or the ring
stage the producer lent it (epilogue_slots = 0)."""

from __future__ import annotations

from ...ir import arith_d
from .primitives import (I32, async_proxy_fence, bulk_commit, bulk_wait_read, i64, index_to, named_barrier,
                         tma_store)
from .sm90_ws_state import WsState
from .tma_loader import epilogue_panel
from .warp_roles import WARPGROUP, stage_fragments, stage_fragments_swapped


class Epilogue:
    """A consumer warpgroup's epilogue of one tile, on the kernel's shared state."""

    def __init__(self, k: WsState):
        self.k, self.mode = k, k.mode

    def run(self, accs, cw, j, use, m0, n0, wtid, elected, channel_ops, first_tile=None) -> None:
        """Residual wait, fragments -> staging slot, TMA store of the slot to the warpgroup's
        slice of the output at (m0, n0)."""
        k, mode = self.k, self.mode
        p, s, e, lay = mode.p, mode.s, k.e, mode.lay
        if mode.in_ring:
            # the lent stage: its `full` phase says the producer has it (and its residual landed)
            slot_index, parity = k.ring.slot(k.epilogue_iteration(j, cw))
            k.ring.wait(slot_index, parity)
        else:
            slot_index, parity = k.res_slot(cw, use)
            with e.if_(elected):
                bulk_wait_read(lay.slots - 1)    # the previous store from this slot has read it
            named_barrier(e.add(cw, 1), WARPGROUP)
            if mode.res:
                k.res_ring.wait(slot_index, parity)
        if mode.res:
            k.trace.consumer(e, cw, "residual", first_tile)
        out_slot = k.smem.element(lay.out, slot_index)
        res_slot = k.smem.element(lay.res, slot_index) if mode.res else None
        lane = e.rem(wtid, 32)
        if mode.swap:
            stage_fragments_swapped(e, p, accs, lay.rows, out_slot, lay.cols, e.div(wtid, 32), lane, channel_ops,
                                    res_slot)
        else:
            stage_fragments(e, p, accs, s.block_n, out_slot, lay.rows, e.div(wtid, 32), lane, channel_ops, res_slot)
        k.trace.consumer(e, cw, "staged", first_tile)
        if mode.res and not lay.res_in_place:
            k.res_ring.release(slot_index)    # residual slot may be refilled
        async_proxy_fence()            # st.shared -> visible to the TMA store
        named_barrier(e.add(cw, 1), WARPGROUP)
        with e.if_(elected):
            panel = epilogue_panel(p.out_dtype, lay.cols)
            for off, ch in panel.boxes(lay.cols, lay.rows):
                tma_store(k.slots[2], arith_d.addi(out_slot, i64(off)),
                          [index_to(e.add(n0, ch), I32()), index_to(m0, I32())])
            bulk_commit()
        if mode.in_ring:
            # observe the other warpgroup's lent stage too: every consumer thread then waits on
            # every phase of every stage's `full` barrier, as in the main loop
            other, other_parity = k.ring.slot(k.epilogue_iteration(j, e.sub(1, cw)))
            k.ring.wait(other, other_parity)
