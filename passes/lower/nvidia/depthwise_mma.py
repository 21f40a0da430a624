"""The tensor-core depthwise kernel (sm_90a / sm_100a): depthwise convs with channel multiplier
1 as banded matrix products on mma.sync m16n8k16 (f16/bf16 in, f32 accumulation). Geometry,
shared-memory layout and every index: depthwise_mma_geometry.py (the numpy model test runs the
same code).

The SIMT kernels (direct_grouped, depthwise_tma) issue one packed FMA per two outputs and tap:
a 7x7 window is ~25 instructions per output before loads, conversions and the epilogue, which
keeps them at a third of the copy bandwidth. Here the 49 taps of 128 outputs are 7 mma.sync and
7 ldmatrix per warp, so the kernel is bound by its memory traffic:

- CTA (x, y) owns channel block x for its life and walks spatial tiles y, y + grid_y, ...; it
  stages its channels' banded filter rows once;
- thread 0 writes the input's tensor map and loads each tile's input window as ONE TMA box
  (zeros outside the image: the padding) into a raw buffer, the next tile's box in flight while
  this one computes;
- the warps transpose the box into per-channel planes (ldmatrix.trans of 8 pixels x 8
  channels, one 32-bit store per lane and matrix: input columns of one channel become
  ldmatrix rows);
- warp w takes channels w, w + warps, ...: per channel its B fragments (one 32-bit load per
  register from the staged band), then per row fragment, filter row and 16-column chunk one
  ldmatrix.x4 and an mma into each 8-output block the chunk feeds,
  and the accumulators into the channel's slot (its plane is done);
- after a CTA barrier the threads read the slots back as 8-channel vectors per pixel for the
  shared epilogue (bias, residual, activations, casts): 16-byte coalesced stores.

Input columns a fragment reads past its outputs' windows meet zeros of the band: a non-finite
input there (inf, NaN) would poison the products, as in any GEMM formulation.
"""

from __future__ import annotations

from ...ir import ir, arith_d, hal_d, memref_d, vector_d
from ...kernel_configs import DepthwiseMmaConfig
from ...problem import ConvProblem
from ...schedule import Schedule
from ..common.emit import Emitter, float_type, vec_type, zeros
from ..common.epilogue import apply_and_store, load_operands
from ..common.int_ops import IrOps
from .depthwise_mma_geometry import VEC, DepthwiseMmaGeometry, depthwise_mma_geometry, input_map_args
from . import tensormap as tm
from .primitives import I32, I64, index_to, mbarrier_init_fence, tma_load
from .ring import PhaseBarrier
from .tma_loader import descriptor_slots, write_descriptors
from .sm80_ops import ldmatrix, mma_m16n8k16, warp_sync
from .smem import BARRIER_BYTES, Region, SharedBlock

DESCRIPTORS = 1       # the input's tensor map
EPILOGUE_BATCH = 8    # output vectors whose operand loads go out together
TRANSPOSE_BATCH = 8   # ldmatrix.trans per warp in flight before their stores


def geometry_of(p: ConvProblem, s: Schedule) -> DepthwiseMmaGeometry:
    c = s.config_as(DepthwiseMmaConfig)
    return depthwise_mma_geometry(p, c.channels, c.rows, c.cols, s.threads // 32)


class DepthwiseMma:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.g = geometry_of(p, s)
        self.e = Emitter()
        self.ops = IrOps(self.e)
        if self.g.smem_bytes != s.smem_bytes:
            raise ValueError(f"schedule has {s.smem_bytes} B of shared memory, the layout needs {self.g.smem_bytes}")

    def emit(self, memrefs) -> None:
        p, s, g, e = self.p, self.s, self.g, self.e
        self.memrefs = memrefs
        self.smem = SharedBlock(self.m, g.smem_bytes)
        self.elems = self.smem.view(float_type(p.dtype))
        self.floats = self.smem.view(ir.F32Type.get())
        self.words = self.smem.view(ir.IntegerType.get_signless(32))
        self.tid = self.m.thread_id(e)
        self.lane, self.warp = e.rem(self.tid, 32), e.div(self.tid, 32)
        cb = hal_d.InterfaceWorkgroupIDOp(0).result
        y = hal_d.InterfaceWorkgroupIDOp(1).result
        self.c0 = e.mul(cb, g.channels)
        # the raw buffer's barrier completes once per tile (the CTA barrier after the
        # transpose releases the buffer)
        self.bar = PhaseBarrier(e, self.smem, Region(g.barrier_offset, BARRIER_BYTES), hoist=True)
        total = p.N * g.tiles_per_image
        gy = s.grid[1]
        count = e.div(e.add(e.sub(total, y), gy - 1), gy)          # y < total: the grid is no larger
        self.desc = descriptor_slots(e.add(cb, e.mul(y, s.grid[0])), memrefs[-1], DESCRIPTORS)[0]
        issuer = e.cmp("eq", self.tid, 0)
        with e.if_(issuer):
            write_descriptors([tm.encode_tiled(input_map_args(p, g))], [self.desc], [memrefs[p.input]])
            self.bar.init()
            mbarrier_init_fence()
        self._load_filter()
        self._zero_taps()
        self.m.barrier()                       # barrier initialised, the raw filter in the slots, bands zero
        with e.if_(e.all_of(issuer, e.cmp("slt", 0, count))):
            self._issue(y)
        self._build_taps()
        self.m.barrier()
        with e.for_(0, count, 1) as (j, _a, _y):
            t = e.add(y, e.mul(j, gy))
            self.bar.wait_at(j)
            self._transpose()
            self.m.barrier()                   # raw is free, the planes are whole
            with e.if_(e.all_of(issuer, e.cmp("slt", e.add(j, 1), count))):
                self._issue(e.add(t, gy))
            self._compute()
            self.m.barrier()                   # every channel's accumulators are in its slot
            n, oh0, ow0 = g.tile_origin(self.ops, t)
            self._epilogue(n, oh0, ow0)
            self.m.barrier()                   # the slots are free for the next planes

    # ------------------------------------------------------------------ staging
    def _issue(self, t) -> None:
        """Thread 0: arm the raw buffer's barrier and TMA-load tile t's input window into it."""
        g, e = self.g, self.e
        n, oh0, ow0 = g.tile_origin(self.ops, t)
        bar = self.bar.arm(0, g.box_bytes)
        coords = [self.c0, e.sub(e.mul(ow0, g.sw), g.pad_left), e.sub(e.mul(oh0, g.sh), g.pad_top), n]
        tma_load(self.smem.at(g.raw_offset), self.desc, [index_to(e._v(c), I32()) for c in coords], bar)

    def _load_filter(self) -> None:
        """The block's R x S x channels filter by 16-byte loads (all issued before their
        stores) into the slot region, free until the first tile (geometry.filter_index)."""
        p, g, e = self.p, self.g, self.e
        w = self.memrefs[p.filter]
        chunks = g.channels // VEC
        vectors = g.R * g.S * chunks
        v8 = vec_type(VEC, p.dtype)
        loaded = []
        for k in range(-(-vectors // g.threads)):
            i = e.add(self.tid, k * g.threads)
            if (k + 1) * g.threads > vectors:
                i = arith_d.minsi(i, e.c(vectors - 1))
            tap, chunk = e.div(i, chunks), e.rem(i, chunks)
            channel = e.add(self.c0, e.mul(chunk, VEC))
            ok = e.cmp("slt", channel, p.C)
            src = e.select(ok, e.add(e.mul(tap, p.F), channel), 0)
            dst = g.filter_index(self.ops, 0, tap, e.mul(chunk, VEC))      # taps (r, s) as r*S + s
            loaded.append((arith_d.select(ok, vector_d.load(v8, w, [src], alignment=16), zeros(v8)), dst))
        for v, dst in loaded:
            vector_d.store(v, self.elems, [dst])

    def _zero_taps(self) -> None:
        """The bands' zeros: 16-byte stores over the whole region (before the barrier that
        precedes _build_taps; storing the zeros element by element, LLVM makes a byte loop)."""
        p, g, e = self.p, self.g, self.e
        v8 = vec_type(VEC, p.dtype)
        base = g.taps_index(self.ops, 0, 0, 0, 0)
        with e.for_(self.tid, g.taps_bytes // 16, g.threads) as (i, _a, _y):
            vector_d.store(zeros(v8), self.elems, [e.add(base, e.mul(i, VEC))])

    def _build_taps(self) -> None:
        """The bands' taps (geometry.taps_index) from the raw filter, a thread per (channel,
        filter row): which band elements hold which tap is known at compile time."""
        p, g, e = self.p, self.g, self.e
        with e.for_(self.tid, g.channels * g.R, g.threads) as (i, _a, _y):
            c, r = e.div(i, g.R), e.rem(i, g.R)
            taps = [memref_d.load(self.elems, [g.filter_index(self.ops, r, s_, c)]) for s_ in range(p.S)]
            base = g.taps_index(self.ops, c, r, 0, 0)
            for copy in range(2):
                for j in range(g.taps_len):
                    s_ = g.tap(j + g.taps_lo - copy)
                    if s_ is not None:
                        memref_d.store(taps[s_], self.elems, [e.add(base, copy * g.taps_len + j)])

    def _transpose(self) -> None:
        """raw -> planes: warp w takes units (4 matrices) u = w, w + warps, ... (unrolled: the
        unit count is known); lane L gives row L%8 (a pixel) of matrix 4u + L/8 and gets, per
        matrix, channel L/4's columns 2(L%4) and +1: one 32-bit store into that channel's
        plane. With chunks dividing 4 every address is the warp's plus a compile-time offset;
        the last round clamps its matrices to the last one (duplicates write the same
        values)."""
        g, e = self.g, self.e
        eb = g.elem_bytes
        chunks = g.channels // VEC
        units = -(-g.matrices // 4)
        rounds = -(-units // g.warps)
        last = g.matrices - 1
        src_lane = e.mul(e.rem(self.lane, 8), g.channels * eb)
        dst_lane = e.add(e.mul(e.div(self.lane, 4), g.slot_bytes // 4), e.rem(self.lane, 4))
        raw = self.smem.at(g.raw_offset)

        ops = self.ops

        def source(m):
            """Byte offset in raw of matrix m's row 0 (m: an int, or an index value)."""
            return ops.mul(g.matrix_source(ops, *g.matrix(ops, m)), eb)

        def target(m):
            """Word index in the slots of matrix m's first column pair."""
            return g.matrix_target(ops, *g.matrix(ops, m))

        # matrix 4u + k of unit u = warp + k' * warps: with chunks | 4, linear in u (source(0) = 0)
        first = e.mul(self.warp, 4)
        lane_m = e.div(self.lane, 8)
        src_base = e.add(e.add(e.mul(self.warp, source(4)), source(lane_m)), src_lane)
        dst_base = e.add(e.mul(self.warp, target(4)), dst_lane)
        fast = 4 % chunks == 0
        for k0 in range(0, rounds, TRANSPOSE_BATCH):
            # every ldmatrix of the batch before its stores (raw and planes share memory: a
            # store between them would order each load behind the previous store)
            loaded = []
            for k in range(k0, min(rounds, k0 + TRANSPOSE_BATCH)):
                step = k * g.warps * 4             # matrices before this round's first, past the warp's
                if fast and (k + 1) * g.warps * 4 <= g.matrices:
                    regs = ldmatrix(arith_d.addi(raw, index_to(e.add(src_base, source(step)), I64())), 4, trans=True)
                    loaded.append([(reg, e.add(dst_base, target(step + kk))) for kk, reg in enumerate(regs)])
                    continue
                mine = arith_d.minsi(e.add(e.add(first, step), lane_m), e.c(last))
                regs = ldmatrix(arith_d.addi(raw, index_to(e.add(source(mine), src_lane), I64())), 4, trans=True)
                loaded.append([(reg, e.add(target(arith_d.minsi(e.add(first, step + kk), e.c(last))), dst_lane))
                               for kk, reg in enumerate(regs)])
            for stores in loaded:
                for reg, at in stores:
                    memref_d.store(reg, self.words, [at])

    # ------------------------------------------------------------------ tensor cores
    def _compute(self) -> None:
        """The warp's channels w, w + warps, ... (a loop): the channel's B registers of every
        (filter row, shift), then per row fragment, filter row and chunk one ldmatrix.x4 and an
        mma.sync into each block the chunk feeds (neighbouring mmas on different accumulators),
        then the fragments into the channel's slot (its plane read by this warp alone, and
        done)."""
        p, g, e, ops = self.p, self.g, self.e, self.ops
        i64 = lambda v: index_to(e._v(v), I64())
        copy, off = g.b_lane(ops, self.lane)
        stage_lane = g.stage_index(ops, 0, e.div(self.lane, 4), e.mul(e.rem(self.lane, 4), 2))
        zero = arith_d.constant(ir.F32Type.get(), 0.0)
        f2 = ir.VectorType.get([2], ir.F32Type.get())
        with e.for_(self.warp, g.channels, g.warps) as (c, _a, _y):
            a_base = arith_d.addi(self.smem.base, i64(e.add(e.mul(c, g.slot_bytes),
                                                            e.mul(g.a_lane_offset(ops, self.lane), g.elem_bytes))))
            # the lane's B pair at (channel c, filter row 0, h 0, chunk 0), in 32-bit words
            b_word = e.div(g.taps_index(ops, c, 0, copy, off), 2)
            b = {}
            for r in range(g.R):
                for d in g.shifts:
                    steps = [g.taps_index(ops, 0, r, 0, g.b_offset(h, d)) - g.taps_index(ops, 0, 0, 0, 0)
                             for h in range(2)]
                    b[r, d] = [memref_d.load(self.words, [e.add(b_word, st // 2)]) for st in steps]
            acc = {(mi, j): [zero] * 4 for mi in range(g.mt) for j in range(g.nt)}
            for mi in range(g.mt):
                for r in range(g.R):
                    for chunk in range(g.chunks):
                        users = [(j, d) for j, c_, d in g.pairs if c_ == chunk]
                        off_bytes = g.a_offset(0, mi, r, chunk) * g.elem_bytes
                        a = ldmatrix(arith_d.addi(a_base, arith_d.constant(I64(), off_bytes)), 4)
                        for j, d in users:
                            acc[mi, j] = mma_m16n8k16(a, b[r, d], acc[mi, j], p.dtype)
            accs = [acc[mi, j] for mi in range(g.mt) for j in range(g.nt)]
            warp_sync()                        # every lane's ldmatrix reads of the plane are done
            base = e.add(g.stage_index(ops, c, 0, 0), stage_lane)
            k = 0
            for mi in range(g.mt):
                for j in range(g.nt):
                    for half in range(2):
                        at = e.add(base, g.stage_index(ops, 0, 16 * mi + 8 * half, 8 * j))
                        vector_d.store(vector_d.from_elements(f2, accs[k][2 * half:2 * half + 2]), self.floats, [at])
                    k += 1

    # ------------------------------------------------------------------ epilogue
    def _epilogue(self, n, oh0, ow0) -> None:
        """Threads take (pixel, 8 channels) of the stage, chunks fastest, in batches of
        EPILOGUE_BATCH whose operand loads (bias, residual) go out before the first store:
        the shared epilogue, 16-byte stores."""
        g, e = self.g, self.e
        full = g.store_items // g.threads // EPILOGUE_BATCH
        if full:
            with e.for_(0, full) as (b, _a, _y):
                self._store_batch(n, oh0, ow0, e.mul(b, EPILOGUE_BATCH * g.threads), EPILOGUE_BATCH, False)
        rest = -(-g.store_items // g.threads) - full * EPILOGUE_BATCH
        for b0 in range(0, rest, EPILOGUE_BATCH):
            self._store_batch(n, oh0, ow0, (full * EPILOGUE_BATCH + b0) * g.threads, min(EPILOGUE_BATCH, rest - b0),
                              True)

    def _store_batch(self, n, oh0, ow0, first, count: int, partial: bool) -> None:
        p, g, e = self.p, self.g, self.e
        chunks = g.channels // VEC
        f8 = vec_type(VEC, "f32")
        items = []
        for k in range(count):
            i = e.add(e.add(self.tid, first), k * g.threads)
            conds = [e.cmp("slt", i, g.store_items)] if partial else []
            i = arith_d.minsi(i, e.c(g.store_items - 1)) if partial else i
            chunk, pix = e.rem(i, chunks), e.div(i, chunks)
            row, col = e.div(pix, g.cols), e.rem(pix, g.cols)
            oh, ow = e.add(oh0, row), e.add(ow0, col)
            channel = e.add(self.c0, e.mul(chunk, VEC))
            ok = e.all_of(*conds, e.cmp("slt", oh, p.Ho), e.cmp("slt", ow, p.Wo), e.cmp("slt", channel, p.C))
            # operands at a clamped, in-bounds (row, channel); only the store is masked
            m = e.add(e.mul(e.add(e.mul(n, p.Ho), arith_d.minsi(oh, e.c(p.Ho - 1))), p.Wo),
                      arith_d.minsi(ow, e.c(p.Wo - 1)))
            f = arith_d.minsi(channel, e.c(p.C - VEC))
            operands = load_operands(e, p, self.memrefs, VEC, m, f, aligned=True)
            at = g.stage_index(self.ops, e.mul(chunk, VEC), row, col)
            acc = vector_d.from_elements(f8, [memref_d.load(self.floats, [e.add(at, g.stage_index(self.ops, c, 0, 0))])
                                              for c in range(VEC)])
            items.append((ok, acc, m, f, operands))
        for ok, acc, m, f, operands in items:
            with e.if_(ok):
                apply_and_store(e, p, self.memrefs, acc, VEC, m, f, aligned=True, operands=operands)


def emit_depthwise_mma(p: ConvProblem, s: Schedule, machine, memrefs) -> None:
    DepthwiseMma(p, s, machine).emit(memrefs)
