"""sm_90a implicit GEMM: im2col TMA + tiled TMA into 128B-swizzled shared memory, a ring of
mbarrier-tracked stages, and wgmma m64nNk16 with f32 accumulators.

Workgroup: two warpgroups (256 threads). With block_m = 128 warpgroup g owns rows
[64g, 64g + 64) and all block_n channels; with block_m = 64 (small grids) they split the
channels instead. Thread 0 also acts as the producer: it
writes the CTA's tensor maps, initialises the barriers, fills the ring, and refills a stage as
soon as every warp has released it (the `empty` barrier, one arrival per warp). The epilogue
stages the accumulators through shared memory and applies the fused epilogue with coalesced
16-byte accesses.

Shared memory is one 1024-byte aligned allocation: [A stages][B stages][full bars][empty bars].
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import ir, arith_d, hal_d, llvm_d, memref_d, parse_attr, vector_d
from ...problem import ConvProblem
from ...kernel_configs import TmaWgmmaConfig
from ...schedule import Schedule
from ..common.emit import cdiv, vec_type, Emitter
from ..common.epilogue import apply_and_store, load_operands
from ..common.executable import gemm_rows
from .primitives import (I64, address_of, cluster_sync, index_to, i64, load_remote_shared,
                         mbarrier_init_fence, smem_matrix_descriptor, wgmma_commit,
                         wgmma_fence, wgmma_m64nk16, wgmma_wait, zero_accumulator)
from .ring import MbarrierRing
from .smem import Carve, Region, SharedBlock
from .tma_loader import CHANNELS_PER_TILE, ConvTmaLoader, descriptor_slots, tensor_maps, write_descriptors

WARPGROUP = 128
ROW_BYTES = CHANNELS_PER_TILE * 2          # one swizzled row: 64 x 16-bit
SWIZZLE_ATOM_BYTES = 8 * ROW_BYTES         # 8 rows: the wgmma stride byte offset


@dataclass(frozen=True)
class IgemmLayout:
    a: Region                  # the ring stages' activation parts
    b: Region                  # ... and filter parts
    full: Region
    empty: Region
    total: int


def smem_layout(s: Schedule) -> IgemmLayout:
    """The stage ring (reused by the f32 epilogue tile, which may be longer), then the
    barriers."""
    carve = Carve()
    a = carve.take(s.block_m * ROW_BYTES, s.stages)
    b = carve.take(s.block_n * ROW_BYTES, s.stages)
    carve.top = max(carve.top, s.block_m * tile_row_floats(s) * 4)
    full, empty = carve.barriers(s.stages), carve.barriers(s.stages)
    return IgemmLayout(a, b, full, empty, carve.top)


class Sm90TmaWgmma:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.split_k = self.split_k_of(s)
        self.e = Emitter()

    @staticmethod
    def split_k_of(s: Schedule) -> int:
        """CTAs (one cluster) sharing an output tile, each a K slice."""
        return s.config_as(TmaWgmmaConfig).split_k

    def emit(self, memrefs) -> None:
        p, s, e = self.p, self.s, self.e
        lay = smem_layout(s)
        x, w, scratch = memrefs[p.input], memrefs[p.filter], memrefs[-1]
        n_tiles = cdiv(p.F, s.block_n)
        pid = hal_d.InterfaceWorkgroupIDOp(0).result
        # split-K: the `split_k` CTAs of a cluster share one output tile, each a K slice
        tile = e.div(pid, self.split_k)
        self.ks = e.rem(pid, self.split_k)
        m0 = e.mul(e.div(tile, n_tiles), s.block_m)
        n0 = e.mul(e.rem(tile, n_tiles), s.block_n)
        tid = self.m.thread_id(e)
        wg = e.div(tid, WARPGROUP)
        wg_m, wg_n, wg_cols = warpgroup_grid(s)
        wg_row0 = e.mul(e.div(wg, wg_n), 64)          # this warpgroup's first tile row
        wg_col0 = e.mul(e.rem(wg, wg_n), wg_cols)      # ... and first tile column

        block = SharedBlock(self.m, lay.total)
        # full[i] (1 arrival + TMA bytes) says stage i holds k-tile data; empty[i] (one
        # arrival per warp after its wgmma completed) says it may be refilled
        ring = MbarrierRing(e, block, lay.full, lay.empty)
        assert s.block_m * tile_row_floats(s) * 4 <= lay.full.offset, "epilogue tile must fit the stages"

        maps = tensor_maps(p, s)
        slots = descriptor_slots(pid, scratch)
        loader = ConvTmaLoader(e, p, s, slots[0], slots[1], m0, n0)
        is_producer = e.cmp("eq", tid, 0)
        with e.if_(is_producer):
            write_descriptors([maps.activation, maps.filter], slots, [x, w])
            ring.init(s.threads // 32)
            mbarrier_init_fence()
        self.m.barrier()

        ktiles = p.gemm_k // CHANNELS_PER_TILE // self.split_k      # k-tiles of this CTA's slice
        kbase = e.mul(self.ks, ktiles)
        with e.if_(is_producer):
            for i in range(min(s.stages, ktiles)):
                loader.load(e.add(kbase, i), block.element(lay.a, i), block.element(lay.b, i), ring.full(i))

        def release_and_refill(st, phase, kt_done):
            """k-tile kt_done (stage st, phase parity `phase`) has its wgmma group completed
            in this warp: release its stage and, in the producer, refill it with k-tile
            kt_done + stages once every warp did."""
            with e.if_(e.cmp("eq", e.rem(tid, 32), 0)):
                ring.release(st)
            with e.if_(is_producer):
                nxt = e.add(kt_done, s.stages)
                with e.if_(e.cmp("slt", nxt, ktiles)):
                    ring.await_release(st, phase)
                    loader.load(e.add(kbase, nxt), block.element(lay.a, st), block.element(lay.b, st), ring.full(st))

        # Main loop: keep one wgmma group in flight; the stage of the previous k-tile is
        # released as soon as its group retires (wgmma.wait_group 1).
        loop = e.for_(0, ktiles, 1, [zero_accumulator(wg_cols)])
        with loop as (kt, (acc,), set_acc):
            st, phase = ring.slot(kt)
            ring.wait(st, phase)
            acc = self._mma_stage(acc, block.element(lay.a, st), block.element(lay.b, st), wg_row0, wg_col0, wg_cols)
            wgmma_wait(1)
            with e.if_(e.cmp("sgt", kt, 0)):
                done = e.sub(kt, 1)
                release_and_refill(*ring.slot(done), done)
            set_acc([acc])
        wgmma_wait(0)
        self._epilogue(memrefs, loop.results[0], m0, n0, tid, wg_row0, wg_col0, wg_cols, block.memref)

    def _mma_stage(self, acc, a_stage, b_stage, wg_row0, wg_col0, wg_cols):
        """One 64-wide K tile: 4 x wgmma m64n{wg_cols}k16 on this warpgroup's rows of the A
        stage and columns of the B stage (i64 shared addresses), then commit the group."""
        a_wg = arith_d.addi(a_stage, arith_d.muli(index_to(wg_row0, I64()), i64(ROW_BYTES)))
        b_wg = arith_d.addi(b_stage, arith_d.muli(index_to(wg_col0, I64()), i64(ROW_BYTES)))
        wgmma_fence()
        for kk in range(CHANNELS_PER_TILE // 16):
            da = smem_matrix_descriptor(arith_d.addi(a_wg, i64(32 * kk)), SWIZZLE_ATOM_BYTES)
            db = smem_matrix_descriptor(arith_d.addi(b_wg, i64(32 * kk)), SWIZZLE_ATOM_BYTES)
            acc = wgmma_m64nk16(acc, da, db, wg_cols, self.p.dtype)
        wgmma_commit()
        return acc

    def _epilogue(self, memrefs, acc, m0, n0, tid, wg_row0, wg_col0, wg_cols, smem):
        """Accumulators -> shared memory (f32, rows padded by 16 B) -> fused epilogue with
        16-byte coalesced bias/residual loads and output stores (8 channels per thread).

        Fragment of m64nNk16 (f32): thread l of warp w holds, for each 8-column block j,
        rows 16w + l/4 (+8) and columns 8j + 2(l%4) + {0, 1}."""
        s, e = self.s, self.e
        stride = tile_row_floats(s)
        f32 = ir.F32Type.get()
        space = parse_attr("#gpu.address_space<workgroup>")
        tile = memref_d.view(ir.MemRefType.get([s.block_m * stride], f32, memory_space=space),
                             smem, e.c(0), [])
        self.m.barrier()                  # every warp's wgmma reads of the stages are done
        lane = e.rem(tid, 32)
        warp = e.div(e.rem(tid, WARPGROUP), 32)
        row = e.add(wg_row0, e.add(e.mul(warp, 16), e.div(lane, 4)))
        col = e.add(wg_col0, e.mul(e.rem(lane, 4), 2))
        for j in range(wg_cols // 8):
            for h in range(2):
                v0 = llvm_d.extractvalue(f32, acc, [4 * j + 2 * h])
                v1 = llvm_d.extractvalue(f32, acc, [4 * j + 2 * h + 1])
                at = e.add(e.mul(e.add(row, 8 * h), stride), e.add(col, 8 * j))
                vector_d.store(vector_d.from_elements(vec_type(2, "f32"), [v0, v1]), tile, [at], alignment=8)
        self.m.barrier()
        if self.split_k > 1:
            cluster_sync()               # every slice's partial tile is in its shared memory
            with e.if_(e.cmp("eq", self.ks, 0)):
                self._coalesced_phase(memrefs, tile, smem, m0, n0, tid)
            cluster_sync()               # rank 0 is done reading the other slices' tiles
        else:
            self._coalesced_phase(memrefs, tile, smem, m0, n0, tid)

    def _coalesced_phase(self, memrefs, tile, smem, m0, n0, tid):
        p, s, e = self.p, self.s, self.e
        stride = tile_row_floats(s)
        base = address_of(smem) if self.split_k > 1 else None
        # Coalesced phase: each thread owns 8 channels of a row; rows are visited in groups
        # whose loads (clamped in bounds) are all issued before the first store.
        per_row = s.block_n // 8
        rows_per_pass = s.threads // per_row
        rows = gemm_rows(e, p, memrefs)          # M: an index value for a run-time batch
        last = rows - 1 if isinstance(rows, int) else e.sub(rows, 1)
        passes = s.block_m // rows_per_pass
        group = min(passes, EPILOGUE_ROWS_IN_FLIGHT)
        r_in = e.div(tid, per_row)
        c8 = e.mul(e.rem(tid, per_row), 8)
        f = e.add(n0, c8)
        f_ok = e.cmp("slt", f, p.F)
        f_safe = e.select(f_ok, f, p.F - 8)
        for g0 in range(0, passes, group):
            work = []
            for ps in range(g0, min(passes, g0 + group)):
                r = e.add(r_in, ps * rows_per_pass)
                m = e.add(m0, r)
                m_ok = e.cmp("slt", m, rows)
                m_safe = e.select(m_ok, m, last)
                at = e.add(e.mul(r, stride), c8)
                vals = vector_d.load(vec_type(8, "f32"), tile, [at], alignment=16)
                for rank in range(1, self.split_k):       # fixed order: deterministic sums
                    addr = arith_d.addi(base, arith_d.muli(index_to(at, I64()), i64(4)))
                    vals = arith_d.addf(vals, load_remote_shared(vec_type(8, "f32"), addr, rank, 16))
                ops = load_operands(e, p, memrefs, 8, m_safe, f_safe, aligned=True)
                work.append((m, m_ok, vals, ops))
            for m, m_ok, vals, ops in work:
                with e.if_(e.all_of(m_ok, f_ok)):
                    apply_and_store(e, p, memrefs, vals, 8, m, f, aligned=True, operands=ops)


EPILOGUE_ROWS_IN_FLIGHT = 4


def warpgroup_grid(s: Schedule) -> tuple[int, int, int]:
    """(warpgroups along M, along N, tile columns per warpgroup): two warpgroups split a
    128-row tile by rows, or a 64-row tile by columns."""
    wg_m = s.block_m // 64
    wg_n = (s.threads // WARPGROUP) // wg_m
    return wg_m, wg_n, s.block_n // wg_n


def tile_row_floats(s: Schedule) -> int:
    """f32 row pitch of the epilogue tile: block_n + 4 (16 B of padding against bank conflicts)."""
    return s.block_n + 4


def emit_sm90_tma_wgmma(p: ConvProblem, s: Schedule, machine, memrefs) -> None:
    Sm90TmaWgmma(p, s, machine).emit(memrefs)
