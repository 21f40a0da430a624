"""sm_90a implicit GEMM for convs TMA cannot read (channel rows under 16 B or not a multiple
of 64 channels, e.g. a 3-channel stem): threads gather the im2col tiles into the same
128B-swizzled shared-memory layout TMA would produce, then the wgmma main loop and the
shared epilogue of Sm90TmaWgmma run unchanged.

K (= R*S*C, channels fastest) is walked in 64-wide tiles, zero past K. Each thread fills whole
16-byte swizzle chunks: 8 consecutive k of one row — one 16-byte load when they are contiguous
(C a multiple of 8), else element by element (they may span filter taps, walked by carries) —
then one 16-byte shared store. The planner asks for two CTAs per SM (`min_ctas_per_sm`) so
one's gather overlaps the other's wgmma. Generic-proxy stores feed the async proxy
(wgmma), so each k-tile ends with fence.proxy.async.shared::cta and a CTA barrier.
"""

from __future__ import annotations

from ...ir import ir, arith_d, hal_d, memref_d, parse_attr, vector_d
from ...problem import ConvProblem
from ...kernel_configs import GatherConfig
from ...schedule import Schedule
from ..common.emit import cdiv, float_type, vec_type, zeros
from ..common.extents import extents
from .primitives import address_of, async_proxy_fence, i64, wgmma_wait, zero_accumulator
from .smem import BLOCK_ALIGN
from .sm90_igemm import ROW_BYTES, WARPGROUP, Sm90TmaWgmma, tile_row_floats, warpgroup_grid

K_TILE = 64                   # = CHANNELS_PER_TILE: the wgmma stage is shared
CHUNK = 8                     # elements per 16-byte swizzle chunk


def gather_smem_bytes(s: Schedule) -> int:
    return max((s.block_m + s.block_n) * ROW_BYTES, s.block_m * tile_row_floats(s) * 4)


class Sm90GatherWgmma(Sm90TmaWgmma):
    @staticmethod
    def split_k_of(s: Schedule) -> int:
        s.config_as(GatherConfig)
        return 1                        # one CTA per output tile

    def _gather_tile(self, tile, rows: int, row_base, k0, tid, source):
        """Fills a [rows x 64] swizzled tile from `source` (an _ActivationSource or
        _FilterSource): per 16-byte chunk, one 8-wide vector load when the chunk is contiguous
        in memory, else 8 element loads walking (r, s, c) by carries instead of divisions."""
        e, p, s = self.e, self.p, self.s
        jobs = rows * (K_TILE // CHUNK)
        dt = float_type(p.dtype)
        dst = self.tiles[tile]
        for j in range(cdiv(jobs, s.threads)):
            job = e.add(tid, j * s.threads)
            row = e.div(job, K_TILE // CHUNK)
            chunk = e.rem(job, K_TILE // CHUNK)
            kb = e.add(k0, e.mul(chunk, CHUNK))
            r = source.row(e.add(row_base, row))
            if source.contiguous:
                ok, idx = source.at(r, source.k(kb))
                v = vector_d.load(vec_type(CHUNK, p.dtype), source.mem, [e.select(ok, idx, 0)], alignment=16)
                vec = arith_d.select(ok, v, zeros(vec_type(CHUNK, p.dtype)))
            else:
                kk = source.k(kb)
                vals = []
                for i in range(CHUNK):
                    ok, idx = source.at(r, kk)
                    ok = e.all_of(ok, e.cmp("slt", e.add(kb, i), p.gemm_k))
                    x = memref_d.load(source.mem, [e.select(ok, idx, 0)])
                    vals.append(arith_d.select(ok, x, arith_d.constant(dt, 0.0)))
                    if i + 1 < CHUNK:
                        kk = source.next_k(kk)
                vec = vector_d.from_elements(vec_type(CHUNK, p.dtype), vals)
            swz = arith_d.xori(chunk, e.rem(row, 8))
            at = e.add(e.mul(row, ROW_BYTES // 2), e.mul(swz, CHUNK))     # in elements
            if jobs % s.threads:
                with e.if_(e.cmp("slt", job, jobs)):
                    vector_d.store(vec, dst, [e.add(self.tile_off[tile], at)], alignment=16)
            else:
                vector_d.store(vec, dst, [e.add(self.tile_off[tile], at)], alignment=16)

    def emit(self, memrefs) -> None:
        p, s, e = self.p, self.s, self.e
        x, w = memrefs[p.input], memrefs[p.filter]
        n_tiles = cdiv(p.F, s.block_n)
        pid = hal_d.InterfaceWorkgroupIDOp(0).result
        m0 = e.mul(e.div(pid, n_tiles), s.block_m)
        n0 = e.mul(e.rem(pid, n_tiles), s.block_n)
        tid = self.m.thread_id(e)
        wg = e.div(tid, WARPGROUP)
        wg_m, wg_n, wg_cols = warpgroup_grid(s)
        wg_row0 = e.mul(e.div(wg, wg_n), 64)
        wg_col0 = e.mul(e.rem(wg, wg_n), wg_cols)
        space = parse_attr("#gpu.address_space<workgroup>")
        total = gather_smem_bytes(s)
        smem = self.m.alloc_shared_bytes(total, BLOCK_ALIGN)
        elems = memref_d.view(ir.MemRefType.get([total // 2], float_type(p.dtype), memory_space=space),
                              smem, e.c(0), [])
        base = address_of(smem)
        a_bytes = s.block_m * ROW_BYTES
        self.tile_off = {"a": e.c(0), "b": e.c(a_bytes // 2)}
        self.tiles = {"a": elems, "b": elems}
        act = _ActivationSource(e, p, x, getattr(memrefs, "extents", None) or extents(e, p))
        filt = _FilterSource(e, p, w)

        ktiles = cdiv(p.gemm_k, K_TILE)
        loop = e.for_(0, ktiles, 1, [zero_accumulator(wg_cols)])
        with loop as (kt, (acc,), set_acc):
            k0 = e.mul(kt, K_TILE)
            self._gather_tile("a", s.block_m, m0, k0, tid, act)
            self._gather_tile("b", s.block_n, n0, k0, tid, filt)
            async_proxy_fence()
            self.m.barrier()
            acc = self._mma_stage(acc, base, arith_d.addi(base, i64(a_bytes)), wg_row0, wg_col0, wg_cols)
            wgmma_wait(0)
            self.m.barrier()              # all warps done reading before the next gather
            set_acc([acc])
        self._epilogue(memrefs, loop.results[0], m0, n0, tid, wg_row0, wg_col0, wg_cols, smem)


class _ActivationSource:
    """im2col rows of the NHWC input: row m = output pixel, k = (r, s, c), channels fastest.
    A chunk of 8 k is contiguous in memory when C is a multiple of 8 (one tap, 8 channels)."""

    def __init__(self, e, p: ConvProblem, mem, sizes):
        self.e, self.p, self.mem = e, p, mem
        self.x = sizes                  # the problem's Extents (M, H, W: index values where read at run time)
        self.contiguous = p.C % CHUNK == 0

    def row(self, m):
        e, p, x = self.e, self.p, self.x
        n = e.div(m, x.howo)
        rem = e.rem(m, x.howo)
        ho, wo = e.div(rem, x.Wo), e.rem(rem, x.Wo)
        return (e.cmp("slt", m, x.rows), e.mul(n, x.H),
                e.sub(e.mul(ho, p.stride[0]), p.pad[0]), e.sub(e.mul(wo, p.stride[1]), p.pad[1]))

    def k(self, k):
        e, p = self.e, self.p
        rs = e.div(k, p.C)
        return e.cmp("slt", k, p.gemm_k), e.div(rs, p.S), e.rem(rs, p.S), e.rem(k, p.C)

    def next_k(self, kk):
        """(r, s, c) of k + 1 by carries (no division)."""
        e, p = self.e, self.p
        ok, r, sx, c = kk
        c1 = e.add(c, 1)
        wrap_c = e.cmp("eq", c1, p.C)
        s1 = e.select(wrap_c, e.add(sx, 1), sx)
        wrap_s = e.cmp("eq", s1, p.S)
        return (ok, e.select(wrap_s, e.add(r, 1), r), e.select(wrap_s, 0, s1), e.select(wrap_c, 0, c1))

    def at(self, row, kk):
        e, p = self.e, self.p
        ok_m, nh, hb, wb = row
        ok_k, r, sx, c = kk
        h = e.add(hb, e.mul(r, p.dilation[0]))
        wi = e.add(wb, e.mul(sx, p.dilation[1]))
        x = self.x
        ok = e.all_of(ok_m, ok_k, e.cmp("sge", h, 0), e.cmp("slt", h, x.H), e.cmp("sge", wi, 0), e.cmp("slt", wi, x.W))
        return ok, e.add(e.mul(e.add(e.mul(e.add(nh, h), x.W), wi), p.input_pitch), e.add(c, p.input_channel_offset))


class _FilterSource:
    """Rows of the [F, K] filter; a chunk of 8 k is contiguous (and 16-byte aligned) when K is
    a multiple of 8."""

    def __init__(self, e, p: ConvProblem, mem):
        self.e, self.p, self.mem = e, p, mem
        self.contiguous = p.gemm_k % CHUNK == 0

    def row(self, f):
        return self.e.cmp("slt", f, self.p.F), self.e.mul(f, self.p.gemm_k)

    def k(self, k):
        return self.e.cmp("slt", k, self.p.gemm_k), k

    def next_k(self, kk):
        return kk[0], self.e.add(kk[1], 1)

    def at(self, row, kk):
        return self.e.all_of(row[0], kk[0]), self.e.add(row[1], kk[1])


def emit_sm90_gather_wgmma(p: ConvProblem, s: Schedule, machine, memrefs) -> None:
    Sm90GatherWgmma(p, s, machine).emit(memrefs)
