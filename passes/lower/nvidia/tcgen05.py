"""sm_100a (Blackwell) tensor-core primitives: tcgen05 ops over tensor memory, and the encoders
of the two descriptors a `tcgen05.mma` reads.

Every tcgen05 op used here exists in the nvvm dialect of IREE 3.13's bindings and survives its
lowering into PTX 8.6 for sm_100a (checked with ptxas 13 and nvdisasm: UTCHMMA, UTCBAR,
UTCATOMSWS ...). One wait is inline assembly (wait_ld_for: it must carry the loaded registers,
which the NVVM op cannot). Each wrapper is one NVVM op and names the PTX instruction and the
PTX ISA section ("tcgen05 instructions", PTX ISA 8.6+):

- tensor-memory allocation: `tcgen05.alloc / relinquish_alloc_permit / dealloc` (§9.7.16.7.1);
- `tcgen05.mma.cta_group::{1,2}.kind::{f16,i8,f8f6f4,tf32}` (§9.7.16.10.9) with a shared-memory matrix descriptor
  per operand (§9.7.16.4.1) and a 32-bit instruction descriptor (§9.7.16.4.2);
- `tcgen05.commit` (§9.7.16.11): an mbarrier arrival once every earlier async tcgen05 op of
  the issuing thread has completed;
- `tcgen05.ld.sync.aligned.32x32b` + `tcgen05.wait::ld` (§9.7.16.8.3, §9.7.16.8.5);
- `tcgen05.fence::{before,after}_thread_sync` (§9.7.16.6.4): orders tcgen05 ops across a
  thread synchronisation (mbarrier or bar.sync).

The descriptor encoders are plain Python on ints (`instr_descriptor`, `smem_descriptor`) so the
numpy model in the tests decodes exactly what the kernel emits.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import ir, arith_d, llvm_d, nvvm_d, parse_attr, vector_d
from .primitives import I32, I64, as_generic_ptr, as_shared_ptr, i32, i64

ARCHS = ("sm_100a",)
TMEM_LANES = 128
TMEM_COLUMNS = 512
# columns one `tcgen05.ld.32x32b.x32` moves per thread (one 32-bit register each)
LD_COLUMNS = 32


# ---------------------------------------------------------------------- descriptors
# Shared-memory matrix descriptor (64 bits): start address >> 4 in 0..13, leading byte offset
# >> 4 in 16..29, stride byte offset >> 4 in 32..45, the fixed version 0b01 in 46..47 (sm_100
# descriptors; the wgmma ones have 0 there), base offset in 49..51 (0: 1024-aligned tiles),
# LBO mode in 52, layout (swizzle) in 61..63.
SMEM_SWIZZLE = {0: 0, 128: 2, 64: 4, 32: 6}      # swizzle span (bytes) -> layout field
_SMEM_SWIZZLE_SPAN = {v: k for k, v in SMEM_SWIZZLE.items()}
SMEM_VERSION = 1


def smem_descriptor(addr: int, stride_byte_offset: int, swizzle_span: int, leading_byte_offset: int = 16) -> int:
    """The 64-bit tcgen05 shared-memory descriptor of a K-major operand tile starting at shared
    address `addr`, whose 8-row core matrices lie `stride_byte_offset` bytes apart, swizzled
    over `swizzle_span`-byte rows (128 or 64). The leading byte offset is unused by swizzled
    K-major layouts (a K step never leaves the swizzle row); 16 as CUTLASS writes it."""
    assert addr % 16 == 0 and stride_byte_offset % 16 == 0
    return (((addr >> 4) & 0x3FFF) | (((leading_byte_offset >> 4) & 0x3FFF) << 16)
            | (((stride_byte_offset >> 4) & 0x3FFF) << 32) | (SMEM_VERSION << 46)
            | (SMEM_SWIZZLE[swizzle_span] << 61))


@dataclass(frozen=True)
class SmemDescriptorFields:
    start: int                 # byte address
    leading_byte_offset: int
    stride_byte_offset: int
    version: int
    base_offset: int
    swizzle_span: int          # bytes; 0: none


def decode_smem_descriptor(d: int) -> SmemDescriptorFields:
    return SmemDescriptorFields(start=(d & 0x3FFF) << 4, leading_byte_offset=((d >> 16) & 0x3FFF) << 4,
                                stride_byte_offset=((d >> 32) & 0x3FFF) << 4, version=(d >> 46) & 3,
                                base_offset=(d >> 49) & 7, swizzle_span=_SMEM_SWIZZLE_SPAN[(d >> 61) & 7])


# Instruction descriptor (32 bits) of kind::f16, kind::i8 and kind::f8f6f4 (CUTLASS
# UMMA::InstrDescriptor): sparsity 0..2, saturate 3, D format 4..5 (0 f16, 1 f32, 2 s32), A
# format 7..9 and B format 10..12 (kind::f16: 0 f16, 1 bf16; kind::i8: 0 u8, 1 s8;
# kind::f8f6f4: 0 e4m3, 1 e5m2; kind::tf32: 2 tf32, f32 operands read as TF32), negate A 13, negate B 14, A major 15 and B major 16 (0:
# K-major), N >> 3 in 17..22, M >> 4 in 24..28, max shift 30..31 (ws only). Every kind takes 32
# bytes of K per instruction (16 16-bit values, 32 8-bit ones, 8 TF32), so a K row of the swizzled ring
# is row / 32 instructions whatever the operand type.
KIND = {"f16": "f16", "bf16": "f16", "i8": "i8",           # the tcgen05.mma kind of an operand type
        "f8E4M3FN": "f8f6f4", "f8E5M2": "f8f6f4", "f32": "tf32"}
_AB_FORMAT = {"f16": {"f16": 0, "bf16": 1}, "i8": {"i8": 1}, "f8f6f4": {"f8E4M3FN": 0, "f8E5M2": 1},
              "tf32": {"f32": 2}}
_D_FORMAT = {"f16": 0, "f32": 1, "i32": 2}
_KIND_D = {"f16": ("f32", "f16"), "i8": ("i32",), "f8f6f4": ("f32",), "tf32": ("f32",)}   # D formats convc uses
MMA_K = 16                     # kind::f16: K per instruction (32 bytes of a 16-bit row)


def instr_descriptor(m: int, n: int, ab_dtype: str, d_dtype: str = "f32", cta_group: int = 1) -> int:
    """kind::f16 / kind::i8 / kind::f8f6f4 instruction descriptor (KIND[ab_dtype]): D (d_dtype:
    f32 or f16 of 16-bit operands, s32 of i8 ones, f32 of e4m3 / e5m2 ones) = A (m x K,
    K-major) * B (n x K, K-major) of ab_dtype, K = 32 bytes; m and n are the whole
    instruction's (for cta_group::2, both CTAs of the pair together). Valid shapes (PTX ISA,
    "Matrix shape"): cta_group::1: m 64 or 128, n a multiple of 8 (m = 64) or 16 (m = 128) in
    [16, 256]; cta_group::2: m 128 or 256, n a multiple of 16 (m = 128) or 16 (m = 256) in
    [32, 256]."""
    check_mma_shape(m, n, cta_group)
    kind = KIND[ab_dtype]
    if d_dtype not in _KIND_D[kind]:
        raise ValueError(f"{ab_dtype} operands do not accumulate in {d_dtype} (kind::{kind} sums in "
                         f"{' or '.join('s32' if d == 'i32' else d for d in _KIND_D[kind])})")
    fmt = _AB_FORMAT[kind][ab_dtype]
    return (_D_FORMAT[d_dtype] << 4) | (fmt << 7) | (fmt << 10) | ((n >> 3) << 17) | ((m >> 4) << 24)


def check_mma_shape(m: int, n: int, cta_group: int = 1) -> None:
    ms = (64, 128) if cta_group == 1 else (128, 256)
    if m not in ms:
        raise ValueError(f"tcgen05.mma cta_group::{cta_group} has M {ms[0]} or {ms[1]}, not {m}")
    step = 8 if m == 64 else 16
    lo = 16 if cta_group == 1 else 32
    if n % step or not lo <= n <= 256:
        raise ValueError(f"tcgen05.mma cta_group::{cta_group} M={m} takes N a multiple of {step} in [{lo}, 256], not {n}")


@dataclass(frozen=True)
class InstrDescriptorFields:
    m: int
    n: int
    a_dtype: str
    b_dtype: str
    d_dtype: str
    a_k_major: bool
    b_k_major: bool
    negate: bool
    sparse: bool


def decode_instr_descriptor(d: int, kind: str | None = None) -> InstrDescriptorFields:
    """The fields of an instruction descriptor of `kind` (the operand format bits mean each
    kind's types; default: kind::i8 where D is s32, else kind::f16)."""
    dd = {v: k for k, v in _D_FORMAT.items()}
    d_dtype = dd[(d >> 4) & 3]
    kind = kind or ("i8" if d_dtype == "i32" else "f16")
    ab = {v: k for k, v in _AB_FORMAT[kind].items()}
    return InstrDescriptorFields(m=((d >> 24) & 0x1F) << 4, n=((d >> 17) & 0x3F) << 3, a_dtype=ab[(d >> 7) & 7],
                                 b_dtype=ab[(d >> 10) & 7], d_dtype=d_dtype, a_k_major=not (d >> 15) & 1,
                                 b_k_major=not (d >> 16) & 1, negate=bool((d >> 13) & 3), sparse=bool((d >> 2) & 1))


def tmem_columns_for(columns: int) -> int:
    """`tcgen05.alloc` takes a power of two of at least 32 columns, at most 512."""
    n = 32
    while n < columns:
        n *= 2
    if n > TMEM_COLUMNS:
        raise ValueError(f"{columns} tensor-memory columns (at most {TMEM_COLUMNS})")
    return n


# ---------------------------------------------------------------------- emitted ops
def ptr_tmem():
    return ir.Type.parse("!llvm.ptr<6>")


def _group(cta_group: int):
    return nvvm_d.CTAGroupKind.CTA_1 if cta_group == 1 else nvvm_d.CTAGroupKind.CTA_2


def tmem_alloc(slot_smem_i64, columns: int, cta_group: int = 1) -> None:
    """tcgen05.alloc.cta_group::N.sync.aligned.shared::cta.b32 [slot], columns: the whole warp
    allocates `columns` tensor-memory columns (all 128 lanes) and the address is written to the
    shared-memory slot. cta_group::2: one warp of the same id in each CTA of the pair, the same
    slot offset in both."""
    nvvm_d.tcgen05_alloc(as_shared_ptr(slot_smem_i64), i32(columns), group=_group(cta_group))


def tmem_relinquish_alloc_permit(cta_group: int = 1) -> None:
    """tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned: this CTA allocates no more."""
    nvvm_d.tcgen05_relinquish_alloc_permit(group=_group(cta_group))


def tmem_dealloc(taddr_i32, columns: int, cta_group: int = 1) -> None:
    """tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, columns: by the warp that allocated,
    after every tcgen05 op on the columns completed; before the CTA exits."""
    nvvm_d.tcgen05_dealloc(tmem_ptr(taddr_i32), i32(columns), group=_group(cta_group))


def tmem_ptr(taddr_i32):
    return llvm_d.inttoptr(ptr_tmem(), taddr_i32)


def fence_before_thread_sync() -> None:
    """tcgen05.fence::before_thread_sync: this thread's tcgen05 ops are ordered before its next
    synchronisation (mbarrier arrive, bar.sync)."""
    nvvm_d.tcgen05_fence(nvvm_d.Tcgen05FenceKind.BEFORE_THREAD_SYNC)


def fence_after_thread_sync() -> None:
    """tcgen05.fence::after_thread_sync: this thread's later tcgen05 ops are ordered after the
    synchronisation it just passed."""
    nvvm_d.tcgen05_fence(nvvm_d.Tcgen05FenceKind.AFTER_THREAD_SYNC)


def mma(d_taddr_i32, desc_a_i64, desc_b_i64, idesc: int, accumulate, cta_group: int = 1, kind: str = "f16") -> None:
    """tcgen05.mma.cta_group::N.kind::{f16,i8,f8f6f4,tf32} [d], a_desc, b_desc, idesc, enable_input_d: one
    asynchronous M x N x K MMA (K: 32 bytes of each operand row), both operands from shared
    memory, D in tensor memory (f32 / s32). accumulate: bool, or an i1 value (false: D = A * B,
    the old D is ignored). cta_group::2: issued by one thread of the even CTA of the pair; A's
    rows M/2.. and B's rows N/2.. are read at the same shared offsets in the odd CTA, and D's
    rows M/2.. land in its tensor memory."""
    if isinstance(accumulate, bool):
        accumulate = arith_d.constant(ir.IntegerType.get_signless(1), int(accumulate))
    mma_kind = {"f16": nvvm_d.Tcgen05MMAKind.F16, "i8": nvvm_d.Tcgen05MMAKind.I8,
                "f8f6f4": nvvm_d.Tcgen05MMAKind.F8F6F4, "tf32": nvvm_d.Tcgen05MMAKind.TF32}[kind]
    nvvm_d.tcgen05_mma(mma_kind, _group(cta_group), tmem_ptr(d_taddr_i32), desc_a_i64, desc_b_i64,
                       i32(idesc - (1 << 32) if idesc >= (1 << 31) else idesc), accumulate)


def commit(bar_smem_i64, cta_group: int = 1, multicast_mask: int = 0) -> None:
    """tcgen05.commit.cta_group::N.mbarrier::arrive::one.shared::cluster{.multicast::cluster}.b64
    [bar]{, mask}: one arrival on the mbarrier (with a mask: on the mbarrier at the same offset
    in every CTA of the mask) once every async tcgen05 op this thread issued before it has
    completed (an MMA's completion includes its shared-memory operand reads, in both CTAs of
    a pair)."""
    kw = {}
    if multicast_mask:
        kw["multicast_mask"] = arith_d.constant(ir.IntegerType.get_signless(16), multicast_mask)
    nvvm_d.tcgen05_commit(as_shared_ptr(bar_smem_i64), group=_group(cta_group), **kw)


def ld_32x32b(taddr_i32, columns: int = LD_COLUMNS):
    """tcgen05.ld.sync.aligned.32x32b.x{columns}.b32: lane i of the warp reads tensor-memory
    lane (taddr's lane + i), `columns` consecutive 32-bit columns from taddr's column. A warp
    may only address the 32 lanes of its quadrant (warp id % 4). Returns vector<columns x i32>
    (complete after wait_ld)."""
    return nvvm_d.tcgen05_ld(ir.VectorType.get([columns], I32()), nvvm_d.Tcgen05LdStShape.SHAPE_32X32B,
                             tmem_ptr(taddr_i32))


def wait_ld() -> None:
    """tcgen05.wait::ld.sync.aligned: this thread's earlier tcgen05.ld have completed."""
    nvvm_d.tcgen05_wait(nvvm_d.Tcgen05WaitKind.LOAD)


def wait_ld_for(words, after=None):
    """tcgen05.wait::ld.sync.aligned, with the registers of the last tcgen05.ld (a
    vector<N x i32>) passed through it; returns them, to be used only from here on. `after`:
    an index value also passed through; then (words, that value) is returned, so that LLVM
    keeps what is computed from it (the next chunk's channel-operand loads) after the wait in
    the PTX (ptxas sees no data dependence there: fewer spills followed, not none).

    Inline asm because `nvvm.tcgen05.wait` carries no data dependence on the loads' results:
    with it LLVM scheduled uses of the registers (a mov.b64 packing two of them) before the
    wait, reading them while the load was still in flight (found by the PTX check in
    test_sm100_ptxas.py). Tying the registers in and out of the asm makes every later use
    depend on the wait."""
    n = ir.VectorType(words.type).shape[0]
    regs = [vector_d.extract(words, [], [i]) for i in range(n)]
    if after is not None:
        regs.append(arith_d.index_cast(I32(), after))
    m = len(regs)
    st = llvm_d.StructType.get_literal([I32()] * m)
    cons = ",".join(["=r"] * m + [str(i) for i in range(m)])
    # inline asm: nvvm.tcgen05.wait cannot carry the loaded registers (see above)
    r = llvm_d.InlineAsmOp(st, regs, "tcgen05.wait::ld.sync.aligned;", cons, has_side_effects=True).result
    out = vector_d.from_elements(ir.VectorType.get([n], I32()), [llvm_d.extractvalue(I32(), r, [i]) for i in range(n)])
    if after is None:
        return out
    return out, arith_d.index_cast(ir.IndexType.get(), llvm_d.extractvalue(I32(), r, [n]))


def smem_descriptor_value(lo_hi: int, addr_i64):
    """The 64-bit smem descriptor whose constant fields are those of `lo_hi` (an encoded
    descriptor with start address 0) at the run-time shared address addr_i64."""
    start = arith_d.andi(arith_d.shrui(addr_i64, i64(4)), i64(0x3FFF))
    const = lo_hi - (1 << 64) if lo_hi >= (1 << 63) else lo_hi
    return arith_d.ori(start, i64(const))


def descriptor_plus(desc_i64, byte_offset: int):
    """desc moved by byte_offset (a multiple of 16) within the 14-bit address field: shared
    addresses stay under 256 KB, so the field never carries."""
    return arith_d.addi(desc_i64, i64(byte_offset >> 4)) if byte_offset else desc_i64


# ---------------------------------------------------------------------- CTA pairs (cta_group::2)
def leader_barrier(bar_smem_i64):
    """mapa.shared::cluster: the shared::cluster address (i64) of the mbarrier at the same
    shared offset in the pair's even (leader) CTA, rank 0 of the 2x1 cluster."""
    remote = nvvm_d.MapaOp(ir.Type.parse("!llvm.ptr<7>"), as_shared_ptr(bar_smem_i64), i32(0)).result
    return llvm_d.ptrtoint(I64(), remote)


def tma_load_pair(dst_smem_i64, desc_addr_i64, coords_i32, leader_bar, im2col_offsets_i16=()) -> None:
    """cp.async.bulk.tensor.Nd.cta_group::2.shared::cluster.global.{tile|im2col}.mbarrier::
    complete_tx::bytes: a box into this CTA's shared memory whose completed bytes count on the
    leader CTA's mbarrier (leader_bar, the shared::cluster address from leader_barrier), where
    the MMA thread waits. The NVVM op types its mbarrier operand as a shared pointer
    (!llvm.ptr<3>), which the instruction reads as a shared::cluster address: the mapa result
    is passed through as an integer."""
    dst = llvm_d.addrspacecast(ir.Type.parse("!llvm.ptr<7>"), as_shared_ptr(dst_smem_i64))
    kw = {"group": nvvm_d.CTAGroupKind.CTA_2}
    if im2col_offsets_i16:
        kw["mode"] = parse_attr("#nvvm.tma_load_mode<im2col>")
    nvvm_d.CpAsyncBulkTensorGlobalToSharedClusterOp(dst, as_generic_ptr(desc_addr_i64), list(coords_i32),
                                                    as_shared_ptr(leader_bar),
                                                    list(im2col_offsets_i16), **kw)
