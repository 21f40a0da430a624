"""TMA loader for the sm_90a implicit GEMM: descriptors and per-stage loads.

The activation tile comes from an im2col tensor map over the UNPADDED NHWC input: padding is
the out-of-bounds zero fill of the pixel bounding box, strides are element strides, and each
(r, s) filter tap is an im2col offset. The filter tile comes from a tiled map over the filter
viewed as a row-major [F, K] matrix (K = R*S*C, channels fastest). Both tiles are Schedule.block_k
channels wide: 64 (128 B rows, 128B swizzle), or 32 (64 B rows, 64B swizzle) when C is a
multiple of 32 but not of 64 (e.g. C = 96); the wgmma descriptors use the same swizzle.

IREE launches kernels with buffer pointers only, so descriptors are built here at compile time
with address 0 and written by one thread per CTA into that CTA's slots of the dispatch's scratch
result, with the binding's address patched into qword 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...problem import ConvProblem, DTYPE_BYTES
from ...schedule import Schedule
from . import tensormap as tm
from .primitives import (I16, I32, I64, address_of, i64, index_to, mbarrier_arrive_expect_tx, store_i64,
                         tensormap_acquire, tensormap_prefetch, tensormap_release, tma_load)
from ...ir import arith_d

CHANNELS_PER_TILE = 64          # 128 B of f16/bf16: one 128B-swizzle row (other dtypes: k_tile_channels)
NARROW_CHANNELS_PER_TILE = 32   # 64 B: one 64B-swizzle row, for C = 32 (mod 64)


def k_tile_channels(C: int, taps: int = 1, dtype: str = "f16") -> int | None:
    """Channels per K step for C input channels and R*S filter taps (None: TMA cannot tile
    C): one 128-byte swizzled row where it tiles C, else one 64-byte row. With one tap any C
    whose pixel rows are a multiple of 16 bytes works with 64-byte steps: the last one reads
    past C and TMA fills it with zeros, in the activation and in the filter alike (with several
    taps a step would run into the next tap's filter channels). Rows are counted in bytes
    because f32 operands (TF32 wgmma: 32 or 16 channels per row) and a k8 TF32 wgmma consume
    the same 32 bytes of K as a k16 one of 16-bit operands, as do i8 operands (128 or 64
    channels per row) and a k32 s8 wgmma, so the ring, the swizzle and the descriptors are
    those of 16-bit operands."""
    eb = DTYPE_BYTES[dtype]
    if C % (128 // eb) == 0:
        return 128 // eb
    if C % (64 // eb) == 0 or (taps == 1 and C * eb % 16 == 0):
        return 64 // eb
    return None


def k_tiles(p: ConvProblem, block_k: int) -> int:
    """K steps of block_k channels: per filter tap, C rounded up to block_k."""
    return p.R * p.S * -(-p.C // block_k)


def operand_swizzle(block_k: int, dtype: str = "f16") -> tm.Swizzle:
    """The smem swizzle of an operand row of block_k channels (the row is the span)."""
    return {128: tm.Swizzle.B128, 64: tm.Swizzle.B64}[block_k * DTYPE_BYTES[dtype]]
DESCRIPTORS_PER_CTA = 2         # activation (im2col), filter (tiled)

# f32 operands load as TFLOAT32: the TMA rounds them to TF32 on the way to shared memory (the
# wgmma alone truncates: 2.6x the error, results/gpu_check/h100_sm90a_tf32_latest.json (the truncated-operand run: results/index.jsonl)); outputs and
# residuals stay f32. i8 moves as UINT8: the TMA only copies bytes, and its out-of-bounds fill
# (0) is s8 zero too.
_TM_TYPE = {"f16": tm.DataType.FLOAT16, "bf16": tm.DataType.BFLOAT16, "f32": tm.DataType.TFLOAT32,
            "i8": tm.DataType.UINT8, "f8E4M3FN": tm.DataType.UINT8, "f8E5M2": tm.DataType.UINT8}
# outputs and residuals (i32: an int8 conv's raw accumulator)
_TM_ELEM = dict(_TM_TYPE, f32=tm.DataType.FLOAT32, i32=tm.DataType.INT32)


@dataclass(frozen=True)
class ConvTensorMaps:
    activation: bytes           # im2col descriptor, address 0
    filter: bytes               # tiled descriptor, address 0


def activation_map_args(p: ConvProblem, s: Schedule) -> tm.Im2colArgs:
    """The im2col map of the conv input; a channel slice (p.input_channels) keeps its operand's
    pixel pitch, its first channel being the map's address (activation_binding)."""
    return tm.nhwc_im2col_args(
        n=p.N, h=p.H, w=p.W, c=p.C, data_type=_TM_TYPE[p.dtype], filter_hw=(p.R, p.S), pitch_c=p.input_pitch,
        padding=((p.pad[0], p.pad[2]), (p.pad[1], p.pad[3])),
        channels_per_pixel=s.block_k, pixels_per_column=s.block_m,
        stride_hw=p.stride, dilation_hw=p.dilation, swizzle=operand_swizzle(s.block_k, p.dtype),
        l2_promotion=tm.L2Promotion.B128)


def activation_binding(p: ConvProblem, memrefs):
    """What the activation map's address is taken from: the input memref, or (memref, byte
    offset) of an input channel slice's first channel."""
    x = memrefs[p.input]
    return (x, p.input_channel_offset * DTYPE_BYTES[p.dtype]) if p.input_channel_offset else x


def residual_binding(p: ConvProblem, memrefs, load):
    """The residual map's address: the operand, or (memref, byte offset) of a channel window."""
    r = memrefs[load.operand]
    return (r, p.residual_channel_offset * DTYPE_BYTES[load.dtype]) if p.residual_channel_offset else r


def activation_runtime_sizes(p: ConvProblem, x) -> dict:
    """{dimension: index value} of the im2col map's runtime sizes (dims C, W, H, N innermost
    first) for store_descriptors; x: the problem's Extents."""
    out = {}
    if p.dynamic_batch:
        out[3] = x.N
    if p.h_constant >= 0:
        out[2] = x.H
    if p.w_constant >= 0:
        out[1] = x.W
    return out


def activation_runtime_strides(e, p: ConvProblem, x) -> dict:
    """{i: index value} of the im2col map's runtime byte strides: a row (global_strides[1]) is
    W * C elements, an image ([2]) H * W * C."""
    out = {}
    row = p.input_pitch * DTYPE_BYTES[p.dtype]
    if p.w_constant >= 0:
        row = e.mul(x.W, row)
        out[1] = row
    if p.dynamic_spatial:
        out[2] = e.mul(x.H, row)
    return out


def filter_map_args(p: ConvProblem, s: Schedule) -> tm.TiledArgs:
    return tm.TiledArgs(data_type=_TM_TYPE[p.dtype], global_dim=(p.gemm_k, p.F),
                        global_strides=(p.gemm_k * DTYPE_BYTES[p.dtype],),
                        box_dim=(s.block_k, s.block_n // s.config.filter_multicast),
                        swizzle=operand_swizzle(s.block_k, p.dtype),
                        l2_promotion=tm.L2Promotion.B256)


def tensor_maps(p: ConvProblem, s: Schedule) -> ConvTensorMaps:
    """Raises TensorMapError when the driver would refuse either descriptor."""
    return ConvTensorMaps(tm.encode_im2col(activation_map_args(p, s)),
                          tm.encode_tiled(filter_map_args(p, s)))


def _signed(q: int) -> int:
    return q - (1 << 64) if q >= (1 << 63) else q


def descriptor_slots(pid, scratch, count: int = DESCRIPTORS_PER_CTA):
    """i64 generic addresses of this CTA's `count` descriptor slots in the scratch result (pure
    arithmetic: every thread may compute them)."""
    slot0 = arith_d.addi(address_of(scratch),
                         arith_d.muli(index_to(pid, I64()), i64(count * tm.DESCRIPTOR_BYTES)))
    return [arith_d.addi(slot0, i64(j * tm.DESCRIPTOR_BYTES)) for j in range(count)]


def write_descriptors(descs, slots, bindings, acquire: int | None = None, sizes=None, strides=None) -> None:
    """One thread: store each descriptor as immediates with its binding's address in qword 0,
    release them to the tensormap proxy, acquire and prefetch the first `acquire` (default:
    all) for this thread's TMAs; a thread using another one calls acquire_descriptor first
    (after a barrier, if it is not this thread)."""
    store_descriptors(descs, slots, bindings, sizes, strides)
    publish_descriptors(slots, acquire)


def store_descriptors(descs, slots, bindings, sizes=None, strides=None) -> None:
    """The stores of write_descriptors (a kernel may put work between them and the fence).
    sizes: per descriptor, {dimension: index value} of global sizes known only at run time
    (a dynamic batch, runtime image sizes), written over the compile-time ones; strides: per
    descriptor, {i: index value} of runtime byte strides global_strides[i] (of dimension i + 1;
    multiples of 16 below 2^36)."""
    for d, (slot, desc, binding) in enumerate(zip(slots, descs, bindings)):
        words = tm.descriptor_qwords(desc)
        patches = {}
        for dim, value in ((sizes or [{}] * len(descs))[d] or {}).items():
            q, shift = tm.global_dim_field(dim)
            patches.setdefault(q, []).append((shift, value, 1))
        for i, value in ((strides or [{}] * len(descs))[d] or {}).items():
            q, shift = tm.global_stride_field(i)
            patches.setdefault(q, []).append((shift, value, 0))
        # a binding may be (memref, byte offset): a map over a window of the buffer (a channel slice)
        address = (arith_d.addi(address_of(binding[0]), i64(binding[1])) if isinstance(binding, tuple)
                   else address_of(binding))
        store_i64(address, slot)
        for q in range(1, len(words)):
            fields = patches.get(q, [])
            keep = words[q]
            for shift, _, _ in fields:
                keep &= ~(0xFFFF_FFFF << shift) & (1 << 64) - 1
            word = i64(_signed(keep))
            for shift, value, minus in fields:
                # a size field holds size - 1; a stride field stride >> 4 (its top 4 bits, in
                # another qword, stay those of the compile-time stride: 0 below 64 GiB)
                v = index_to(value, I64())
                v = arith_d.subi(v, i64(1)) if minus else arith_d.shrui(v, i64(4))
                word = arith_d.ori(word, arith_d.shli(v, i64(shift)))
            store_i64(word, arith_d.addi(slot, i64(8 * q)))


def publish_descriptors(slots, acquire: int | None = None) -> None:
    """The same thread, after store_descriptors: release, then acquire and prefetch."""
    tensormap_release()
    for slot in slots[:acquire]:
        acquire_descriptor(slot)


def acquire_descriptor(slot) -> None:
    tensormap_acquire(slot)
    tensormap_prefetch(slot)


def swizzle_rotation(ops, row, span: int):
    """What the hardware swizzle XORs into the 16-byte unit index of `row` in a tile of
    `span`-byte rows (128 B: 128B swizzle, 64 B: 64B): address bits [4, 4+b) are XORed with
    bits [7, 7+b). `ops`: an Emitter or anything with its integer methods."""
    return ops.rem(row, 8) if span == 128 else ops.rem(ops.div(row, 2), 4)


def k_tile_tap(ops, p: ConvProblem, block_k: int, kt):
    """(r, s, first channel) of k-tile kt: K steps run over (r, s, c-block), channels fastest,
    C rounded up to block_k per tap. `ops`: an Emitter or anything with its integer methods."""
    cblocks = -(-p.C // block_k)
    rs = ops.div(kt, cblocks)
    c0 = ops.mul(ops.rem(kt, cblocks), block_k)
    return ops.div(rs, p.S), ops.rem(rs, p.S), c0


@dataclass(frozen=True)
class EpiloguePanel:
    """One TMA box of the epilogue's staging tile: `cols` channels by the slot's rows, `span`
    bytes per row, swizzled over that span. 128 B when block_n is a multiple of 128 bytes'
    worth of channels; otherwise 64 B panels, so that tiles such as 160 channels (F = 320
    in two tiles) need no partial panel."""
    cols: int
    span: int

    @property
    def swizzle(self) -> int:
        return tm.Swizzle.B128 if self.span == 128 else tm.Swizzle.B64

    def offset(self, ops, row, byte):
        """Byte offset of (row, byte of the row) in the swizzled panel: the hardware swizzle
        XORs address bits [4, 4+b) with bits [7, 7+b), rows `span` bytes apart. `ops` is an
        Emitter, or anything with the same integer methods (the tests' int model)."""
        rot = swizzle_rotation(ops, row, self.span)
        unit = ops.xor(ops.div(byte, 16), rot)
        return ops.add(ops.add(ops.mul(row, self.span), ops.mul(unit, 16)), ops.rem(byte, 16))

    def boxes(self, block_n: int, rows: int) -> list[tuple[int, int]]:
        """(byte offset in the slot, first channel) of each panel of a block_n-wide slot of
        `rows` rows: one TMA box each."""
        return [(c * rows * self.span, c * self.cols) for c in range(block_n // self.cols)]


def epilogue_panel(dtype: str, block_n: int) -> EpiloguePanel:
    """The widest swizzle panel that tiles block_n channels of dtype exactly."""
    for span in (128, 64):
        cols = span // DTYPE_BYTES[dtype]
        if block_n % cols == 0:
            return EpiloguePanel(cols, span)
    raise ValueError(f"block_n={block_n} is not a multiple of {64 // DTYPE_BYTES[dtype]} {dtype} channels (one 64-byte swizzle row)")


def epilogue_map_args(p: ConvProblem, dtype: str, rows: int, block_n: int, residual: bool = False) -> tm.TiledArgs:
    """Tiled map over an output-shaped [M, F] tensor (the output, or with `residual` a residual
    operand, whose rows may be a channel window of a wider tensor: p.residual_pitch apart,
    the window's first channel being the address, residual_binding) whose box is one swizzle
    panel of `rows` rows: the shared-memory staging layout of the TMA-store epilogue."""
    panel = epilogue_panel(dtype, block_n)
    pitch = p.residual_pitch if residual else p.F
    return tm.TiledArgs(data_type=_TM_ELEM[dtype], global_dim=(p.F, p.gemm_m),
                        global_strides=(pitch * DTYPE_BYTES[dtype],),
                        box_dim=(panel.cols, rows), swizzle=panel.swizzle,
                        l2_promotion=tm.L2Promotion.B128)


class ConvTmaLoader:
    """Issues one k-tile (activation + filter) into a pipeline stage. K tiles run over
    (r, s, c-block) with channels fastest: k-tile t covers K = [t*bk, t*bk + bk), bk = block_k."""

    def __init__(self, e, p: ConvProblem, s: Schedule, desc_a, desc_b, m0, n0, sizes=None):
        """sizes: the problem's Extents when its image sizes are read at run time."""
        self.e, self.p, self.s = e, p, s
        self.desc_a, self.desc_b = desc_a, desc_b
        howo, wo_size = (p.Ho * p.Wo, p.Wo) if sizes is None else (sizes.howo, sizes.Wo)
        n = e.div(m0, howo)
        rem = e.rem(m0, howo)
        ho = e.div(rem, wo_size)
        wo = e.rem(rem, wo_size)
        # first output pixel of the tile, in padded-input coordinates (may be negative)
        self.h0 = index_to(e.sub(e.mul(ho, p.stride[0]), p.pad[0]), I32())
        self.w0 = index_to(e.sub(e.mul(wo, p.stride[1]), p.pad[1]), I32())
        self.n_img = index_to(n, I32())
        self.f0 = index_to(n0, I32())
        self.stage_bytes = (s.block_m + s.block_n) * s.block_k * DTYPE_BYTES[p.dtype]

    def load(self, kt, a_smem, b_smem, full_bar, cluster_rank=None) -> None:
        """With a cluster along M (cluster_rank: this CTA's rank, an index value), each CTA
        loads its share of the filter rows and multicasts it into every CTA of the cluster,
        at the same offset; every CTA still expects the whole stage's bytes."""
        e, p = self.e, self.p
        bk = self.s.block_k
        r, sx, c0 = k_tile_tap(e, p, bk, kt)
        c0 = index_to(c0, I32())
        off_w = index_to(e.mul(sx, p.dilation[1]), I16())
        off_h = index_to(e.mul(r, p.dilation[0]), I16())
        k0 = index_to(e.mul(kt, bk), I32())
        mbarrier_arrive_expect_tx(full_bar, self.stage_bytes)
        tma_load(a_smem, self.desc_a, [c0, self.w0, self.h0, self.n_img], full_bar, [off_w, off_h])
        sharing = self.s.config.filter_multicast
        if cluster_rank is None or sharing == 1:
            tma_load(b_smem, self.desc_b, [k0, self.f0], full_bar)
            return
        rows = self.s.block_n // sharing
        f0 = arith_d.addi(self.f0, index_to(e.mul(cluster_rank, rows), I32()))
        dst = arith_d.addi(b_smem, index_to(e.mul(cluster_rank, rows * bk * DTYPE_BYTES[p.dtype]), I64()))
        tma_load(dst, self.desc_b, [k0, f0], full_bar, multicast_mask=(1 << sharing) - 1)
