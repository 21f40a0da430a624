"""Thin wrappers over the amdgpu / rocdl ops the AMD kernel uses, one hardware primitive each.

Each checks that the architecture has the primitive and names its ISA section (AMD Instinct
MI300 "CDNA3" ISA reference; "CDNA4" for gfx950). Only ops verified to survive IREE
3.13's ROCDL lowering are used (checked by compiling them through iree-compile; see test/e2e/amd_isa.mlir).
"""

from __future__ import annotations

from ...ir import ir, amdgpu_d, arith_d, gpu_d, parse_attr, rocdl_d, vector_d

MFMA_ARCHS = {"gfx942": 16, "gfx950": 32}        # K of the 16x16xK f16/bf16 MFMA
# K of the 16x16xK MFMA on OCP fp8 operands (e4m3 `fp8`, e5m2 `bf8`): gfx950 only; gfx942's
# fp8 MFMAs take the FNUZ encodings (another exponent bias and NaN), not the OCP types
FP8_MFMA_ARCHS = {"gfx950": 32}
FP8_DTYPES = ("f8E4M3FN", "f8E5M2")
LDS_DMA_BYTES = {"gfx942": (1, 2, 4), "gfx950": (1, 2, 4, 12, 16)}


class ArchError(ValueError):
    pass


def _check(arch: str, table: dict, what: str):
    if arch not in table:
        raise ArchError(f"{what} is not available on {arch}")


def buffer_view(memref: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """`amdgpu.fat_raw_buffer_cast`: the memref as a buffer resource (V#) whose range is the
    binding, so an out-of-range lane offset reads 0 (CDNA3 ISA, "Buffer Instructions":
    range checking of a raw buffer, offset >= num_records returns zero)."""
    return amdgpu_d.fat_raw_buffer_cast(memref, reset_offset=True, loc=loc, ip=ip)


def load_to_lds(arch: str, src: ir.Value, src_index: ir.Value, lds: ir.Value, lds_index: ir.Value,
                transfer: ir.Type, *, loc=None, ip=None):
    """One direct-to-LDS load per lane: `buffer_load_dword{,x4} ... offen lds` (CDNA3 ISA,
    "Vector Memory Buffer Instructions", LDS=1: LDS_ADDR = M0 + inst_offset + lane * size; `lds_index` must be
    wave-uniform). gfx942 moves at most 4 bytes per lane, gfx950 16."""
    _check(arch, LDS_DMA_BYTES, "direct-to-LDS load")
    nbytes = ir.VectorType(transfer).shape[0] * (ir.VectorType(transfer).element_type.width // 8)
    if nbytes not in LDS_DMA_BYTES[arch]:
        raise ArchError(f"{nbytes}-byte direct-to-LDS loads are not available on {arch}")
    return amdgpu_d.gather_to_lds(src, [src_index], lds, [lds_index], transfer, loc=loc, ip=ip)


def wait_vmcnt(count: int, *, loc=None, ip=None):
    """`s_waitcnt vmcnt(count)`: wait until at most `count` vector-memory loads of this wave are
    outstanding (loads return in issue order; CDNA3 ISA, "Data Dependency Resolution").
    The counter holds 0..63 on gfx9."""
    if not 0 <= count <= 63:
        raise ArchError(f"vmcnt({count}) is out of range 0..63")
    return amdgpu_d.memory_counter_wait(load=count, loc=loc, ip=ip)


def s_barrier(*, loc=None, ip=None):
    """`s_barrier` alone, no memory fence: the loading waves' side of a ring step (their LDS
    writes are covered by the explicit vmcnt wait before it; a fence would add vmcnt(0))."""
    return rocdl_d.s_barrier(loc=loc, ip=ip)


def lds_barrier(*, loc=None, ip=None):
    """Workgroup barrier fenced for LDS only (`s_waitcnt lgkmcnt(0)` + `s_barrier`): the MFMA
    waves' side, which also keeps their LDS reads from moving across it."""
    return gpu_d.barrier(address_spaces=parse_attr("[#gpu.address_space<workgroup>]"), loc=loc, ip=ip)


def readfirstlane(value: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """`v_readfirstlane_b32` of an index value: tells the compiler it is wave-uniform (SGPR),
    so branches on it are scalar and LDS bases fit M0."""
    i32 = ir.IntegerType.get_signless(32)
    v = arith_d.index_cast(i32, value, loc=loc, ip=ip)
    v = rocdl_d.readfirstlane(i32, v, loc=loc, ip=ip)
    return arith_d.index_cast(ir.IndexType.get(), v, loc=loc, ip=ip)


def mfma_k(arch: str, dtype: str) -> int:
    """K of the 16x16xK MFMA for operand dtype on arch: 16 / 32 f16/bf16 values (gfx942 /
    gfx950), twice as many i8 ones (`v_mfma_i32_16x16x32_i8` / `_16x16x64_i8`), i.e. the same
    8 / 16 bytes per lane, so the loader's byte geometry is that of 16-bit operands; 32 OCP fp8
    values on gfx950 (`v_mfma_f32_16x16x32_{fp8_fp8,bf8_bf8}`: 8 bytes per lane)."""
    if dtype in FP8_DTYPES:
        _check(arch, FP8_MFMA_ARCHS, "an OCP fp8 MFMA")
        return FP8_MFMA_ARCHS[arch]
    _check(arch, MFMA_ARCHS, "16x16 MFMA")
    return MFMA_ARCHS[arch] * (2 if dtype == "i8" else 1)


def operand_dtype(et: ir.Type) -> str:
    """The dtype name of an MFMA operand's element type."""
    if isinstance(et, ir.IntegerType):
        return "i8"
    if isinstance(et, ir.Float8E4M3FNType):
        return "f8E4M3FN"
    if isinstance(et, ir.Float8E5M2Type):
        return "f8E5M2"
    return "f16"


def mfma_16x16(arch: str, a: ir.Value, b: ir.Value, acc: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """D = A(16xK) * B(Kx16) + C: f16/bf16 operands with f32 accumulators,
    `v_mfma_f32_16x16x16_{f16,bf16}` (gfx942, 4 elements per lane) or
    `v_mfma_f32_16x16x32_{f16,bf16}` (gfx950, 8 per lane); i8 operands with i32 accumulators,
    `v_mfma_i32_16x16x32_i8` (gfx942, 8 per lane) or `v_mfma_i32_16x16x64_i8` (gfx950, 16);
    OCP fp8 operands (gfx950) with f32 accumulators, `v_mfma_f32_16x16x32_fp8_fp8` (e4m3) or
    `_bf8_bf8` (e5m2), 8 per lane (CDNA3 / CDNA4 ISA, "Matrix Arithmetic Instructions").
    Lane l holds A[l % 16][(l / 16) * K/4 ...], B[(l / 16) * K/4 ...][l % 16] and
    D[4 * (l / 16) + i][l % 16], i = 0..3."""
    et = ir.VectorType(a.type).element_type
    k = mfma_k(arch, operand_dtype(et))
    if ir.VectorType(a.type).shape[0] != k // 4:
        raise ArchError(f"16x16x{k} MFMA takes {k // 4} elements per lane")
    return amdgpu_d.mfma(16, 16, k, a, b, acc, blocks=1, loc=loc, ip=ip)


def lds_read(vtype: ir.VectorType, lds: ir.Value, index: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """One MFMA operand from LDS (`ds_read_b64` / `ds_read_b128`: the swizzle keeps it aligned)."""
    nbytes = vtype.shape[0] * (vtype.element_type.width // 8)
    return vector_d.load(vtype, lds, [index], alignment=nbytes, loc=loc, ip=ip)


def keep_rolled(for_op, *, loc=None, ip=None) -> None:
    """Marks an scf.for `llvm.loop.unroll.disable`: a ring step is one barrier-delimited body,
    and LLVM's full unrolling of short K loops only raised VGPR pressure (203 -> 110 VGPRs on
    a 128x128 gfx942 tile) without exposing more overlap across the barriers."""
    for_op.attributes["llvm.loop_annotation"] = parse_attr("#llvm.loop_annotation<unroll = <disable = true>>")
