"""The sm_80 generation's warp-level ops (so sm_90a and sm_100a alike), as NVVM ops, which
survive IREE 3.13's lowering to PTX: cp.async (16 bytes, zero fill), ldmatrix and
mma.sync.aligned.m16n8k16 with f32 accumulators. Addresses travel as i64 (shared: the
shared-window offset; global: the generic device address), as in primitives.py.
"""

from __future__ import annotations

from ...ir import ir, arith_d, llvm_d, nvvm_d, parse_attr, vector_d
from .primitives import I32, as_generic_ptr, as_shared_ptr, i32


def cp_async_16(dst_smem_i64, src_i64, valid_i1) -> None:
    """cp.async.cg.shared.global [dst], [src], 16, src-size: 16 bytes global -> shared (L2
    only), zero-filled when valid is false (src-size 0: nothing is read). The source is cast
    generic -> global (cvta.to.global)."""
    src = llvm_d.addrspacecast(ir.Type.parse("!llvm.ptr<1>"), as_generic_ptr(src_i64))
    nvvm_d.CpAsyncOp(as_shared_ptr(dst_smem_i64), src, 16, parse_attr("#nvvm.load_cache_modifier<cg>"),
                     cpSize=arith_d.select(valid_i1, i32(16), i32(0)))


def cp_async_commit() -> None:
    """cp.async.commit_group."""
    nvvm_d.CpAsyncCommitGroupOp()


def cp_async_wait(pending: int) -> None:
    """cp.async.wait_group N: all but this thread's N most recent groups have landed."""
    nvvm_d.CpAsyncWaitGroupOp(pending)


def ldmatrix(addr_i64, count: int, trans: bool = False) -> list:
    """ldmatrix.sync.aligned.m8n8.x{count}{.trans}.shared.b16: lane L gives the address of row
    L%8 of matrix L/8 (16 contiguous bytes); each lane gets, per matrix, the b32 holding row
    L/4, columns 2(L%4) and +1 (with trans: of the transposed matrix, i.e. memory rows 2(L%4)
    and +1 at column L/4). Returns `count` i32."""
    i32 = I32()
    res = i32 if count == 1 else llvm_d.StructType.get_literal([i32] * count)
    r = nvvm_d.LdMatrixOp(as_shared_ptr(addr_i64), count, parse_attr(f"#nvvm.mma_layout<{'col' if trans else 'row'}>"),
                          parse_attr("#nvvm.ld_st_matrix_shape<m = 8, n = 8>"),
                          parse_attr("#nvvm.ld_st_matrix_elt_type<b16>"), results=[res]).result
    if count == 1:
        return [r]
    return [llvm_d.extractvalue(i32, r, [i]) for i in range(count)]


def _operand(reg_i32, dtype: str):
    """NVVM's mma.sync takes f16 pairs as vector<2xf16> and bf16 pairs as i32."""
    if dtype == "bf16":
        return reg_i32
    return llvm_d.bitcast(ir.VectorType.get([2], ir.F16Type.get()), reg_i32)


def accumulator_type() -> ir.Type:
    return ir.Type.parse("!llvm.struct<(f32, f32, f32, f32)>")


def mma_m16n8k16(a_regs, b_regs, acc: list, dtype: str) -> list:
    """mma.sync.aligned.m16n8k16.row.col.f32.{dtype}.{dtype}.f32: acc (4 f32: rows L/4 and
    L/4 + 8, columns 2(L%4), +1) += A (4 b32: the ldmatrix.x4 of rows 0-7/8-15 x k 0-7/8-15)
    x B (2 b32: k 0-7, k 8-15 of column L/4). Returns the 4 new accumulators."""
    f32 = ir.F32Type.get()
    ty = parse_attr(f"#nvvm.mma_type<{dtype}>")
    d = nvvm_d.MmaOp(accumulator_type(), parse_attr("#nvvm.shape<m = 16, n = 8, k = 16>"),
                     parse_attr("#nvvm.mma_layout<row>"), parse_attr("#nvvm.mma_layout<col>"),
                     [_operand(r, dtype) for r in a_regs], [_operand(r, dtype) for r in b_regs], list(acc),
                     multiplicandAPtxType=ty, multiplicandBPtxType=ty).result
    return [llvm_d.extractvalue(f32, d, [i]) for i in range(4)]


def warp_sync() -> None:
    """bar.warp.sync 0xffffffff: the warp's lanes reconverge, their shared-memory accesses
    before it ordered before those after it."""
    nvvm_d.SyncWarpOp(arith_d.constant(I32(), -1))


def pair(lo, hi):
    """vector<2xf32> of two accumulators (an epilogue slice of two channels)."""
    return vector_d.from_elements(ir.VectorType.get([2], ir.F32Type.get()), [lo, hi])
