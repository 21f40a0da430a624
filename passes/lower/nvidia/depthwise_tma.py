"""The TMA depthwise kernel (sm_90a / sm_100a): depthwise convs with channel multiplier 1 as a
persistent direct convolution over shared-memory input tiles.

Depthwise convs do R*S multiply-adds per loaded element: they are bound by memory traffic and
instruction issue, not by math units. The direct kernel (common/direct_grouped.py) reads each
input pixel from L2 once per filter row and spends a third of its instructions on addresses
and bounds; here a CTA walks its tiles (geometry: depthwise_tile.py) through a ring of
`stages` shared-memory slots:

- thread 0 writes the input's tensor map, then keeps `stages` tiles in flight: one TMA box per
  tile (the whole input window of the tile, zeros outside the image: the padding), completing
  the slot's mbarrier;
- with the window, a second box brings the tile's R x S taps into the slot (the same mbarrier);
- every thread waits for the slot, computes its items (V channels x `pixels` outputs along W
  of one output row: per filter row the input columns and the S taps from shared memory,
  pixels x S vector FMAs, f32 or packed-f16 rows as the direct kernel), then the shared
  epilogue;
- a CTA barrier ends the tile: the slot is free, and thread 0 refills it with the tile
  `stages` ahead.

Tiles run channel blocks fastest, then columns, rows and images, over CTAs round-robin, so
neighbouring row tiles (which share R-1 input rows) are in flight together and meet in L2.
"""

from __future__ import annotations

from ...ir import arith_d, hal_d, vector_d
from ...kernel_configs import DepthwiseTmaConfig
from ...problem import ConvProblem
from ...schedule import Schedule
from ..common.direct_grouped import row_fmas
from ..common.emit import Emitter, float_type, vec_type, zeros
from ..common.epilogue import store_row_masked
from . import tensormap as tm
from .depthwise_tile import DepthwiseTile, depthwise_tile, filter_map_args, input_map_args
from .primitives import I32, index_to, mbarrier_init_fence, tma_load
from .ring import MbarrierRing
from .smem import Carve, SharedBlock
from .tma_loader import descriptor_slots, write_descriptors

DESCRIPTORS = 2                   # the input, the filter


class DepthwiseLayout:
    """Shared memory: [tile slots][full barriers]."""

    def __init__(self, g: DepthwiseTile, stages: int):
        carve = Carve()
        self.slots = carve.take(g.slot_bytes, stages, align=128)
        self.full = carve.barriers(stages)
        self.total = carve.top


def tile_geometry(p: ConvProblem, s: Schedule) -> DepthwiseTile:
    c = s.config_as(DepthwiseTmaConfig)
    return depthwise_tile(p, c.channels, c.rows, c.cols, c.pixels)


class DepthwiseTma:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.e = Emitter()
        self.config = s.config_as(DepthwiseTmaConfig)
        self.g = tile_geometry(p, s)
        self.lay = DepthwiseLayout(self.g, s.stages)
        if self.lay.total != s.smem_bytes:
            raise ValueError(f"schedule has {s.smem_bytes} B of shared memory, the tile ring needs {self.lay.total}")

    def emit(self, memrefs) -> None:
        p, e, g, lay, st = self.p, self.e, self.g, self.lay, self.s.stages
        self.memrefs = memrefs
        self.pid = hal_d.InterfaceWorkgroupIDOp(0).result
        tid = self.m.thread_id(e)
        self.smem = SharedBlock(self.m, lay.total)
        # tile slots with only `full` barriers: the CTA barrier after a tile releases its slot
        self.ring = MbarrierRing(e, self.smem, lay.full)
        self.elems = self.smem.view(float_type(p.dtype))
        self.desc, self.filter_desc = descriptor_slots(self.pid, memrefs[-1], DESCRIPTORS)
        count = e.div(e.add(e.sub(g.tiles, self.pid), self.s.grid[0] - 1), self.s.grid[0])
        issuer = e.cmp("eq", tid, 0)
        with e.if_(issuer):
            write_descriptors([tm.encode_tiled(input_map_args(p, g)), tm.encode_tiled(filter_map_args(p, g))],
                              [self.desc, self.filter_desc], [memrefs[p.input], memrefs[p.filter]])
            self.ring.init()
            mbarrier_init_fence()
        self.m.barrier()
        with e.if_(issuer):
            for i in range(st):
                with e.if_(e.cmp("slt", i, count)):
                    self._issue(i, i)
        threads = self.s.threads
        with e.for_(0, count, 1) as (j, _, _y):
            slot = self.ring.wait_at(j)
            for k in range(-(-g.items // threads)):      # passes over the tile's items
                item = e.add(tid, k * threads)
                lane = e.rem(item, g.lanes)
                seg = e.rem(e.div(item, g.lanes), g.segments)
                row = e.div(item, g.lanes * g.segments)
                if (k + 1) * threads <= g.items:
                    self._item(j, slot, lane, seg, row)
                else:
                    with e.if_(e.cmp("slt", item, g.items)):
                        self._item(j, slot, lane, seg, row)
            self.m.barrier()                       # every thread is done with the slot
            ahead = e.add(j, st)
            with e.if_(e.all_of(issuer, e.cmp("slt", ahead, count))):
                self._issue(ahead, slot)

    # ------------------------------------------------------------------ tiles
    def _tile(self, j):
        """(n, first output row, first output column, first channel) of this CTA's j-th tile."""
        e, g = self.e, self.g
        t = e.add(self.pid, e.mul(j, self.s.grid[0]))
        cb = e.rem(t, g.tiles_c)
        rest = e.div(t, g.tiles_c)
        wb = e.rem(rest, g.tiles_w)
        rest = e.div(rest, g.tiles_w)
        return e.div(rest, g.tiles_h), e.mul(e.rem(rest, g.tiles_h), g.rows), e.mul(wb, g.cols), e.mul(cb, g.channels)

    def _issue(self, j, slot) -> None:
        """Thread 0: arm slot's barrier and TMA-load the input window and the taps of tile j
        into it."""
        p, e, g = self.p, self.e, self.g
        n, ho0, wo0, c0 = self._tile(j)
        bar = self.ring.arm(slot, g.box_bytes + g.taps_bytes)
        coords = [c0, e.sub(e.mul(wo0, p.stride[1]), p.pad[1]), e.sub(e.mul(ho0, p.stride[0]), p.pad[0]), n]
        dst = self.smem.element(self.lay.slots, slot)
        tma_load(dst, self.desc, [index_to(c, I32()) for c in coords], bar)
        tma_load(arith_d.addi(dst, arith_d.constant(dst.type, g.taps_offset)), self.filter_desc,
                 [index_to(c0, I32()), index_to(e.c(0), I32())], bar)

    # ------------------------------------------------------------------ one item
    def _item(self, j, slot, lane, seg, row) -> None:
        p, e, g = self.p, self.e, self.g
        V, P = g.vec, g.pixels
        eb = g.elem_bytes
        n, ho0, wo0, c0 = self._tile(j)
        channel = e.add(c0, e.mul(lane, V))
        # element index of (input row 0 of this item's output row, its first column, its lane)
        base = e.add(e.mul(e.add(e.mul(e.mul(row, p.stride[0]), g.in_cols), e.mul(seg, P * p.stride[1])), g.channels),
                     e.add(e.mul(slot, g.slot_bytes // eb), e.mul(lane, V)))
        taps_base = e.add(e.mul(slot, g.slot_bytes // eb), e.add(g.taps_offset // eb, e.mul(lane, V)))
        cols = sorted({i * p.stride[1] + sx * p.dilation[1] for i in range(P) for sx in range(p.S)})
        vt = vec_type(V, p.dtype)
        loop = e.for_(0, p.R, 1, [zeros(vec_type(V, "f32"))] * P)
        with loop as (r, accs, set_r):
            rbase = e.add(base, e.mul(r, p.dilation[0] * g.in_cols * g.channels))
            xs = {q: vector_d.load(vt, self.elems, [e.add(rbase, q * g.channels)]) for q in cols}
            row_taps = e.add(taps_base, e.mul(r, p.S * g.channels))
            taps = [vector_d.load(vt, self.elems, [e.add(row_taps, sx * g.channels)]) for sx in range(p.S)]
            set_r(row_fmas(p, P, V, self.config.accumulate, xs, taps, accs))
        ho = e.add(ho0, row)
        wo = e.add(wo0, e.mul(seg, P))
        for i, acc in enumerate(loop.results):
            with e.if_(e.all_of(e.cmp("slt", ho, p.Ho), e.cmp("slt", e.add(wo, i), p.Wo))):
                m = e.add(e.mul(e.add(e.mul(n, p.Ho), ho), p.Wo), e.add(wo, i))
                store_row_masked(e, p, self.memrefs, acc, V, m, channel)


def emit_depthwise_tma(p: ConvProblem, s: Schedule, machine, memrefs) -> None:
    DepthwiseTma(p, s, machine).emit(memrefs)
