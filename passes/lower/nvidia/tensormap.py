"""CUtensorMap (Hopper TMA descriptor) encoder and validator, without a driver.

Why: IREE launches our kernels with plain pointers and i32 constants, so a 128-byte
``__grid_constant__`` descriptor cannot be passed in, and ``tensormap.replace`` cannot build
an im2col descriptor on the device.  Instead the compiler computes all 128 bytes here (with
global address 0) and the kernel prologue stores them to a per-CTA global slot with the real
address written into qword 0 (see :func:`global_address_offset`).

NVIDIA calls the format opaque.  Everything below reproduces what ``cuTensorMapEncodeTiled`` /
``cuTensorMapEncodeIm2col`` of driver 580.159.04 (CUDA 13.0) produce on an H200 (sm_90a),
bit for bit; see ``shared/design/tensormap.md`` for the decoded layout and
``test/data/tensormap_vectors.jsonl`` for the driver's own encodings.  :func:`validate` raises
:class:`TensorMapError` for exactly the argument combinations that driver rejects
(``CUDA_ERROR_INVALID_VALUE``), so the compiler never bakes a descriptor the driver would refuse.

Argument conventions follow the driver: dimensions innermost first, ``global_strides[i]`` is
the byte stride of dimension ``i + 1`` (rank - 1 entries), enums carry the driver's values.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from enum import IntEnum
from typing import Optional, Sequence, Tuple, Union

__all__ = [
    "DESCRIPTOR_BYTES", "GLOBAL_ADDRESS_OFFSET", "MAX_BOX_BYTES",
    "TensorMapError", "DataType", "Interleave", "Swizzle", "L2Promotion", "OobFill",
    "ELEMENT_SIZE", "TiledArgs", "Im2colArgs",
    "validate", "encode", "encode_tiled", "encode_im2col",
    "global_address_offset", "patch_global_address", "descriptor_qwords",
    "nhwc_im2col_args",
]

DESCRIPTOR_BYTES = 128
GLOBAL_ADDRESS_OFFSET = 0          # qword 0 holds the address and nothing else
MAX_BOX_BYTES = 233_472            # 228 KiB: the largest shared-memory tile one TMA may fill
_ADDRESS_LIMIT = 1 << 57           # the address field is 57 bits wide
_STRIDE_LIMIT = 1 << 40            # strides are stored >> 4 in 36 bits
_DIM_LIMIT = 1 << 32               # dims are stored minus one in 32 bits


class TensorMapError(ValueError):
    """The driver would reject these arguments (CUDA_ERROR_INVALID_VALUE)."""


class DataType(IntEnum):
    """``CUtensorMapDataType`` (driver enum values, not the hardware codes)."""
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    INT32 = 3
    UINT64 = 4
    INT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT32_FTZ = 10
    TFLOAT32 = 11
    TFLOAT32_FTZ = 12
    U4_16_ALIGN8B = 13     # packed sub-byte types: sm_100 only, rejected on sm_90
    U4_16_ALIGN16B = 14
    U6_16_ALIGN16B = 15


class Interleave(IntEnum):
    NONE = 0
    B16 = 1
    B32 = 2


class Swizzle(IntEnum):
    NONE = 0
    B32 = 1
    B64 = 2
    B128 = 3
    B128_ATOM_32B = 4          # the 128B-atom variants are sm_100 only, rejected on sm_90
    B128_ATOM_32B_FLIP_8B = 5
    B128_ATOM_64B = 6


class L2Promotion(IntEnum):
    NONE = 0
    B64 = 1
    B128 = 2
    B256 = 3


class OobFill(IntEnum):
    NONE = 0                   # out-of-bounds elements read as zero
    NAN_REQUEST_ZERO_FMA = 1   # ... as NaN (float types only)


ELEMENT_SIZE = {
    DataType.UINT8: 1, DataType.UINT16: 2, DataType.UINT32: 4, DataType.INT32: 4,
    DataType.UINT64: 8, DataType.INT64: 8, DataType.FLOAT16: 2, DataType.FLOAT32: 4,
    DataType.FLOAT64: 8, DataType.BFLOAT16: 2, DataType.FLOAT32_FTZ: 4,
    DataType.TFLOAT32: 4, DataType.TFLOAT32_FTZ: 4,
}
"""Bytes per element of every type sm_90 accepts."""

# Hardware element-type code (bits 71..74) and tf32 flag (bit 80).  The hardware numbers
# types differently from the driver enum; tf32 is the f32 (or f32.ftz) code plus a flag.
_HW_TYPE = {
    DataType.UINT8: (0, 0), DataType.UINT16: (1, 0), DataType.UINT32: (2, 0),
    DataType.INT32: (3, 0), DataType.UINT64: (4, 0), DataType.INT64: (5, 0),
    DataType.FLOAT16: (6, 0), DataType.FLOAT32: (7, 0), DataType.FLOAT32_FTZ: (8, 0),
    DataType.FLOAT64: (9, 0), DataType.BFLOAT16: (10, 0),
    DataType.TFLOAT32: (7, 1), DataType.TFLOAT32_FTZ: (8, 1),
}
_FLOAT_TYPES = frozenset({
    DataType.FLOAT16, DataType.FLOAT32, DataType.FLOAT64, DataType.BFLOAT16,
    DataType.FLOAT32_FTZ, DataType.TFLOAT32, DataType.TFLOAT32_FTZ,
})
_SWIZZLE_SPAN = {Swizzle.NONE: None, Swizzle.B32: 32, Swizzle.B64: 64, Swizzle.B128: 128}
# Bits 576..591: a driver-side swizzle tag the hardware ignores; reproduced for bit-exactness.
_SWIZZLE_TAG = {Swizzle.NONE: 0x10, Swizzle.B32: 0x100, Swizzle.B64: 0x200, Swizzle.B128: 0x400}
# im2col corner field width per spatial dim: 3 x 5, 2 x 8 or 1 x 16 bits fill 16 bits.
_CORNER_BITS = {3: 16, 4: 8, 5: 5}

IntSeq = Union[Sequence[int], Tuple[int, ...]]


def _as_int(name: str, v) -> int:
    if isinstance(v, bool):
        raise TensorMapError(f"{name} must be an integer, got {v!r}")
    try:
        return operator.index(v)
    except TypeError:
        raise TensorMapError(f"{name} must be an integer, got {v!r}") from None


def _as_ints(name: str, v) -> Tuple[int, ...]:
    if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
        raise TensorMapError(f"{name} must be a sequence of integers, got {v!r}")
    return tuple(_as_int(f"{name}[{i}]", x) for i, x in enumerate(v))


def _normalize(obj, scalars, seqs) -> None:
    """Frozen-dataclass __post_init__ helper: ints to int, sequences to tuples, rank filled in."""
    for n in scalars:
        object.__setattr__(obj, n, _as_int(n, getattr(obj, n)))
    for n in seqs:
        object.__setattr__(obj, n, _as_ints(n, getattr(obj, n)))
    if obj.element_strides is None:
        object.__setattr__(obj, "element_strides", (1,) * len(obj.global_dim))
    else:
        object.__setattr__(obj, "element_strides", _as_ints("element_strides", obj.element_strides))
    if obj.rank is None:
        object.__setattr__(obj, "rank", len(obj.global_dim))
    else:
        object.__setattr__(obj, "rank", _as_int("rank", obj.rank))


_COMMON_SCALARS = ("data_type", "global_address", "interleave", "swizzle", "l2_promotion",
                   "oob_fill")


@dataclass(frozen=True)
class TiledArgs:
    """Arguments of ``cuTensorMapEncodeTiled``.

    ``global_address`` defaults to 0: descriptors are built at compile time and the kernel
    patches the real address into qword 0.  ``element_strides`` defaults to all ones and
    ``rank`` to ``len(global_dim)``.  Enum fields keep the driver's integer values, so
    out-of-range values can be represented and are reported by :func:`validate`.
    """
    data_type: int
    global_dim: IntSeq
    global_strides: IntSeq
    box_dim: IntSeq
    element_strides: Optional[IntSeq] = None
    interleave: int = Interleave.NONE
    swizzle: int = Swizzle.NONE
    l2_promotion: int = L2Promotion.NONE
    oob_fill: int = OobFill.NONE
    global_address: int = 0
    rank: Optional[int] = None

    def __post_init__(self):
        _normalize(self, _COMMON_SCALARS, ("global_dim", "global_strides", "box_dim"))


@dataclass(frozen=True)
class Im2colArgs:
    """Arguments of ``cuTensorMapEncodeIm2col`` (rank 3..5: C, spatial dims W[, H[, D]], N).

    The corners have rank - 2 entries, ordered like the dims (W, H, D), and bound the
    filter's footprint: for an NHWC convolution lower = -pad_lo and
    upper = pad_hi - (filter - 1) * dilation (see :func:`nhwc_im2col_args`).
    """
    data_type: int
    global_dim: IntSeq
    global_strides: IntSeq
    pixel_box_lower_corner: IntSeq
    pixel_box_upper_corner: IntSeq
    channels_per_pixel: int
    pixels_per_column: int
    element_strides: Optional[IntSeq] = None
    interleave: int = Interleave.NONE
    swizzle: int = Swizzle.NONE
    l2_promotion: int = L2Promotion.NONE
    oob_fill: int = OobFill.NONE
    global_address: int = 0
    rank: Optional[int] = None

    def __post_init__(self):
        _normalize(self, _COMMON_SCALARS + ("channels_per_pixel", "pixels_per_column"),
                   ("global_dim", "global_strides", "pixel_box_lower_corner",
                    "pixel_box_upper_corner"))


TensorMapArgs = Union[TiledArgs, Im2colArgs]


def _int32(x: int) -> int:
    x &= 0xFFFF_FFFF
    return x - (1 << 32) if x & 0x8000_0000 else x


def _box_bytes(a: TensorMapArgs) -> int:
    """Bytes one TMA copy writes to shared memory (also stored as driver metadata).

    Tiled: element strides subsample the box, and the driver counts floor(box / stride)
    elements per dim.  Im2col: channels_per_pixel x pixels_per_column elements.
    """
    esz = ELEMENT_SIZE[DataType(a.data_type)]
    if isinstance(a, TiledArgs):
        n = esz
        for b, e in zip(a.box_dim, a.element_strides):
            n *= b // e
        return n
    return a.channels_per_pixel * a.pixels_per_column * esz


def _fail(msg: str):
    raise TensorMapError(msg)


def validate(args: TensorMapArgs) -> None:
    """Raises :class:`TensorMapError` iff the sm_90 driver rejects ``args``.

    Mirrors the driver's checks so the compiler refuses exactly what the driver would:
    enum ranges (sm_100-only types/swizzles included), NaN fill on integer types,
    interleave below rank 3, address/stride alignment and width, dim/box/element-stride
    ranges, the 16-byte granularity of the inner box row and its fit in the swizzle span,
    im2col corner widths and extents, and the 228 KiB box limit.  Returns None otherwise.
    """
    if not isinstance(args, (TiledArgs, Im2colArgs)):
        raise TypeError(f"expected TiledArgs or Im2colArgs, got {type(args).__name__}")
    a = args
    tiled = isinstance(a, TiledArgs)
    r = a.rank
    lo_rank = 1 if tiled else 3
    if not lo_rank <= r <= 5:
        _fail(f"rank {r} out of range [{lo_rank}, 5] for {'tiled' if tiled else 'im2col'}")

    def _len(name, seq, n):
        if len(seq) != n:
            _fail(f"{name} has {len(seq)} entries, rank {r} needs {n}")
    _len("global_dim", a.global_dim, r)
    _len("global_strides", a.global_strides, r - 1)
    _len("element_strides", a.element_strides, r)
    if tiled:
        _len("box_dim", a.box_dim, r)
    else:
        _len("pixel_box_lower_corner", a.pixel_box_lower_corner, r - 2)
        _len("pixel_box_upper_corner", a.pixel_box_upper_corner, r - 2)

    # Enums.  Values the sm_90 driver knows but refuses are reported as such.
    if a.data_type not in DataType.__members__.values():
        _fail(f"unknown data type {a.data_type}")
    dt = DataType(a.data_type)
    if dt not in ELEMENT_SIZE:
        _fail(f"data type {dt.name} (packed sub-byte) is not supported on sm_90")
    if a.swizzle not in Swizzle.__members__.values():
        _fail(f"unknown swizzle {a.swizzle}")
    if a.swizzle not in _SWIZZLE_SPAN:
        _fail(f"swizzle {Swizzle(a.swizzle).name} is not supported on sm_90")
    for name, enum in (("interleave", Interleave), ("l2_promotion", L2Promotion),
                       ("oob_fill", OobFill)):
        if getattr(a, name) not in enum.__members__.values():
            _fail(f"unknown {name} {getattr(a, name)}")
    il, sw = Interleave(a.interleave), Swizzle(a.swizzle)
    if a.oob_fill == OobFill.NAN_REQUEST_ZERO_FMA and dt not in _FLOAT_TYPES:
        _fail(f"NaN out-of-bounds fill needs a floating-point type, not {dt.name}")
    if il != Interleave.NONE and r < 3:
        _fail(f"interleave {il.name} needs rank >= 3, got {r}")

    # Global memory: the address and every stride must be 16-byte (32 with 32B interleave)
    # aligned because the hardware stores them >> 4 and fetches whole 16/32-byte chunks.
    align = 32 if il == Interleave.B32 else 16
    if not 0 <= a.global_address < _ADDRESS_LIMIT:
        _fail(f"global address {a.global_address:#x} outside [0, 2^57)")
    if a.global_address % align:
        _fail(f"global address {a.global_address:#x} not {align}-byte aligned")
    for i, d in enumerate(a.global_dim):
        if not 1 <= d <= _DIM_LIMIT:
            _fail(f"global_dim[{i}] = {d} outside [1, 2^32]")
    for i, s in enumerate(a.global_strides):
        if not 0 <= s < _STRIDE_LIMIT:
            _fail(f"global_strides[{i}] = {s} outside [0, 2^40)")
        if s % align:
            _fail(f"global_strides[{i}] = {s} not a multiple of {align} bytes")
    for i, e in enumerate(a.element_strides):
        if not 1 <= e <= 8:
            _fail(f"element_strides[{i}] = {e} outside [1, 8]")

    # The box (shared-memory tile).
    esz = ELEMENT_SIZE[dt]
    if tiled:
        for i, b in enumerate(a.box_dim):
            if not 1 <= b <= 256:
                _fail(f"box_dim[{i}] = {b} outside [1, 256]")
        inner, inner_name = a.box_dim[0] * esz, "box_dim[0]"
    else:
        if not 1 <= a.channels_per_pixel <= 256:
            _fail(f"channels_per_pixel = {a.channels_per_pixel} outside [1, 256]")
        if not 1 <= a.pixels_per_column <= 1024:
            _fail(f"pixels_per_column = {a.pixels_per_column} outside [1, 1024]")
        bits = _CORNER_BITS[r]
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        for name in ("pixel_box_lower_corner", "pixel_box_upper_corner"):
            for i, c in enumerate(getattr(a, name)):
                if not lo <= c <= hi:
                    _fail(f"{name}[{i}] = {c} outside [{lo}, {hi}] ({bits}-bit field at rank {r})")
        # The filter footprint must leave at least one pixel per spatial dim.  The driver
        # adds dim + upper in 32-bit arithmetic (so it wraps for dims >= 2^31), and with
        # interleave it checks corner k against global_dim[k] rather than the spatial dim
        # global_dim[k + 1] (observed; reproduced as-is).
        first = 0 if il != Interleave.NONE else 1
        for k, (l, u) in enumerate(zip(a.pixel_box_lower_corner, a.pixel_box_upper_corner)):
            d = a.global_dim[k + first]
            if _int32(d + u) - l < 1:
                _fail(f"im2col corners leave no pixel in dim {k + first}: "
                      f"int32({d} + {u}) - ({l}) < 1")
        inner, inner_name = a.channels_per_pixel * esz, "channels_per_pixel"
    if inner % 16:
        _fail(f"{inner_name} x {esz} B = {inner} B is not a multiple of 16 bytes")
    span = _SWIZZLE_SPAN[sw]
    if il == Interleave.NONE and span is not None and inner > span:
        _fail(f"{inner_name} x {esz} B = {inner} B exceeds the {span} B swizzle span")
    nbytes = _box_bytes(a)
    if nbytes > MAX_BOX_BYTES:
        _fail(f"box is {nbytes} bytes, more than {MAX_BOX_BYTES}")


def _put(v: int, lo: int, width: int, x: int) -> int:
    assert 0 <= x < (1 << width), (lo, width, x)
    return v | (x << lo)


def _encode_common(a: TensorMapArgs, im2col: bool) -> int:
    hw, tf32 = _HW_TYPE[DataType(a.data_type)]
    v = _put(0, 0, 57, a.global_address)
    v = _put(v, 64, 1, int(im2col))
    v = _put(v, 68, 3, a.rank - 1)
    v = _put(v, 71, 4, hw)
    v = _put(v, 75, 2, a.interleave)
    v = _put(v, 77, 2, a.swizzle)
    v = _put(v, 79, 1, a.oob_fill)
    v = _put(v, 80, 1, tf32)
    v = _put(v, 81, 2, a.l2_promotion)
    for i, s in enumerate(a.global_strides):          # 36-bit stride >> 4, split 32 + 4
        s >>= 4
        v = _put(v, 96 + 32 * i, 32, s & 0xFFFF_FFFF)
        v = _put(v, 224 + 4 * i, 4, s >> 32)
    for i, d in enumerate(a.global_dim):
        v = _put(v, 256 + 32 * i, 32, d - 1)
    for i, e in enumerate(a.element_strides):
        v = _put(v, 416 + 3 * i, 3, e - 1)
    v = _put(v, 512, 18, _box_bytes(a))                 # driver metadata
    v = _put(v, 576, 16, _SWIZZLE_TAG[Swizzle(a.swizzle)])  # driver metadata
    return v


def encode_tiled(args: TiledArgs) -> bytes:
    """The 128 bytes ``cuTensorMapEncodeTiled`` writes for ``args`` (validated first)."""
    if not isinstance(args, TiledArgs):
        raise TypeError(f"expected TiledArgs, got {type(args).__name__}")
    validate(args)
    v = _encode_common(args, im2col=False)
    v = _put(v, 440, 8, args.box_dim[0] - 1)
    for i in range(1, args.rank):
        v = _put(v, 448 + 8 * (i - 1), 8, args.box_dim[i] - 1)
    return v.to_bytes(DESCRIPTOR_BYTES, "little")


def encode_im2col(args: Im2colArgs) -> bytes:
    """The 128 bytes ``cuTensorMapEncodeIm2col`` writes for ``args`` (validated first)."""
    if not isinstance(args, Im2colArgs):
        raise TypeError(f"expected Im2colArgs, got {type(args).__name__}")
    validate(args)
    v = _encode_common(args, im2col=True)
    v = _put(v, 440, 8, args.channels_per_pixel - 1)
    bits = _CORNER_BITS[args.rank]
    mask = (1 << bits) - 1
    for i, (l, u) in enumerate(zip(args.pixel_box_lower_corner, args.pixel_box_upper_corner)):
        v = _put(v, 448 + bits * i, bits, l & mask)     # two's complement
        v = _put(v, 464 + bits * i, bits, u & mask)
    v = _put(v, 480, 10, args.pixels_per_column - 1)
    return v.to_bytes(DESCRIPTOR_BYTES, "little")


def encode(args: TensorMapArgs) -> bytes:
    """Dispatches to :func:`encode_tiled` or :func:`encode_im2col`."""
    if isinstance(args, TiledArgs):
        return encode_tiled(args)
    if isinstance(args, Im2colArgs):
        return encode_im2col(args)
    raise TypeError(f"expected TiledArgs or Im2colArgs, got {type(args).__name__}")


def global_address_offset() -> int:
    """Byte offset of the global-address field: qword 0 (bytes 0..7), nothing else in it.

    A kernel can therefore store the compile-time descriptor with qword 0 replaced by the
    (16-byte aligned) buffer address; no masking of neighbouring fields is needed.
    """
    return GLOBAL_ADDRESS_OFFSET


def patch_global_address(descriptor: bytes, address: int,
                         interleave: int = Interleave.NONE) -> bytes:
    """``descriptor`` with qword 0 set to ``address`` (what the kernel prologue does)."""
    if len(descriptor) != DESCRIPTOR_BYTES:
        raise TensorMapError(f"descriptor must be {DESCRIPTOR_BYTES} bytes, got {len(descriptor)}")
    address = _as_int("address", address)
    align = 32 if interleave == Interleave.B32 else 16
    if not 0 <= address < _ADDRESS_LIMIT or address % align:
        raise TensorMapError(f"address {address:#x} must be {align}-byte aligned and < 2^57")
    off = GLOBAL_ADDRESS_OFFSET
    return bytes(descriptor[:off]) + address.to_bytes(8, "little") + bytes(descriptor[off + 8:])


def global_dim_field(i: int) -> Tuple[int, int]:
    """(qword, bit shift) of the 32-bit field holding global_dim[i] - 1: a kernel patches it
    when that size is known only at run time (a dynamic batch)."""
    lo = 256 + 32 * i
    return lo // 64, lo % 64


def descriptor_qwords(descriptor: bytes) -> Tuple[int, ...]:
    """The descriptor as 16 little-endian u64 words, e.g. for ``st.global.u64`` immediates."""
    if len(descriptor) != DESCRIPTOR_BYTES:
        raise TensorMapError(f"descriptor must be {DESCRIPTOR_BYTES} bytes, got {len(descriptor)}")
    return tuple(int.from_bytes(descriptor[i:i + 8], "little")
                 for i in range(0, DESCRIPTOR_BYTES, 8))


def nhwc_im2col_args(*, n: int, h: int, w: int, c: int, data_type: int,
                     filter_hw: Tuple[int, int], padding: Tuple[Tuple[int, int], Tuple[int, int]],
                     channels_per_pixel: int, pixels_per_column: int,
                     stride_hw: Tuple[int, int] = (1, 1), dilation_hw: Tuple[int, int] = (1, 1),
                     swizzle: int = Swizzle.NONE, l2_promotion: int = L2Promotion.NONE,
                     oob_fill: int = OobFill.NONE, global_address: int = 0) -> Im2colArgs:
    """Im2col arguments for a dense NHWC activation tensor feeding an (R, S) convolution.

    ``padding`` is ((pad_h_lo, pad_h_hi), (pad_w_lo, pad_w_hi)).  Conventions checked against
    a CPU im2col reference: dims {C, W, H, N}; corners ordered (W, H) with
    lower = -pad_lo and upper = pad_hi - (filter - 1) * dilation; element strides
    {1, stride_w, stride_h, 1}.  Load coordinates are then those of the tile's first output
    pixel, {c0, wo * stride_w - pad_w_lo, ho * stride_h - pad_h_lo, n}.
    """
    esz = ELEMENT_SIZE[DataType(data_type)]
    (r_, s_), ((ph_lo, ph_hi), (pw_lo, pw_hi)) = filter_hw, padding
    (sh, sw_), (dh, dw) = stride_hw, dilation_hw
    return Im2colArgs(
        data_type=data_type, global_dim=(c, w, h, n),
        global_strides=(c * esz, w * c * esz, h * w * c * esz),
        pixel_box_lower_corner=(-pw_lo, -ph_lo),
        pixel_box_upper_corner=(pw_hi - (s_ - 1) * dw, ph_hi - (r_ - 1) * dh),
        channels_per_pixel=channels_per_pixel, pixels_per_column=pixels_per_column,
        element_strides=(1, sw_, sh, 1), swizzle=swizzle, l2_promotion=l2_promotion,
        oob_fill=oob_fill, global_address=global_address)
