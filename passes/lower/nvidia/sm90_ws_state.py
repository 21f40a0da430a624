"""The explicit state of the sm_90a warp-specialized kernel (sm90_ws.py), in two parts:

- WsMode: the schedule resolved once, before any IR (a schedule the kernel cannot run is
  refused here): the layout and the mode flags derived from the schedule, each defined once;
- WsState: the IR values emit() builds before the role split (rings, descriptor slots, tile
  walk, ...) with the small index helpers that several roles share.

The roles (producer, main loop, epilogue, stream-K consumers) take a WsState as a constructor
argument and set nothing on it: what a role reads is named here, and no role depends on
attributes another one happens to set.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...kernel_configs import Sm90WsConfig
from ...problem import ConvProblem, OperandLoad
from ...schedule import Schedule, WarpRole
from .direct_loads import DirectPrologue, direct_stages_for
from .primitives import SWIZZLE_128B_LAYOUT, SWIZZLE_64B_LAYOUT
from .ring import MbarrierRing, PingPongTurns
from .sm90_ws_layout import WsLayout, WsUnsupported, residual_step, row_bytes, ws_layout
from .smem import SharedBlock
from .stream_k import StreamKScratch
from .tile_scheduler import PersistentTiles, StreamKWork
from .tma_loader import k_tiles
from .trace import Trace


@dataclass(frozen=True)
class WsMode:
    """The schedule resolved for the problem (ws_mode): plain values, no IR."""
    p: ConvProblem
    s: Schedule
    lay: WsLayout
    cluster_m: int                 # CTAs of a cluster along M (they multicast the filter tile)
    coop: bool                     # cooperative consumers share each tile (else they alternate tiles)
    streamk: bool                  # ping-pong consumers over stream-K segments
    swap: bool                     # swapped tiles: the wgmma's M runs over channels
    in_ring: bool                  # epilogue staged in lent ring stages (epilogue_slots = 0)
    res: OperandLoad | None        # the TMA-loaded residual, if any
    direct: int                    # leading k-tiles of the first tile loaded by cp.async (direct_loads.py)
    late_channel_ops: bool         # per-channel epilogue operands loaded after the main loop
    ktiles: int
    per_tile: int                  # ring iterations per tile: its k-tiles (+ one lent stage per warpgroup)
    subs: int                      # 64-row wgmma sub-blocks per consumer warpgroup (pixels; channels swapped)
    mma_n: int                     # the wgmma's N
    row: int                       # bytes of a swizzled K row (also the swizzle span)
    swizzle_layout: int            # wgmma descriptor layout of that span


def ws_mode(p: ConvProblem, s: Schedule) -> WsMode:
    """Resolves s for p, or raises WsUnsupported (TypeError for another family's schedule)."""
    c = s.config_as(Sm90WsConfig)
    lay = ws_layout(p, s.kernel, s.block_m, s.block_n, s.stages, s.block_k, c.epilogue_slots, c.swap_ab,
                    c.consumers)
    if lay.total != s.smem_bytes:      # the planner sized the schedule by the same layout
        raise WsUnsupported(f"schedule allots {s.smem_bytes} B of shared memory, the layout needs {lay.total}")
    ktiles = k_tiles(p, s.block_k)
    # the planner sets direct_stages (plan._with_direct_loads); a schedule asking for more
    # than this kernel can take is refused, not quietly changed
    if direct_stages_for(p, s, ktiles) != c.direct_stages:
        raise WsUnsupported(f"direct_stages={c.direct_stages}: this schedule takes "
                            f"{direct_stages_for(p, s, ktiles)} direct k-tiles")
    row = row_bytes(s.block_k, p.dtype)
    in_ring = lay.slots == 0
    return WsMode(p, s, lay, cluster_m=c.cluster_m, coop=s.kernel.role is WarpRole.COOPERATIVE,
                  streamk=s.kernel.role is WarpRole.STREAM_K, swap=c.swap_ab, in_ring=in_ring,
                  res=residual_step(p), direct=c.direct_stages, late_channel_ops=c.late_channel_ops, ktiles=ktiles,
                  per_tile=ktiles + (2 if in_ring else 0),
                  subs=(lay.cols if c.swap_ab else lay.rows) // 64,
                  mma_n=s.block_m if c.swap_ab else s.block_n, row=row,
                  swizzle_layout=SWIZZLE_128B_LAYOUT if row == 128 else SWIZZLE_64B_LAYOUT)


@dataclass(frozen=True)
class WsState:
    """The mode and the IR values the roles share, built by Sm90WarpSpecialized.emit before
    the role split."""
    mode: WsMode
    e: object                      # the Emitter
    memrefs: object
    tid: object                    # thread index (index value)
    smem: SharedBlock
    ring: MbarrierRing             # operand stages (and, in_ring, the lent epilogue stages)
    res_ring: MbarrierRing         # residual slots: one sub-ring per consumer warpgroup
    turns: PingPongTurns           # ping-pong hand-off of the ring
    slots: list                    # descriptor slots: activation, filter, output, residual
    tiles: PersistentTiles
    trace: Trace
    prologue: DirectPrologue | None = None     # mode.direct: the consumers' cp.async k-tiles
    work: StreamKWork | None = None            # stream-K: this CTA's segments
    scratch_layout: StreamKScratch | None = None   # ... its flags and partials in the scratch buffer
    scratch: object = None                     # ... and the scratch buffer's address (i64)

    @property
    def extents(self):
        """The problem's Extents when some of its sizes are read at run time, else None."""
        return getattr(self.memrefs, "extents", None)

    def slice(self, w):
        """(pixel, channel) offsets of consumer warpgroup w's slice of a tile (w: an index
        value; ping-pong warpgroups own whole tiles)."""
        e, mode = self.e, self.mode
        if not mode.coop:
            return e.c(0), e.c(0)
        return (e.c(0), e.mul(w, mode.lay.cols)) if mode.swap else (e.mul(w, mode.lay.rows), e.c(0))

    def res_slot(self, w, use):
        """(epilogue slot index, phase parity as i32) of warpgroup w's use-th tile: each
        warpgroup uses its `slots` slots round-robin (its sub-ring of res_ring)."""
        return self.res_ring.slot_in(w, use)

    def epilogue_iteration(self, j, w):
        """Ring iteration of the stage that consumer warpgroup w stages tile j in (in_ring)."""
        e = self.e
        return e.add(e.add(e.mul(j, self.mode.per_tile), self.mode.ktiles), w)
