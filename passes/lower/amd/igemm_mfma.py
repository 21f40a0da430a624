"""amd_lds_mfma: implicit GEMM for AMD Instinct (gfx942 / gfx950) with an LDS-direct im2col
loader and MFMA.

GEMM view as every convc kernel (M = N*Ho*Wo, N = F, K = R*S*C with channels fastest). A
workgroup owns a block_m x block_n output tile and has two kinds of waves (wave-uniform roles,
chosen on a `readfirstlane`d wave index):

- loading waves (lds_loader.LdsLoader): fill a `stages`-deep LDS ring with direct-to-LDS
  buffer loads, following `RingPlan`: issue, `s_waitcnt vmcnt(n)` until the tile the MFMA waves
  need next has landed (later tiles stay in flight), `s_barrier`;
- 4 MFMA waves (2 x 2): meet each ring step at an LDS-fenced barrier, read their operands from
  the swizzled stage and run 16x16xK MFMAs with f32 accumulators; the filter is MFMA operand A
  and the activation operand B, so each lane ends with 4 consecutive output channels of one
  output row, which the shared fused epilogue stores as one vector.
"""

from __future__ import annotations

from ...ir import ir, hal_d, scf_d, vector_d
from ...problem import ConvProblem
from ...schedule import Schedule
from ...target import get_target
from ..common.emit import cdiv, float_type, vec_type, zeros, Emitter
from ..common.epilogue import store_row_masked
from ..common.int_ops import IrOps
from .im2col_addressing import lds_read_offset
from .lds_loader import MFMA_WAVES, WAVE, LdsLoader, loader_config, wave_tile_m, wave_tile_n
from .primitives import (FP8_DTYPES, buffer_view, keep_rolled, lds_barrier, lds_read, mfma_16x16, mfma_k, readfirstlane,
                         s_barrier, wait_vmcnt)

MFMA_M = MFMA_N = 16


class AmdLdsMfma:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.t = get_target(s.target)
        self.cfg = loader_config(p, s, self.t)
        self.e = Emitter()
        self.ops = IrOps(self.e)

    def emit(self, memrefs: list) -> None:
        p, s, e = self.p, self.s, self.e
        n_tiles = cdiv(p.F, s.block_n)
        pid = hal_d.InterfaceWorkgroupIDOp(0).result
        m0 = e.mul(e.div(pid, n_tiles), s.block_m)
        n0 = e.mul(e.rem(pid, n_tiles), s.block_n)
        tid = self.m.thread_id(e)
        wave = readfirstlane(e.div(tid, WAVE))
        # fp8 bindings are i8 memrefs (bytes), and so is their ring; MFMA operands are bitcast
        lds = self.m.alloc_workgroup([s.stages * self.cfg.stage_elements], _bytes_or(p.dtype), alignment=16)
        role = scf_d.IfOp(e.cmp("sge", wave, MFMA_WAVES), [], has_else=True)
        with ir.InsertionPoint(role.then_block):
            self._loading_waves(memrefs, lds, tid, wave, m0, n0)
            scf_d.YieldOp([])
        with ir.InsertionPoint(role.else_block):
            self._mfma_waves(memrefs, lds, tid, wave, m0, n0)
            scf_d.YieldOp([])

    # ------------------------------------------------------------------ loading waves
    def _loading_waves(self, memrefs, lds, tid, wave, m0, n0):
        p, s, e, ring = self.p, self.s, self.e, self.cfg.ring
        lane = e.sub(tid, MFMA_WAVES * WAVE)
        lwave = e.sub(wave, MFMA_WAVES)
        x_buf = buffer_view(memrefs[p.input])
        w_buf = buffer_view(memrefs[p.filter])
        loader = LdsLoader(e, self.t.arch, self.cfg, p.dtype, x_buf, w_buf, lds, lane, lwave, m0, n0)
        for t in range(ring.prologue):
            loader.issue(t * s.block_k, t % s.stages)
        if ring.steady:
            steady = e.for_(0, ring.steady)
            keep_rolled(steady.op)
            with steady as (t, _, _y):
                wait_vmcnt(ring.steady_wait())
                s_barrier()
                nxt = e.add(t, s.stages - 1)
                loader.issue(e.mul(nxt, s.block_k), e.rem(nxt, s.stages))
        for _, count in ring.tail_waits():
            wait_vmcnt(count)
            s_barrier()

    # ------------------------------------------------------------------ MFMA waves
    def _mfma_waves(self, memrefs, lds, tid, wave, m0, n0):
        p, s, e, ops, cfg = self.p, self.s, self.e, self.ops, self.cfg
        arch, kstep = self.t.arch, mfma_k(self.t.arch, p.dtype)
        frag = kstep // 4                          # operand elements per lane
        wm, wn = e.div(wave, 2), e.rem(wave, 2)    # 2 x 2 waves
        lane = e.rem(tid, WAVE)
        lrow, lk = e.rem(lane, 16), e.div(lane, 16)
        tiles_m, tiles_n = wave_tile_m(s) // MFMA_M, wave_tile_n(s) // MFMA_N
        acc_t = vec_type(4, p.acc_dtype)           # f32 sums of 16-bit operands, i32 of i8 ones
        acc0 = [zeros(acc_t) for _ in range(tiles_m * tiles_n)]
        ftype = ir.VectorType.get([frag], float_type(_bytes_or(p.dtype)))
        mtype = ir.VectorType.get([frag], float_type(p.dtype))    # the MFMA's operand type
        act_row0 = e.add(e.mul(wm, wave_tile_m(s)), lrow)   # tile-local rows this lane reads
        flt_row0 = e.add(e.mul(wn, wave_tile_n(s)), lrow)
        act_rows = [e.add(act_row0, i * MFMA_M) for i in range(tiles_m)]
        flt_rows = [e.add(flt_row0, j * MFMA_N) for j in range(tiles_n)]
        loop = e.for_(0, cfg.ring.ktiles, 1, acc0)
        keep_rolled(loop.op)
        with loop as (t, accs, set_accs):
            lds_barrier()
            base = e.mul(e.rem(t, s.stages), cfg.stage_elements)
            accs = list(accs)
            for kk in range(s.block_k // kstep):
                chunk = ops.div(ops.add(kk * kstep, ops.mul(lk, frag)), cfg.act.vec)
                a_frag = [_as(mtype, lds_read(ftype, lds, e.add(base, ops.add(cfg.flt_offset,
                                                                             lds_read_offset(ops, cfg.flt, r, chunk)))))
                          for r in flt_rows]
                b_frag = [_as(mtype, lds_read(ftype, lds, e.add(base, lds_read_offset(ops, cfg.act, r, chunk))))
                          for r in act_rows]
                for j in range(tiles_n):
                    for i in range(tiles_m):
                        accs[j * tiles_m + i] = mfma_16x16(arch, a_frag[j], b_frag[i], accs[j * tiles_m + i])
            set_accs(accs)
        self._epilogue(memrefs, loop.results, m0, n0, wm, wn, lrow, lk, tiles_m, tiles_n)

    def _epilogue(self, memrefs, accs, m0, n0, wm, wn, lrow, lk, tiles_m, tiles_n):
        """Lane holds D[f = 4*lk + 0..3][m = lrow] of each 16x16 tile: 4 channels of one row."""
        p, s, e = self.p, self.s, self.e
        m_base = e.add(e.add(m0, e.mul(wm, wave_tile_m(s))), lrow)
        f_base = e.add(e.add(n0, e.mul(wn, wave_tile_n(s))), e.mul(lk, 4))
        for j in range(tiles_n):
            f = e.add(f_base, j * MFMA_N)
            for i in range(tiles_m):
                m = e.add(m_base, i * MFMA_M)
                store_row_masked(e, p, memrefs, accs[j * tiles_m + i], 4, m, f)


def _bytes_or(dtype: str) -> str:
    """The ring's element type: fp8 operands move as bytes."""
    return "i8" if dtype in FP8_DTYPES else dtype


def _as(vt: ir.VectorType, v: ir.Value) -> ir.Value:
    """v reinterpreted as vt (fp8 bytes read from the ring as the MFMA's fp8 operand)."""
    return v if v.type == vt else vector_d.bitcast(vt, v)


def emit_amd_lds_mfma(p: ConvProblem, s: Schedule, machine, memrefs: list) -> None:
    AmdLdsMfma(p, s, machine).emit(memrefs)
