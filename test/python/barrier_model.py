"""The barrier-protocol model the protocol tests share (test_ring_protocol.py: the sm_90a
ring-staged epilogue; test_sm100_protocol.py: the sm_100a tcgen05 kernel): mbarriers with the
hardware's parity semantics, the ring's stage/parity of an iteration (lower/nvidia/ring.py),
and a random interleaving of agents and of asynchronous work that completes later. One copy,
so that both kernels' protocols are checked against the same barrier semantics."""


class Barrier:
    """An mbarrier: a phase completes once `count` arrivals and every expected transaction
    byte (tx, counted in loads here) are in; `try_wait.parity P` passes while the parity of
    the completed-phase count is not P."""

    def __init__(self, count):
        self.count, self.pending, self.tx, self.completed = count, count, 0, 0

    def passes(self, parity):
        return self.completed % 2 != parity

    def arrive(self, n=1, tx=0):
        self.pending -= n
        self.tx += tx
        assert self.pending >= 0, "more arrivals than the phase expects"
        self._maybe_complete()

    def complete_tx(self, n):
        self.tx -= n
        self._maybe_complete()

    def _maybe_complete(self):
        if self.pending == 0 and self.tx == 0:
            self.completed += 1
            self.pending = self.count


def ring_slot(it, depth):
    """(stage, phase parity) of ring iteration it (MbarrierRing.slot): consumers wait on
    `full` for the parity, the producer on `empty` for the other one."""
    return it % depth, (it // depth) % 2


def interleave(agents, rng, pending, complete, p_background, started=False):
    """Runs agents (generators yielding predicates: an agent's next step may run once its last
    predicate holds) and background work (pending(): how many completions wait; complete(k):
    run the k-th) under a random schedule: each round completes background work with
    probability p_background (always when no agent is ready), else steps a random ready agent.
    started: every agent first runs up to its first wait; otherwise its first step is scheduled
    like the others. A round with nothing to run is a deadlock (TimeoutError)."""
    agents = list(agents)
    waits = [next(a) for a in agents] if started else [lambda: True for _ in agents]
    while agents or pending():
        ready = [i for i, c in enumerate(waits) if c()]
        background = pending()
        if not ready and not background:
            raise TimeoutError("deadlock")
        if background and (not ready or rng.random() < p_background):
            complete(rng.randrange(background))
            continue
        i = rng.choice(ready)
        try:
            waits[i] = next(agents[i])
            if not callable(waits[i]):
                raise TypeError("agents yield predicates")
        except StopIteration:
            del agents[i], waits[i]
