"""Carrying the zero-filter channels of a padded conv (convc-pad-channels) on to the next conv.

A conv whose F was rounded up (passes/layout/channel_pad.py) computes extra channels of zeros.
Where its result reaches another conv through elementwise ops, reshapes that keep the channel
axis, barriers and spatial pads, the slice back to F moves down instead (sink_slice): each op is
rebuilt on the wide tensor (an elementwise op's per-channel operands widened with ones, so the
extra channels stay finite whatever the op), and the next conv's filter gets zero input
channels for them. The epilogue then stays in the padded conv's dispatch and the next conv
reads a whole number of vectors. reaches_conv is the same walk without rewriting, so the pass
can choose the width (a multiple of CONV_INPUT_MULTIPLE) before padding.

Also here: the widening helpers both share (a tensor inserted into a zero or constant tensor).
"""

from __future__ import annotations

from iree.compiler.dialects import arith as arith_d, linalg as linalg_d, tensor as tensor_d

from ..ir import ir
from .builders import barrier, mixed_sizes, owner, pad, regenerate, user_op, zero


def split_sizes(sizes: list) -> tuple[list[int], list[ir.Value]]:
    """Mixed sizes (ints and values) as slice ops take them: static sizes with dynamic ones
    marked, and the dynamic values."""
    dyn = ir.ShapedType.get_dynamic_size()
    return ([s if isinstance(s, int) else dyn for s in sizes], [s for s in sizes if not isinstance(s, int)])


def zeros(v: ir.Value, dim: int, new: int, value: ir.Value | None = None) -> ir.Value:
    """A tensor shaped like v but `new` long along `dim`, filled with `value` (default zero)."""
    et = ir.RankedTensorType(v.type).element_type
    empty = tensor_d.EmptyOp(mixed_sizes(v, {dim: new}), et).result
    return linalg_d.fill(value if value is not None else zero(et), outs=[empty])


def widen(v: ir.Value, dim: int, new: int) -> ir.Value:
    """v inserted at offset 0 into a zero tensor `new` long along `dim`."""
    rank = ir.RankedTensorType(v.type).rank
    dest = zeros(v, dim, new)
    static, dynamic = split_sizes(mixed_sizes(v))
    return tensor_d.InsertSliceOp(v, dest, [], dynamic, [], [0] * rank, static, [1] * rank).result


def _channel_slice(op):
    """(wide source, narrow width) of a static slice of the leading channels of the last
    axis (everything else whole), else None."""
    if op is None or op.name != "tensor.extract_slice" or len(op.operands) != 1:
        return None
    src, out = ir.RankedTensorType(op.operands[0].type), ir.RankedTensorType(op.results[0].type)
    if not (src.has_static_shape and out.has_static_shape and src.rank == out.rank) or \
            list(out.shape[:-1]) != list(src.shape[:-1]) or \
            [int(x) for x in ir.DenseI64ArrayAttr(op.attributes["static_offsets"])] != [0] * src.rank or \
            [int(x) for x in ir.DenseI64ArrayAttr(op.attributes["static_strides"])] != [1] * src.rank:
        return None
    return op.operands[0], out.shape[-1]


# dense channels-last convs: the filter's C dimension
FILTER_C_DIM = {"linalg.conv_2d_nhwc_fhwc": 3, "linalg.conv_2d_nhwc_hwcf": 2}
# channels a conv input is padded to where a padded conv's channels reach another conv: 64
# bytes of 16-bit values, the narrowest K step of the TMA kernels with several taps
# (passes/lower/nvidia/tma_loader.k_tile_channels), 128 of f32
CONV_INPUT_MULTIPLE = 32


def carry(user, number: int, narrow: ir.Value):
    """How `user`, reading narrow (the leading channels of a wider tensor) as operand `number`,
    can carry the extra channels: "generic" (elementwise; per-channel operands widened),
    "reshape" (the channel axis a group of its own), "barrier", "pad" (no channel padding),
    "conv" (a dense conv's input: zero filter channels for them), or None (the slice stays)."""
    name = user.name
    if name == "linalg.generic" and number < len(user.operands) - 1:
        return "generic" if _elementwise_ok(user, narrow) else None
    if name in ("tensor.expand_shape", "tensor.collapse_shape"):
        groups = [[int(i) for i in ir.ArrayAttr(g)] for g in ir.ArrayAttr(user.attributes["reassociation"])]
        ok = len(groups[-1]) == 1 and ir.RankedTensorType(user.results[0].type).has_static_shape
        return "reshape" if ok else None
    if name == "util.optimization_barrier" and len(user.operands) == 1:
        return "barrier"
    if name == "tensor.pad" and len(user.operands) == 1:
        low = [int(v) for v in user.attributes["static_low"]]
        high = [int(v) for v in user.attributes["static_high"]]
        body = [o.operation for o in user.regions[0].blocks[0].operations]
        ok = not low[-1] and not high[-1] and len(body) == 1 and not isinstance(body[0].operands[0].owner, ir.Block)
        return "pad" if ok else None
    if name in FILTER_C_DIM and number == 0 and ir.RankedTensorType(user.operands[1].type).has_static_shape:
        return "conv"
    return None


def _operand_role(v: ir.Value, m: ir.AffineMap, narrow: ir.Value, f: int) -> str | None:
    """How an elementwise op's input meets the wider channels: "narrow" (the slice itself),
    "slice" (another slice of f leading channels, read whole), "same" (constant along the
    channels), "channel" (one f-long axis indexed by the channel: widened with ones), else None."""
    rank = m.n_dims
    last = ir.AffineDimExpr.get(rank - 1)
    results = list(m.results)
    sl = _channel_slice(owner(v))
    if v == narrow:
        return "narrow"
    if sl is not None and sl[1] == f and m == ir.AffineMap.get_identity(rank):
        return "slice"
    if last not in results:
        return "same"
    t = ir.RankedTensorType(v.type)
    if results.count(last) == 1 and t.has_static_shape and t.shape[results.index(last)] == f:
        return "channel"
    return None


def _elementwise_ok(gen, narrow: ir.Value) -> bool:
    if len(gen.results) != 1 or any("parallel" not in str(a) for a in gen.attributes["iterator_types"]):
        return False
    maps = [ir.AffineMapAttr(a).value for a in gen.attributes["indexing_maps"]]
    n_in = len(gen.operands) - 1
    f = ir.RankedTensorType(narrow.type).shape[-1]
    block = gen.regions[0].blocks[0]
    return (maps[-1] == ir.AffineMap.get_identity(maps[-1].n_dims)
            and not any(o.operation.name == "linalg.index" for o in block.operations)
            and not list(block.arguments[n_in].uses)
            and all(_operand_role(v, m, narrow, f) is not None for v, m in zip(list(gen.operands)[:n_in], maps)))


def _users(v: ir.Value) -> list:
    """(op, first operand number) of each op using v, once per op."""
    out = []
    for use in v.uses:
        if not any(user_op(use) == u for u, _ in out):
            out.append((user_op(use), use.operand_number))
    return out


def reaches_conv(narrow: ir.Value, depth: int = 16) -> bool:
    """Whether the leading-channel slice `narrow` can be carried (as sink_slice would) into a
    conv's input."""
    for user, number in _users(narrow):
        kind = carry(user, number, narrow)
        if kind == "conv" or (kind is not None and depth and reaches_conv(user.results[0], depth - 1)):
            return True
    return False


def _narrow(wide: ir.Value, f: int):
    """The leading f channels of wide (last axis), a static slice."""
    t = ir.RankedTensorType(wide.type)
    shape = list(t.shape[:-1]) + [f]
    return tensor_d.ExtractSliceOp(ir.RankedTensorType.get(shape, t.element_type), wide, [], [], [],
                                   [0] * t.rank, shape, [1] * t.rank)


def _wide_type(v: ir.Value, width: int) -> ir.RankedTensorType:
    t = ir.RankedTensorType(v.type)
    return ir.RankedTensorType.get(list(t.shape[:-1]) + [width], t.element_type)


def _oneswiden(v: ir.Value, dim: int, new: int) -> ir.Value:
    """v inserted at offset 0 into a tensor of ones `new` long along `dim` (the values the
    extra channels meet in elementwise ops: finite whatever the op; a constant expression for
    constant v)."""
    et = ir.RankedTensorType(v.type).element_type
    one = ir.FloatAttr.get(et, 1.0) if isinstance(et, ir.FloatType) else ir.IntegerAttr.get(et, 1)
    dest = zeros(v, dim, new, arith_d.constant(et, one))
    t = ir.RankedTensorType(v.type)
    return tensor_d.InsertSliceOp(v, dest, [], [], [], [0] * t.rank, list(t.shape), [1] * t.rank).result


def widen_filter(w: ir.Value, dim: int, new: int) -> ir.Value:
    """The filter with zero input channels added; widened before its barrier (convc-channels-
    last's), so that a constant filter stays a constant expression."""
    op = owner(w)
    if op is not None and op.name == "util.optimization_barrier" and len(op.operands) == 1:
        return barrier(widen(op.operands[0], dim, new))
    return widen(w, dim, new)


def rebuild(user, kind: str, wide: ir.Value, narrow: ir.Value):
    """user rebuilt on the wide tensor (its result, wide too); for a conv, the conv reading it."""
    width = ir.RankedTensorType(wide.type).shape[-1]
    if kind == "conv":
        user.operands[1] = widen_filter(user.operands[1], FILTER_C_DIM[user.name], width)
        user.operands[0] = wide
        return None
    if kind == "reshape":
        t = _wide_type(user.results[0], width)
        if user.name == "tensor.collapse_shape":
            return tensor_d.CollapseShapeOp(t, wide, user.attributes["reassociation"]).result
        return tensor_d.ExpandShapeOp(t, wide, user.attributes["reassociation"], [], list(t.shape)).result
    if kind == "barrier":
        return barrier(wide)
    if kind == "pad":
        low = [int(v) for v in user.attributes["static_low"]]
        high = [int(v) for v in user.attributes["static_high"]]
        return pad(wide, low, high, [o.operation for o in user.regions[0].blocks[0].operations][0].operands[0])
    # an elementwise generic
    n_in = len(user.operands) - 1
    maps = [ir.AffineMapAttr(a).value for a in user.attributes["indexing_maps"]]
    f = ir.RankedTensorType(narrow.type).shape[-1]
    ins = []
    for v, m in zip(list(user.operands)[:n_in], maps):
        role = _operand_role(v, m, narrow, f)
        if role == "narrow":
            ins.append(wide)
        elif role == "slice":
            src = _channel_slice(owner(v))[0]
            ins.append(src if ir.RankedTensorType(src.type).shape[-1] == width else
                       widen(v, ir.RankedTensorType(v.type).rank - 1, width))
        elif role == "same":
            ins.append(v)
        else:
            ins.append(_oneswiden(v, list(m.results).index(ir.AffineDimExpr.get(m.n_dims - 1)), width))
    out_t = _wide_type(user.results[0], width)
    return regenerate(user, ins, tensor_d.EmptyOp(list(out_t.shape), out_t.element_type).result)


def sink_slice(sl) -> None:
    """Moves the channel slice `sl` of a padded conv's result down through the users that can
    carry the extra channels (module docstring), as far as they go; where they stop, a slice
    of the same channels stands again."""
    work = [sl]
    while work:
        s = work.pop()
        wide, narrow = s.operands[0], s.results[0]
        for user, number in _users(narrow):
            kind = carry(user, number, narrow)
            if kind is None:
                continue
            with ir.InsertionPoint(user), user.location:
                got = rebuild(user, kind, wide, narrow)
            if got is None:
                continue
            with ir.InsertionPoint(user), user.location:
                new_slice = _narrow(got, ir.RankedTensorType(user.results[0].type).shape[-1])
            user.results[0].replace_all_uses_with(new_slice.result)
            user.erase()
            work.append(new_slice.operation)
        if not list(narrow.uses):
            s.erase()
