"""The epilogue warps of the sm_100a tcgen05 kernel (sm100_ws.py): per tile, the accumulator
from tensor memory (tcgen05.ld, 32 columns at a time, the next load in flight) + bias +
residual (TMA-loaded into the staging slot itself) -> relu/casts -> swizzled staging slot ->
TMA store; the accumulator stage is handed back to the MMA warp as soon as it is in registers."""

from __future__ import annotations

from ...ir import arith_d, llvm_d, vector_d
from ...problem import DTYPE_BYTES
from ..common.emit import vec_type
from ..common.epilogue import apply_steps
from . import tcgen05 as tc
from .primitives import (I32, as_shared_ptr, async_proxy_fence, bulk_commit, bulk_wait_read, i32, i64, index_to,
                         mbarrier_arrive_remote, named_barrier, tma_load, tma_store)
from .sm100_ws_layout import BLOCK_M, EPILOGUE_BARRIER, EPILOGUE_THREADS, WARP, store_width
from .tma_loader import acquire_descriptor, epilogue_panel
from .warp_roles import swizzled


# Registers a tile's per-channel epilogue operands may take if all their loads are issued
# together (the chunks are straight-line code). Past it each chunk's operands are addressed
# through the previous chunk's tcgen05.wait::ld (wait_ld_for's `after`): ResNet-50's
# dynamic-batch 1x1s with an unfolded BatchNorm (three f16 per-channel operands over 256
# columns: 384 registers together) spilled 84-144 bytes per thread at 255 registers under
# ptxas -arch=sm_100a, 16-60 bytes so (with computed values in place of the loads: 86
# registers, no spill); a bias over 256 columns (128) never spilled.
TILE_OPERAND_REGISTERS = 128


class Epilogue:
    """The epilogue warps, reading the kernel's state (sm100_ws.Sm100State) and setting none."""

    def __init__(self, k):
        self.k = k

    def emit(self, etid, warp, lane) -> None:
        k = self.k
        p, s, e, lay = k.mode.p, k.mode.s, k.e, k.mode.lay
        res = k.mode.res
        elected = e.cmp("eq", etid, 0)
        with e.if_(elected):
            acquire_descriptor(k.slots[2])
            if res:
                acquire_descriptor(k.slots[3])
        quadrant = e.rem(warp, 4)                    # the tensor-memory lanes this warp may read
        row = e.add(e.mul(quadrant, WARP), lane)     # this thread's output row of the tile
        lane_field = arith_d.shli(index_to(e.mul(quadrant, WARP), I32()), i32(16))
        slot = k.smem.element(lay.out, 0)
        panel = epilogue_panel(p.out_dtype, s.block_n)
        width = store_width(p.out_dtype)
        chunks = s.block_n // tc.LD_COLUMNS
        with e.for_(0, k.tiles.local_count(), 1) as (j, _, _y):
            m0, n0 = k.tiles.origin(j)
            acc, aph = k.accs.slot(j)
            with e.if_(elected):
                bulk_wait_read(0)                    # the previous tile's store has read the slot
                if res:
                    k.res_full.arm(0, lay.out_slot)
                    for off, ch in epilogue_panel(res.dtype, s.block_n).boxes(s.block_n, BLOCK_M):
                        tma_load(arith_d.addi(slot, i64(off)), k.slots[3],
                                 [index_to(e.add(n0, ch), I32()), index_to(m0, I32())], k.res_full.full())
            if not res:
                named_barrier(EPILOGUE_BARRIER, EPILOGUE_THREADS)   # nobody writes the slot before that
            k.accs.wait(acc, aph)
            tc.fence_after_thread_sync()
            if res:
                k.res_full.wait_at(j)
            col0 = arith_d.addi(arith_d.addi(k.taddr, lane_field), index_to(e.mul(acc, s.block_n), I32()))
            # 32 columns per tcgen05.ld; chunk c + 1's load is in flight while chunk c is
            # processed (wait::ld waits for every earlier load, so it follows the processing)
            chained = chunks * self._chunk_operand_registers() > TILE_OPERAND_REGISTERS
            f0 = n0
            if chained:
                pending, f0 = tc.wait_ld_for(tc.ld_32x32b(col0), after=n0)
            else:
                pending = tc.wait_ld_for(tc.ld_32x32b(col0))
            for c in range(chunks):
                bias = self._channel_operands(e.add(f0, c * tc.LD_COLUMNS), width)
                words = pending
                if c + 1 < chunks:
                    pending = tc.ld_32x32b(arith_d.addi(col0, i32((c + 1) * tc.LD_COLUMNS)))
                else:
                    # the whole accumulator is in registers: the MMA warp may refill the stage
                    tc.fence_before_thread_sync()
                    if k.mode.pair:        # the leader's MMA thread waits for both CTAs
                        mbarrier_arrive_remote(k.accs.empty(acc), i32(0))
                    else:
                        k.accs.release(acc)
                # 32-bit words: f32 sums of 16-bit operands, i32 sums of i8 ones
                acc_t = p.acc_dtype
                vals = words if acc_t == "i32" else vector_d.bitcast(vec_type(tc.LD_COLUMNS, acc_t), words)
                for u in range(tc.LD_COLUMNS // width):
                    accv = vector_d.extract_strided_slice(vec_type(width, acc_t), vals, [u * width], [width], [1])
                    addr = swizzled(e, slot, BLOCK_M, row, c * tc.LD_COLUMNS + u * width, e.c(0), p.out_dtype,
                                    s.block_n)
                    operands = []
                    for i, ld in enumerate(p.operand_loads):
                        if ld.broadcast == "channel":
                            operands.append(bias[(i, u)])
                        else:       # the residual, in place (same dtype and layout as the output)
                            operands.append(llvm_d.load(vec_type(width, ld.dtype), as_shared_ptr(addr), alignment=16))
                    llvm_d.StoreOp(apply_steps(p, accv, operands, width), as_shared_ptr(addr), alignment=16)
                if c + 1 < chunks:
                    if chained:
                        pending, f0 = tc.wait_ld_for(pending, after=f0)
                    else:
                        pending = tc.wait_ld_for(pending)
            async_proxy_fence()                      # st.shared -> visible to the TMA store
            named_barrier(EPILOGUE_BARRIER, EPILOGUE_THREADS)
            with e.if_(elected):
                for off, ch in panel.boxes(s.block_n, BLOCK_M):
                    tma_store(k.slots[2], arith_d.addi(slot, i64(off)),
                              [index_to(e.add(n0, ch), I32()), index_to(m0, I32())])
                bulk_commit()
        with e.if_(elected):
            bulk_wait_read(0)                        # the last store has read the slot

    def _chunk_operand_registers(self) -> int:
        """32-bit registers one chunk's per-channel operands take (tc.LD_COLUMNS channels each)."""
        return sum(tc.LD_COLUMNS * DTYPE_BYTES[ld.dtype] // 4 for ld in self.k.mode.p.operand_loads
                   if ld.broadcast == "channel")

    def _channel_operands(self, f0, width: int) -> dict:
        """{(load index, u): vector<width> of that per-channel operand at channels
        f0 + width u .. + width - 1}, clamped in bounds (F is a multiple of width; stores past F
        are clipped by the TMA store)."""
        e, p = self.k.e, self.k.mode.p
        out = {}
        for i, ld in enumerate(p.operand_loads):
            if ld.broadcast != "channel":
                continue
            for u in range(tc.LD_COLUMNS // width):
                f = e.add(f0, u * width)
                f_safe = e.select(e.cmp("slt", f, p.F - width + 1), f, p.F - width)
                out[(i, u)] = vector_d.load(vec_type(width, ld.dtype), self.k.memrefs[ld.operand], [f_safe],
                                            alignment=width * DTYPE_BYTES[ld.dtype] if width * DTYPE_BYTES[ld.dtype] <= 16 else 16)
        return out
