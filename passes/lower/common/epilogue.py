"""Fused epilogue: applies a problem's EpilogueSteps to accumulator vectors and stores them.

Shared by every kernel: given f32 accumulators for `width` consecutive output channels of one
output row, it loads bias/residual slices, applies add/mul/relu/casts in the order matched,
and stores to the output in its element type.
"""

from __future__ import annotations

from ...ir import ir, arith_d, vector_d
from ...problem import ConvProblem, DTYPE_BYTES
from .emit import Emitter, convert, vec_type, zeros


def _align(width: int, dtype: str, aligned: bool) -> int:
    return min(16, width * DTYPE_BYTES[dtype]) if aligned else DTYPE_BYTES[dtype]


def apply_and_store(e: Emitter, p: ConvProblem, memrefs: list, acc: ir.Value, width: int,
                    m: ir.Value, f: ir.Value, aligned: bool) -> None:
    """acc: vector<width x f32> for output row m, channels f .. f+width-1 (all in bounds).

    aligned: f is a multiple of `width` and F is too, so slices may use wide alignment.
    """
    out_index = e.add(e.mul(m, p.F), f)
    val = acc
    cur = p.acc_dtype
    for step in p.epilogue:
        if step.op in ("add", "mul"):
            src = memrefs[step.operand]
            idx = f if step.broadcast == "channel" else out_index
            x = vector_d.load(vec_type(width, step.dtype), src, [idx],
                              alignment=_align(width, step.dtype, aligned))
            x = convert(x, vec_type(width, cur))
            val = arith_d.addf(val, x) if step.op == "add" else arith_d.mulf(val, x)
        elif step.op == "max0":
            val = arith_d.maximumf(val, zeros(vec_type(width, cur)))
        elif step.op == "cast":
            val = convert(val, vec_type(width, step.dtype))
            cur = step.dtype
    val = convert(val, vec_type(width, p.out_dtype))
    vector_d.store(val, memrefs[p.num_operands], [out_index],
                   alignment=_align(width, p.out_dtype, aligned))
