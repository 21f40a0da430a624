"""Elementwise maps: a dispatch that is one elementwise generic over a channels-last activation.

IREE leaves some elementwise work between convs in dispatches of its own. The squeeze-excitation
scale of EfficientNet and MobileNetV3 is the measured case: `x * sigmoid(s + b)` over the
[N, H*W, C] activation x with s the [N, C] output of the excitation FC and b its [C] bias, whose
IREE codegen took 50-70 us per block at batch 32 on an H100 (58 MB moved: ~20 us at bandwidth).
Such a dispatch is the direct kernel's 1x1 sum window (the identity, ConvProblem.is_map) over x
followed by its epilogue: the generic's body, reading operands shaped like the output ("full"),
per channel ("channel") or per image and channel ("image"), and float constants.

A map whose operands are all shaped like the output comes collapsed to one axis of L elements; it
is taken as L / C pixels of C channels (the widest power of two up to 256 dividing L): every
operand is read at the same linear offset whatever C is.

The activation is the first operand the generic reads unbroadcast from a dispatch input, in a
type convc kernels read; a dispatch without one (a transpose, a broadcast of a smaller tensor)
is not a map and stays IREE's without a decline.

Before the generic a dispatch may reduce that same activation over each row's channels into a
fill (a channels-last LayerNorm's mean, or the mean square of the centred values, which IREE
keeps in the dispatch of the map that reads it): the map then reads the reduction per row
("row"; ConvProblem.row_reduce), and the row kernel computes it from the registers it holds.
"""

from __future__ import annotations

from ..ir import ir
from ..problem import INPUT_DTYPES
from .ir_reading import Decline, linear_terms, owner_op
from .pool_forms import COMBINES, combine_op

# ranks of the activations maps are taken over: [N, P, C] (IREE collapses H and W), [N, H, W, C],
# [P, C] (batch 1: IREE drops the unit batch; or a dynamic number of rows), and [L] (a map without
# broadcast operands, whose dims IREE collapses all: a SiLU of a tensor that also feeds a residual)
MAP_RANKS = (1, 2, 3, 4)


def _identity(m, rank: int) -> bool:
    try:
        return [linear_terms(e) for e in m.results] == [{i: 1} for i in range(rank)]
    except Decline:
        return False


def row_reduction(op) -> str | None:
    """The combine ("sum" / "max") of a generic reducing its one input's last axis into the
    leading ones, read in loop order (a LayerNorm's mean and variance), else None."""
    if op.name != "linalg.generic" or len(op.results) != 1 or len(op.operands) != 2:
        return None
    iters = ["r" if "reduction" in str(a) else "p" for a in op.attributes["iterator_types"]]
    rank = len(iters)
    if rank < 2 or iters != ["p"] * (rank - 1) + ["r"]:
        return None
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    try:
        out = [linear_terms(e) for e in maps[1].results]
    except Decline:
        return None
    if not _identity(maps[0], rank) or out != [{i: 1} for i in range(rank - 1)]:
        return None
    comb = combine_op(op)
    return COMBINES[comb.name] if comb is not None else None


def map_root(func):
    """(generic, index of its activation operand, its row reduction or None) of a map
    dispatch, or None: the function's last linalg op is an all-parallel generic with one
    result written in loop order, of rank 2 to 4, reading an operand loaded whole from a
    dispatch input in loop order; before it at most a row reduction (row_reduction) of that
    same operand into a fill."""
    ops = [o.operation for o in func.regions[0].blocks[0].operations]
    linalg = [o for o in ops if o.name.startswith("linalg.")]
    if not linalg or linalg[-1].name != "linalg.generic":
        return None
    gen = linalg[-1]
    row = None
    if len(linalg) == 3 and linalg[0].name == "linalg.fill" and row_reduction(linalg[1]):
        row = linalg[1]
    elif len(linalg) != 1:
        return None
    if len(gen.results) != 1 or any("parallel" not in str(a) for a in gen.attributes["iterator_types"]):
        return None
    maps = [ir.AffineMapAttr(a).value for a in gen.attributes["indexing_maps"]]
    rank = maps[-1].n_dims
    if rank not in MAP_RANKS or not _identity(maps[-1], rank):
        return None
    ins = list(gen.operands)[: len(gen.operands) - 1]
    for i, v in enumerate(ins):
        src = owner_op(v)
        if (_identity(maps[i], rank) and src is not None and src.name == "iree_tensor_ext.dispatch.tensor.load"
                and str(ir.ShapedType(v.type).element_type) in INPUT_DTYPES):
            if row is not None and (row.operands[0] != v or ir.ShapedType(row.operands[0].type).rank != rank):
                return None
            return gen, i, row
    return None
