"""The mbarrier ring every sm_90a / sm_100a pipeline runs on.

S stages, each guarded by two mbarriers: `full` (the producer's arrival, with the bytes its
TMA brings, says the stage holds data) and `empty` (the consumers' arrivals say the stage may
be refilled). Ring iteration `it` uses stage it % S in phase (it / S) % 2: consumers wait on
`full` for that parity, the producer on `empty` for the other one (the stage's previous
use). Every waiter consumes the phases of a barrier in order and is at most one phase ahead,
which is what makes a one-bit parity enough (test/python/barrier_model.py models it).

The same object serves any producer/consumer pair of barrier arrays: operand stages,
tcgen05 accumulator stages (sm100_ws), row-slab slots (sm90_rows), depthwise tile slots. A
ring without `empty` barriers is released by other means (a CTA barrier); a ring split into
`parts` is one sub-ring per user (the residual slots of each sm90_ws consumer warpgroup,
the ping-pong `turn` barriers). PhaseBarrier is the one-barrier case.

Every stage index and parity an emitter waits on comes from here, so the phase arithmetic
has one definition; where two sites compute the same parity by different but equivalent op
sequences, each sequence is a method of its own, which keeps every kernel's IR as it is.
"""

from __future__ import annotations

from ...ir import arith_d
from .primitives import (I32, i32, index_to, mbarrier_arrive, mbarrier_arrive_expect_tx, mbarrier_arrive_remote,
                         mbarrier_init, mbarrier_wait)
from .smem import Region, SharedBlock


def flip(parity_i32):
    """The other phase parity (the producer's view of a stage's previous use)."""
    return arith_d.xori(parity_i32, i32(1))


def phase_parity(e, it, period: int):
    """Phase parity (i32) of use `it` of a barrier that completes one phase every `period`
    uses: (it / period) % 2."""
    return index_to(e.rem(e.div(it, period), 2), I32())


class MbarrierRing:
    def __init__(self, e, smem: SharedBlock, full: Region, empty: Region | None = None, parts: int = 1):
        """empty: None for a ring whose consumers release stages otherwise. parts: the stages
        split into that many sub-rings of depth / parts stages (slot_in)."""
        assert empty is None or full.count == empty.count
        assert full.count % parts == 0
        self.e, self.smem, self.full_bars, self.empty_bars = e, smem, full, empty
        self.depth = full.count
        self.part_depth = full.count // parts

    # ------------------------------------------------------------------ stage and phase
    def stage(self, it):
        """Stage index of ring iteration it (an index value)."""
        return self.e.rem(it, self.depth)

    def parity(self, it):
        """Phase parity (i32) of ring iteration it."""
        return phase_parity(self.e, it, self.depth)

    def slot(self, it):
        """(stage index, phase parity as i32) of ring iteration it (an index value)."""
        return self.stage(it), self.parity(it)

    def slot_in(self, part, it):
        """(stage, parity) of iteration it of sub-ring `part` (stages part * n .. part * n + n - 1,
        n = depth / parts): each user walks its own stages round-robin."""
        e, n = self.e, self.part_depth
        if n == 1:
            return part, phase_parity(e, it, 1)
        return e.add(e.mul(part, n), e.rem(it, n)), phase_parity(e, it, n)

    def advance(self, st, parity):
        """(stage, parity) of the iteration after (st, parity), without a division: carried
        through a loop, the way to the next wait costs a compare and two selects."""
        e = self.e
        wrap = e.cmp("eq", st, self.depth - 1)
        return e.select(wrap, 0, e.add(st, 1)), arith_d.select(wrap, flip(parity), parity)

    def full(self, st):
        return self.smem.element(self.full_bars, st)

    def empty(self, st):
        return self.smem.element(self.empty_bars, st)

    def init(self, consumers: int = 0, producers: int = 1) -> None:
        """`full` expects `producers` arrivals (plus TMA bytes), `empty` `consumers`."""
        for i in range(self.depth):
            mbarrier_init(self.full(i), producers)
            if self.empty_bars is not None:
                mbarrier_init(self.empty(i), consumers)

    # ------------------------------------------------------------------ producer side
    def acquire(self, st, parity) -> None:
        """Wait until stage st's previous use was released (before its use in phase `parity`)."""
        mbarrier_wait(self.empty(st), flip(parity))

    def acquire_at(self, it):
        """The wait of acquire(*slot(it)), its parity flipped in index arithmetic before the cast
        to i32; returns the stage."""
        e = self.e
        st = self.stage(it)
        mbarrier_wait(self.empty(st), index_to(e.xor(e.rem(e.div(it, self.depth), 2), 1), I32()))
        return st

    def await_release(self, st, used_parity) -> None:
        """Wait until the consumers released stage st's use in phase `used_parity`."""
        mbarrier_wait(self.empty(st), used_parity)

    def arm(self, st, tx_bytes: int):
        """Arrive on stage st's `full`, expecting tx_bytes of TMA; returns the barrier (the
        TMA's completion target)."""
        full = self.full(st)
        mbarrier_arrive_expect_tx(full, tx_bytes)
        return full

    def commit(self, st) -> None:
        """Complete stage st's `full` phase without data (the stage was filled otherwise)."""
        mbarrier_arrive(self.full(st))

    # ------------------------------------------------------------------ consumer side
    def wait(self, st, parity) -> None:
        """Wait until stage st holds the data of its phase `parity`."""
        mbarrier_wait(self.full(st), parity)

    def wait_at(self, it):
        """Wait until ring iteration it's stage holds its data; returns the stage."""
        st = self.stage(it)
        mbarrier_wait(self.full(st), self.parity(it))
        return st

    def release(self, st, count: int = 1) -> None:
        """Arrive on stage st's `empty` (count: for that many warps at once)."""
        mbarrier_arrive(self.empty(st), count=count)

    def release_warp(self, st, lane, rank=None, cluster: int = 1) -> None:
        """A warp is done reading stage st: lane 0 arrives here; with a cluster whose peers
        multicast into this stage too, lane d tells peer rank + d (in parallel)."""
        e = self.e
        bar = self.empty(st)
        with e.if_(e.cmp("eq", lane, 0)):
            mbarrier_arrive(bar)
        for d in range(1, cluster):
            with e.if_(e.cmp("eq", lane, d)):
                peer = e.rem(e.add(rank, d), cluster)
                mbarrier_arrive_remote(bar, index_to(peer, I32()), relaxed=True)


class PhaseBarrier(MbarrierRing):
    """One `full` barrier completing a phase per iteration (a ring of one stage, statically
    stage 0): iteration it waits for parity it % 2. hoist: the barrier's address is computed
    once, here, for a kernel whose every use sits below this point; otherwise at each use."""

    def __init__(self, e, smem: SharedBlock, full: Region, hoist: bool = False):
        assert full.count == 1
        super().__init__(e, smem, full)
        self.address = super().full(0) if hoist else None

    def stage(self, it):
        return 0

    def full(self, st=0):
        return self.address if self.address is not None else super().full(0)


class PingPongTurns(MbarrierRing):
    """The `turn` barriers of n ping-pong consumer warpgroups (two, or more where the epilogue
    outlasts the main loop): turn[w] (a one-stage sub-ring of warpgroup w) says w's next main
    loop may start, because warpgroup w - 1 (mod n) has waited on every stage of its own; so
    the warpgroups take the shared ring's stages in tile order, one token passed around.
    Warpgroup w's use-th main loop waits for phase use - 1 of turn[0] (w = 0: warpgroup n - 1's
    previous main loop) or phase use of turn[w] (w > 0), counted as use + min(w, 1) + 1 (the same
    parity, no negative index); phase -1 of a fresh barrier counts as completed, so warpgroup
    0's first main loop starts at once. A barrier is never more than one phase ahead of its
    waiter: w - 1 commits turn[w] again only after the token went round, through w."""

    def __init__(self, e, smem: SharedBlock, turn: Region):
        assert turn.count >= 2
        self.n = turn.count
        super().__init__(e, smem, turn, parts=turn.count)

    def wait_turn(self, w, use) -> None:
        """Warpgroup w's use-th main loop may start: wait on turn[w]."""
        e = self.e
        bar = self.full(w)
        after = e.select(e.cmp("sgt", w, 0), 1, 0)
        _, parity = self.slot_in(w, e.add(use, e.add(after, 1)))
        mbarrier_wait(bar, parity)

    def pass_turn(self, w) -> None:
        """Warpgroup w hands the ring to the next one."""
        e = self.e
        self.commit(e.rem(e.add(w, 1), self.n))
