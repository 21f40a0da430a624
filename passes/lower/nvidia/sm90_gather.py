"""sm_90a implicit GEMM for convs TMA cannot read (channel rows under 16 B or not a multiple
of 64 channels, e.g. a 3-channel stem): threads gather the im2col tiles into the same
128B-swizzled shared-memory layout TMA would produce, then the wgmma main loop and the
shared epilogue of Sm90TmaWgmma run unchanged.

K (= R*S*C, channels fastest) is walked in 64-wide tiles, zero past K. Each thread fills whole
16-byte swizzle chunks: 8 consecutive k of one row, gathered element by element (they may
span filter taps), then one 16-byte shared store. Generic-proxy stores feed the async proxy
(wgmma), so each k-tile ends with fence.proxy.async.shared::cta and a CTA barrier.
"""

from __future__ import annotations

from ...ir import ir, arith_d, gpu_d, hal_d, memref_d, parse_attr, vector_d
from ...problem import ConvProblem
from ...schedule import Schedule
from ..common.emit import float_type, vec_type
from .primitives import address_of, async_proxy_fence, i64, wgmma_wait, zero_accumulator
from .sm90_igemm import ROW_BYTES, WARPGROUP, Sm90TmaWgmma, tile_row_floats, warpgroup_grid

K_TILE = 64                   # = CHANNELS_PER_TILE: the wgmma stage is shared
CHUNK = 8                     # elements per 16-byte swizzle chunk


def gather_smem_bytes(s: Schedule) -> int:
    return max((s.block_m + s.block_n) * ROW_BYTES, s.block_m * tile_row_floats(s) * 4)


def _cdiv(a, b):
    return -(-a // b)


class Sm90GatherWgmma(Sm90TmaWgmma):
    def _gather_tile(self, tile, rows: int, row_base, k0, tid, element):
        """Fills a [rows x 64] swizzled tile; element(row_global, k) -> (valid, index)."""
        e, p, s = self.e, self.p, self.s
        jobs = rows * (K_TILE // CHUNK)
        dt = float_type(p.dtype)
        src = self.src_of_tile[tile]
        dst = self.tiles[tile]
        for j in range(_cdiv(jobs, s.threads)):
            job = e.add(tid, j * s.threads)
            row = e.div(job, K_TILE // CHUNK)
            chunk = e.rem(job, K_TILE // CHUNK)
            vals = []
            for i in range(CHUNK):
                k = e.add(k0, e.add(e.mul(chunk, CHUNK), i))
                ok, idx = element(e.add(row_base, row), k)
                x = memref_d.load(src, [e.select(ok, idx, 0)])
                vals.append(arith_d.select(ok, x, arith_d.constant(dt, 0.0)))
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
        n_tiles = _cdiv(p.F, s.block_n)
        pid = hal_d.InterfaceWorkgroupIDOp(0).result
        m0 = e.mul(e.div(pid, n_tiles), s.block_m)
        n0 = e.mul(e.rem(pid, n_tiles), s.block_n)
        tid = gpu_d.thread_id(gpu_d.Dimension.x)
        wg = e.div(tid, WARPGROUP)
        wg_m, wg_n, wg_cols = warpgroup_grid(s)
        wg_row0 = e.mul(e.div(wg, wg_n), 64)
        wg_col0 = e.mul(e.rem(wg, wg_n), wg_cols)
        space = parse_attr("#gpu.address_space<workgroup>")
        total = gather_smem_bytes(s)
        smem = memref_d.alloc(ir.MemRefType.get([total], ir.IntegerType.get_signless(8), memory_space=space),
                              [], [], alignment=1024)
        elems = memref_d.view(ir.MemRefType.get([total // 2], float_type(p.dtype), memory_space=space),
                              smem, e.c(0), [])
        base = address_of(smem)
        a_bytes = s.block_m * ROW_BYTES
        self.src_of_tile = {"a": x, "b": w}
        self.tile_off = {"a": e.c(0), "b": e.c(a_bytes // 2)}
        self.tiles = {"a": elems, "b": elems}
        howo = p.Ho * p.Wo

        def act(m, k):
            n = e.div(m, howo)
            rem = e.rem(m, howo)
            ho, wo = e.div(rem, p.Wo), e.rem(rem, p.Wo)
            rs, c = e.div(k, p.C), e.rem(k, p.C)
            r, sx = e.div(rs, p.S), e.rem(rs, p.S)
            h = e.sub(e.add(e.mul(ho, p.stride[0]), e.mul(r, p.dilation[0])), p.pad[0])
            wi = e.sub(e.add(e.mul(wo, p.stride[1]), e.mul(sx, p.dilation[1])), p.pad[1])
            ok = e.all_of(e.cmp("slt", m, p.gemm_m), e.cmp("slt", k, p.gemm_k), e.cmp("sge", h, 0),
                          e.cmp("slt", h, p.H), e.cmp("sge", wi, 0), e.cmp("slt", wi, p.W))
            return ok, e.add(e.mul(e.add(e.mul(e.add(e.mul(n, p.H), h), p.W), wi), p.C), c)

        def filt(f, k):
            ok = e.all_of(e.cmp("slt", f, p.F), e.cmp("slt", k, p.gemm_k))
            return ok, e.add(e.mul(f, p.gemm_k), k)

        ktiles = _cdiv(p.gemm_k, K_TILE)
        loop = e.for_(0, ktiles, 1, [zero_accumulator(wg_cols)])
        with loop as (kt, (acc,), set_acc):
            k0 = e.mul(kt, K_TILE)
            self._gather_tile("a", s.block_m, m0, k0, tid, act)
            self._gather_tile("b", s.block_n, n0, k0, tid, filt)
            async_proxy_fence()
            gpu_d.barrier()
            acc = self._mma_stage(acc, base, arith_d.addi(base, i64(a_bytes)), wg_row0, wg_col0, wg_cols)
            wgmma_wait(0)
            gpu_d.barrier()              # all warps done reading before the next gather
            set_acc([acc])
        self._epilogue(memrefs, loop.results[0], m0, n0, tid, wg_row0, wg_col0, wg_cols, smem)


def emit_sm90_gather_wgmma(p: ConvProblem, s: Schedule, machine, memrefs) -> None:
    Sm90GatherWgmma(p, s, machine).emit(memrefs)
