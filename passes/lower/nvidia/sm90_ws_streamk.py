"""Stream-K consumers of the sm_90a warp-specialized kernel (sm90_ws_streamk): warpgroup 0
computes the head of a tile and publishes its f32 partial through the scratch buffer,
warpgroup 1 the tail of the previous CTA's head tile, adding that partial before the epilogue
(tile_scheduler.StreamKWork, stream_k.py)."""

from __future__ import annotations

from ...ir import arith_d
from . import stream_k as sk
from .primitives import I64, bulk_wait_read, i64, index_to, named_barrier, undef_accumulator, wgmma_wait
from .sm90_ws_epilogue import Epilogue
from .sm90_ws_mainloop import MainLoop
from .sm90_ws_state import WsState
from .tma_loader import acquire_descriptor
from .warp_roles import WARPGROUP


class StreamKConsumers:
    """Consumers over stream-K segments, on the kernel's shared state: the main loop's k-steps
    and the epilogue are the ones the tile kernel runs (constructor arguments)."""

    def __init__(self, k: WsState, mainloop: MainLoop, epilogue: Epilogue):
        self.k, self.mode, self.mainloop, self.epilogue = k, k.mode, mainloop, epilogue

    def _flag(self, cta):
        k = self.k
        return arith_d.addi(k.scratch, index_to(k.e.add(k.e.mul(cta, 8), k.scratch_layout.flags0), I64()))

    def _partial(self, cta):
        k = self.k
        return arith_d.addi(k.scratch, arith_d.addi(
            i64(k.scratch_layout.work0), arith_d.muli(index_to(cta, I64()), i64(k.scratch_layout.tile_bytes))))

    def run(self, cw) -> None:
        """Ping-pong consumers over this CTA's segments (warpgroup 0: the head of a tile, if
        any; warpgroup 1: the tail of the previous CTA's head tile): the main loop over the
        segment's k-tiles, then a head publishes its partial for the next CTA, and a tail adds
        the previous CTA's partial and runs the epilogue."""
        k, mode, ml = self.k, self.mode, self.mainloop
        s, e = mode.s, k.e
        wtid = e.rem(k.tid, WARPGROUP)
        elected = e.cmp("eq", wtid, 0)
        pid = k.tiles.pid
        with e.if_(elected):
            acquire_descriptor(k.slots[2])
        subs = mode.subs
        row_base = e.c(0)
        with e.for_(cw, k.work.count(), 2) as (si, _, _y):
            t, k0, k1, it0 = k.work.segment(si)
            m0, n0 = k.tiles.origin_of(t)
            use = e.div(si, 2)
            k.turns.wait_turn(cw, use)
            channel_ops = ml.channel_ops(n0, wtid)
            st0, ph0 = k.ring.slot(it0)
            accs = ml.k_step(st0, ph0, [undef_accumulator(mode.mma_n, mode.p.acc_dtype) for _ in range(subs)], row_base, first=True)
            first_tile = arith_d.andi(elected, e.cmp("eq", use, 0)) if k.trace.on else None
            k.trace.consumer(e, cw, "first_data", first_tile)
            accs, last = ml.k_loop(st0, ph0, e.sub(k1, k0), accs, row_base)
            ml.pass_turn(cw, elected)
            wgmma_wait(0)
            k.trace.consumer(e, cw, "mainloop", first_tile)
            ml.release(last)
            # A tail adds the head's partial from the previous CTA (0 or 1 iterations).
            prev = e.sub(pid, 1)
            fix = e.for_(prev, e.select(e.cmp("sgt", k0, 0), pid, prev), 1, accs)
            with fix as (q, accs, set_acc):
                with e.if_(elected):
                    sk.await_partial(self._flag(q), t)
                named_barrier(e.add(cw, 1), WARPGROUP)
                set_acc(sk.add_partial(e, accs, s.block_n, self._partial(q), wtid, mode.p.acc_dtype))
                if k.trace.on:
                    k.trace.consumer(e, cw, "fixed", elected)
            accs = fix.results
            head = e.all_of(e.cmp("eq", k0, 0), e.cmp("slt", k1, mode.ktiles))
            with e.if_else(head) as (partial, finish):
                with partial:
                    sk.store_partial(e, accs, s.block_n, self._partial(pid), wtid, mode.p.acc_dtype)
                    named_barrier(e.add(cw, 1), WARPGROUP)
                    with e.if_(elected):
                        sk.publish(self._flag(pid), t)
                        k.trace.stamp("partial")
                with finish:
                    self.epilogue.run(accs, cw, None, use, m0, n0, wtid, elected, channel_ops, first_tile)
                    k.trace.consumer(e, cw, "stored", first_tile)
        with e.if_(elected):
            bulk_wait_read(0)          # the last store has read its staging slot
        k.trace.consumer(e, cw, "done", elected)
