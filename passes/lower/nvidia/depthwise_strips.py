"""The strip depthwise kernel (sm_90a / sm_100a): depthwise convs with channel multiplier 1 and
stride 1 as banded matrix products on mma.sync m16n8k16 whose 16 rows are 16 images walked
down their rows together (geometry and every index: depthwise_strips_geometry.py).

The band formulation (A: 16 input columns of one channel, B: a filter row as a shifted band, N: 8
output columns) needs A's columns of one channel, while NHWC keeps a pixel's channels together;
depthwise_mma transposes its tile through shared memory and reads each input element once per
filter row. Here the rows of A are 16 images at the same input row, so one fragment serves
every filter row: input row i meets filter row r for output row i - r, accumulated in ring slot
(i - r) mod R, and after step i output row i - R + 1 is complete. Per input row a lane gathers 8
pixels x CG channels from the box (8-byte loads), pairs neighbouring columns of a channel into
A registers (a shuffle: PRMT), and issues R x CG mma.sync (f32 accumulation).

- A persistent CTA walks items (16 images x L output rows x 8 columns x its channel block); thread
  0 writes the input's tensor map and streams one TMA box per input row (the block's channels x
  17 columns x 1 row x 16 images, zeros out of bounds: the padding and the images past N,
  swizzled over the pixel's span so that the gathers spread over the banks) through `stages`
  slots with full/empty mbarriers, refilling a slot LAG steps after its last use.
- Warp w owns channels 4w .. 4w + 3 of the block; its B registers (the 2 x R band pairs per
  channel) come from the filter once per item.
- A finished output row goes through an f32 stage (two, alternating: one CTA barrier per row)
  to the shared epilogue (bias, residual, activations, casts) as 16-byte stores.

The loop over input rows is unrolled R times (ring slots are registers: their indices must be
compile-time), the steps past the last full group emitted after it.

Input columns a fragment reads past its outputs' windows meet zeros of the band: a non-finite
input there (inf, NaN) would poison the products, as in any GEMM formulation.
"""

from __future__ import annotations

from ...ir import ir, arith_d, hal_d, llvm_d, memref_d, vector_d
from ...kernel_configs import DepthwiseStripsConfig
from ...problem import ConvProblem
from ...schedule import Schedule
from ..common.emit import Emitter, float_type, vec_type
from ..common.epilogue import apply_and_store, load_operands
from ..common.int_ops import IrOps
from . import tensormap as tm
from .depthwise_strips_geometry import (CG, IMAGES, LAG, OUT_COLS, DepthwiseStrips, depthwise_strips,
                                        input_map_args)
from .primitives import I32, index_to, mbarrier_init_fence, tma_load
from .ring import MbarrierRing
from .sm80_ops import mma_m16n8k16, warp_sync
from .smem import SharedBlock
from .tma_loader import descriptor_slots, write_descriptors

DESCRIPTORS = 1       # the input's tensor map


def geometry_of(p: ConvProblem, s: Schedule) -> DepthwiseStrips:
    c = s.config_as(DepthwiseStripsConfig)
    return depthwise_strips(p, c.channels, c.rows, s.stages)


class DepthwiseStripsKernel:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.g = geometry_of(p, s)
        self.lay = self.g.layout
        self.e = Emitter()
        self.ops = IrOps(self.e)
        if self.lay.total != s.smem_bytes:
            raise ValueError(f"schedule has {s.smem_bytes} B of shared memory, the layout needs {self.lay.total}")

    def emit(self, memrefs) -> None:
        p, g, e, lay = self.p, self.g, self.e, self.lay
        self.memrefs = memrefs
        self.smem = SharedBlock(self.m, lay.total)
        self.ring = MbarrierRing(e, self.smem, lay.full, lay.empty)
        self.elems = self.smem.view(float_type(p.dtype))
        self.floats = self.smem.view(ir.F32Type.get())
        self.tid = self.m.thread_id(e)
        self.lane, self.warp = e.rem(self.tid, 32), e.div(self.tid, 32)
        self.gl, self.q = e.div(self.lane, 4), e.rem(self.lane, 4)
        self.pid = hal_d.InterfaceWorkgroupIDOp(0).result
        grid = self.s.grid[0]
        count = e.div(e.add(e.sub(g.items, self.pid), grid - 1), grid)     # pid < items: the grid is no larger
        self.nsteps = e.mul(count, g.steps)
        self.desc = descriptor_slots(self.pid, memrefs[-1], DESCRIPTORS)[0]
        self.issuer = e.cmp("eq", self.tid, 0)
        with e.if_(self.issuer):
            write_descriptors([tm.encode_tiled(input_map_args(p, g))], [self.desc], [memrefs[p.input]])
            self.ring.init(g.warps)
            mbarrier_init_fence()
        self.m.barrier()
        with e.if_(self.issuer):
            for gsp in range(g.stages - LAG):
                with e.if_(e.cmp("slt", gsp, self.nsteps)):
                    self._issue(e.c(gsp))
        self._lane_offsets()
        with e.for_(0, count, 1) as (k, _a, _y):
            self._item(k)

    # ------------------------------------------------------------------ staging
    def _issue(self, gsp) -> None:
        """Thread 0: once every warp has released slot gsp % stages, arm its barrier and load
        input row gsp % steps of this CTA's item gsp / steps into it."""
        g, e = self.g, self.e
        t = e.add(self.pid, e.mul(e.div(gsp, g.steps), self.s.grid[0]))
        i = e.rem(gsp, g.steps)
        ig, st, wb, cb = g.item(self.ops, t)
        slot = self.ring.acquire_at(gsp)
        bar = self.ring.arm(slot, g.box_bytes)
        coords = [e.mul(cb, g.channels), e.sub(e.mul(wb, OUT_COLS), self.p.pad[1]),
                  e.add(e.sub(e.mul(st, g.rows), self.p.pad[0]), i), e.mul(ig, IMAGES)]
        tma_load(self.smem.element(self.lay.slots, slot), self.desc, [index_to(e._v(c), I32()) for c in coords], bar)

    def _lane_offsets(self) -> None:
        """Per lane, the element offsets in a slot of its 8 gathers (image g + 8hh, column
        2q + 8kk + e), and the stage's word offsets of its 4 pixels (image g + 8hh, column 2q + e)."""
        g, e, ops = self.g, self.e, self.ops
        c_in = e.mul(self.warp, CG)
        self.goff, self.soff = {}, {}
        for hh in range(2):
            image = e.add(self.gl, 8 * hh)
            for ee in range(2):
                for kk in range(2):
                    col = e.add(e.mul(self.q, 2), 8 * kk + ee)
                    self.goff[hh, kk, ee] = g.gather(ops, image, col, c_in)
                self.soff[hh, ee] = g.stage_index(ops, image, e.add(e.mul(self.q, 2), ee), c_in)

    # ------------------------------------------------------------------ one item
    def _item(self, k) -> None:
        g, e = self.g, self.e
        t = e.add(self.pid, e.mul(k, self.s.grid[0]))
        self.row0 = e.mul(k, g.rows)            # rows staged before this item's (the stages alternate across items)
        self.where = g.item(self.ops, t)
        cb = self.where[3]
        self.c0 = e.add(e.mul(cb, g.channels), e.mul(self.warp, CG))
        self.b = self._band()
        self.gs0 = e.mul(k, g.steps)
        zero = arith_d.constant(ir.F32Type.get(), 0.0)
        ring = [zero] * (g.R * CG * 4)
        groups, tail = divmod(g.steps, g.R)
        loop = e.for_(0, groups, 1, ring)
        with loop as (jg, carried, set_ring):
            ring = list(carried)
            for j in range(g.R):
                ring = self._step(e.add(e.mul(jg, g.R), j), j, ring, first_group=jg)
            set_ring(ring)
        ring = list(loop.results)
        for j in range(tail):
            ring = self._step(e.c(groups * g.R + j), j, ring, first_group=None)

    def _band(self):
        """b[ch][r]: the lane's two B registers for channel c0 + ch and filter row r: taps
        s = k - g of columns k = 2q, 2q + 1 (register 0) and 2q + 8, 2q + 9 (register 1), zero
        outside the row."""
        p, g, e = self.p, self.g, self.e
        w = self.memrefs[p.filter]
        dt = float_type(p.dtype)
        zero = arith_d.constant(dt, 0.0)
        pair_t = vec_type(2, p.dtype)
        taps = {}
        for dk in (0, 1, 8, 9):
            s_ = e.sub(e.add(e.mul(self.q, 2), dk), self.gl)
            taps[dk] = (e.all_of(e.cmp("sge", s_, 0), e.cmp("slt", s_, g.S)), arith_d.maxsi(arith_d.minsi(s_, e.c(g.S - 1)), e.c(0)))
        b = {}
        for ch in range(CG):
            channel = e.add(self.c0, ch)
            for r in range(g.R):
                vals = {}
                for dk, (ok, s_) in taps.items():
                    v = memref_d.load(w, [e.add(e.mul(e.add(s_, r * g.S), p.F), channel)])
                    vals[dk] = arith_d.select(ok, v, zero)
                b[ch, r] = [llvm_d.bitcast(I32(), vector_d.from_elements(pair_t, [vals[lo], vals[lo + 1]]))
                            for lo in (0, 8)]
        return b

    def _step(self, i, j: int, ring: list, first_group) -> list:
        """Input row i (j = i mod R, static): wait for its slot, gather and pair the A
        fragments, release the slot, R x CG mma into the ring; then output row i - R + 1 (when
        i >= R - 1: `first_group` is the group index inside the loop, None after it) through
        the epilogue, and its ring slot zeroed for row i + 1."""
        p, g, e, lay = self.p, self.g, self.e, self.lay
        gs = e.add(self.gs0, i)
        ahead = e.add(gs, g.stages - LAG)
        with e.if_(e.all_of(self.issuer, e.cmp("slt", ahead, self.nsteps))):
            self._issue(ahead)
        slot = self.ring.wait_at(gs)
        base = e.mul(slot, lay.slots.size // g.elem_bytes)
        vt = vec_type(CG, p.dtype)
        v = {key: vector_d.load(vt, self.elems, [e.add(base, off)], alignment=CG * g.elem_bytes)
             for key, off in self.goff.items()}
        a = {}
        for ch in range(CG):
            # a0 (image g, columns 2q..), a1 (image g + 8), a2 (columns 2q + 8..), a3 (both)
            a[ch] = [llvm_d.bitcast(I32(), vector_d.shuffle(v[hh, kk, 0], v[hh, kk, 1], [ch, CG + ch]))
                     for kk in range(2) for hh in range(2)]
        warp_sync()
        with e.if_(e.cmp("eq", self.lane, 0)):
            self.ring.release(slot)
        ring = list(ring)
        for r in range(g.R):
            sl = (j - r) % g.R
            for ch in range(CG):
                at = (sl * CG + ch) * 4
                ring[at:at + 4] = mma_m16n8k16(a[ch], self.b[ch, r], ring[at:at + 4], p.dtype)
        done = (j + 1) % g.R
        accs = ring[done * CG * 4:(done + 1) * CG * 4]
        o = e.sub(i, g.R - 1)
        if j == g.R - 1 or first_group is None:
            self._epilogue(o, accs)
        else:
            with e.if_(e.cmp("sge", first_group, 1)):
                self._epilogue(o, accs)
        zero = arith_d.constant(ir.F32Type.get(), 0.0)
        ring[done * CG * 4:(done + 1) * CG * 4] = [zero] * (CG * 4)
        return ring

    # ------------------------------------------------------------------ epilogue
    def _epilogue(self, o, accs) -> None:
        """Output row o of the item: the lanes' accumulators into the next stage, a CTA barrier,
        then threads take (pixel, 8 channels) of the stage for the shared epilogue."""
        p, g, e = self.p, self.g, self.e
        ig, st, wb, cb = self.where
        stage0 = e.add(e.mul(e.rem(e.add(self.row0, o), 2), g.stage_words), self.lay.stage.offset // 4)
        f4 = vec_type(CG, "f32")
        for hh in range(2):
            for ee in range(2):
                vals = [accs[ch * 4 + 2 * hh + ee] for ch in range(CG)]
                vector_d.store(vector_d.from_elements(f4, vals), self.floats,
                               [e.add(stage0, self.soff[hh, ee])], alignment=16)
        self.m.barrier()
        chunks = g.channels // 8
        vectors = IMAGES * OUT_COLS * chunks
        oh = e.add(e.mul(st, g.rows), o)
        f8 = vec_type(8, "f32")
        items = []
        for kk in range(-(-vectors // g.threads)):
            idx = e.add(self.tid, kk * g.threads)
            conds = []
            if (kk + 1) * g.threads > vectors:
                conds.append(e.cmp("slt", idx, vectors))
                idx = arith_d.minsi(idx, e.c(vectors - 1))
            chunk, pix = e.rem(idx, chunks), e.div(idx, chunks)
            image, col = e.div(pix, OUT_COLS), e.rem(pix, OUT_COLS)
            n, ow = e.add(e.mul(ig, IMAGES), image), e.add(e.mul(wb, OUT_COLS), col)
            ok = e.all_of(*conds, e.cmp("slt", n, p.N), e.cmp("slt", oh, p.Ho), e.cmp("slt", ow, p.Wo))
            # operands at a clamped, in-bounds pixel; only the store is masked
            m = e.add(e.mul(e.add(e.mul(arith_d.minsi(n, e.c(p.N - 1)), p.Ho), arith_d.minsi(oh, e.c(p.Ho - 1))), p.Wo),
                      arith_d.minsi(ow, e.c(p.Wo - 1)))
            f = e.add(e.mul(cb, g.channels), e.mul(chunk, 8))
            operands = load_operands(e, p, self.memrefs, 8, m, f, aligned=True)
            acc = vector_d.load(f8, self.floats, [e.add(stage0, g.stage_index(self.ops, image, col, e.mul(chunk, 8)))],
                                alignment=16)
            items.append((ok, acc, m, f, operands))
        for ok, acc, m, f, operands in items:
            with e.if_(ok):
                apply_and_store(e, p, self.memrefs, acc, 8, m, f, aligned=True, operands=operands)


def emit_depthwise_strips(p: ConvProblem, s: Schedule, machine, memrefs) -> None:
    DepthwiseStripsKernel(p, s, machine).emit(memrefs)
