"""A model of the ping-pong consumers' barrier protocol (sm90_ws.py, ring.PingPongTurns) with
two, three or four consumer warpgroups, run under random interleavings: one producer filling
the operand ring in tile order and each tile's residual slot, consumer warpgroup w taking the
CTA's tiles j = w, w + n, ... and passing the `turn` token to w + 1 (mod n) after waiting on
every stage of its main loop, TMA loads that land at random later times, and mbarriers with
the hardware's parity semantics.

Checked: every consumer reads a stage only after the data of its own ring iteration landed
(so the turn parities keep the warpgroups in tile order), its residual slot holds its own
tile, the producer never refills a stage or slot someone still reads, and nothing deadlocks,
for tile counts that are not multiples of n as well. A turn parity that ignores the
warpgroup's place in the cycle (what two warpgroups used, `use + w + 1`) is caught for three."""

import random

import pytest

from barrier_model import Barrier, interleave, ring_slot

WARPS = 4


class Model:
    def __init__(self, consumers, stages, ktiles, tiles, slots, rng, parity_rule="shipped"):
        self.n, self.S, self.K, self.T, self.slots, self.rng = consumers, stages, ktiles, tiles, slots, rng
        self.rule = parity_rule
        self.full = [Barrier(1) for _ in range(stages)]
        self.empty = [Barrier(WARPS) for _ in range(stages)]      # ping-pong: one warpgroup per stage
        self.landed = [None] * stages
        self.readers = [set() for _ in range(stages)]
        # residual slots: `slots` per warpgroup (MbarrierRing parts), full by TMA, empty by 128 threads
        self.res_full = [Barrier(1) for _ in range(consumers * slots)]
        self.res_empty = [Barrier(1) for _ in range(consumers * slots)]
        self.res_landed = [None] * (consumers * slots)
        self.res_readers = [set() for _ in range(consumers * slots)]
        self.turn = [Barrier(1) for _ in range(consumers)]
        self.asyncs = []

    def res_slot(self, w, use):
        st, ph = ring_slot(use, self.slots)
        return w * self.slots + st, ph

    def turn_parity(self, w, use):
        after = min(w, 1) if self.rule == "shipped" else w
        return (use + after + 1) % 2

    def producer(self):
        prime = min(self.S, self.K)
        for j in range(self.T):
            for kt in range(self.K):
                it = j * self.K + kt
                st, ph = ring_slot(it, self.S)
                yield lambda: self.empty[st].passes(ph ^ 1)
                assert not self.readers[st], f"stage {st} refilled for iteration {it} while read"
                self.full[st].arrive(tx=1)
                self.asyncs.append(("load", st, it))
                if kt == prime - 1:
                    slot, sph = self.res_slot(j % self.n, j // self.n)
                    yield lambda: self.res_empty[slot].passes(sph ^ 1)
                    assert not self.res_readers[slot], f"residual slot {slot} refilled while read"
                    self.res_full[slot].arrive(tx=1)
                    self.asyncs.append(("res", slot, j))

    def consumer(self, w):
        for use, j in enumerate(range(w, self.T, self.n)):
            bar, par = self.turn[w], self.turn_parity(w, use)
            yield lambda: bar.passes(par)
            for kt in range(self.K):
                it = j * self.K + kt
                st, ph = ring_slot(it, self.S)
                yield lambda: self.full[st].passes(ph)
                assert self.landed[st] == it, f"warpgroup {w} read stage {st} for {it}, it holds {self.landed[st]}"
                self.readers[st].add(w)
                yield lambda: True
                self.readers[st].discard(w)
                self.empty[st].arrive(WARPS)
            self.turn[(w + 1) % self.n].arrive()             # pass the turn
            slot, sph = self.res_slot(w, use)
            yield lambda: self.res_full[slot].passes(sph)
            assert self.res_landed[slot] == j, f"warpgroup {w} took tile {j}'s residual from {self.res_landed[slot]}"
            self.res_readers[slot].add(w)
            yield lambda: True
            self.res_readers[slot].discard(w)
            self.res_empty[slot].arrive()

    def run(self):
        def complete(k):
            kind, st, what = self.asyncs.pop(k)
            if kind == "load":
                self.landed[st] = what
                self.full[st].complete_tx(1)
            else:
                self.res_landed[st] = what
                self.res_full[st].complete_tx(1)
        agents = [self.producer()] + [self.consumer(w) for w in range(self.n)]
        interleave(agents, self.rng, lambda: len(self.asyncs), complete, 0.3)


@pytest.mark.parametrize("consumers", [2, 3, 4])
@pytest.mark.parametrize("stages,ktiles,tiles", [(3, 1, 7), (4, 2, 9), (6, 6, 10), (8, 3, 5), (2, 4, 2)])
@pytest.mark.parametrize("slots", [1, 2])
def test_shipped_turns_hold(consumers, stages, ktiles, tiles, slots):
    for seed in range(40):
        Model(consumers, stages, ktiles, tiles, slots, random.Random(seed)).run()


def test_two_warpgroup_parity_fails_for_three():
    failures = 0
    for seed in range(100):
        try:
            Model(3, 4, 2, 9, 1, random.Random(seed), parity_rule="two-warpgroup").run()
        except (AssertionError, TimeoutError):
            failures += 1
    assert failures > 0


def test_register_shares_fit_what_the_producer_hands_back():
    """setmaxnreg.inc can only take the registers the producer's setmaxnreg.dec returned to the
    CTA (four consumers asking for 112 hung on an H200)."""
    from convc.passes.lower.nvidia.warp_roles import (PRODUCER_REGS, SM_REGISTERS, WARPGROUP,
                                                      consumer_registers_for, threads_for)
    assert [consumer_registers_for(n) for n in (2, 3, 4)] == [232, 152, 104]
    for n in (2, 3, 4):
        launch = SM_REGISTERS // threads_for(n) // 8 * 8
        assert (consumer_registers_for(n) - launch) * n <= launch - PRODUCER_REGS


def test_layout_and_refusals_for_more_consumers():
    from convc.passes.lower.nvidia.sm90_ws_layout import WsUnsupported, check_supported, ws_layout
    from convc.tools.layers import Layer
    p = Layer("g", 1, 6272, 1, 384, 1536, 1, 1).expected_problem()
    lay = ws_layout(p, "sm90_ws_pingpong", 64, 128, 4, slots=2, consumers=3)
    assert lay.turn.count == 3 and lay.out.count == 6 and lay.res_full.count == 6 and lay.consumers == 3
    check_supported(p, "sm90_ws_pingpong", 64, 128, consumers=3)
    for kernel, bm, bn, n in (("sm90_ws_cooperative", 128, 128, 3), ("sm90_ws_streamk", 64, 128, 3),
                              ("sm90_ws_pingpong", 128, 128, 3), ("sm90_ws_pingpong", 64, 128, 4),
                              ("sm90_ws_pingpong", 64, 64, 4), ("sm90_ws_pingpong", 64, 64, 5)):
        with pytest.raises(WsUnsupported):
            check_supported(p, kernel, bm, bn, consumers=n)
