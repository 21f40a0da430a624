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

from typing import Tuple

from .tensormap_args import (_ADDRESS_LIMIT, _CORNER_BITS, _as_int, _DIM_LIMIT, _FLOAT_TYPES, _HW_TYPE,
                             _STRIDE_LIMIT, _SWIZZLE_SPAN, _SWIZZLE_TAG, DESCRIPTOR_BYTES, ELEMENT_SIZE,
                             GLOBAL_ADDRESS_OFFSET, MAX_BOX_BYTES, DataType, Im2colArgs, Interleave,
                             L2Promotion, OobFill, Swizzle, TensorMapArgs, TensorMapError, TiledArgs)

__all__ = [
    "DESCRIPTOR_BYTES", "GLOBAL_ADDRESS_OFFSET", "MAX_BOX_BYTES",
    "TensorMapError", "DataType", "Interleave", "Swizzle", "L2Promotion", "OobFill",
    "ELEMENT_SIZE", "TiledArgs", "Im2colArgs",
    "validate", "encode", "encode_tiled", "encode_im2col",
    "global_address_offset", "patch_global_address", "descriptor_qwords",
    "nhwc_im2col_args",
]


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


def global_stride_field(i: int) -> Tuple[int, int]:
    """(qword, bit shift) of the 32-bit field holding the low bits of global_strides[i] >> 4
    (the top 4 of its 36 sit in another field): a kernel patches it when the stride is known
    only at run time (runtime image sizes)."""
    lo = 96 + 32 * i
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
                     oob_fill: int = OobFill.NONE, global_address: int = 0, pitch_c: int = 0) -> Im2colArgs:
    """Im2col arguments for a dense NHWC activation tensor feeding an (R, S) convolution.

    ``padding`` is ((pad_h_lo, pad_h_hi), (pad_w_lo, pad_w_hi)).  Conventions checked against
    a CPU im2col reference: dims {C, W, H, N}; corners ordered (W, H) with
    lower = -pad_lo and upper = pad_hi - (filter - 1) * dilation; element strides
    {1, stride_w, stride_h, 1}.  Load coordinates are then those of the tile's first output
    pixel, {c0, wo * stride_w - pad_w_lo, ho * stride_h - pad_h_lo, n}. ``pitch_c``: the
    channels between pixels when the activation is a channel slice of a wider tensor (the
    slice's first channel is then the global address).
    """
    esz = ELEMENT_SIZE[DataType(data_type)]
    (r_, s_), ((ph_lo, ph_hi), (pw_lo, pw_hi)) = filter_hw, padding
    (sh, sw_), (dh, dw) = stride_hw, dilation_hw
    pitch = pitch_c or c          # a channel slice of a wider tensor: its pixels pitch_c apart
    return Im2colArgs(
        data_type=data_type, global_dim=(c, w, h, n),
        global_strides=(pitch * esz, w * pitch * esz, h * w * pitch * esz),
        pixel_box_lower_corner=(-pw_lo, -ph_lo),
        pixel_box_upper_corner=(pw_hi - (s_ - 1) * dw, ph_hi - (r_ - 1) * dh),
        channels_per_pixel=channels_per_pixel, pixels_per_column=pixels_per_column,
        element_strides=(1, sw_, sh, 1), swizzle=swizzle, l2_promotion=l2_promotion,
        oob_fill=oob_fill, global_address=global_address)
