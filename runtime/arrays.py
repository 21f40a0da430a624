"""numpy helpers for convc's element types (bf16 has no numpy dtype: it travels as uint16)."""

from __future__ import annotations

import hashlib

import numpy as np


def to_f32(a: np.ndarray, dtype: str) -> np.ndarray:
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
    return {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "i8": np.int8, "i32": np.int32}[dtype]


def poison(shape, dtype: str) -> np.ndarray:
    """NaN in the element type: any element a kernel fails to write stays NaN. Integers have
    no NaN: i32 outputs (raw accumulators) get INT32_MIN, which no checked sum reaches, i8
    outputs -128, which a requantized output reaches only when clamped."""
    if dtype in ("i8", "i32"):
        return np.full(shape, np.iinfo(storage_dtype(dtype)).min, storage_dtype(dtype))
    return from_f32(np.full(shape, np.nan, np.float32), dtype)


def random_input(rng: np.random.Generator, shape, dtype: str, scale: float = 1.0) -> np.ndarray:
    """Uniform in [-scale, scale]; i8: uniform over its whole range."""
    if dtype == "i8":
        return rng.integers(-128, 128, size=shape, dtype=np.int8)
    return from_f32(rng.uniform(-scale, scale, size=shape).astype(np.float32), dtype)


def layer_arguments(layer, rng: np.random.Generator):
    """A layer's call: its inputs as (array, element type) pairs, random, and its output storage
    as a NaN-poisoned (array, element type)."""
    inputs = [(random_input(rng, s, t), t) for s, t in layer.input_shapes()]
    return inputs, (poison(layer.output_shape(), layer.out_dtype), layer.out_dtype)


def digest(a: np.ndarray) -> str:
    """A short hash of an array's bytes (bitwise comparison of results)."""
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]
