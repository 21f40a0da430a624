"""Per-phase %globaltimer stamps for the warp-specialized kernel (a developer diagnostic).

With CONVC_TRACE=1 in the environment of the compile, each CTA stores one u64 nanosecond stamp
per event (passes/trace_events.py) into its RECORD_BYTES record, placed after the scratch the
kernel itself uses: scratch + Schedule.scratch_bytes + RECORD_BYTES * CTA. IREE's scratch
result is not that large, so such a build only runs under convc.tools.gpu.trace, which
launches the PTX itself with a big enough scratch buffer and prints each phase's time across
CTAs. Off (the default), the kernel is unchanged.
"""

from __future__ import annotations

import os

from ...ir import arith_d, nvvm_d
from .primitives import I64, i64, index_to, store_i64

from ...trace_events import EVENTS, RECORD_BYTES, TRACE_ENV


def enabled() -> bool:
    return os.environ.get(TRACE_ENV) == "1"


def global_timer():
    """%globaltimer (ns) as i64."""
    return nvvm_d.GlobalTimerOp(results=[I64()]).result


class Trace:
    """Stamps events into this CTA's record; a no-op unless enabled()."""

    def __init__(self, e, pid, scratch_addr_i64, descriptor_bytes_total: int):
        self.on = enabled()
        if self.on:
            base = arith_d.addi(scratch_addr_i64, i64(descriptor_bytes_total))
            self.rec = arith_d.addi(base, arith_d.muli(index_to(pid, I64()), i64(RECORD_BYTES)))

    def stamp(self, event: str, value_i64=None) -> None:
        if not self.on:
            return
        store_i64(value_i64 if value_i64 is not None else global_timer(),
                  arith_d.addi(self.rec, i64(8 * EVENTS.index(event))))

    def consumer(self, e, cw, what: str, elected) -> None:
        """Stamp c{cw}_{what} from the warpgroup's elected thread (cw: index value)."""
        if not self.on or elected is None:
            return
        with e.if_(elected):
            with e.if_else(e.cmp("eq", cw, 0)) as (w0, w1):
                with w0:
                    self.stamp(f"c0_{what}")
                with w1:
                    self.stamp(f"c1_{what}")
