"""The consumers' main loop of the sm_90a warp-specialized kernels (sm90_ws.py): per tile, wait
for each ring stage, issue its wgmmas (one group in flight), release the stage, then hand the
accumulators to the epilogue. Cooperative warpgroups share each tile; ping-pong warpgroups take
alternate tiles, passing the ring between them through the `turn` barriers."""

from __future__ import annotations

from ...ir import arith_d
from .primitives import (I64, bulk_wait_read, i64, index_to, smem_descriptor_at, smem_descriptor_lo,
                         undef_accumulator, wgmma_commit, wgmma_fence, wgmma_m64nk16, wgmma_wait)
from .sm90_ws_epilogue import Epilogue
from .sm90_ws_state import WsState
from .tma_loader import acquire_descriptor
from .warp_roles import WARPGROUP, channel_operands, channel_operands_rows


class MainLoop:
    """The consumer warpgroups' tile loop and k-loop, on the kernel's shared state; the
    epilogue it hands each tile to is a constructor argument (stream-K reuses both)."""

    def __init__(self, k: WsState, epilogue: Epilogue):
        self.k, self.mode, self.epilogue = k, k.mode, epilogue

    def run(self, cw) -> None:
        k, mode = self.k, self.mode
        e, lay = k.e, mode.lay
        wtid = e.rem(k.tid, WARPGROUP)
        elected = e.cmp("eq", wtid, 0)
        with e.if_(elected):
            acquire_descriptor(k.slots[2])
        subs = mode.subs
        step = 1 if mode.coop else mode.lay.consumers
        lb = e.c(0) if mode.coop else cw
        dm, dn = k.slice(cw)
        with e.for_(lb, k.tiles.local_count(), step) as (j, _, _y):
            m0, n0 = k.tiles.origin(j)
            # the warpgroup's first operand row in the stage: pixels, or channels when swapped
            row_base = dn if mode.swap else dm
            use = j if mode.coop else e.div(j, step)
            if not mode.coop:
                k.turns.wait_turn(cw, use)
            channel_ops = None if mode.late_channel_ops else self.channel_ops(e.add(n0, dn), wtid)
            # k-tile 0 is peeled: its first wgmma ignores the (undefined) accumulator
            # (scale-d 0), so no zero-fill sits between the wgmma fence and the wgmma.
            st0, ph0 = k.ring.slot(e.mul(j, mode.per_tile))
            # the CTA's first tile (ring iteration 0 on): its leading k-tiles may be direct loads
            direct = e.cmp("eq", j, 0) if mode.direct else None
            undef = [undef_accumulator(mode.mma_n, mode.p.acc_dtype) for _ in range(subs)]
            accs = self.k_step(st0, ph0, undef, row_base, first=True, direct=None if direct is None else (0, direct))
            first_tile = arith_d.andi(elected, e.cmp("eq", use, 0)) if k.trace.on else None
            k.trace.consumer(e, cw, "first_data", first_tile)
            if mode.in_ring:
                # Hand both stages the previous tile was staged in back to the producer once
                # this warpgroup's TMA store has read its own: each warpgroup arrives for its
                # four warps on both, so neither stage refills before both warpgroups waited
                # on it (a skipped phase would let a later wait on that stage pass early).
                with e.if_(arith_d.andi(elected, e.cmp("sgt", use, 0))):
                    bulk_wait_read(0)
                    for w in range(2):
                        prev, _ = k.ring.slot(k.epilogue_iteration(e.sub(j, 1), w))
                        k.ring.release(prev, count=WARPGROUP // 32)
            elif lay.res_in_place:
                # The staging slot doubles as the residual slot: once the previous tile's TMA
                # store has read its slot, hand that slot back to the producer (for this
                # tile's residual with one slot, the next tile's with two).
                with e.if_(arith_d.andi(elected, e.cmp("sgt", use, 0))):
                    bulk_wait_read(0)
                    k.res_ring.release(k.res_slot(cw, e.sub(use, 1))[0])
            last = st0
            if mode.ktiles > 1:
                accs, last = self.k_loop(st0, ph0, mode.ktiles, accs, row_base,
                                         direct if mode.direct > 1 else None)
            if not mode.coop:
                self.pass_turn(cw, elected)
            if mode.late_channel_ops:      # loaded in the epilogue, where first read
                channel_ops = self.channel_ops(e.add(n0, dn), wtid)
            wgmma_wait(0)
            k.trace.consumer(e, cw, "mainloop", first_tile)
            self.release(last)
            self.epilogue.run(accs, cw, j, use, e.add(m0, dm), e.add(n0, dn), wtid, elected, channel_ops, first_tile)
            k.trace.consumer(e, cw, "stored", first_tile)
        with e.if_(elected):
            bulk_wait_read(0)          # the last store has read its staging slot
        k.trace.consumer(e, cw, "done", elected)

    def pass_turn(self, cw, elected) -> None:
        """Hand the ring to the next warpgroup (this one has waited on all of its main loop's stages)."""
        with self.k.e.if_(elected):
            self.k.turns.pass_turn(cw)

    def channel_ops(self, n0, wtid) -> dict:
        """Per-channel operands (bias) for the warpgroup's channels from n0, loaded before the
        main loop so their latency hides under it (loaded in the epilogue they were its
        largest stall), or, where they would not fit the registers beside the accumulators
        (mode.late_channel_ops), each where the epilogue first reads it."""
        k, mode = self.k, self.mode
        e = k.e
        lane = e.rem(wtid, 32)
        if mode.swap:
            return channel_operands_rows(e, mode.p, k.memrefs, n0, e.div(wtid, 32), lane, mode.subs)
        return channel_operands(e, mode.p, k.memrefs, n0, e.mul(e.rem(lane, 4), 2), mode.s.block_n,
                                on_first_use=mode.late_channel_ops)

    def k_loop(self, st0, ph0, n, accs, row_base, direct_tile=None):
        """The n - 1 ring iterations after the peeled first one (stage st0, phase parity ph0),
        each releasing the stage before it (wgmma keeps one group in flight). The stage and its
        parity are carried through the loop (no division per k-step on the way to the wgmmas).
        direct_tile: this tile's first `mode.direct` k-tiles were direct loads (i1).
        Returns the accumulators and the last iteration's stage (still to be released)."""
        e = self.k.e
        loop = e.for_(1, n, 1, list(accs) + [st0, ph0])
        with loop as (kt, carried, set_acc):
            accs, prev, ph = carried[:-2], carried[-2], carried[-1]
            st, ph = self.k.ring.advance(prev, ph)
            # direct k-tiles are 0 and 1 (direct_loads.MAX_DIRECT_STAGES): here only k-tile 1
            direct = None if direct_tile is None else (1, arith_d.andi(direct_tile, e.cmp("eq", kt, 1)))
            accs = self.k_step(st, ph, accs, row_base, direct=direct)
            self.release(prev)
            set_acc(list(accs) + [st, ph])
        return loop.results[:-2], loop.results[-2]

    def release(self, st) -> None:
        """This warp is done reading ring stage st (and tells the cluster's peers, which
        multicast into it too)."""
        k = self.k
        k.ring.release_warp(st, k.e.rem(k.tid, 32), k.tiles.rank, self.mode.cluster_m)

    def k_step(self, st, phase, accs, row_base, first: bool = False, direct=None):
        """Ring stage st at phase parity `phase`: wait for it, issue its wgmmas, keep one group
        in flight. direct = (kt, i1): where it holds, the stage is direct k-tile kt, loaded by
        the consumers' cp.async (direct_loads.py): join it first."""
        k, lay = self.k, self.mode.lay
        if direct is not None:
            kt, cond = direct
            with k.e.if_(cond):
                k.prologue.join(kt)
        k.ring.wait(st, phase)
        accs = self._mma_stage(accs, k.smem.element(lay.a, st), k.smem.element(lay.b, st), row_base, first)
        wgmma_wait(1)
        return accs

    def _mma_stage(self, accs, a_stage, b_stage, row_base, first: bool = False):
        """One K tile of block_k channels: per 64-row sub-block, one wgmma m64n{N}k16 (k8 for
        TF32, k32 for s8) per 32 bytes of the row (the first of a tile with scale-d 0: D = A * B).
        The sub-blocks are activation rows (N = block_n), or filter rows when swapped (N = block_m
        pixels)."""
        mode = self.mode
        row, lay = mode.row, mode.swizzle_layout
        m_stage, n_stage = (b_stage, a_stage) if mode.swap else (a_stage, b_stage)
        m_wg = arith_d.addi(m_stage, arith_d.muli(index_to(row_base, I64()), i64(row)))
        wgmma_fence()
        out = []
        a_lo, b_lo = smem_descriptor_lo(m_wg), smem_descriptor_lo(n_stage)
        for sub, acc in enumerate(accs):
            for kk in range(row // 32):
                da = smem_descriptor_at(a_lo, 64 * sub * row + 32 * kk, 8 * row, layout=lay)
                db = smem_descriptor_at(b_lo, 32 * kk, 8 * row, layout=lay)
                acc = wgmma_m64nk16(acc, da, db, mode.mma_n, mode.p.dtype, accumulate=not (first and kk == 0))
            out.append(acc)
        wgmma_commit()
        return out
