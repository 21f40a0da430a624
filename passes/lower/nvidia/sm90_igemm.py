"""sm_90a implicit GEMM: im2col TMA + tiled TMA into 128B-swizzled shared memory, a ring of
mbarrier-tracked stages, and wgmma m64nNk16 with f32 accumulators.

Workgroup: two warpgroups (256 threads); warpgroup g owns rows [64g, 64g + 64) of the
block_m = 128 output pixels and all block_n channels. Thread 0 also acts as the producer: it
writes the CTA's tensor maps, initialises the barriers, fills the ring, and refills a stage as
soon as every warp has released it (the `empty` barrier, one arrival per warp). The epilogue
reads the accumulator fragment in registers and applies the fused epilogue.

Shared memory is one 1024-byte aligned allocation: [A stages][B stages][full bars][empty bars].
"""

from __future__ import annotations

from ...ir import ir, arith_d, gpu_d, hal_d, llvm_d, memref_d, parse_attr, vector_d
from ...problem import ConvProblem, DTYPE_BYTES
from ...schedule import Schedule
from ..common.emit import Emitter, vec_type
from ..common.epilogue import apply_and_store
from .primitives import (I32, I64, address_of, index_to, i64, mbarrier_arrive, mbarrier_init,
                         mbarrier_init_fence, mbarrier_wait, smem_matrix_descriptor, wgmma_commit,
                         wgmma_fence, wgmma_m64nk16, wgmma_wait, zero_accumulator)
from .tma_loader import CHANNELS_PER_TILE, ConvTmaLoader, descriptor_slots, tensor_maps, write_descriptors

WARPGROUP = 128
ROW_BYTES = CHANNELS_PER_TILE * 2          # one swizzled row: 64 x 16-bit
SWIZZLE_ATOM_BYTES = 8 * ROW_BYTES         # 8 rows: the wgmma stride byte offset


def smem_layout(s: Schedule) -> dict:
    a = s.block_m * ROW_BYTES
    b = s.block_n * ROW_BYTES
    bars = s.stages * (a + b)
    return {"a_stage": a, "b_stage": b, "bars": bars, "total": bars + 16 * s.stages}


def _cdiv(a, b):
    return -(-a // b)


class Sm90TmaWgmma:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.e = Emitter()

    def emit(self, memrefs) -> None:
        p, s, e = self.p, self.s, self.e
        lay = smem_layout(s)
        x, w, scratch = memrefs[p.input], memrefs[p.filter], memrefs[-1]
        n_tiles = _cdiv(p.F, s.block_n)
        pid = hal_d.InterfaceWorkgroupIDOp(0).result
        m0 = e.mul(e.div(pid, n_tiles), s.block_m)
        n0 = e.mul(e.rem(pid, n_tiles), s.block_n)
        tid = gpu_d.thread_id(gpu_d.Dimension.x)
        wg = e.div(tid, WARPGROUP)

        space = parse_attr("#gpu.address_space<workgroup>")
        smem = memref_d.alloc(ir.MemRefType.get([lay["total"]], ir.IntegerType.get_signless(8),
                                                memory_space=space), [], [], alignment=1024)
        base = address_of(smem)

        def at(offset_i64):
            return arith_d.addi(base, offset_i64)

        def stage_off(st_index, stage_bytes, start):
            return arith_d.addi(i64(start), arith_d.muli(index_to(st_index, I64()), i64(stage_bytes)))

        full = [at(i64(lay["bars"] + 8 * i)) for i in range(s.stages)]
        empty = [at(i64(lay["bars"] + 8 * (s.stages + i))) for i in range(s.stages)]
        # Barrier protocol: full[i] (1 arrival + TMA bytes) says stage i holds k-tile data;
        # empty[i] (one arrival per warp after its wgmma completed) says it may be refilled.

        maps = tensor_maps(p, s)
        slots = descriptor_slots(pid, scratch)
        loader = ConvTmaLoader(e, p, s, slots[0], slots[1], m0, n0)
        is_producer = e.cmp("eq", tid, 0)
        with e.if_(is_producer):
            write_descriptors(maps, slots, x, w)
            for i in range(s.stages):
                mbarrier_init(full[i], 1)
                mbarrier_init(empty[i], s.threads // 32)
            mbarrier_init_fence()
        gpu_d.barrier()

        ktiles = p.gemm_k // CHANNELS_PER_TILE
        with e.if_(is_producer):
            for i in range(min(s.stages, ktiles)):
                loader.load(e.c(i), at(i64(i * lay["a_stage"])),
                            at(i64(s.stages * lay["a_stage"] + i * lay["b_stage"])), full[i])

        bar_base = i64(lay["bars"])
        loop = e.for_(0, ktiles, 1, [zero_accumulator(s.block_n)])
        with loop as (kt, (acc,), set_acc):
            st = e.rem(kt, s.stages)
            phase = index_to(e.rem(e.div(kt, s.stages), 2), I32())
            a_st = at(stage_off(st, lay["a_stage"], 0))
            b_st = at(stage_off(st, lay["b_stage"], s.stages * lay["a_stage"]))
            full_st = at(arith_d.addi(bar_base, arith_d.muli(index_to(st, I64()), i64(8))))
            empty_st = at(arith_d.addi(bar_base, arith_d.addi(i64(8 * s.stages),
                                                              arith_d.muli(index_to(st, I64()), i64(8)))))
            mbarrier_wait(full_st, phase)
            a_wg = arith_d.addi(a_st, arith_d.muli(index_to(wg, I64()), i64(64 * ROW_BYTES)))
            wgmma_fence()
            for kk in range(CHANNELS_PER_TILE // 16):
                da = smem_matrix_descriptor(arith_d.addi(a_wg, i64(32 * kk)), SWIZZLE_ATOM_BYTES)
                db = smem_matrix_descriptor(arith_d.addi(b_st, i64(32 * kk)), SWIZZLE_ATOM_BYTES)
                acc = wgmma_m64nk16(acc, da, db, s.block_n, p.dtype)
            wgmma_commit()
            wgmma_wait(0)
            with e.if_(e.cmp("eq", e.rem(tid, 32), 0)):
                mbarrier_arrive(empty_st)
            with e.if_(is_producer):
                nxt = e.add(kt, s.stages)
                with e.if_(e.cmp("slt", nxt, ktiles)):
                    mbarrier_wait(empty_st, phase)
                    loader.load(nxt, a_st, b_st, full_st)
            set_acc([acc])
        self._epilogue(memrefs, loop.results[0], m0, n0, tid, wg)

    def _epilogue(self, memrefs, acc, m0, n0, tid, wg):
        """Fragment of m64nNk16 (f32): thread l of warp w holds, for each 8-column block j,
        rows 16w + l/4 (+8) and columns 8j + 2(l%4) + {0, 1}."""
        p, s, e = self.p, self.s, self.e
        lane = e.rem(tid, 32)
        warp = e.div(e.rem(tid, WARPGROUP), 32)
        row = e.add(e.add(m0, e.mul(wg, 64)), e.add(e.mul(warp, 16), e.div(lane, 4)))
        col = e.add(n0, e.mul(e.rem(lane, 4), 2))
        f32 = ir.F32Type.get()
        for j in range(s.block_n // 8):
            f = e.add(col, 8 * j)
            for h in range(2):
                m = e.add(row, 8 * h)
                v0 = llvm_d.extractvalue(f32, acc, [4 * j + 2 * h])
                v1 = llvm_d.extractvalue(f32, acc, [4 * j + 2 * h + 1])
                with e.if_(e.all_of(e.cmp("slt", m, p.gemm_m), e.cmp("slt", f, p.F))):
                    vec = vector_d.from_elements(vec_type(2, "f32"), [v0, v1])
                    apply_and_store(e, p, memrefs, vec, 2, m, f, aligned=True)


def emit_sm90_tma_wgmma(p: ConvProblem, s: Schedule, machine, memrefs) -> None:
    Sm90TmaWgmma(p, s, machine).emit(memrefs)
