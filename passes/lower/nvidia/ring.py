"""The mbarrier ring every sm_90a / sm_100a pipeline runs on.

S stages, each guarded by two mbarriers: `full` (the producer's arrival, with the bytes its
TMA brings, says the stage holds data) and `empty` (the consumers' arrivals say the stage may
be refilled). Ring iteration `it` uses stage it % S in phase (it / S) % 2: consumers wait on
`full` for that parity, the producer on `empty` for the other one (the stage's previous
use). Every waiter consumes the phases of a barrier in order and is at most one phase ahead,
which is what makes a one-bit parity enough (test_ring_protocol.py models it).

The same object serves any producer/consumer pair of barrier arrays: operand stages,
tcgen05 accumulator stages (sm100_ws), row-slab slots (sm90_rows).
"""

from __future__ import annotations

from ...ir import arith_d
from .primitives import (I32, i32, index_to, mbarrier_arrive, mbarrier_arrive_expect_tx, mbarrier_arrive_remote,
                         mbarrier_init, mbarrier_wait)
from .smem import Region, SharedBlock


def flip(parity_i32):
    """The other phase parity (the producer's view of a stage's previous use)."""
    return arith_d.xori(parity_i32, i32(1))


class MbarrierRing:
    def __init__(self, e, smem: SharedBlock, full: Region, empty: Region):
        assert full.count == empty.count
        self.e, self.smem, self.full_bars, self.empty_bars = e, smem, full, empty
        self.depth = full.count

    # ------------------------------------------------------------------ stage and phase
    def slot(self, it):
        """(stage index, phase parity as i32) of ring iteration it (an index value)."""
        e, S = self.e, self.depth
        return e.rem(it, S), index_to(e.rem(e.div(it, S), 2), I32())

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

    def init(self, consumers: int, producers: int = 1) -> None:
        """`full` expects `producers` arrivals (plus TMA bytes), `empty` `consumers`."""
        for i in range(self.depth):
            mbarrier_init(self.full(i), producers)
            mbarrier_init(self.empty(i), consumers)

    # ------------------------------------------------------------------ producer side
    def acquire(self, st, parity) -> None:
        """Wait until stage st's previous use was released (before its use in phase `parity`)."""
        mbarrier_wait(self.empty(st), flip(parity))

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
