"""A channel shuffle of a concatenation, split or whole, assembled from the concatenated pieces.

ShuffleNetV2 ends every block with concat(a, b) followed by a channel shuffle (view as [N, G,
C/G, H, W], swap G and C/G, view back) and starts the next with a split of the channels in
halves. Channels-last, convc-channels-last leaves the shuffle as an [N, H, W, G, C/G] ->
[N, H, W, C/G, G] transpose of the concatenation and the split as channel slices of it: IREE
made that a copy dispatch per piece, a transpose dispatch per shuffle and, for the split it
could not sink, two more transposes to NCHW and back (ShuffleNetV2 b32 on an H200: ~0.7 ms of
its 1.48 ms of kernels, results/e2e/h200_zoo_latest.json).

Channel G*k + g of the shuffle is channel k of piece g, so the slice of channels
[G*k0, G*(k0 + K)) is the interleave of every piece's channels [k0, k0 + K): an [N, H, W, K, G]
tensor with piece g's slice inserted at [..., g], collapsed. Each slice the model takes (and
the whole shuffle where it is used whole) becomes such an interleave, which IREE writes as one
copy per piece and convc-copy-chains runs as one dispatch of the copy kernel; the
concatenation and the transpose go away.
"""

from __future__ import annotations

from iree.compiler.dialects import tensor as tensor_d

from ..ir import ir, walk_ops
from .builders import extract, insert, owner, reshape, user_op, users, value_of
from .transpose_sinking import SHUFFLE_NHWC, is_transpose


def _ints(attr) -> list[int]:
    return list(ir.DenseI64ArrayAttr(attr))


def _shuffled_pieces(expand):
    """(pieces, collapse) of an NHWC channel shuffle of a concatenation of G pieces of C/G
    channels each, else None."""
    if expand.name != "tensor.expand_shape" or ir.RankedTensorType(expand.results[0].type).rank != 5:
        return None
    if [[int(i) for i in ir.ArrayAttr(g)] for g in ir.ArrayAttr(expand.attributes["reassociation"])] != [[0], [1], [2], [3, 4]]:
        return None
    cat = owner(expand.operands[0])
    if cat is None or cat.name != "tensor.concat" or ir.IntegerAttr(cat.attributes["dim"]).value != 3:
        return None
    g, cg = ir.RankedTensorType(expand.results[0].type).shape[3:5]
    pieces = list(cat.operands)
    if len(pieces) != g or any(ir.RankedTensorType(p.type).shape[3] != cg for p in pieces):
        return None
    found = users(expand)
    if len(found) != 1 or not is_transpose(found[0], SHUFFLE_NHWC):
        return None
    after = users(found[0])
    if len(after) != 1 or after[0].name != "tensor.collapse_shape" or after[0].results[0].type != expand.operands[0].type:
        return None
    return pieces, after[0]


def _channel_slice(op, groups: int):
    """(k0, K) of a static unit-stride slice of channels [G*k0, G*(k0 + K)) of an NHWC tensor,
    whole along N, H and W, else None."""
    if op.name != "tensor.extract_slice" or len(op.operands) != 1:
        return None
    src = ir.RankedTensorType(op.operands[0].type)
    off, size = _ints(op.attributes["static_offsets"]), _ints(op.attributes["static_sizes"])
    if (ir.RankedTensorType(op.results[0].type).rank != 4 or _ints(op.attributes["static_strides"]) != [1] * 4
            or off[:3] != [0, 0, 0] or size[:3] != list(src.shape[:3]) or off[3] % groups or size[3] % groups):
        return None
    return off[3] // groups, size[3] // groups


def _interleave(pieces: list, k0: int, k: int) -> ir.Value:
    """Channels [k0, k0 + k) of every piece interleaved: [N, H, W, k * G]."""
    t = ir.RankedTensorType(pieces[0].type)
    n, h, w, cg = t.shape
    g = len(pieces)
    out = value_of(tensor_d.EmptyOp([n, h, w, k, g], t.element_type))
    for i, p in enumerate(pieces):
        src = p if (k0, k) == (0, cg) else extract(p, [0, 0, 0, k0], [n, h, w, k], [1] * 4)
        out = insert(src, out, [0, 0, 0, 0, i], [n, h, w, k, 1], [1] * 5)
    return reshape(out, [n, h, w, k * g], [[0], [1], [2], [3, 4]])


def assemble_shuffles(func) -> None:
    """Every NHWC channel shuffle of a concatenation (and its channel slices) rebuilt as
    interleaves of the pieces (module docstring)."""
    for expand in [op for op in walk_ops(func) if op.name == "tensor.expand_shape"]:
        found = _shuffled_pieces(expand)
        if found is None:
            continue
        pieces, collapse = found
        groups, cg = len(pieces), ir.RankedTensorType(pieces[0].type).shape[3]
        for use in list(collapse.results[0].uses):
            user = user_op(use)
            sl = _channel_slice(user, groups)
            if sl is not None:
                with ir.InsertionPoint(user), user.location:
                    v = _interleave(pieces, *sl)
                user.results[0].replace_all_uses_with(v)
                user.erase()
        if list(collapse.results[0].uses):
            with ir.InsertionPoint(collapse), collapse.location:
                collapse.results[0].replace_all_uses_with(_interleave(pieces, 0, cg))
