"""A numpy model of the sm_100a kernel's operand and accumulator layouts, checked against a
reference GEMM for every tile shape the planner can emit (128 x block_n, block_n a multiple
of 32 up to 256; 128- and 64-byte K rows; f16 and bf16).

The chain modelled, byte for byte where bytes matter:
1. the TMA writes each k-tile's activation (128 pixel rows) and filter (block_n channel rows)
   into its stage, rows of block_k elements swizzled over the row (the hardware swizzle: the
   16-byte unit index XORed with address bits 7.., tma_loader.swizzle_rotation);
2. each `tcgen05.mma` reads A (M = 128) and B (N = block_n), 16 K elements each, through the
   shared-memory descriptors the kernel emits (decoded from tcgen05.smem_descriptor's bits: the
   start advanced by 32 bytes per K step, 8-row core matrices `stride_byte_offset` apart, the
   swizzle applied to the absolute address), and the instruction descriptor (decoded: M, N,
   formats, K-major) says what it multiplies; D accumulates into tensor memory, row i in lane i,
   column n at the stage's column base + n (enable_input_d false on the first K step: whatever
   the columns held is ignored);
3. `tcgen05.ld.32x32b.x32` gives thread `lane` of warp w tensor-memory lane 32 (w % 4) + lane,
   32 consecutive columns per load;
4. the epilogue stores 16-byte groups of that row into the swizzled staging panels
   (warp_roles.swizzled's arithmetic), and the TMA store reads each panel box back.
The output must equal A @ B.T for the tile, for both accumulator stages."""

import numpy as np
import pytest

from convc.passes.lower.nvidia import tcgen05 as tc
from convc.passes.lower.nvidia.sm100_ws import (ACC_STAGES, BLOCK_M, EPILOGUE_THREADS, FIRST_EPILOGUE_WARP, WARP,
                                                store_width, tmem_columns)
from convc.passes.lower.nvidia.tile_scheduler import IntOps
from convc.passes.lower.nvidia.tma_loader import epilogue_panel, swizzle_rotation
from convc.passes.plan.kernels.sm100_ws import BLOCK_NS

SMEM = 232448


def swizzle(addr: int, span: int) -> int:
    """The hardware swizzle of a shared address for `span`-byte swizzling (128: 16-byte unit
    bits [4, 7) XOR bits [7, 10); 64: bits [4, 6) XOR bits [7, 9))."""
    bits = {128: 3, 64: 2}[span]
    mask = (1 << bits) - 1
    return addr ^ (((addr >> 7) & mask) << 4)


def tma_write(smem, base: int, tile: np.ndarray, span: int) -> None:
    """TMA box into shared memory: row r of `span` bytes at base + r * span, 16-byte unit u
    stored at unit u ^ rotation(r) (tma_loader.swizzle_rotation)."""
    raw = tile.view(np.uint8).reshape(tile.shape[0], span)
    for r in range(tile.shape[0]):
        rot = swizzle_rotation(IntOps, r, span)
        for u in range(span // 16):
            dst = base + r * span + 16 * (u ^ rot)
            smem[dst:dst + 16] = raw[r, 16 * u:16 * u + 16]


def mma_operand(smem, desc: int, rows: int, dtype) -> np.ndarray:
    """The rows x 16 K-major operand a tcgen05.mma reads through smem descriptor `desc`:
    element (i, k) at swizzle(start + (i // 8) * SBO + (i % 8) * span + 2k)."""
    f = tc.decode_smem_descriptor(desc)
    assert f.version == tc.SMEM_VERSION and f.base_offset == 0 and f.swizzle_span in (64, 128)
    i, k = np.meshgrid(np.arange(rows), np.arange(16), indexing="ij")
    a = swizzle(f.start + (i // 8) * f.stride_byte_offset + (i % 8) * f.swizzle_span + 2 * k, f.swizzle_span)
    return (smem[a].astype(np.uint16) | (smem[a + 1].astype(np.uint16) << 8)).view(dtype)


def tile_shapes():
    for bn in BLOCK_NS:
        for row in (128, 64):
            yield bn, row


def simulate(dtype, out_dtype, bn, row, cluster=1, seed=0):
    """The kernel's data path for one tile per accumulator stage on `cluster` CTAs (2: a CTA
    pair, M = 256: CTA c holds A rows 128c.. and B rows c bn/2.. at the same shared offsets,
    the leader's MMA reads both, and D rows 128c.. land in CTA c's tensor memory). Returns
    (output tile as the TMA stores write it, reference A @ B.T) per stage."""
    rng = np.random.default_rng(seed)
    bk = row // 2
    ktiles = 3
    rows = BLOCK_M * cluster
    a = rng.integers(-3, 4, (rows, ktiles * bk)).astype(np.float16)    # small integers are exact
    b = rng.integers(-3, 4, (bn, ktiles * bk)).astype(np.float16)      # in f16 and bf16
    if dtype == "bf16":                   # bf16 values are modelled through their bit patterns
        a_bits = (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        b_bits = (b.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    else:
        a_bits, b_bits = a.view(np.uint16), b.view(np.uint16)

    def value(bits):                      # 16-bit pattern -> float
        if dtype == "bf16":
            return (bits.astype(np.uint32) << 16).view(np.float32)
        return bits.view(np.float16).astype(np.float32)

    idesc = tc.decode_instr_descriptor(tc.instr_descriptor(rows, bn, dtype, cta_group=cluster))
    assert (idesc.m, idesc.n, idesc.a_dtype, idesc.b_dtype, idesc.d_dtype) == (rows, bn, dtype, dtype, "f32")
    assert idesc.a_k_major and idesc.b_k_major and not idesc.negate and not idesc.sparse
    cols = tmem_columns(bn)
    assert ACC_STAGES * bn <= cols <= tc.TMEM_COLUMNS
    # each CTA's tensor memory, garbage before the first MMA
    tmem = [np.full((tc.TMEM_LANES, cols), np.nan, dtype=np.float32) for _ in range(cluster)]
    ob = 4 if out_dtype == "f32" else 2
    ot = np.float32 if out_dtype == "f32" else np.float16
    panel = epilogue_panel(out_dtype, bn)
    a_rows, b_rows = BLOCK_M, bn // cluster             # per CTA
    results = []
    for acc_stage in range(ACC_STAGES):
        col0 = acc_stage * bn
        for kt in range(ktiles):
            smem = [np.zeros(SMEM, dtype=np.uint8) for _ in range(cluster)]
            a_base, b_base = 1024, 1024 + BLOCK_M * row          # 1024-aligned stage parts
            ks = slice(kt * bk, kt * bk + bk)
            for c in range(cluster):                             # each CTA's TMA loads
                tma_write(smem[c], a_base, np.ascontiguousarray(a_bits[c * a_rows:(c + 1) * a_rows, ks]), row)
                tma_write(smem[c], b_base, np.ascontiguousarray(b_bits[c * b_rows:(c + 1) * b_rows, ks]), row)
            da = tc.smem_descriptor(a_base, 8 * row, row)
            db = tc.smem_descriptor(b_base, 8 * row, row)
            for kk in range(row // 32):
                # the kernel's K step: both descriptors' start + 32 bytes (descriptor_plus); a
                # pair's MMA reads each CTA's part through the same descriptors
                av = np.concatenate([value(mma_operand(smem[c], da + ((32 * kk) >> 4), idesc.m // cluster, np.uint16))
                                     for c in range(cluster)])
                bv = np.concatenate([value(mma_operand(smem[c], db + ((32 * kk) >> 4), idesc.n // cluster, np.uint16))
                                     for c in range(cluster)])
                d = av @ bv.T
                enable_input_d = not (kt == 0 and kk == 0)
                for c in range(cluster):
                    dc = d[c * BLOCK_M:(c + 1) * BLOCK_M]
                    old = tmem[c][:BLOCK_M, col0:col0 + idesc.n]
                    tmem[c][:BLOCK_M, col0:col0 + idesc.n] = dc + (old if enable_input_d else 0)
        out = np.zeros((rows, bn), dtype=np.float32)
        for c in range(cluster):
            # epilogue: tcgen05.ld 32x32b.x32 per warp quadrant, then 16-byte groups into the panels
            staging = np.zeros(BLOCK_M * bn * ob, dtype=np.uint8)
            written = np.zeros(BLOCK_M * bn * ob, dtype=np.int32)
            width = store_width(out_dtype)
            for t in range(EPILOGUE_THREADS):
                warp, lane = FIRST_EPILOGUE_WARP + t // WARP, t % WARP
                lane_base = 32 * (warp % 4)
                row_ = lane_base + lane
                for ch in range(bn // tc.LD_COLUMNS):
                    regs = tmem[c][lane_base + lane, col0 + ch * tc.LD_COLUMNS: col0 + (ch + 1) * tc.LD_COLUMNS]
                    for u in range(tc.LD_COLUMNS // width):
                        col = ch * tc.LD_COLUMNS + u * width
                        chunk, cin = divmod(col, panel.cols)            # warp_roles.swizzled, col_lane 0
                        off = panel.offset(IntOps, row_, cin * ob) + chunk * BLOCK_M * panel.span
                        staging[off:off + 16] = regs[u * width:(u + 1) * width].astype(ot).view(np.uint8)
                        written[off:off + 16] += 1
            assert (written == 1).all(), "the epilogue's 16-byte stores must cover the slot exactly once"
            for off, ch in panel.boxes(bn, BLOCK_M):                    # TMA store: one box per panel
                for r in range(BLOCK_M):
                    for cc in range(panel.cols):
                        o = off + panel.offset(IntOps, r, cc * ob)
                        out[c * BLOCK_M + r, ch + cc] = staging[o:o + ob].view(ot)[0]
        results.append((out, value(a_bits) @ value(b_bits).T))
    return results


@pytest.mark.parametrize("dtype,out_dtype", [("f16", "f32"), ("bf16", "f16")])
@pytest.mark.parametrize("bn,row", list(tile_shapes()))
def test_operands_accumulators_and_epilogue_match_a_reference_gemm(dtype, out_dtype, bn, row):
    for out, ref in simulate(dtype, out_dtype, bn, row, seed=bn * 1000 + row):
        np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("bn,row", list(tile_shapes()))
def test_cta_pair_operands_and_accumulators_match_a_reference_gemm(bn, row):
    """The CTA-pair kernel (cta_group::2): M = 256 rows over two CTAs, each with half of the
    filter rows, for every block_n the pair planner may emit."""
    for out, ref in simulate("f16", "f16", bn, row, cluster=2, seed=bn * 1000 + row + 1):
        np.testing.assert_array_equal(out, ref)


def test_descriptor_encodings():
    """Field positions of the emitted descriptors (CUTLASS UMMA::SmemDescriptor and
    UMMA::InstrDescriptor): the K-major 128B-swizzled operand of a 1024-aligned stage, and the
    f16/bf16 -> f32 128x256 instruction."""
    d = tc.smem_descriptor(0x1400, 1024, 128)
    assert d == (0x1400 >> 4) | (1 << 16) | (64 << 32) | (1 << 46) | (2 << 61)
    assert tc.smem_descriptor(0, 512, 64) >> 61 == 4
    i = tc.instr_descriptor(128, 256, "bf16")
    assert i == (1 << 4) | (1 << 7) | (1 << 10) | (32 << 17) | (8 << 24)
    assert tc.instr_descriptor(128, 64, "f16") == (1 << 4) | (8 << 17) | (8 << 24)
    with pytest.raises(ValueError):
        tc.instr_descriptor(128, 72, "f16")      # N a multiple of 16 for M = 128
    assert tc.instr_descriptor(256, 128, "f16", cta_group=2) == (1 << 4) | (16 << 17) | (16 << 24)
    with pytest.raises(ValueError):
        tc.instr_descriptor(256, 128, "f16")     # M = 256 only for a CTA pair
    assert tc.tmem_columns_for(160) == 256 and tc.tmem_columns_for(384) == 512
    with pytest.raises(ValueError):
        tc.tmem_columns_for(520)
