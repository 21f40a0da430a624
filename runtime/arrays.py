"""numpy helpers for convc's element types (bf16 has no numpy dtype: it travels as uint16; the
OCP fp8 types f8E4M3FN and f8E5M2 travel as their bit patterns in uint8)."""

from __future__ import annotations

import functools
import hashlib

import numpy as np

FP8 = ("f8E4M3FN", "f8E5M2")


@functools.cache
def fp8_values(dtype: str) -> np.ndarray:
    """The float64 value of each of the 256 bit patterns of an OCP fp8 type: "f8E4M3FN" (bias 7,
    3 mantissa bits, no infinities, S.1111.111 NaN) or "f8E5M2" (bias 15, 2 mantissa bits,
    IEEE-style infinities and NaNs)."""
    e_bits, m_bits = {"f8E4M3FN": (4, 3), "f8E5M2": (5, 2)}[dtype]
    bias = (1 << (e_bits - 1)) - 1
    out = np.empty(256)
    for b in range(256):
        sign = -1.0 if b & 0x80 else 1.0
        e = (b >> m_bits) & ((1 << e_bits) - 1)
        m = b & ((1 << m_bits) - 1)
        if dtype == "f8E4M3FN" and e == 15 and m == 7:
            out[b] = np.nan
        elif dtype == "f8E5M2" and e == 31:
            out[b] = sign * np.inf if m == 0 else np.nan
        elif e == 0:
            out[b] = sign * m / (1 << m_bits) * 2.0 ** (1 - bias)
        else:
            out[b] = sign * (1 + m / (1 << m_bits)) * 2.0 ** (e - bias)
    out.flags.writeable = False
    return out


def random_fp8(rng, shape, dtype: str, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(bits as uint8, their float64 values): random finite fp8 values near N(0, scale)."""
    values = fp8_values(dtype)
    finite = np.flatnonzero(np.isfinite(values))
    target = rng.standard_normal(shape) * scale
    # the nearest representable value of each draw
    order = finite[np.argsort(values[finite])]
    idx = np.clip(np.searchsorted(values[order], target), 0, len(order) - 1)
    bits = order[idx].astype(np.uint8)
    return bits, values[bits]


def to_f32(a: np.ndarray, dtype: str) -> np.ndarray:
    if dtype in FP8:            # exact: every fp8 value is an f32
        return fp8_values(dtype)[np.asarray(a).view(np.uint8)].astype(np.float32)
    if dtype == "bf16":
        return (np.asarray(a).view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return np.asarray(a).astype(np.float32)


def from_f32(a: np.ndarray, dtype: str) -> np.ndarray:
    """Rounds f32 to dtype (bf16: round-to-nearest-even, returned as uint16 bits)."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "bf16":
        u = a.view(np.uint32)
        rounded = u + 0x7FFF + ((u >> 16) & 1)
        return (rounded >> 16).astype(np.uint16)
    if dtype == "f16":
        return a.astype(np.float16)
    return a


def storage_dtype(dtype: str):
    return {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "i8": np.int8, "i32": np.int32,
            "f8E4M3FN": np.uint8, "f8E5M2": np.uint8}[dtype]


def poison(shape, dtype: str) -> np.ndarray:
    """NaN in the element type: any element a kernel fails to write stays NaN. Integers have
    no NaN: i32 outputs (raw accumulators) get INT32_MIN, which no checked sum reaches, i8
    outputs -128, which a requantized output reaches only when clamped."""
    if dtype in ("i8", "i32"):
        return np.full(shape, np.iinfo(storage_dtype(dtype)).min, storage_dtype(dtype))
    return from_f32(np.full(shape, np.nan, np.float32), dtype)


def random_input(rng: np.random.Generator, shape, dtype: str, scale: float = 1.0) -> np.ndarray:
    """Uniform in [-scale, scale]; i8: uniform over its whole range; fp8: the nearest fp8 values
    of normal draws of std `scale` (bit patterns)."""
    if dtype == "i8":
        return rng.integers(-128, 128, size=shape, dtype=np.int8)
    if dtype in FP8:
        return random_fp8(rng, shape, dtype, scale)[0]
    return from_f32(rng.uniform(-scale, scale, size=shape).astype(np.float32), dtype)


def layer_arguments(layer, rng: np.random.Generator):
    """A layer's call: its inputs as (array, element type) pairs, random, and its output storage
    as a NaN-poisoned (array, element type)."""
    inputs = [(random_input(rng, s, t), t) for s, t in layer.input_shapes()]
    return inputs, (poison(layer.output_shape(), layer.out_dtype), layer.out_dtype)


def digest(a: np.ndarray) -> str:
    """A short hash of an array's bytes (bitwise comparison of results)."""
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]
