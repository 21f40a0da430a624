"""Grouped convs on tensor cores (sm_90a, sm_100a): an implicit GEMM per block of whole groups
with warp-level mma.sync m16n8k16 (f16/bf16 in, f32 accumulation). Geometry, shared-memory
layout and every address: grouped_mma_geometry.py (the numpy model test runs the same code).

CTA (x, y) computes channel block y (Schedule.block_n output channels of whole groups) for
output tiles x, x + grid_x, ... (the filter block is staged once per CTA, block-diagonal, so a
CTA amortizes it over its tiles). Per tile, 256 threads copy the input patch with 16-byte
cp.async (zero fill outside the image) into one of `stages` patch buffers, the next tile's
copies in flight while this one computes (two buffers); warps take m16 x n8 fragments: A by
ldmatrix.x4 straight from the patch rows (a tap is a constant address offset), B by
ldmatrix.x2 from the staged filter, mma.sync into f32 registers; the epilogue is the shared
one (bias, residual, relu, casts, programs), two channels per store.

With channel slices (GroupedMmaConfig.slices, dense convs): the CTA walks (tile, slice) items
through `stages` slice buffers, cp.async of item k + stages - 1 issued before the math of item
k, one commit group per item; the accumulators of a tile carry over its slices and the epilogue
follows its last one. stages divides slices, so every item's buffer is known at compile time.
"""

from __future__ import annotations

from ...ir import ir, arith_d, hal_d, memref_d, vector_d
from ...problem import ConvProblem, DTYPE_BYTES
from ...kernel_configs import GroupedMmaConfig
from ...schedule import Schedule
from ..common.emit import Emitter, cdiv, float_type, vec_type
from ..common.epilogue import apply_and_store
from ..common.int_ops import IrOps
from .grouped_mma_geometry import THREADS, Geometry
from .primitives import I64, address_of, index_to
from .sm80_ops import cp_async_16, cp_async_commit, cp_async_wait, ldmatrix, mma_m16n8k16, pair


def geometry_of(p: ConvProblem, s: Schedule) -> Geometry:
    c = s.config_as(GroupedMmaConfig)
    return Geometry(p, c.rows, c.cols, c.slices)


class GroupedMma:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.g = geometry_of(p, s)
        self.e = Emitter()
        self.ops = IrOps(self.e)
        self.x = None

    # ------------------------------------------------------------------ helpers
    def _i64(self, idx):
        return index_to(self.e._v(idx), I64())

    def _addr(self, base_i64, offset):
        """base + offset (index or int) as i64."""
        if isinstance(offset, int) and offset == 0:
            return base_i64
        return arith_d.addi(base_i64, self._i64(offset))

    # ------------------------------------------------------------------ kernel
    def emit(self, memrefs) -> None:
        p, s, g, e, ops = self.p, self.s, self.g, self.e, self.ops
        smem = self.m.alloc_workgroup([s.smem_bytes // 2], p.dtype, alignment=128)
        self.smem = smem
        base = address_of(smem)
        self.base = base
        self.filt = base
        self.bufs = [self._addr(base, g.filter_bytes + b * g.patch_bytes) for b in range(s.stages)]
        self.x_addr = address_of(memrefs[p.input])
        self.x_memref = memrefs[p.input]
        tid = self.m.thread_id(e)
        self.tid = tid
        self.lane, warp = e.rem(tid, 32), e.div(tid, 32)
        self.wm, self.wn = e.div(warp, g.wn), e.rem(warp, g.wn)
        x = hal_d.InterfaceWorkgroupIDOp(0).result
        cb = hal_d.InterfaceWorkgroupIDOp(1).result
        self.x = getattr(memrefs, "extents", None)       # runtime sizes (batch, H, W), else None
        n_images = p.N if self.x is None else self.x.N
        total = e.mul(n_images, g.tile_counts(self.ops, self.x)[1])
        self._zero_pad_channels()
        self._stage_filter(memrefs[p.filter], cb)
        gx = s.grid[0]
        if g.slices > 1:
            self._sliced_loop(memrefs, x, total, gx, cb)
            return
        with e.if_(e.cmp("slt", x, total)):
            self._stage_patch(x, cb, self.bufs[0])
        cp_async_commit()
        loop = e.for_(x, total, gx, [e.c(0)])
        with loop as (t, (k,), set_k):
            nxt = e.add(t, gx)
            if s.stages == 2:
                cur = e.rem(k, 2)
                other = self._select_buf(e.sub(1, cur))
                with e.if_(e.cmp("slt", nxt, total)):
                    self._stage_patch(nxt, cb, other)
                cp_async_commit()
                cp_async_wait(1)
                buf = self._select_buf(cur)
            else:
                cp_async_wait(0)
                buf = self.bufs[0]
            self.m.barrier()
            self._tile(memrefs, t, cb, buf)
            self.m.barrier()
            if s.stages == 1:
                with e.if_(e.cmp("slt", nxt, total)):
                    self._stage_patch(nxt, cb, self.bufs[0])
                cp_async_commit()
            set_k([e.add(k, 1)])

    def _sliced_loop(self, memrefs, x, total, gx, cb) -> None:
        """Items (tile, slice) of this CTA's tiles x, x + gx, ...: slice buffer (item % stages),
        item k + stages - 1 copied while item k is computed (module doc)."""
        g, e, s = self.g, self.e, self.s
        n_sl, depth = g.slices, s.stages
        assert g.uniform_shift is not None and n_sl % depth == 0 and depth >= 2

        def issue(tile, sl):
            with e.if_(e.cmp("slt", tile, total)):
                self._stage_patch(tile, cb, self.bufs[sl % depth], sl)
            cp_async_commit()

        for k in range(depth - 1):                       # the first items, before any math
            issue(e.add(x, (k // n_sl) * gx), k % n_sl)
        loop = e.for_(x, total, gx)
        with loop as (t, _a, _y):
            accs = None
            for sl in range(n_sl):
                cp_async_wait(depth - 2)                 # this item's copies (this thread's) landed
                self.m.barrier()                         # ... everyone's; item k - 1's buffer is free
                ahead = sl + depth - 1
                issue(e.add(t, (ahead // n_sl) * gx), ahead % n_sl)
                accs = self._warp_tile(memrefs, t, cb, self.bufs[sl % depth], None, g.uniform_shift,
                                       sl=sl, accs=accs, last=sl == n_sl - 1)

    def _select_buf(self, which):
        """The patch buffer's address for a runtime buffer index (0 or 1)."""
        is0 = self.e.cmp("eq", which, 0)
        return arith_d.select(is0, self.bufs[0], self.bufs[1])

    def _zero_pad_channels(self) -> None:
        """Channels KB .. 16*k16 of every patch row are read by the last chunk's fragments
        (times zero filter rows) and never copied: zero them once, in every buffer."""
        p, g, e = self.p, self.g, self.e
        start = g.zero_start
        if start is None:
            return
        rows = g.ph * g.pw * self.s.stages
        row_elems = g.row_bytes // 2
        with e.for_(self.tid, rows, THREADS) as (r, _a, _y):
            at, end = start, cdiv(start, 16) * 16
            while at < end:                 # aligned stores: 4 elements up to 8, then 8
                width = 4 if at % 8 else 8
                idx = e.add(e.add(e.mul(r, row_elems), g.filter_bytes // 2), at)
                vector_d.store(self._zeros(width), self.smem, [idx])
                at += width

    def _zeros(self, width: int):
        t = vec_type(width, self.p.dtype)
        return arith_d.constant(t, ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(float_type(self.p.dtype), 0.0)))

    def _stage_filter(self, w, cb) -> None:
        """The block's filter, block-diagonal, in 16-byte rows (geometry.filter_row): one
        masked 16-byte load per row where the layout allows (vector_filter), else 8 elements."""
        p, g, e, ops = self.p, self.g, self.e, self.ops
        zero = arith_d.constant(float_type(p.dtype), 0.0)
        v8 = vec_type(8, p.dtype)
        with e.for_(self.tid, g.filter_rows, THREADS) as (row, _a, _y):
            if g.vector_filter:
                src, oks = g.filter_row_vector(ops, row, cb)
                mask = vector_d.from_elements(ir.VectorType.get([8], ir.IntegerType.get_signless(1)),
                                              [self._i1(ok) for ok in oks])
                v = vector_d.load(v8, w, [e._v(src)], alignment=16)
                val = arith_d.select(mask, v, arith_d.constant(v8, ir.DenseElementsAttr.get_splat(
                    v8, ir.FloatAttr.get(float_type(p.dtype), 0.0))))
            else:
                vals = []
                for ok, src in g.filter_row(ops, row, cb):
                    vals.append(arith_d.select(self._i1(ok), memref_d.load(w, [e._v(src)]), zero))
                val = vector_d.from_elements(v8, vals)
            vector_d.store(val, self.smem, [e.mul(row, 8)])

    def _i1(self, cond):
        """A condition that may have folded to a Python bool, as an i1 value."""
        if isinstance(cond, bool):
            return arith_d.constant(ir.IntegerType.get_signless(1), int(cond))
        return cond

    def _stage_patch(self, tile, cb, buf_i64, sl: int = 0) -> None:
        """cp.async of the tile's patch (of its channel slice sl; geometry.stage_item), 16 bytes
        per copy; a narrow input's pixels by _stage_narrow."""
        g, e, ops = self.g, self.e, self.ops
        n, oh0, ow0 = g.tile_origin(ops, tile, self.x)
        bytes_ = DTYPE_BYTES[self.p.dtype]
        if g.narrow:
            self._stage_narrow(n, oh0, ow0, cb, buf_i64)
            return

        def one(idx):
            ok, src, dst = g.stage_item(ops, idx, n, oh0, ow0, cb, self.x, sl)
            cp_async_16(self._addr(buf_i64, dst), self._addr(self.x_addr, e.mul(src, bytes_)), ok)

        full = g.stage_items // THREADS
        if full:
            with e.for_(0, full) as (it, _a, _y):
                one(e.add(e.mul(it, THREADS), self.tid))
        if g.stage_items % THREADS:
            idx = e.add(self.tid, full * THREADS)
            with e.if_(e.cmp("slt", idx, g.stage_items)):
                one(idx)

    def _stage_narrow(self, n, oh0, ow0, cb, buf_i64) -> None:
        """A narrow input's patch (geometry.narrow_input): each thread loads the C channels of
        its pixels element by element, every load issued before the first store (zeros outside
        the image), then stores each pixel as one aligned vector with zeros to stage_vector.
        Plain loads: the stores wait for them, so the staging does not overlap this CTA's
        compute as cp.async does; the second CTA on the SM fills that time."""
        p, g, e, ops = self.p, self.g, self.e, self.ops
        x = self.x_memref
        zero = arith_d.constant(float_type(p.dtype), 0.0)
        offset = arith_d.divui(arith_d.subi(buf_i64, self.base), self._i64(2))
        buf_elems = arith_d.index_cast(ir.IndexType.get(), offset)
        pending = []
        for u in range(cdiv(g.stage_items, THREADS)):
            idx = e.add(self.tid, u * THREADS)
            ok, src, dst = g.stage_item(ops, idx, n, oh0, ow0, cb, self.x)
            inside = e.cmp("slt", idx, g.stage_items) if (u + 1) * THREADS > g.stage_items else None
            if inside is not None:
                ok = e.all_of(ok, inside)
                src = e.select(ok, src, 0)
            vals = [arith_d.select(self._i1(ok), memref_d.load(x, [e._v(e.add(src, c))]), zero) for c in range(p.C)]
            pending.append((inside, dst, vals))
        for inside, dst, vals in pending:
            vec = vector_d.from_elements(vec_type(g.stage_vector, p.dtype), vals + [zero] * (g.stage_vector - p.C))
            at = e.add(buf_elems, e.div(dst, 2))
            if inside is None:
                vector_d.store(vec, self.smem, [e._v(at)])
            else:
                with e.if_(inside):
                    vector_d.store(vec, self.smem, [e._v(at)])

    # ------------------------------------------------------------------ one tile
    def _tile(self, memrefs, tile, cb, buf) -> None:
        g = self.g
        shift = g.uniform_shift
        if shift is not None:
            self._warp_tile(memrefs, tile, cb, buf, None, shift)
            return
        for wn in range(g.wn):
            with self.e.if_(self.e.cmp("eq", self.wn, wn)):
                self._warp_tile(memrefs, tile, cb, buf, wn, None)

    def _warp_tile(self, memrefs, tile, cb, buf, wn_static, shift, sl: int = 0, accs=None, last: bool = True):
        """The warp's fragments of one tile: columns of warp column wn_static (compile time), or
        of warp column 0 shifted by the runtime wn (`shift` chunks per warp column). With
        slices: the chunks of slice sl (in `buf`) added to `accs` (None: from zero), the
        epilogue after the last slice; returns the accumulators."""
        p, g, e, ops = self.p, self.g, self.e, self.ops
        wn0 = wn_static if wn_static is not None else 0
        cols = list(g.warp_columns(wn0))
        chunks = g.slice_chunks(g.warp_chunks(wn0), sl)
        base = sl * g.k16s                      # the slice's first chunk: its row starts there
        if wn_static is None:
            a_extra = e.mul(self.wn, shift * 32)
            b_extra = e.mul(self.wn, g.ntw * g.nc * 256)
            col_extra = e.mul(self.wn, g.ntw * 8)
        else:
            a_extra, b_extra, col_extra = 0, 0, 0
        a_lane = [self._addr(buf, ops.add(g.a_lane_offset(ops, self.lane, self.wm, i), a_extra)) for i in range(g.mt)]
        b_lane = self._addr(self.filt, ops.add(g.b_lane_offset(ops, self.lane, False), b_extra))
        zero = arith_d.constant(ir.F32Type.get(), 0.0)
        nacc = g.mt * len(cols) * 4

        def step(r, accs):
            accs = list(accs)
            for sx in range(p.S):
                tap = ops.add(ops.mul(r, p.S), sx)
                toff = g.tap_offset(ops, r, sx)
                for c in chunks:
                    users = [jj for jj, j in enumerate(cols) if c in g.chunks(j)]
                    a = [ldmatrix(self._addr(a_lane[i], ops.add(toff, (c - base) * 32)), 4) for i in range(g.mt)]
                    for jj in users:
                        b = ldmatrix(self._addr(b_lane, g.b_block(ops, tap, cols[jj], c)), 2, trans=g.k_rows)
                        for i in range(g.mt):
                            k = (i * len(cols) + jj) * 4
                            accs[k:k + 4] = mma_m16n8k16(a[i], b, accs[k:k + 4], p.dtype)
            return accs

        start = [zero] * nacc if accs is None else list(accs)
        if p.R == 1:
            accs = step(0, start)
        else:
            loop = e.for_(0, p.R, 1, start)
            with loop as (r, accs_in, set_r):
                set_r(step(r, accs_in))
            accs = loop.results
        if last:
            self._epilogue(memrefs, tile, cb, cols, col_extra, accs)
        return accs

    def _epilogue(self, memrefs, tile, cb, cols, col_extra, accs) -> None:
        p, g, e, ops = self.p, self.g, self.e, self.ops
        n, oh0, ow0 = g.tile_origin(ops, tile, self.x)
        for i in range(g.mt):
            for half in range(2):
                m, fq = g.out_pixel(ops, self.lane, self.wm, i, half)
                oh, ow = e.add(oh0, e.div(m, g.bw)), e.add(ow0, e.rem(m, g.bw))
                _, _, Ho, Wo = g.image(self.x)
                ok = e.all_of(e.cmp("slt", m, g.pixels), e.cmp("slt", oh, Ho), e.cmp("slt", ow, Wo))
                with e.if_(ok):
                    row = e.add(e.mul(e.add(e.mul(n, Ho), oh), Wo), ow)
                    for jj, j in enumerate(cols):
                        f = e.add(e.add(e.mul(cb, g.bn), ops.add(col_extra, j * 8)), fq)
                        k = (i * len(cols) + jj) * 4 + 2 * half
                        apply_and_store(e, p, memrefs, pair(accs[k], accs[k + 1]), 2, row, f, aligned=True)


def emit_grouped_mma(p: ConvProblem, s: Schedule, machine, memrefs: list) -> None:
    GroupedMma(p, s, machine).emit(memrefs)
