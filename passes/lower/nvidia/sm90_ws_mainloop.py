"""The consumers' main loop of the sm_90a warp-specialized kernels (sm90_ws.py): per tile, wait
for each ring stage, issue its wgmmas (one group in flight), release the stage, then hand the
accumulators to the epilogue. Cooperative warpgroups share each tile; ping-pong warpgroups take
alternate tiles, passing the ring between them through the `turn` barriers."""

from __future__ import annotations

from ...ir import arith_d
from .primitives import (I32, I64, bulk_wait_read, i64, index_to, mbarrier_arrive, mbarrier_wait,
                         smem_descriptor_at, smem_descriptor_lo, undef_accumulator, wgmma_commit, wgmma_fence,
                         wgmma_m64nk16, wgmma_wait)
from .tma_loader import acquire_descriptor
from .warp_roles import WARPGROUP, channel_operands, channel_operands_rows


class MainLoop:
    """Mixin of Sm90WarpSpecialized: the consumer warpgroups' tile loop and k-loop."""

    def _consumer(self, cw) -> None:
        e, lay = self.e, self.lay
        wtid = e.rem(self.tid, WARPGROUP)
        elected = e.cmp("eq", wtid, 0)
        with e.if_(elected):
            acquire_descriptor(self.slots[2])
        subs = self.subs
        step = 1 if self.coop else 2
        lb = e.c(0) if self.coop else cw
        dm, dn = self._slice(cw)
        with e.for_(lb, self.tiles.local_count(), step) as (j, _, _y):
            m0, n0 = self.tiles.origin(j)
            # the warpgroup's first operand row in the stage: pixels, or channels when swapped
            row_base = dn if self.swap else dm
            use = j if self.coop else e.div(j, 2)
            if not self.coop:
                self._turn_wait(cw, use)
            channel_ops = self._channel_ops(e.add(n0, dn), wtid)
            # k-tile 0 is peeled: its first wgmma ignores the (undefined) accumulator
            # (scale-d 0), so no zero-fill sits between the wgmma fence and the wgmma.
            st0, ph0 = self.ring.slot(e.mul(j, self.per_tile))
            # the CTA's first tile (ring iteration 0 on): its leading k-tiles may be direct loads
            direct = e.cmp("eq", j, 0) if self.direct else None
            accs = self._k_step(st0, ph0, [undef_accumulator(self.mma_n) for _ in range(subs)], row_base, first=True,
                                direct=None if direct is None else (0, direct))
            first_tile = arith_d.andi(elected, e.cmp("eq", use, 0)) if self.trace.on else None
            self.trace.consumer(e, cw, "first_data", first_tile)
            if self.in_ring:
                # Hand both stages the previous tile was staged in back to the producer once
                # this warpgroup's TMA store has read its own: each warpgroup arrives for its
                # four warps on both, so neither stage refills before both warpgroups waited
                # on it (a skipped phase would let a later wait on that stage pass early).
                with e.if_(arith_d.andi(elected, e.cmp("sgt", use, 0))):
                    bulk_wait_read(0)
                    for w in range(2):
                        prev, _ = self.ring.slot(self._epilogue_iteration(e.sub(j, 1), w))
                        self.ring.release(prev, count=WARPGROUP // 32)
            elif lay.res_in_place:
                # The staging slot doubles as the residual slot: once the previous tile's TMA
                # store has read its slot, hand that slot back to the producer (for this
                # tile's residual with one slot, the next tile's with two).
                with e.if_(arith_d.andi(elected, e.cmp("sgt", use, 0))):
                    bulk_wait_read(0)
                    self.res_ring.release(self._slot(cw, e.sub(use, 1))[0])
            last = st0
            if self.ktiles > 1:
                accs, last = self._k_loop(st0, ph0, self.ktiles, accs, row_base,
                                          direct if self.direct > 1 else None)
            if not self.coop:
                self._turn_pass(cw, elected)
            wgmma_wait(0)
            self.trace.consumer(e, cw, "mainloop", first_tile)
            self._release(last)
            self._epilogue(accs, cw, j, use, e.add(m0, dm), e.add(n0, dn), wtid, elected, channel_ops, first_tile)
            self.trace.consumer(e, cw, "stored", first_tile)
        with e.if_(elected):
            bulk_wait_read(0)          # the last store has read its staging slot
        self.trace.consumer(e, cw, "done", elected)

    def _turn_wait(self, cw, use) -> None:
        """Ping-pong turns: this warpgroup's main loop (its use-th) starts once the other one
        has waited on every stage of its tile, so the shared ring's phases never alias."""
        e = self.e
        mbarrier_wait(self.smem.element(self.lay.turn, cw), index_to(e.rem(e.add(use, e.add(cw, 1)), 2), I32()))

    def _turn_pass(self, cw, elected) -> None:
        """Hand the ring to the other warpgroup (it has waited on all of this main loop's stages)."""
        with self.e.if_(elected):
            mbarrier_arrive(self.smem.element(self.lay.turn, self.e.sub(1, cw)))

    def _channel_ops(self, n0, wtid) -> dict:
        """Per-channel operands (bias) for the warpgroup's channels from n0, loaded before the
        main loop so their latency hides under it (loaded in the epilogue they were its
        largest stall)."""
        e = self.e
        lane = e.rem(wtid, 32)
        if self.swap:
            return channel_operands_rows(e, self.p, self.memrefs, n0, e.div(wtid, 32), lane, self.subs)
        return channel_operands(e, self.p, self.memrefs, n0, e.mul(e.rem(lane, 4), 2), self.s.block_n)

    def _k_loop(self, st0, ph0, n, accs, row_base, direct_tile=None):
        """The n - 1 ring iterations after the peeled first one (stage st0, phase parity ph0),
        each releasing the stage before it (wgmma keeps one group in flight). The stage and its
        parity are carried through the loop (no division per k-step on the way to the wgmmas).
        direct_tile: this tile's first `self.direct` k-tiles were direct loads (i1).
        Returns the accumulators and the last iteration's stage (still to be released)."""
        e = self.e
        loop = e.for_(1, n, 1, list(accs) + [st0, ph0])
        with loop as (kt, carried, set_acc):
            accs, prev, ph = carried[:-2], carried[-2], carried[-1]
            st, ph = self.ring.advance(prev, ph)
            # direct k-tiles are 0 and 1 (direct_loads.MAX_DIRECT_STAGES): here only k-tile 1
            direct = None if direct_tile is None else (1, arith_d.andi(direct_tile, e.cmp("eq", kt, 1)))
            accs = self._k_step(st, ph, accs, row_base, direct=direct)
            self._release(prev)
            set_acc(list(accs) + [st, ph])
        return loop.results[:-2], loop.results[-2]

    def _release(self, st) -> None:
        """This warp is done reading ring stage st (and tells the cluster's peers, which
        multicast into it too)."""
        self.ring.release_warp(st, self.e.rem(self.tid, 32), self.tiles.rank, self.cfg.cluster_m)

    def _k_step(self, st, phase, accs, row_base, first: bool = False, direct=None):
        """Ring stage st at phase parity `phase`: wait for it, issue its wgmmas, keep one group
        in flight. direct = (kt, i1): where it holds, the stage is direct k-tile kt, loaded by
        the consumers' cp.async (direct_loads.py): join it first."""
        if direct is not None:
            kt, cond = direct
            with self.e.if_(cond):
                self.prologue.join(kt)
        self.ring.wait(st, phase)
        accs = self._mma_stage(accs, self.smem.element(self.lay.a, st), self.smem.element(self.lay.b, st), row_base,
                               first)
        wgmma_wait(1)
        return accs

    def _mma_stage(self, accs, a_stage, b_stage, row_base, first: bool = False):
        """One K tile of block_k channels: per 64-row sub-block, one wgmma m64n{N}k16 (k8 for
        TF32) per 32 bytes of the row (the first of a tile with scale-d 0: D = A * B). The
        sub-blocks are activation rows (N = block_n), or filter rows when swapped (N = block_m
        pixels)."""
        row, lay = self.row, self.swizzle_layout
        m_stage, n_stage = (b_stage, a_stage) if self.swap else (a_stage, b_stage)
        m_wg = arith_d.addi(m_stage, arith_d.muli(index_to(row_base, I64()), i64(row)))
        wgmma_fence()
        out = []
        a_lo, b_lo = smem_descriptor_lo(m_wg), smem_descriptor_lo(n_stage)
        for sub, acc in enumerate(accs):
            for kk in range(row // 32):
                da = smem_descriptor_at(a_lo, 64 * sub * row + 32 * kk, 8 * row, layout=lay)
                db = smem_descriptor_at(b_lo, 32 * kk, 8 * row, layout=lay)
                acc = wgmma_m64nk16(acc, da, db, self.mma_n, self.p.dtype, accumulate=not (first and kk == 0))
            out.append(acc)
        wgmma_commit()
        return out
