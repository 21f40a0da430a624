"""The portable implicit-GEMM kernel: the correctness baseline on every target.

GEMM view: M = N*Ho*Wo output pixels, N = F filters, K = R*S*C with channels fastest.
Each workgroup owns a block_m x block_n output tile. Per K step every thread gathers
vec_a-wide channel vectors of the activation tile straight from the unpadded NHWC input
(padding and out-of-range rows read as zero through a select, so no pad buffer exists),
vec_b-wide slices of the filter tile, and stores both K-major in workgroup memory. Threads
then accumulate thread_m x thread_n f32 outer products, and finish with the fused epilogue.
"""

from __future__ import annotations

from ...ir import ir, arith_d, hal_d, memref_d, vector_d
from ...problem import ConvProblem, DTYPE_BYTES, FP8_INPUT_DTYPES
from ...kernel_configs import PortableConfig
from ...schedule import Schedule
from .emit import cdiv, convert, float_type, load_elements, vec_type, zeros, Emitter
from .epilogue import store_row_masked
from .extents import extents


class PortableIgemm:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.cfg = s.config_as(PortableConfig)
        self.e = Emitter()
        # fp8 operands are widened to f16 (exact) on their way to workgroup memory
        self.tile_dtype = "f16" if p.dtype in FP8_INPUT_DTYPES else p.dtype

    # ------------------------------------------------------------------ tile loaders
    def _load_a(self, x, a_tile, tid, m0, k0):
        """Activation tile [block_k][block_m] via implicit im2col with zero halos."""
        p, s, e = self.p, self.s, self.e
        v = self.cfg.vec_a
        per_row = s.block_k // v
        count = s.block_m * per_row
        x_ = self.sizes
        vt = vec_type(v, p.dtype)
        zero = zeros(vt)

        def body(idx):
            m_l = e.div(idx, per_row)
            kv = e.rem(idx, per_row)
            m = e.add(m0, m_l)
            k = e.add(k0, e.mul(kv, v))
            n = e.div(m, x_.howo)
            rem = e.rem(m, x_.howo)
            ho = e.div(rem, x_.Wo)
            wo = e.rem(rem, x_.Wo)
            rs = e.div(k, p.C)
            c = e.rem(k, p.C)
            r = e.div(rs, p.S)
            sx = e.rem(rs, p.S)
            h = e.sub(e.add(e.mul(ho, p.stride[0]), e.mul(r, p.dilation[0])), p.pad[0])
            w = e.sub(e.add(e.mul(wo, p.stride[1]), e.mul(sx, p.dilation[1])), p.pad[1])
            ok = e.all_of(e.cmp("slt", m, self.rows), e.cmp("slt", k, p.gemm_k),
                          e.cmp("sge", h, 0), e.cmp("slt", h, x_.H),
                          e.cmp("sge", w, 0), e.cmp("slt", w, x_.W))
            addr = e.add(e.mul(e.add(e.mul(e.add(e.mul(n, x_.H), h), x_.W), w), p.input_pitch),
                         e.add(c, p.input_channel_offset))
            addr = e.select(ok, addr, 0)
            val = load_elements(x, vt, addr, v * DTYPE_BYTES[p.dtype])
            val = convert(arith_d.select(ok, val, zero), vec_type(v, self.tile_dtype))
            self._store_transposed(a_tile, val, v, e.mul(kv, v), m_l)

        self._distribute(count, tid, body)

    def _load_b(self, wgt, b_tile, tid, n0, k0):
        """Filter tile [block_k][block_n]; the filter is a row-major F x K matrix."""
        p, s, e = self.p, self.s, self.e
        v = self.cfg.vec_b
        per_row = s.block_k // v
        count = s.block_n * per_row
        vt = vec_type(v, p.dtype)
        zero = zeros(vt)

        def body(idx):
            n_l = e.div(idx, per_row)
            kv = e.rem(idx, per_row)
            f = e.add(n0, n_l)
            k = e.add(k0, e.mul(kv, v))
            ok = e.all_of(e.cmp("slt", f, p.F), e.cmp("slt", k, p.gemm_k))
            addr = e.select(ok, e.add(e.mul(f, p.gemm_k), k), 0)
            val = load_elements(wgt, vt, addr, v * DTYPE_BYTES[p.dtype])
            val = convert(arith_d.select(ok, val, zero), vec_type(v, self.tile_dtype))
            self._store_transposed(b_tile, val, v, e.mul(kv, v), n_l)

        self._distribute(count, tid, body)

    def _store_transposed(self, tile, val, v, k_base, col):
        e = self.e
        for i in range(v):
            x = vector_d.extract(val, [], [i])
            memref_d.store(x, tile, [e.add(k_base, i), col])

    def _distribute(self, count, tid, body):
        """Runs body(idx) for idx in [0, count), spread over the workgroup's threads."""
        e, T = self.e, self.s.threads
        trips = cdiv(count, T)
        with e.for_(0, trips) as (j, _, _y):
            idx = e.add(tid, e.mul(j, T))
            if count % T:
                with e.if_(e.cmp("slt", idx, count)):
                    body(idx)
            else:
                body(idx)

    # ------------------------------------------------------------------ kernel
    def emit(self, memrefs: list) -> None:
        p, s, e, mach = self.p, self.s, self.e, self.m
        x, wgt = memrefs[p.input], memrefs[p.filter]
        self.sizes = getattr(memrefs, "extents", None) or extents(e, p)
        self.rows = self.sizes.rows
        n_tiles = cdiv(p.F, s.block_n)
        pid = hal_d.InterfaceWorkgroupIDOp(0).result
        m0 = e.mul(e.div(pid, n_tiles), s.block_m)
        n0 = e.mul(e.rem(pid, n_tiles), s.block_n)
        tid = mach.thread_id(e)
        a_tile = mach.alloc_workgroup([s.block_k, s.block_m], self.tile_dtype)
        b_tile = mach.alloc_workgroup([s.block_k, s.block_n], self.tile_dtype)
        cols = s.block_n // self.cfg.thread_n
        tm0 = e.mul(e.div(tid, cols), self.cfg.thread_m)
        tn0 = e.mul(e.rem(tid, cols), self.cfg.thread_n)
        # f32 accumulators (i32 for int8 convs: exact products and sums)
        acc_t = ir.VectorType.get([self.cfg.thread_m, self.cfg.thread_n], float_type(p.acc_dtype))
        acc0 = zeros(acc_t)
        ktiles = cdiv(p.gemm_k, s.block_k)
        loop = e.for_(0, ktiles, 1, [acc0])
        with loop as (kt, (acc,), set_k):
            k0 = e.mul(kt, s.block_k)
            self._load_a(x, a_tile, tid, m0, k0)
            self._load_b(wgt, b_tile, tid, n0, k0)
            mach.barrier()
            inner = e.for_(0, s.block_k, 1, [acc])
            with inner as (kk, (acc_i,), set_i):
                a = convert(vector_d.load(vec_type(self.cfg.thread_m, self.tile_dtype), a_tile, [kk, tm0]),
                            vec_type(self.cfg.thread_m, p.acc_dtype))
                b = convert(vector_d.load(vec_type(self.cfg.thread_n, self.tile_dtype), b_tile, [kk, tn0]),
                            vec_type(self.cfg.thread_n, p.acc_dtype))
                set_i([vector_d.outerproduct(acc_t, a, b, acc=acc_i)])
            mach.barrier()
            set_k(inner.results)
        self._epilogue(memrefs, loop.results[0], m0, n0, tm0, tn0)

    def _epilogue(self, memrefs, acc, m0, n0, tm0, tn0):
        p, e = self.p, self.e
        f = e.add(n0, tn0)
        for i in range(self.cfg.thread_m):
            m = e.add(e.add(m0, tm0), i)
            store_row_masked(e, p, memrefs, vector_d.extract(acc, [], [i]), self.cfg.thread_n, m, f)


def emit_portable_igemm(p: ConvProblem, s: Schedule, machine, memrefs: list) -> None:
    PortableIgemm(p, s, machine).emit(memrefs)


def portable_batch_grid(p: ConvProblem, s: Schedule):
    """The grid for runtime sizes (extents x): one workgroup per output tile, pixel tiles major
    (also the gathered-im2col wgmma kernel's)."""
    def grid(x):
        e = Emitter()
        m_tiles = e.div(e.add(x.rows, s.block_m - 1), s.block_m)
        return [e.mul(m_tiles, cdiv(p.F, s.block_n)), e.c(1), e.c(1)]
    return grid
