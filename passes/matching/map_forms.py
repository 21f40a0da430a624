"""Elementwise maps: a dispatch that is one elementwise generic over a channels-last activation.

IREE leaves some elementwise work between convs in dispatches of its own. The squeeze-excitation
scale of EfficientNet and MobileNetV3 is the measured case: `x * sigmoid(s + b)` over the
[N, H*W, C] activation x with s the [N, C] output of the excitation FC and b its [C] bias, whose
IREE codegen took 50-70 us per block at batch 32 on an H100 (58 MB moved: ~20 us at bandwidth).
Such a dispatch is the direct kernel's 1x1 sum window (the identity, ConvProblem.is_map) over x
followed by its epilogue: the generic's body, reading operands shaped like the output ("full"),
per channel ("channel") or per image and channel ("image"), and float constants.

The activation is the first operand the generic reads unbroadcast from a dispatch input, in a
type convc kernels read; a dispatch without one (a transpose, a broadcast of a smaller tensor)
is not a map and stays IREE's without a decline.
"""

from __future__ import annotations

from ..ir import ir
from ..problem import INPUT_DTYPES
from .ir_reading import Decline, linear_terms, owner_op

# ranks of the activations maps are taken over: [N, P, C] (IREE collapses H and W), [N, H, W, C],
# and [P, C] (batch 1: IREE drops the unit batch; or a dynamic number of rows)
MAP_RANKS = (2, 3, 4)


def _identity(m, rank: int) -> bool:
    try:
        return [linear_terms(e) for e in m.results] == [{i: 1} for i in range(rank)]
    except Decline:
        return False


def map_root(func):
    """(generic, index of its activation operand) of a map dispatch, or None: the function's one
    linalg op is an all-parallel generic with one result written in loop order, of rank 2 to 4,
    reading an operand loaded whole from a dispatch input in loop order."""
    ops = [o.operation for o in func.regions[0].blocks[0].operations]
    linalg = [o for o in ops if o.name.startswith("linalg.")]
    if len(linalg) != 1 or linalg[0].name != "linalg.generic":
        return None
    gen = linalg[0]
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
            return gen, i
    return None
