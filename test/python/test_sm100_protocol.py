"""A model of the sm_100a tcgen05 kernel's protocols (lower/nvidia/sm100_ws.py), run under random
interleavings: the TMA thread, the MMA thread, four epilogue warps, and asynchronous work that
completes later at random (TMA loads and stores; tcgen05 MMAs and commits, which complete in
issue order), with mbarriers of the hardware's parity semantics (`try_wait.parity P` passes
while the parity of the completed-phase count is not P) and tensor memory with a life cycle.

Checked, for the shipped protocol: every MMA reads the ring stage of its own iteration and
accumulates its tile's k-tiles in order into an accumulator stage no epilogue warp is reading;
no stage is refilled while an MMA still reads it; each epilogue warp reads a finished
accumulator of its own tile; the staging slot is written neither before the previous TMA store
has read it nor before the tile's residual landed, and the residual lands only after that
store read the slot; tensor memory is allocated before any tcgen05 op and freed once, after
every MMA and every tcgen05.ld completed, by the warp that allocated it, after the permit was
relinquished; nothing deadlocks. Each of the broken variants below is caught."""

import random

import pytest

from barrier_model import Barrier, interleave, ring_slot
from convc.passes.lower.nvidia.sm100_ws import ACC_STAGES, EPILOGUE_THREADS, WARP

EPI_WARPS = EPILOGUE_THREADS // WARP


VARIANTS = (
    None,
    "arrive_empty_on_issue",      # MMA thread arrives on `empty` when it issues (not tcgen05.commit)
    "no_acc_empty_wait",          # MMA thread does not wait for the epilogue to drain the stage
    "release_acc_before_ld",      # epilogue arrives on `acc_empty` before its tcgen05.ld
    "one_acc_stage",              # both tiles' accumulators at the same columns (acc stage always 0)
    "residual_before_store_read", # residual TMA into the slot without waiting for the store's read
    "dealloc_without_barrier",    # MMA warp frees tensor memory right after issuing its last commit
    "no_alloc_barrier",           # epilogue warps start before the CTA barrier that publishes the address
)


def run_model(model, agents) -> None:
    """Runs a model's agents against its background work: TMA loads, stores and residual loads
    complete in any order (model.asyncs), the MMA thread's tcgen05 ops in issue order (model.tc)."""
    def pending():
        return len(model.asyncs) + (1 if model.tc else 0)

    def complete(k):
        if k < len(model.asyncs):
            model._complete_async(model.asyncs.pop(k))
        else:
            model._complete_tc()
    interleave(agents, model.rng, pending, complete, 0.35)


class Model:
    def __init__(self, stages, ktiles, tiles, residual, rng, variant=None):
        assert variant in VARIANTS
        self.S, self.K, self.T, self.res, self.rng, self.v = stages, ktiles, tiles, residual, rng, variant
        self.full = [Barrier(1) for _ in range(stages)]
        self.empty = [Barrier(1) for _ in range(stages)]
        self.acc_full = [Barrier(1) for _ in range(ACC_STAGES)]
        self.acc_empty = [Barrier(EPI_WARPS * WARP) for _ in range(ACC_STAGES)]
        self.res_full = Barrier(1)
        self.landed = [None] * stages           # ring iteration whose data a stage holds
        self.stage_reads = [set() for _ in range(stages)]   # issued, not completed MMAs reading a stage
        self.tc = []                            # the MMA thread's async tcgen05 ops, in issue order
        self.asyncs = []                        # TMA loads / stores / residual loads (any order)
        self.acc_tile = [None] * ACC_STAGES     # tile whose accumulation a stage holds
        self.acc_k = [0] * ACC_STAGES           # k-tiles accumulated into it
        self.reading = [set() for _ in range(ACC_STAGES)]  # epilogue warps between tcgen05.ld and wait::ld
        self.tmem = "none"
        self.taddr = None                       # what tcgen05.alloc wrote into the shared slot
        self.relinquished = False
        self.cta_barrier = 0                    # threads past the CTA barrier (6 warps)
        self.named = {}                         # (key) -> warps arrived at a named barrier
        self.store_reading = False              # the elected thread's TMA store still reads the slot
        self.res_landed = None
        self.epi_done = 0

    def stage(self, it):
        return ring_slot(it, self.S)

    def acc(self, j):
        a, aph = ring_slot(j, ACC_STAGES)
        return (0 if self.v == "one_acc_stage" else a), aph

    def _bar(self, key, n):
        self.named[key] = self.named.get(key, 0) + 1
        return lambda: self.named[key] == n

    def _setup(self, mma_warp=False):
        """The prologue: warp 1 allocates (and relinquishes) tensor memory, every warp meets at the
        CTA barrier. Called at each agent's first step, which the scheduler reaches at random."""
        if mma_warp:
            self.tmem = "allocated"
            self.taddr = 0x10000000 + self.rng.randrange(4) * 128
            self.relinquished = True
        self.cta_barrier += 1
        if self.v == "no_alloc_barrier" and not mma_warp:
            return lambda: True
        return lambda: self.cta_barrier == 2 + EPI_WARPS

    # ---------------------------------------------------------------- agents
    def producer(self):
        yield self._setup()
        for j in range(self.T):
            for kt in range(self.K):
                it = j * self.K + kt
                st, ph = self.stage(it)
                yield lambda: self.empty[st].passes(ph ^ 1)
                assert not self.stage_reads[st], f"stage {st} refilled for iteration {it} while an MMA reads it"
                self.landed[st] = None
                self.full[st].arrive(tx=1)
                self.asyncs.append(("load", st, it))

    def mma(self):
        yield self._setup(mma_warp=True)
        for j in range(self.T):
            a, aph = self.acc(j)
            if self.v != "no_acc_empty_wait":
                yield lambda: self.acc_empty[a].passes(aph ^ 1)
            for kt in range(self.K):
                it = j * self.K + kt
                st, ph = self.stage(it)
                yield lambda: self.full[st].passes(ph)
                assert self.tmem == "allocated", "MMA issued without tensor memory"
                self.tc.append(("mma", j, kt, st, it, a))
                self.stage_reads[st].add(it)
                if self.v == "arrive_empty_on_issue":
                    self.empty[st].arrive()
                else:
                    self.tc.append(("commit", self.empty[st]))
            self.tc.append(("commit", self.acc_full[a]))
        if self.v == "dealloc_without_barrier":
            self.named["dealloc"] = self.named.get("dealloc", 0) + 1      # arrives, does not wait
        else:
            yield self._bar("dealloc", 1 + EPI_WARPS)
        self._dealloc()

    def _dealloc(self):
        assert self.tmem == "allocated", "tensor memory freed twice or never allocated"
        assert self.relinquished, "dealloc before relinquish_alloc_permit"
        assert not any(op[0] == "mma" for op in self.tc), "tensor memory freed with MMAs in flight"
        assert not any(self.reading), "tensor memory freed during a tcgen05.ld"
        self.tmem = "freed"

    def epilogue(self, w):
        yield self._setup()
        taddr = self.taddr                      # the address read from the shared slot
        for j in range(self.T):
            a, aph = self.acc(j)
            if w == 0:                          # the elected thread
                if self.v != "residual_before_store_read":
                    yield lambda: not self.store_reading       # cp.async.bulk.wait_group.read 0
                if self.res:
                    self.res_full.arrive(tx=1)
                    self.asyncs.append(("res", j))
            if not self.res:
                yield self._bar(("slot", j), EPI_WARPS)
            yield lambda: self.acc_full[a].passes(aph)
            if self.res:
                yield lambda: self.res_full.passes(j % 2)
            if self.v == "release_acc_before_ld":
                self.acc_empty[a].arrive(WARP)
            assert self.tmem == "allocated", f"epilogue warp {w} read tensor memory that is {self.tmem}"
            assert taddr == self.taddr, f"epilogue warp {w} read tensor memory at an address taken before the alloc"
            assert (self.acc_tile[a], self.acc_k[a]) == (j, self.K), \
                f"epilogue warp {w} read stage {a} holding tile {self.acc_tile[a]} ({self.acc_k[a]} k-tiles) for tile {j}"
            self.reading[a].add(w)
            yield lambda: True                  # tcgen05.ld in flight: anything may happen meanwhile
            assert (self.acc_tile[a], self.acc_k[a]) == (j, self.K), f"stage {a} overwritten during tile {j}'s tcgen05.ld"
            self.reading[a].discard(w)          # tcgen05.wait::ld, fence::before_thread_sync
            if self.v != "release_acc_before_ld":
                self.acc_empty[a].arrive(WARP)
            assert not self.store_reading, f"tile {j} staged while the previous TMA store reads the slot"
            assert not self.res or self.res_landed == j, f"tile {j} staged before its residual landed"
            yield self._bar(("staged", j), EPI_WARPS)
            if w == 0:
                self.store_reading = True
                self.asyncs.append(("store", j))
        self.epi_done += 1
        yield self._bar("dealloc", 1 + EPI_WARPS)

    # ---------------------------------------------------------------- scheduler
    def _complete_tc(self):
        op = self.tc.pop(0)
        if op[0] == "commit":
            op[1].arrive()
            return
        _, j, kt, st, it, a = op
        assert self.tmem == "allocated", "MMA ran on freed tensor memory"
        assert self.landed[st] == it, f"MMA of iteration {it} read stage {st} holding {self.landed[st]}"
        assert not self.reading[a], f"MMA of tile {j} wrote accumulator stage {a} during a tcgen05.ld"
        if kt == 0:
            self.acc_tile[a], self.acc_k[a] = j, 1
        else:
            assert (self.acc_tile[a], self.acc_k[a]) == (j, kt), f"tile {j} k-tile {kt} accumulated out of order"
            self.acc_k[a] += 1
        self.stage_reads[st].discard(it)

    def _complete_async(self, ev):
        if ev[0] == "load":
            self.landed[ev[1]] = ev[2]
            self.full[ev[1]].complete_tx(1)
        elif ev[0] == "res":
            assert not self.store_reading, f"tile {ev[1]}'s residual landed in the slot while a store reads it"
            self.res_landed = ev[1]
            self.res_full.complete_tx(1)
        else:
            self.store_reading = False

    def run(self):
        agents = [self.producer(), self.mma()] + [self.epilogue(w) for w in range(EPI_WARPS)]
        run_model(self, agents)
        assert self.tmem == "freed", "tensor memory never freed"
        assert self.epi_done == EPI_WARPS


CONFIGS = [(2, 1, 5), (2, 3, 4), (3, 2, 7), (4, 5, 3), (8, 9, 2), (3, 1, 9)]


@pytest.mark.parametrize("stages,ktiles,tiles", CONFIGS)
@pytest.mark.parametrize("residual", [True, False])
def test_shipped_protocol_holds(stages, ktiles, tiles, residual):
    for seed in range(40):
        Model(stages, ktiles, tiles, residual, random.Random(seed)).run()


@pytest.mark.parametrize("variant,residual,expect", [
    ("arrive_empty_on_issue", False, "while an MMA reads it|read stage"),
    ("no_acc_empty_wait", False, "during a tcgen05.ld|overwritten|read stage .* holding"),
    ("release_acc_before_ld", False, "during a tcgen05.ld|overwritten|read stage .* holding"),
    ("one_acc_stage", False, "during a tcgen05.ld|overwritten|read stage .* holding|more arrivals"),
    ("residual_before_store_read", True, "while a store reads it"),
    ("dealloc_without_barrier", False, "freed|read tensor memory"),
    ("no_alloc_barrier", False, "taken before the alloc"),
])
def test_broken_variants_are_caught(variant, residual, expect):
    import re
    caught = []
    for seed in range(300):
        try:
            Model(3, 2, 6, residual, random.Random(seed), variant).run()
        except (AssertionError, TimeoutError) as e:
            caught.append(str(e))
    assert caught, f"{variant} was never caught"
    assert any(re.search(expect, c) for c in caught), caught[:3]


# ---------------------------------------------------------------------------- CTA pairs
PAIR_VARIANTS = (
    None,
    "peer_skips_empty",       # the odd CTA's TMA thread does not wait on its own `empty`
    "acc_empty_local",        # each CTA's epilogue arrives on its own `acc_empty` (the leader counts 4 warps)
    "commit_local",           # the leader's commits are not multicast to the odd CTA
    "dealloc_own_epilogue",   # each CTA frees the pair's tensor memory after its own epilogue only
)


class PairModel:
    """The cta_group::2 kernel: two CTAs, each with a TMA thread loading its half into its own
    stage and counting its bytes on the leader's `full`, the leader's MMA thread (M = 256:
    reads both CTAs' stages, writes both CTAs' tensor memory) whose commits are multicast to
    both CTAs' `empty` / `acc_full`, four epilogue warps per CTA arriving on the leader's
    `acc_empty`, residual/store staging per CTA, and a cluster barrier before the pair frees
    its tensor memory."""

    def __init__(self, stages, ktiles, tiles, residual, rng, variant=None):
        assert variant in PAIR_VARIANTS
        self.S, self.K, self.T, self.res, self.rng, self.v = stages, ktiles, tiles, residual, rng, variant
        self.full = [Barrier(1) for _ in range(stages)]                      # the leader's
        self.empty = [[Barrier(1) for _ in range(stages)] for _ in range(2)]
        self.acc_full = [[Barrier(1) for _ in range(ACC_STAGES)] for _ in range(2)]
        local = self.v == "acc_empty_local"
        self.acc_empty = [[Barrier(EPI_WARPS * WARP * (1 if local else 2)) for _ in range(ACC_STAGES)]
                          for _ in range(2)]
        self.res_full = [Barrier(1) for _ in range(2)]
        self.landed = [[None] * stages for _ in range(2)]
        self.stage_reads = [[set() for _ in range(stages)] for _ in range(2)]
        self.tc, self.asyncs = [], []
        self.acc_tile = [[None] * ACC_STAGES for _ in range(2)]
        self.acc_k = [[0] * ACC_STAGES for _ in range(2)]
        self.reading = [[set() for _ in range(ACC_STAGES)] for _ in range(2)]
        self.tmem = "none"
        self.alloc_warps = 0
        self.started = 0
        self.named = {}
        self.store_reading = [False, False]
        self.res_landed = [None, None]
        self.done = 0

    def stage(self, it):
        return ring_slot(it, self.S)

    def _bar(self, key, n):
        self.named[key] = self.named.get(key, 0) + 1
        return lambda: self.named[key] == n

    def _start(self, mma_warp=False):
        """Barrier inits, cluster barrier, the pair's collective allocation, cluster barrier."""
        if mma_warp:
            self.alloc_warps += 1
            if self.alloc_warps == 2:
                self.tmem = "allocated"
        self.started += 1
        return lambda: self.started == 2 * (2 + EPI_WARPS) and self.tmem == "allocated"

    def producer(self, c):
        yield lambda: True
        yield self._start()
        for j in range(self.T):
            for kt in range(self.K):
                it = j * self.K + kt
                st, ph = self.stage(it)
                if not (c == 1 and self.v == "peer_skips_empty"):
                    yield lambda: self.empty[c][st].passes(ph ^ 1)
                assert not self.stage_reads[c][st], f"CTA {c} stage {st} refilled for iteration {it} while an MMA reads it"
                self.landed[c][st] = None
                if c == 0:
                    self.full[st].arrive(tx=2)          # both CTAs' bytes
                self.asyncs.append(("load", c, st, it))
        yield self._bar("exit", 2 * (2 + EPI_WARPS))

    def mma(self, c):
        yield lambda: True
        yield self._start(mma_warp=True)
        if c == 0:
            for j in range(self.T):
                a, aph = ring_slot(j, ACC_STAGES)
                yield lambda: self.acc_empty[0][a].passes(aph ^ 1)
                for kt in range(self.K):
                    it = j * self.K + kt
                    st, ph = self.stage(it)
                    yield lambda: self.full[st].passes(ph)
                    self.tc.append(("mma", j, kt, st, it, a))
                    for cc in range(2):
                        self.stage_reads[cc][st].add(it)
                    self.tc.append(("commit", "empty", st))
                self.tc.append(("commit", "acc_full", a))
        yield self._bar("exit", 2 * (2 + EPI_WARPS))
        self._dealloc()

    def _dealloc(self):
        if self.tmem == "freed":
            return                                   # the pair's collective dealloc, done once
        assert not any(op[0] == "mma" for op in self.tc), "tensor memory freed with MMAs in flight"
        assert not any(r for cta in self.reading for r in cta), "tensor memory freed during a tcgen05.ld"
        self.tmem = "freed"

    def epilogue(self, c, w):
        yield lambda: True
        yield self._start()
        for j in range(self.T):
            a, aph = ring_slot(j, ACC_STAGES)
            if w == 0:
                yield lambda: not self.store_reading[c]
                if self.res:
                    self.res_full[c].arrive(tx=1)
                    self.asyncs.append(("res", c, j))
            if not self.res:
                yield self._bar(("slot", c, j), EPI_WARPS)
            yield lambda: self.acc_full[c][a].passes(aph)
            if self.res:
                yield lambda: self.res_full[c].passes(j % 2)
            assert self.tmem == "allocated", f"CTA {c} epilogue read tensor memory that is {self.tmem}"
            assert (self.acc_tile[c][a], self.acc_k[c][a]) == (j, self.K), \
                f"CTA {c} epilogue read stage {a} holding tile {self.acc_tile[c][a]} for tile {j}"
            self.reading[c][a].add(w)
            yield lambda: True
            assert (self.acc_tile[c][a], self.acc_k[c][a]) == (j, self.K), f"CTA {c} stage {a} overwritten during a tcgen05.ld"
            self.reading[c][a].discard(w)
            target = c if self.v == "acc_empty_local" else 0
            self.acc_empty[target][a].arrive(WARP)
            assert not self.store_reading[c] and (not self.res or self.res_landed[c] == j)
            yield self._bar(("staged", c, j), EPI_WARPS)
            if w == 0:
                self.store_reading[c] = True
                self.asyncs.append(("store", c, j))
        if self.v == "dealloc_own_epilogue":
            yield self._bar(("own", c), EPI_WARPS)
            self._dealloc()
        self.done += 1
        yield self._bar("exit", 2 * (2 + EPI_WARPS))

    def _complete_tc(self):
        op = self.tc.pop(0)
        if op[0] == "commit":
            targets = [0] if self.v == "commit_local" else [0, 1]
            for c in targets:
                (self.empty[c][op[2]] if op[1] == "empty" else self.acc_full[c][op[2]]).arrive()
            return
        _, j, kt, st, it, a = op
        assert self.tmem == "allocated", "MMA ran on freed tensor memory"
        for c in range(2):
            assert self.landed[c][st] == it, f"MMA of iteration {it} read CTA {c}'s stage {st} holding {self.landed[c][st]}"
            assert not self.reading[c][a], f"MMA of tile {j} wrote CTA {c}'s stage {a} during a tcgen05.ld"
            if kt == 0:
                self.acc_tile[c][a], self.acc_k[c][a] = j, 1
            else:
                assert (self.acc_tile[c][a], self.acc_k[c][a]) == (j, kt)
                self.acc_k[c][a] += 1
            self.stage_reads[c][st].discard(it)

    def _complete_async(self, ev):
        if ev[0] == "load":
            _, c, st, it = ev
            self.landed[c][st] = it
            self.full[st].complete_tx(1)                # the leader's barrier, whichever CTA loaded
        elif ev[0] == "res":
            _, c, j = ev
            assert not self.store_reading[c], f"CTA {c}'s residual landed while a store reads the slot"
            self.res_landed[c] = j
            self.res_full[c].complete_tx(1)
        else:
            self.store_reading[ev[1]] = False

    def run(self):
        agents = [self.producer(c) for c in range(2)] + [self.mma(c) for c in range(2)] + \
                 [self.epilogue(c, w) for c in range(2) for w in range(EPI_WARPS)]
        run_model(self, agents)
        assert self.tmem == "freed" and self.done == 2 * EPI_WARPS


@pytest.mark.parametrize("stages,ktiles,tiles", CONFIGS)
@pytest.mark.parametrize("residual", [True, False])
def test_pair_protocol_holds(stages, ktiles, tiles, residual):
    for seed in range(25):
        PairModel(stages, ktiles, tiles, residual, random.Random(seed)).run()


@pytest.mark.parametrize("variant,expect", [
    ("peer_skips_empty", "CTA 1 stage .* refilled|read CTA 1's stage"),
    ("acc_empty_local", "wrote CTA 1's stage .* during a tcgen05.ld|CTA 1 stage .* overwritten|CTA 1 epilogue read stage"),
    ("commit_local", "deadlock"),
    ("dealloc_own_epilogue", "freed|read tensor memory that is freed"),
])
def test_pair_broken_variants_are_caught(variant, expect):
    import re
    caught = []
    for seed in range(200):
        try:
            PairModel(3, 2, 6, False, random.Random(seed), variant).run()
        except (AssertionError, TimeoutError) as e:
            caught.append(str(e))
    assert caught, f"{variant} was never caught"
    assert any(re.search(expect, c) for c in caught), caught[:3]
