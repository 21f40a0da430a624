"""Thin wrappers over the sm_90a NVVM ops the Hopper kernels use (one op each).

Each wrapper names the PTX instruction it becomes; see the PTX ISA sections on
cp.async.bulk.tensor, mbarrier, wgmma.mma_async and fence.proxy. Pointers travel as
integers (i64) and become `!llvm.ptr` / `!llvm.ptr<3>` only at the op that needs them, which
keeps address arithmetic in plain arith ops.
"""

from __future__ import annotations

from ...ir import ir, arith_d, llvm_d, memref_d, nvvm_d, parse_attr, scf_d

I16, I32, I64 = (lambda: ir.IntegerType.get_signless(16)), (lambda: ir.IntegerType.get_signless(32)), \
    (lambda: ir.IntegerType.get_signless(64))


def ptr_generic():
    return ir.Type.parse("!llvm.ptr")


def ptr_shared():
    return ir.Type.parse("!llvm.ptr<3>")


def i32(v: int):
    return arith_d.constant(I32(), v)


def i64(v: int):
    return arith_d.constant(I64(), v)


def index_to(v, t):
    return arith_d.index_cast(t, v)


def address_of(memref_value) -> ir.Value:
    """i64 address of a memref's first element (global: device address; workgroup:
    shared-window offset)."""
    return arith_d.index_cast(I64(), memref_d.extract_aligned_pointer_as_index(memref_value))


def as_shared_ptr(addr_i64):
    return llvm_d.inttoptr(ptr_shared(), addr_i64)


def as_generic_ptr(addr_i64):
    return llvm_d.inttoptr(ptr_generic(), addr_i64)


def store_i64(value_i64, addr_i64) -> None:
    """st.global.u64 through a generic pointer."""
    llvm_d.StoreOp(value_i64, as_generic_ptr(addr_i64), alignment=8)


# ---------------------------------------------------------------------- tensor maps
def tensormap_release() -> None:
    """fence.proxy.tensormap::generic.release.gpu: descriptor bytes written by st.global
    become visible to the tensormap proxy."""
    nvvm_d.FenceProxyReleaseOp(parse_attr("#nvvm.mem_scope<gpu>"))


def tensormap_acquire(desc_addr_i64) -> None:
    """fence.proxy.tensormap::generic.acquire.gpu [desc], 128."""
    nvvm_d.FenceProxyAcquireOp(parse_attr("#nvvm.mem_scope<gpu>"), as_generic_ptr(desc_addr_i64), i32(128))


def tensormap_prefetch(desc_addr_i64) -> None:
    """prefetch.tensormap [desc]."""
    nvvm_d.PrefetchOp(as_generic_ptr(desc_addr_i64), tensormap=True)


def tma_load(dst_smem_i64, desc_addr_i64, coords_i32, mbar_smem_i64, im2col_offsets_i16=(),
             multicast_mask: int = 0) -> None:
    """cp.async.bulk.tensor.Nd.shared::cluster.global.{tile|im2col}.mbarrier::complete_tx::bytes
    (.multicast::cluster with a CTA mask: the same box lands at the same shared offset, and
    signals the barrier at the same offset, in every CTA of the mask)."""
    dst = llvm_d.addrspacecast(ir.Type.parse("!llvm.ptr<7>"), as_shared_ptr(dst_smem_i64))
    kw = {}
    if im2col_offsets_i16:
        kw["mode"] = parse_attr("#nvvm.tma_load_mode<im2col>")
    if multicast_mask:
        kw["multicastMask"] = arith_d.constant(I16(), multicast_mask)
    nvvm_d.CpAsyncBulkTensorGlobalToSharedClusterOp(
        dst, as_generic_ptr(desc_addr_i64), list(coords_i32), as_shared_ptr(mbar_smem_i64),
        list(im2col_offsets_i16), **kw)


# ---------------------------------------------------------------------- mbarriers
def mbarrier_init(bar_i64, count: int) -> None:
    nvvm_d.MBarrierInitOp(as_shared_ptr(bar_i64), i32(count))


def mbarrier_init_fence() -> None:
    """fence.mbarrier_init.release.cluster: make inits visible before first use."""
    nvvm_d.FenceMbarrierInitOp()


def mbarrier_arrive_expect_tx(bar_i64, tx_bytes: int) -> None:
    nvvm_d.MBarrierArriveExpectTxOp(as_shared_ptr(bar_i64), i32(tx_bytes), results=[I64()])


def mbarrier_arrive(bar_i64, count: int = 1) -> None:
    """mbarrier.arrive (count > 1: that many arrivals in one, for a thread that speaks for
    several warps)."""
    nvvm_d.MBarrierArriveOp(as_shared_ptr(bar_i64), count=i32(count) if count > 1 else None, results=[I64()])


def mbarrier_wait(bar_i64, phase_i32) -> None:
    """mbarrier.try_wait.parity in a loop until the phase with this parity completed."""
    nvvm_d.MBarrierTryWaitParityOp(as_shared_ptr(bar_i64), phase_i32, i32(10_000_000))


def async_proxy_fence() -> None:
    """fence.proxy.async.shared::cta: this thread's st.shared become visible to the async
    proxy (wgmma operand reads, TMA)."""
    nvvm_d.FenceProxyOp(parse_attr("#nvvm.proxy_kind<async.shared>"),
                        space=parse_attr("#nvvm.shared_space<cta>"))


def cluster_sync() -> None:
    """barrier.cluster.arrive.aligned + barrier.cluster.wait.aligned (release/acquire):
    every thread of every CTA in the cluster."""
    nvvm_d.ClusterArriveOp(aligned=True)
    nvvm_d.ClusterWaitOp(aligned=True)


def mbarrier_arrive_remote(bar_i64, rank, relaxed: bool = False) -> None:
    """mbarrier.arrive{.release|.relaxed}.cluster.shared::cluster on the barrier at the same
    shared offset in cluster CTA `rank` (an i32 value). The release form orders this thread's
    earlier memory operations before the arrival, which costs a cluster-scope memory barrier
    per call; relaxed is enough when the arrival only says that asynchronous-proxy reads
    (wgmma) this thread already waited for are done."""
    remote = nvvm_d.MapaOp(ir.Type.parse("!llvm.ptr<7>"), as_shared_ptr(bar_i64), rank).result
    nvvm_d.MBarrierArriveOp(remote, scope=parse_attr("#nvvm.mem_scope<cluster>"), relaxed=relaxed or None)


def trap_unless(cond_i1) -> None:
    """Abort the kernel (a launch error the host sees) when cond is false."""
    op = scf_d.IfOp(arith_d.xori(cond_i1, arith_d.constant(ir.IntegerType.get_signless(1), 1)))
    with ir.InsertionPoint(op.then_block):
        llvm_d.intr_trap()
        scf_d.YieldOp([])


def load_remote_shared(t, addr_i64, rank: int, alignment: int):
    """mapa.shared::cluster + ld.shared::cluster: read `t` at the same shared offset in the
    cluster's CTA `rank` (distributed shared memory)."""
    remote = nvvm_d.MapaOp(ir.Type.parse("!llvm.ptr<7>"), as_shared_ptr(addr_i64), i32(rank)).result
    return llvm_d.load(t, remote, alignment=alignment)


# ---------------------------------------------------------------------- wgmma
SWIZZLE_128B_LAYOUT = 1          # matrix-descriptor layout type (bits 62..63)
SWIZZLE_64B_LAYOUT = 2


def smem_matrix_descriptor(addr_i64, stride_byte_offset: int, leading_byte_offset: int = 16,
                           layout: int = SWIZZLE_128B_LAYOUT):
    """64-bit wgmma shared-memory matrix descriptor: start address >> 4 in bits 0..13,
    leading byte offset >> 4 in 16..29, stride byte offset >> 4 in 32..45, layout in 62..63
    (base offset 0: tiles are 1024-byte aligned)."""
    return smem_descriptor_at(smem_descriptor_lo(addr_i64, leading_byte_offset), 0, stride_byte_offset, layout)


def smem_descriptor_lo(addr_i64, leading_byte_offset: int = 16):
    """The low word of a wgmma matrix descriptor (start address >> 4, leading byte offset) as
    an i32: shared addresses fit 18 bits, so later byte offsets b (multiples of 16) are added
    as b >> 4 without carrying into the next field (smem_descriptor_at)."""
    a = arith_d.andi(arith_d.shrui(arith_d.trunci(I32(), addr_i64), i32(4)), i32(0x3FFF))
    return arith_d.ori(a, i32((leading_byte_offset >> 4) << 16))


def smem_descriptor_at(lo_i32, byte_offset: int, stride_byte_offset: int, layout: int = SWIZZLE_128B_LAYOUT):
    """The 64-bit descriptor of lo_i32's matrix moved by byte_offset: 32-bit arithmetic on the
    low word, constant high word (stride byte offset >> 4 in bits 32..45, layout in 62..63)."""
    lo = arith_d.addi(lo_i32, i32(byte_offset >> 4)) if byte_offset else lo_i32
    hi = ((stride_byte_offset >> 4) << 32) | (layout << 62)
    return arith_d.ori(arith_d.extui(I64(), lo), i64(hi - (1 << 64) if hi >= (1 << 63) else hi))


# wgmma operands by convc dtype: (PTX operand type, K per instruction, accumulator dtype). Every
# instruction reads 32 bytes of K per row, so descriptors step alike in bytes; f32 operands run
# as TF32 (k8), i8 as s8 summed in s32 (k32).
WGMMA_OPERANDS = {"f16": ("f16", 16, "f32"), "bf16": ("bf16", 16, "f32"), "f32": ("tf32", 8, "f32"),
                  "i8": ("s8", 32, "i32"), "f8E4M3FN": ("e4m3", 32, "f32"), "f8E5M2": ("e5m2", 32, "f32")}


def accumulator_type(n: int, acc: str = "f32") -> ir.Type:
    """The m64nN accumulator fragment: N/2 values per thread, f32 (or i32: s32 accumulators
    of integer operands, in the same fragment positions)."""
    return ir.Type.parse("!llvm.struct<(" + ", ".join([acc] * (n // 2)) + ")>")


def zero_accumulator(n: int):
    t = accumulator_type(n)
    acc = llvm_d.mlir_undef(t)
    z = arith_d.constant(ir.F32Type.get(), 0.0)
    for i in range(n // 2):
        acc = llvm_d.insertvalue(acc, z, [i])
    return acc


def wgmma_rega(acc, a_regs, desc_b, n: int, dtype: str, accumulate: bool = True):
    """wgmma.mma_async m64n{n}k{K} with A from registers and B from a shared-memory
    descriptor: four b32 per thread, f16/bf16 pairs (k16: rows g, g+8 of k 2q..2q+1, then of
    k 2q+8..2q+9, the mma.m16n8k16 A fragment per warp) or single f32 values read as TF32 (k8:
    rows g, g+8 of k q, then of k q+4). NVVM has no op for the register-A form: inline PTX,
    the accumulator tied in and out (omitted with accumulate=False: scale-d 0). TF32 takes no
    transpose operand."""
    wtype, k, _acc = WGMMA_OPERANDS[dtype]
    f32 = ir.F32Type.get()
    half = n // 2
    outs = ",".join(["=f"] * half)
    if accumulate:
        ins = [llvm_d.extractvalue(f32, acc, [i]) for i in range(half)]
        cons = outs + "," + ",".join(str(i) for i in range(half)) + ",r,r,r,r,l"
        a0 = 2 * half
    else:
        ins = []
        cons = outs + ",r,r,r,r,l"
        a0 = half
    d = ", ".join(f"${i}" for i in range(half))
    a = ", ".join(f"${a0 + i}" for i in range(4))
    trans = ", 0" if k == 16 else ""
    asm = ("{\n.reg .pred p;\n"
           f"setp.ne.b32 p, {1 if accumulate else 0}, 0;\n"
           f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{wtype}.{wtype} {{{d}}}, {{{a}}}, ${a0 + 4}, p, 1, 1{trans};\n}}")
    # inline asm: nvvm.wgmma.mma_async takes A only from a shared-memory descriptor
    return llvm_d.InlineAsmOp(accumulator_type(n), ins + list(a_regs) + [desc_b], asm, cons,
                              has_side_effects=True).result


def undef_accumulator(n: int, acc: str = "f32"):
    """An accumulator fragment (of `acc` values) for a first wgmma with scale-d 0 (its value
    is never read)."""
    return llvm_d.mlir_undef(accumulator_type(n, acc))


def wgmma_fence() -> None:
    nvvm_d.WgmmaFenceAlignedOp()


def wgmma_commit() -> None:
    nvvm_d.WgmmaGroupSyncAlignedOp()


def wgmma_wait(pending: int) -> None:
    nvvm_d.WgmmaWaitGroupSyncOp(pending)


def wgmma_m64nk16(acc, desc_a, desc_b, n: int, dtype: str, accumulate: bool = True):
    """wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{dtype}.{dtype}: D += A * B (D = A * B with
    accumulate=False: scale-d 0, the input accumulator is ignored), both operands K-major in
    shared memory (A "row", B "col": no transposes). f32 operands run as m64n{n}k8 TF32, i8 as
    m64n{n}k32.s32.s8.s8 (wrapping i32 sums): the same 32 bytes of K per instruction
    (WGMMA_OPERANDS). For s32 the op's PTX leaves out the imm-scale-a/b operands PTX refuses
    on integer wgmma (and the transposes, as for every non-16-bit type)."""
    wtype, k, acc_dtype = WGMMA_OPERANDS[dtype]
    ty = parse_attr(f"#nvvm.wgmma_type<{wtype}>")
    scale = "one" if accumulate else "zero"
    d_type = "s32" if acc_dtype == "i32" else "f32"
    return nvvm_d.WgmmaMmaAsyncOp(
        accumulator_type(n, acc_dtype), acc, desc_a, desc_b, parse_attr(f"#nvvm.shape<m = 64, n = {n}, k = {k}>"),
        ty, ty, parse_attr(f"#nvvm.wgmma_type<{d_type}>"), parse_attr(f"#nvvm.wgmma_scale_out<{scale}>"),
        parse_attr("#nvvm.wgmma_scale_in<one>"), parse_attr("#nvvm.wgmma_scale_in<one>"),
        parse_attr("#nvvm.mma_layout<row>"), parse_attr("#nvvm.mma_layout<col>")).result


# ---------------------------------------------------------------------- warp specialization
def set_max_registers(count: int, increase: bool) -> None:
    """setmaxnreg.{inc|dec}.sync.aligned.u32 count: move registers between warpgroup roles."""
    nvvm_d.SetMaxRegisterOp(count, parse_attr(f"#nvvm.action<{'increase' if increase else 'decrease'}>"))


def named_barrier(barrier_id, threads: int) -> None:
    """bar.sync id, threads: a barrier among a subset of warps (id 0 is __syncthreads).
    barrier_id: an int or an index value."""
    bid = i32(barrier_id) if isinstance(barrier_id, int) else arith_d.index_cast(I32(), barrier_id)
    nvvm_d.BarrierOp(barrierId=bid, numberOfThreads=i32(threads))


def tma_store(desc_addr_i64, src_smem_i64, coords_i32) -> None:
    """cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group: one box from shared memory
    to global (out-of-bounds parts of the box are not written)."""
    nvvm_d.CpAsyncBulkTensorSharedCTAToGlobalOp(as_generic_ptr(desc_addr_i64), as_shared_ptr(src_smem_i64),
                                                list(coords_i32))


def bulk_commit() -> None:
    """cp.async.bulk.commit_group: close this thread's group of bulk stores."""
    nvvm_d.CpAsyncBulkCommitGroupOp()


def bulk_wait_read(pending: int = 0) -> None:
    """cp.async.bulk.wait_group.read N: this thread's older bulk groups finished reading
    shared memory (the source may be overwritten)."""
    nvvm_d.CpAsyncBulkWaitGroupOp(pending, read=True)


def cluster_ctarank_count():
    """%cluster_nctarank (i32)."""
    return nvvm_d.read_ptx_sreg_cluster_nctarank(results=[I32()])


# ---------------------------------------------------------------------- inter-CTA handoff
def global_flag_set(addr_i64, value_i64) -> None:
    """st.release.gpu of a u64 flag: this thread's earlier writes (and, through a preceding
    CTA barrier, its CTA's) are visible at GPU scope before the flag is."""
    # inline asm: NVVM has no release-store op
    llvm_d.InlineAsmOp(None, [addr_i64, value_i64], "st.release.gpu.global.u64 [$0], $1;", "l,l",
                       has_side_effects=True)


def global_flag_wait_and_clear(addr_i64, value_i64) -> None:
    """Spin with ld.acquire.gpu until the u64 flag equals value, then reset it to 0 (each flag
    has one reader per launch, so the next launch finds it clear)."""
    asm = ("{\n.reg .pred cvp;\n.reg .b64 cvv;\n"
           "$$convc_wait_${:uid}:\n"
           "ld.acquire.gpu.global.u64 cvv, [$0];\n"
           "setp.ne.u64 cvp, cvv, $1;\n"
           "@cvp bra $$convc_wait_${:uid};\n"
           "st.relaxed.gpu.global.u64 [$0], 0;\n}")
    # inline asm: NVVM has no acquire-load op (the spin loop stays one PTX loop around it)
    llvm_d.InlineAsmOp(None, [addr_i64, value_i64], asm, "l,l", has_side_effects=True)


def load_global_cg_v4(addr_i64, dtype: str = "f32"):
    """ld.global.cg.v4 (L2, not L1: the data was written by another SM) -> 4 values of dtype
    (f32, or i32: an int8 conv's partial sums)."""
    t, kind, reg = _V4[dtype]
    st = llvm_d.StructType.get_literal([t()] * 4)
    # inline asm: NVVM has no op for a load with the .cg cache operator
    r = llvm_d.InlineAsmOp(st, [addr_i64], f"ld.global.cg.v4.{kind} {{$0, $1, $2, $3}}, [$4];",
                           f"={reg},={reg},={reg},={reg},l", has_side_effects=True).result
    return [llvm_d.extractvalue(t(), r, [i]) for i in range(4)]


def store_global_v4(addr_i64, values, dtype: str = "f32") -> None:
    """st.global.v4 of 4 values of dtype (f32 or i32)."""
    _, kind, reg = _V4[dtype]
    # inline asm: NVVM has no store op (an llvm.store to !llvm.ptr<1> would also do; this one pairs
    # with the .cg load above and keeps the stream-K PTX as measured)
    llvm_d.InlineAsmOp(None, [addr_i64] + list(values), f"st.global.v4.{kind} [$0], {{$1, $2, $3, $4}};",
                       f"l,{reg},{reg},{reg},{reg}", has_side_effects=True)


_V4 = {"f32": (ir.F32Type.get, "f32", "f"), "i32": (I32, "s32", "r")}


# ---------------------------------------------------------------------- per-thread async copies
def cp_async_16(dst_smem_i64, src_generic_i64, valid_i1) -> None:
    """cp.async.cg.shared.global [dst], [src], 16, src-size: 16 bytes global -> shared without
    registers (L2 only), zero-filled when valid is false (src-size 0: nothing is read)."""
    size = arith_d.select(valid_i1, i32(16), i32(0)) if not isinstance(valid_i1, bool) else i32(16 if valid_i1 else 0)
    # inline asm: nvvm.cp.async.shared.global needs a 64-bit !llvm.ptr<3>, the asm takes the 32-bit
    # shared offset (with the ops for this, ldmatrix and stmatrix, suite kernels grew by up to 2% SASS)
    llvm_d.InlineAsmOp(None, [arith_d.trunci(I32(), dst_smem_i64), src_generic_i64, size],
                       "{\n.reg .u64 cvg;\ncvta.to.global.u64 cvg, $1;\n"
                       "cp.async.cg.shared.global [$0], [cvg], 16, $2;\n}",
                       "r,l,r", has_side_effects=True)


def cp_async_commit() -> None:
    """cp.async.commit_group: close this thread's current group of cp.async."""
    nvvm_d.CpAsyncCommitGroupOp()


def cp_async_wait_group(pending: int) -> None:
    """cp.async.wait_group N: all but this thread's N most recent groups have landed."""
    nvvm_d.CpAsyncWaitGroupOp(pending)


# ---------------------------------------------------------------------- 8x8 matrix moves
def ldmatrix_x4(addr_i64, trans: bool = False):
    """ldmatrix.sync.aligned.m8n8.x4.shared.b16: lane L gives the address of row L%8 of matrix
    L/8 (16 contiguous bytes); each lane gets, per matrix, the b32 holding row lane/4, columns
    2(lane%4) and +1: the accumulator fragment layout. With trans, the fragment is that of the
    transposed matrix (memory row r becomes column r). Returns 4 i32."""
    i32t = I32()
    st = llvm_d.StructType.get_literal([i32t] * 4)
    t = ".trans" if trans else ""
    # inline asm: nvvm.ldmatrix needs a 64-bit !llvm.ptr<3>, the asm takes the 32-bit shared offset
    # (see cp_async_16)
    r = llvm_d.InlineAsmOp(st, [arith_d.trunci(i32t, addr_i64)],
                           f"ldmatrix.sync.aligned.m8n8.x4{t}.shared.b16 {{$0, $1, $2, $3}}, [$4];",
                           "=r,=r,=r,=r,r", has_side_effects=True).result
    return [llvm_d.extractvalue(i32t, r, [i]) for i in range(4)]


def stmatrix_x4(addr_i64, regs, trans: bool = False) -> None:
    """stmatrix.sync.aligned.m8n8.x4.shared.b16: the inverse of ldmatrix_x4 (same addresses,
    same fragment registers, same trans)."""
    t = ".trans" if trans else ""
    # inline asm: nvvm.stmatrix needs a 64-bit !llvm.ptr<3>, the asm takes the 32-bit shared offset
    # (see cp_async_16)
    llvm_d.InlineAsmOp(None, [arith_d.trunci(I32(), addr_i64)] + list(regs),
                       f"stmatrix.sync.aligned.m8n8.x4{t}.shared.b16 [$0], {{$1, $2, $3, $4}};",
                       "r,r,r,r,r", has_side_effects=True)
