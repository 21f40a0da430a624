"""sm_90a persistent warp-specialized kernel for convs whose pixels TMA cannot address (e.g. the
3-channel ResNet stem): row-slab TMA loads + register-A wgmma (geometry in row_slab.py).

384 threads, each role one branch of one if/else:
- producer (warpgroup 0, `setmaxnreg.dec` 40): one thread walks this CTA's tiles (one output
  row of one 64-channel block each) and TMA-loads the tile's R input rows into a ring slot
  (one box for all R rows, zero fill for the padding), waiting on `empty`, arming `full`;
- two consumer warpgroups (`setmaxnreg.inc` 232) take alternate tiles. The ring has an even
  number of slots, so each slot always serves the same warpgroup. A consumer builds its wgmma
  A fragments straight from the slab (one ld.shared.b32 per fragment register, a per-thread
  base plus compile-time offsets), and multiplies them by the filter, which every CTA stages
  once in shared memory (128B-swizzled, zero-padded K) at start; then bias/activation in
  registers, a 128B-swizzled staging tile, and a TMA store through a 3-D output map
  [N*Ho, Wo, F] that clips the rows past Wo.

f32 operands run as TF32 k8 wgmmas with single-element fragment registers; where a tile's
fragments for both sub-blocks would not fit beside the accumulators (row_slab.carry), the
consumer runs its sub-blocks one after the other (_serial_tiles) instead of prefetching.

Only per-channel epilogue operands (bias) are supported; the planner sends convs with a
residual elsewhere.
"""

from __future__ import annotations

from ...ir import arith_d, hal_d, llvm_d, memref_d, vector_d
from ...problem import INPUT_DTYPES, ConvProblem, DTYPE_BYTES
from ...schedule import Schedule
from ..common.emit import Emitter, float_type, vec_type
from .primitives import (I32, I64, as_shared_ptr, async_proxy_fence, bulk_commit, bulk_wait_read, i64,
                         index_to, mbarrier_init_fence,
                         named_barrier, smem_matrix_descriptor, tma_load, tma_store,
                         undef_accumulator, wgmma_commit, wgmma_fence, wgmma_rega, wgmma_wait)
from .row_slab import CHUNK, RowSlab, RowSlabUnsupported, row_slab
from .sm90_igemm import SWIZZLE_ATOM_BYTES
from .warp_roles import THREADS, WARPGROUP, channel_operands, split_roles, stage_fragments
from .ring import MbarrierRing
from .smem import BLOCK_ALIGN, Carve, SharedBlock
from .tma_loader import _TM_ELEM, _TM_TYPE, acquire_descriptor, descriptor_slots, epilogue_panel, write_descriptors
from . import tensormap as tm

DESCRIPTORS = 2                  # input rows, output
MAX_STAGES = 8


def _align(x: int, a: int = 1024) -> int:
    return -(-x // a) * a


def input_map_args(p: ConvProblem, g: RowSlab) -> tm.TiledArgs:
    """The input as [N, H, W*C / G, G]: one box is the whole slab of a tile, [rows_box,
    groups, G] (row_slab.py)."""
    eb = DTYPE_BYTES[p.dtype]
    wc = p.W * p.C
    return tm.TiledArgs(data_type=_TM_TYPE[p.dtype], global_dim=(g.group, wc // g.group, p.H, p.N),
                        global_strides=(g.group * eb, wc * eb, p.H * wc * eb),
                        box_dim=(g.group, g.groups, g.rows_box, 1),
                        l2_promotion=tm.L2Promotion.B256)


def output_map_args(p: ConvProblem, rows: int, block_n: int) -> tm.TiledArgs:
    """The output as [N*Ho, Wo, F]; a box is one swizzle panel (epilogue_panel) of `rows`
    pixels of one output row (pixels past Wo are clipped by the store)."""
    ob = DTYPE_BYTES[p.out_dtype]
    panel = epilogue_panel(p.out_dtype, block_n)
    return tm.TiledArgs(data_type=_TM_ELEM[p.out_dtype], global_dim=(p.F, p.Wo, p.N * p.Ho),
                        global_strides=(p.F * ob, p.Wo * p.F * ob),
                        box_dim=(panel.cols, rows, 1), swizzle=panel.swizzle,
                        l2_promotion=tm.L2Promotion.B128)


class RowsLayout:
    """Shared memory: [slab slots][filter k-tiles][staging x2][full][empty].

    The filter region is at least one slab slot long: a consumer with no next tile takes its
    (unused) fragment prefetch from there, memory nothing rewrites after the prologue."""

    def __init__(self, p: ConvProblem, g: RowSlab, stages: int):
        carve = Carve()
        self.rows = 64 * g.subs
        self.filt_tile = p.F * 128                       # one 64-wide K tile of all F rows
        self.slabs = carve.take(_align(g.slab_bytes), stages)
        self.filter = carve.take(max(g.ktiles * self.filt_tile, self.slabs.size))
        self.staging = carve.take(self.rows * g.block_n * DTYPE_BYTES[p.out_dtype], 2, align=BLOCK_ALIGN)
        self.full, self.empty = carve.barriers(stages), carve.barriers(stages)
        self.total = carve.top

    stages = property(lambda self: self.slabs.count)
    slot = property(lambda self: self.slabs.size)
    filt0 = property(lambda self: self.filter.offset)
    stage0 = property(lambda self: self.staging.offset)
    stage_bytes = property(lambda self: self.staging.size)
    bars = property(lambda self: self.full.offset)


def check_supported(p: ConvProblem) -> RowSlab:
    """Raises RowSlabUnsupported (a ValueError) with the reason."""
    g = row_slab(p)
    if p.reads_residual:
        raise RowSlabUnsupported("output-shaped epilogue operand (residual)")
    if p.dtype not in INPUT_DTYPES:          # float operands (the TMA maps also take i8)
        raise RowSlabUnsupported(f"dtype {p.dtype}")
    tm.encode_tiled(input_map_args(p, g))
    tm.encode_tiled(output_map_args(p, 64 * g.subs, g.block_n))
    return g


class Sm90Rows:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.e = Emitter()
        self.g = row_slab(p)
        self.lay = RowsLayout(p, self.g, s.stages)
        self.block_n = self.g.block_n
        self.fblocks = p.F // self.block_n
        self.tiles = p.N * p.Ho * self.fblocks

    def emit(self, memrefs) -> None:
        p, e, lay = self.p, self.e, self.lay
        self.memrefs = memrefs
        self.pid = hal_d.InterfaceWorkgroupIDOp(0).result
        tid = self.m.thread_id(e)
        self.smem = SharedBlock(self.m, lay.total)
        self.ring = MbarrierRing(e, self.smem, lay.full, lay.empty)
        descs = [tm.encode_tiled(input_map_args(p, self.g)), tm.encode_tiled(output_map_args(p, lay.rows, self.block_n))]
        self.slots = descriptor_slots(self.pid, memrefs[-1], DESCRIPTORS)
        with e.if_(e.cmp("eq", tid, 0)):
            write_descriptors(descs, self.slots, [memrefs[p.input], memrefs[p.num_operands]])
            self.ring.init(WARPGROUP // 32)
            mbarrier_init_fence()
        self._stage_filter(tid)
        async_proxy_fence()              # generic stores of the filter -> wgmma (async proxy)
        self.m.barrier()
        split_roles(e, tid, self._producer, lambda cw: self._consumer(cw, e.rem(tid, WARPGROUP)))

    # ------------------------------------------------------------------ filter
    def _stage_filter(self, tid) -> None:
        """All threads: the filter as [ktiles][F][128 bytes] 128B-swizzled rows, K ordered (r, j')
        as the slab (row_slab.py), zeros in the padding slots and past R*SC2 (16-byte units
        of scalar loads: the source rows are not 16-byte aligned)."""
        p, g, e, lay = self.p, self.g, self.e, self.lay
        unit_elems = 16 // g.elem_bytes                # a unit lies in one chunk, so in one filter row
        per_row = g.ktiles * 8                         # 16-byte units per output channel
        jobs = p.F * per_row
        dt = float_type(p.dtype)
        elems = self.smem.view(dt)
        w = self.memrefs[p.filter]
        rsc = p.R * g.sc
        for it in range(-(-jobs // THREADS)):
            job = e.add(tid, it * THREADS)
            f = e.div(job, per_row)
            kc = e.rem(job, per_row)
            k0 = e.mul(kc, unit_elems)
            r = e.div(k0, g.sc2)
            cj = e.rem(k0, g.sc2)
            ok_row = e.all_of(e.cmp("slt", job, jobs), e.cmp("slt", r, p.R))
            vals = []
            for i in range(unit_elems):
                j = e.sub(e.add(cj, i), g.lead)             # s*C + c of K slot cj + i
                ok = e.all_of(ok_row, e.cmp("sge", j, 0), e.cmp("slt", j, g.sc))
                idx = e.add(e.add(e.mul(f, rsc), e.mul(r, g.sc)), j)
                x = memref_d.load(w, [e.select(ok, idx, 0)])
                vals.append(arith_d.select(ok, x, arith_d.constant(dt, 0.0)))
            vec = vector_d.from_elements(vec_type(unit_elems, p.dtype), vals)
            unit = arith_d.xori(e.rem(kc, 8), e.rem(f, 8))
            byte = e.add(e.add(lay.filt0, e.mul(e.div(kc, 8), lay.filt_tile)), e.add(e.mul(f, 128), e.mul(unit, 16)))
            with e.if_(e.cmp("slt", job, jobs)):
                vector_d.store(vec, elems, [e.div(byte, g.elem_bytes)], alignment=16)

    # ------------------------------------------------------------------ tiles
    def _local_count(self):
        e, grid = self.e, self.s.grid[0]
        return e.div(e.add(e.sub(self.tiles, self.pid), grid - 1), grid)

    def _tile(self, j):
        """(output row index n*Ho + ho, first channel) of this CTA's j-th tile."""
        e = self.e
        t = e.add(self.pid, e.mul(j, self.s.grid[0]))
        return e.div(t, self.fblocks), e.mul(e.rem(t, self.fblocks), self.block_n)

    # ------------------------------------------------------------------ producer
    def _producer(self) -> None:
        p, g, e, lay = self.p, self.g, self.e, self.lay
        with e.for_(0, self._local_count(), 1) as (j, _, _y):
            row, _n0 = self._tile(j)
            n = e.div(row, p.Ho)
            ho = e.rem(row, p.Ho)
            slot, phase = self.ring.slot(j)
            self.ring.acquire(slot, phase)
            full = self.ring.arm(slot, g.slab_bytes)
            dst0 = self.smem.element(lay.slabs, slot)
            h0 = e.sub(e.mul(ho, p.stride[0]), p.pad[0])
            x0 = arith_d.constant(I32(), g.xs // g.group)
            for b in range(g.boxes):             # one box, or one per row with a dilation along H
                hi = index_to(e.add(h0, b * p.dilation[0]), I32())
                dst = arith_d.addi(dst0, i64(b * g.pitch * g.elem_bytes))
                tma_load(dst, self.slots[0], [arith_d.constant(I32(), 0), x0, hi, index_to(n, I32())], full)

    # ------------------------------------------------------------------ consumers
    def _consumer(self, cw, wtid) -> None:
        p, g, e, lay = self.p, self.g, self.e, self.lay
        elected = e.cmp("eq", wtid, 0)
        with e.if_(elected):
            acquire_descriptor(self.slots[1])
        lane = e.rem(wtid, 32)
        warp = e.div(wtid, 32)
        q = e.rem(lane, 4)
        row_off = self._row_offsets(warp, lane, q)
        masks = self._masks(q)
        count = e.div(e.add(e.sub(self._local_count(), cw), 1), 2)
        with e.if_(e.cmp("sgt", count, 0)):
            if g.carry:
                self._overlapped_tiles(cw, count, lane, warp, q, elected, row_off, masks)
            else:
                self._serial_tiles(cw, count, lane, warp, q, elected, row_off, masks)
        with e.if_(elected):
            bulk_wait_read(0)

    def _overlapped_tiles(self, cw, count, lane, warp, q, elected, row_off, masks) -> None:
        """A warpgroup's tiles with every sub-block's fragments live at once. The first
        sub-block's fragments of a warpgroup's next tile are loaded during this tile's
        epilogue and carried into the next iteration: a warpgroup runs its tiles as a serial
        chain, and the fragment loads were a quarter of it (bench/NOTES.md, v21)."""
        p, g, e, lay = self.p, self.g, self.e, self.lay
        slot0, phase0 = self.ring.slot(cw)
        self.ring.wait(slot0, phase0)
        first = self._flat_fragments(self.smem.element(lay.slabs, slot0), row_off[0], masks)
        loop = e.for_(0, count, 1, first)
        with loop as (t, carried, set_res):
            j = e.add(cw, e.mul(t, 2))
            row, n0 = self._tile(j)
            channel_ops = channel_operands(e, p, self.memrefs, n0, e.mul(q, 2), self.block_n)
            slot, _phase = self.ring.slot(j)
            slab = self.smem.element(lay.slabs, slot)
            b_base = self._filter_base(n0)
            accs = []
            for sub in range(g.subs):
                # Fragments stay live until the wgmmas reading them finish (wait_group).
                if sub == 0:
                    regs = [list(carried[4 * kk:4 * kk + 4]) for kk in range(g.ksteps)]
                else:
                    regs = [self._fragment(slab, row_off[sub], kk, masks) for kk in range(g.ksteps)]
                accs.append(self._mma(b_base, regs))
            # The wgmmas read A from registers, so the slab is free once they are issued.
            with e.if_(e.cmp("eq", lane, 0)):
                self.ring.release(slot)
            has_next = e.cmp("slt", e.add(t, 1), count)
            nslot, nphase = self.ring.slot(e.add(j, 2))

            def prefetch():
                """The next tile's first fragments (from the filter area, never rewritten,
                when there is no next tile: the values are not used)."""
                with e.if_(has_next):
                    self.ring.wait(nslot, nphase)
                nslab = arith_d.select(has_next, self.smem.element(lay.slabs, nslot),
                                       self.smem.element(lay.filter, 0))
                return self._flat_fragments(nslab, row_off[0], masks)
            set_res(self._epilogue(accs, cw, row, n0, warp, lane, elected, channel_ops, prefetch))

    def _serial_tiles(self, cw, count, lane, warp, q, elected, row_off, masks) -> None:
        """A warpgroup's tiles with one sub-block's fragments live at a time (row_slab.carry
        False: TF32 fragments of a 7x7 stem take 84 registers per sub-block): each sub-block's
        wgmmas finish before the next one's fragments are loaded into the same registers; the
        other warpgroup's tile may use the tensor cores meanwhile (not measured apart)."""
        p, g, e, lay = self.p, self.g, self.e, self.lay
        with e.for_(0, count, 1) as (t, _c, _y):
            j = e.add(cw, e.mul(t, 2))
            row, n0 = self._tile(j)
            channel_ops = channel_operands(e, p, self.memrefs, n0, e.mul(q, 2), self.block_n)
            slot, phase = self.ring.slot(j)
            self.ring.wait(slot, phase)
            slab = self.smem.element(lay.slabs, slot)
            b_base = self._filter_base(n0)
            accs = []
            for sub in range(g.subs):
                if sub:
                    wgmma_wait(0)            # the previous sub-block's fragments are free
                regs = [self._fragment(slab, row_off[sub], kk, masks) for kk in range(g.ksteps)]
                accs.append(self._mma(b_base, regs))
            with e.if_(e.cmp("eq", lane, 0)):
                self.ring.release(slot)
            self._epilogue(accs, cw, row, n0, warp, lane, elected, channel_ops, lambda: [])

    def _filter_base(self, n0):
        """Shared-memory byte address of output channel n0's row of the first filter K tile."""
        return arith_d.addi(self.smem.element(self.lay.filter, 0), arith_d.muli(index_to(n0, I64()), i64(128)))

    def _row_offsets(self, warp, lane, q) -> list:
        """Per m64 sub-block, this thread's slab byte offsets of fragment rows g and g+8
        (pixels past Wo clamped to the last one), at its first K element (pair*q)."""
        p, g, e = self.p, self.g, self.e
        row_off = []
        for sub in range(g.subs):
            offs = []
            for hr in range(2):
                wo = e.add(e.add(e.mul(warp, 16), e.div(lane, 4)), 64 * sub + 8 * hr)
                wo = e.select(e.cmp("slt", wo, p.Wo), wo, p.Wo - 1)
                offs.append(index_to(e.mul(e.add(e.mul(wo, g.row_step), e.mul(q, g.pair)), g.elem_bytes), I64()))
            row_off.append(offs)
        return row_off

    def _masks(self, q) -> dict:
        """{first K slot j' of a register's span: i32 mask}: near a filter row's ends a lane's
        register may hold zero-weight slots (the leading slot, or past S*C), whose slab values
        (neighbouring pixels, possibly not finite) are cleared: per 16-bit half of a pair, or
        the whole TF32 value."""
        g, e = self.g, self.e
        span = g.kstep // 2
        c = lambda v: arith_d.constant(I32(), v)
        masks = {}
        for kk in range(g.ksteps):
            for at in g.registers(kk):
                if at is None or at[2] in masks or all(g.valid(at[2] + i) for i in range(span)):
                    continue
                k = e.add(e.mul(q, g.pair), at[2])
                ok = [e.all_of(e.cmp("sge", k, g.lead - i), e.cmp("slt", k, g.lead + g.sc - i)) for i in range(g.pair)]
                if g.pair == 1:
                    masks[at[2]] = arith_d.select(ok[0], c(-1), c(0))
                else:
                    masks[at[2]] = arith_d.ori(arith_d.select(ok[0], c(0xFFFF), c(0)),
                                               arith_d.select(ok[1], c(-65536), c(0)))
        return masks

    def _flat_fragments(self, slab, offs, masks) -> list:
        """All k-steps' A registers of one sub-block, flattened (loop-carried values)."""
        return [v for kk in range(self.g.ksteps) for v in self._fragment(slab, offs, kk, masks)]

    def _mma(self, b_base, regs):
        """One sub-block's wgmmas (A from regs per k-step: 32 bytes of K each, like the filter
        rows' swizzle atoms), one commit group."""
        p, g, lay = self.p, self.g, self.lay
        wgmma_fence()
        acc = undef_accumulator(self.block_n)
        for kk in range(g.ksteps):
            kt, kin = divmod(kk, 4)
            db = smem_matrix_descriptor(arith_d.addi(b_base, i64(kt * lay.filt_tile + 32 * kin)), SWIZZLE_ATOM_BYTES)
            acc = wgmma_rega(acc, regs[kk], db, self.block_n, p.dtype, accumulate=kk > 0)
        wgmma_commit()                   # one group per sub-block
        return acc

    def _fragment(self, slab, offs, kk: int, masks):
        """The four A registers of k-step kk (RowSlab.registers), b32 slab loads."""
        g = self.g
        regs = []
        for at in g.registers(kk):
            if at is None:
                regs.append(arith_d.constant(I32(), 0))
                continue
            hr, r, j = at
            addr = arith_d.addi(arith_d.addi(slab, offs[hr]), i64(g.offset(0, r, j) * g.elem_bytes))
            v = llvm_d.load(I32(), as_shared_ptr(addr), alignment=4)
            if j in masks:
                v = arith_d.andi(v, masks[j])
            regs.append(v)
        return regs

    def _epilogue(self, accs, cw, row, n0, warp, lane, elected, channel_ops, after_first):
        """Stage and store the tile; after_first() runs once the first sub-block is staged (its
        wgmma registers are free by then) and its result is returned."""
        p, e, lay = self.p, self.e, self.lay
        with e.if_(elected):
            bulk_wait_read(0)            # the previous store from this slot has read it
        named_barrier(e.add(cw, 1), WARPGROUP)
        slot = self.smem.element(lay.staging, cw)
        for sub, acc in enumerate(accs):
            wgmma_wait(len(accs) - 1 - sub)      # stage sub-block sub while the later ones multiply
            stage_fragments(e, p, [acc], self.block_n, slot, lay.rows, warp, lane, channel_ops, first_sub=sub)
            if sub == 0:
                result = after_first()
        async_proxy_fence()
        named_barrier(e.add(cw, 1), WARPGROUP)
        with e.if_(elected):
            for off, ch in epilogue_panel(p.out_dtype, self.block_n).boxes(self.block_n, lay.rows):
                tma_store(self.slots[1], arith_d.addi(slot, i64(off)),
                          [index_to(e.add(n0, ch), I32()), arith_d.constant(I32(), 0), index_to(row, I32())])
            bulk_commit()
        return result


def emit_sm90_rows(p: ConvProblem, s: Schedule, machine, memrefs) -> None:
    Sm90Rows(p, s, machine).emit(memrefs)
