"""A conv's sizes as its kernel sees them: compile-time ints, or index values read at run time.

A dispatch whose batch or image sizes are dynamic passes them as push-constant words (the
problem's batch_constant, h_constant, w_constant; the splice passes every index operand of the
dispatch as one word, and the same values are the workload the count region receives). The
output's Ho and Wo follow from H and W by the conv's window, exactly as the model computes them,
so the kernel derives them instead of trusting the order of IREE's output words. Static sizes stay
Python ints and fold, so a static problem builds the same IR as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...problem import ConvProblem
from .emit import Emitter


def _mul(e: Emitter, a, b):
    return a * b if isinstance(a, int) and isinstance(b, int) else e.mul(a, b)


def _out_size(e: Emitter, size, pad: int, window: int, stride: int):
    """(size + pad - window) // stride + 1, and 0 for an input smaller than the window."""
    if isinstance(size, int):
        return max(0, (size + pad - window) // stride + 1)
    span = e.add(size, pad - window + stride)         # (size + pad - window + stride) // stride
    return e.select(e.cmp("slt", span, stride), 0, e.div(span, stride))


@dataclass(frozen=True)
class Extents:
    N: object       # images (int or index value)
    H: object
    W: object
    Ho: object
    Wo: object
    howo: object    # output pixels per image
    rows: object    # N * Ho * Wo: the implicit GEMM's M


def extents(e: Emitter, p: ConvProblem, words=None) -> Extents:
    """The sizes of p; `words`: the dispatch's push-constant words (or workload) as index
    values, needed when p has runtime sizes. A GEMM-form 1x1 conv's runtime rows are its batch."""
    def word(k: int, static: int):
        if k < 0:
            return static
        if words is None:
            raise ValueError(f"{p.name}: runtime sizes need the dispatch's words")
        return words[k]

    N, H, W = word(p.batch_constant, p.N), word(p.h_constant, p.H), word(p.w_constant, p.W)
    eff_r = p.dilation[0] * (p.R - 1) + 1
    eff_s = p.dilation[1] * (p.S - 1) + 1
    Ho = p.Ho if isinstance(H, int) else _out_size(e, H, p.pad[0] + p.pad[2], eff_r, p.stride[0])
    Wo = p.Wo if isinstance(W, int) else _out_size(e, W, p.pad[1] + p.pad[3], eff_s, p.stride[1])
    howo = _mul(e, Ho, Wo)
    return Extents(N, H, W, Ho, Wo, howo, _mul(e, N, howo))
