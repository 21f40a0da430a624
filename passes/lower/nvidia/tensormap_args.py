"""CUtensorMap arguments: the driver's enums and limits, and the argument records that
tensormap.py validates and encodes (dimensions innermost first, ``global_strides[i]`` the byte
stride of dimension ``i + 1``, enums with the driver's values)."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from enum import IntEnum
from typing import Optional, Sequence, Tuple, Union


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
