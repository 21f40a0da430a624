"""Sinking the back-transposes (NHWC -> NCHW) through elementwise ops, channel concats and
channel shuffles, so that pairs meet and cancel."""

from __future__ import annotations

from iree.compiler.dialects import arith as arith_d, tensor as tensor_d

from ..ir import ir, walk_ops
from .builders import (LAYOUT_FREE, NCHW_TO_NHWC, NHWC_TO_NCHW, barrier, empty_like, extract_sized, is_transpose,
                       owner, regenerate, reshape, transpose, user_op, users)


# channels first <-> last by rank: NCHW/NHWC, and NCDHW/NDHWC (3-D convs, convc-conv3d)
TO_LAST = {4: NCHW_TO_NHWC, 5: [0, 2, 3, 4, 1]}
TO_FIRST = {4: NHWC_TO_NCHW, 5: [0, 4, 1, 2, 3]}


def to_first(op) -> int | None:
    """The rank of a channels-last -> channels-first transpose, else None."""
    return next((r for r, perm in TO_FIRST.items() if is_transpose(op, perm)), None)


def _elementwise(op, rank: int) -> bool:
    """A linalg.generic that maps rank-`rank` inputs to one output of that rank point by point
    (broadcasts allowed), with a body that does not read the loop indices."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return False
    if any("parallel" not in str(a) for a in op.attributes["iterator_types"]):
        return False
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if maps[-1] != ir.AffineMap.get_identity(rank) or len(maps[-1].results) != rank:
        return False
    body = [o.operation.name for o in op.regions[0].blocks[0].operations]
    return "linalg.index" not in body and all(m.n_dims == rank for m in maps)


# loop dims of a channels-first generic in terms of the channels-last one's: d = (e0, e[r-1],
# e1, ..., e[r-2]) (NCHW: (e0, e3, e1, e2))
def _first_loops_in_last(rank: int) -> ir.AffineMap:
    e = [ir.AffineDimExpr.get(i) for i in range(rank)]
    return ir.AffineMap.get(rank, 0, [e[0], e[rank - 1], *e[1:rank - 1]])


def _constant(e) -> int | None:
    try:
        return ir.AffineConstantExpr(e).value
    except ValueError:
        return None


def _squeeze_unit_broadcast(v: ir.Value, exprs: list) -> tuple:
    """An operand read at constant 0 along its unit dims ((0, d3, 0, 0) on [1, C, 1, 1]:
    PyTorch's BatchNorm and bias broadcasts) as its collapse to the other dims, read by the dim
    expressions alone ((d3) on [C]). Same values; but IREE moves a reshape through an
    elementwise op (a grouped conv's [.., G, F/G] result view, so that its epilogue fuses into
    the conv's dispatch) only where every map is a projected permutation."""
    t = ir.RankedTensorType(v.type)
    consts = {i: c for i, c in enumerate(map(_constant, exprs)) if c is not None}
    keep = [i for i in range(len(exprs)) if i not in consts]
    if not consts or not keep or any(c != 0 or t.shape[i] != 1 for i, c in consts.items()):
        return v, exprs
    groups, run = [], []
    for i in range(len(exprs)):          # unit dims join the next kept dim (trailing ones: the last)
        run.append(i)
        if i in keep:
            groups.append(run)
            run = []
    groups[-1] += run
    return reshape(v, [t.shape[i] for i in keep], groups), [exprs[i] for i in keep]


def _sink_through(gen, nhwc_of: dict, rank: int = 4) -> ir.Value:
    """Rebuilds elementwise generic `gen` (channels-first loops) over channels-last loops.
    Inputs that are back-transposes are read from their channels-last source; others keep
    their value with the map composed. Returns the channels-last result."""
    n_in = len(gen.operands) - 1
    maps = [ir.AffineMapAttr(a).value for a in gen.attributes["indexing_maps"]]
    to_old = _first_loops_in_last(rank)
    ins, new_maps = [], []
    ident = ir.AffineMap.get_identity(rank)
    for v, m in zip(list(gen.operands)[:n_in], maps[:n_in]):
        if m == ident:
            # a full-size NCHW operand not yet channels-last gets its own transpose, which
            # cancels once its producer's back-transpose sinks to it
            ins.append(nhwc_of[v] if v in nhwc_of else transpose(v, TO_LAST[rank]))
            new_maps.append(ident)
        else:
            v, exprs = _squeeze_unit_broadcast(v, [e.compose(to_old) for e in m.results])
            ins.append(v)
            new_maps.append(ir.AffineMap.get(rank, 0, exprs))
    out = gen.operands[n_in]
    init = empty_like(out, TO_LAST[rank])
    new_maps.append(ir.AffineMap.get_identity(rank))
    return regenerate(gen, ins, init, ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps]))


def _is_channel_concat(op) -> bool:
    return (op.name == "tensor.concat" and ir.IntegerAttr(op.attributes["dim"]).value == 1
            and ir.RankedTensorType(op.results[0].type).rank == 4)


def _concat_nhwc(op) -> ir.Value:
    """A channel concat (NCHW dim 1) rebuilt on channels-last inputs (NHWC dim 3)."""
    ins = []
    for v in op.operands:
        p = owner(v)
        ins.append(p.operands[0] if is_transpose(p, NHWC_TO_NCHW) else transpose(v, NCHW_TO_NHWC))
    t = ir.RankedTensorType(op.results[0].type)
    shape = [t.shape[p] for p in NCHW_TO_NHWC]
    return tensor_d.concat(ir.RankedTensorType.get(shape, t.element_type), 3, ins)


SHUFFLE_NCHW = [0, 2, 1, 3, 4]      # [N, G, C/G, H, W] -> [N, C/G, G, H, W]: a channel shuffle
SHUFFLE_NHWC = [0, 1, 2, 4, 3]      # the same on [N, H, W, G, C/G]
_SPLIT_C = [[0], [1, 2], [3], [4]]


def _only_user(op):
    found = users(op)
    return found[0] if len(found) == 1 else None


def _channel_shuffle(expand):
    """expand -> transpose -> collapse of an NCHW tensor that permutes its channels (ShuffleNet's
    view, transpose, view), as (transpose, collapse), or None."""
    if expand.name != "tensor.expand_shape" or ir.RankedTensorType(expand.results[0].type).rank != 5:
        return None
    if [[int(i) for i in ir.ArrayAttr(g)] for g in ir.ArrayAttr(expand.attributes["reassociation"])] != _SPLIT_C:
        return None
    t = _only_user(expand)
    if not is_transpose(t, SHUFFLE_NCHW):
        return None
    c = _only_user(t)
    if c is None or c.name != "tensor.collapse_shape" or c.results[0].type != expand.operands[0].type:
        return None
    return t, c


def _shuffle_nhwc(src: ir.Value, expand) -> ir.Value:
    """The channel shuffle of NCHW `expand` applied to its NHWC source `src`."""
    g, cg = ir.RankedTensorType(expand.results[0].type).shape[1:3]
    t = ir.RankedTensorType(src.type)
    x5 = reshape(src, [*t.shape[:3], g, cg], [[0], [1], [2], [3, 4]])
    y5 = transpose(x5, SHUFFLE_NHWC)
    return reshape(y5, list(t.shape), [[0], [1], [2], [3, 4]])


def _is_slice_4d(op) -> bool:
    """A unit-stride, rank-keeping tensor.extract_slice of a 4-D tensor with static offsets
    (ShuffleNet's channel split after its shuffle, a C2f chunk); sizes may be runtime values
    (an image of runtime height and width) but for the channels'."""
    if op is None or op.name != "tensor.extract_slice":
        return False
    src, out = ir.RankedTensorType(op.operands[0].type), ir.RankedTensorType(op.results[0].type)
    dyn = ir.ShapedType.get_dynamic_size()
    off = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
    return (src.rank == out.rank == 4 and dyn not in off and not out.is_dynamic_dim(1)
            and list(ir.DenseI64ArrayAttr(op.attributes["static_strides"])) == [1] * 4
            and len(op.operands) == 1 + sum(1 for i in range(4) if out.is_dynamic_dim(i)))


def _slice_nhwc(src: ir.Value, op) -> ir.Value:
    """The NCHW slice `op` taken of the NHWC tensor src instead (offsets and sizes permuted, the
    runtime sizes as the same values; a whole extent, tensor.dim of the NCHW source, as src's
    own extent, so that IREE sees the slice keep that dim whole)."""
    off = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
    dyn = iter(list(op.operands)[1:])
    size = []
    for i, x in enumerate(ir.DenseI64ArrayAttr(op.attributes["static_sizes"])):
        if x != ir.ShapedType.get_dynamic_size():
            size.append(x)
            continue
        v = next(dyn)
        d = owner(v)
        if (d is not None and d.name == "tensor.dim" and d.operands[0] == op.operands[0]
                and (k := _const_index(d.operands[1])) is not None and off[k] == 0):
            v = tensor_d.dim(src, arith_d.constant(ir.IndexType.get(), NCHW_TO_NHWC.index(k)))
        size.append(v)
    return extract_sized(src, [off[i] for i in NCHW_TO_NHWC], [size[i] for i in NCHW_TO_NHWC], [1] * 4)


def _const_index(v):
    op = owner(v)
    if op is None or op.name != "arith.constant":
        return None
    return ir.IntegerAttr(op.attributes["value"]).value


def _extent_of(v: ir.Value, dim: int, depth: int = 16):
    """The SSA value v's size `dim` was created with: through destination-passing ops to their
    init, up to a tensor.empty's dynamic size operand (None when not found)."""
    for _ in range(depth):
        op = owner(v)
        if op is None:
            return None
        t = ir.RankedTensorType(v.type)
        if op.name == "tensor.empty":
            k = sum(1 for i in range(dim) if t.is_dynamic_dim(i))
            return op.operands[k]
        if op.name.startswith("linalg.") and len(op.results) == 1:
            v = op.operands[len(op.operands) - 1]
            if ir.RankedTensorType(v.type).shape != t.shape:
                return None
            continue
        return None
    return None


def whole_extent_slice_sizes(func) -> None:
    """A rank-4 tensor.extract_slice whose runtime size along a dim with offset 0 is the very
    value its source was created with (a chunk along the channels of an image of runtime height
    and width, as the PyTorch import writes it) reads that size as tensor.dim of its source,
    which the layout rewrite can carry to the channels-last tensor and IREE can see is whole."""
    for op in list(walk_ops(func, "tensor.extract_slice")):
        src = op.operands[0]
        st = ir.RankedTensorType(src.type)
        if st.rank != 4:
            continue
        off = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
        if ir.ShapedType.get_dynamic_size() in off or any(x != 1 for x in ir.DenseI64ArrayAttr(op.attributes["static_strides"])):
            continue
        dyn = [i for i, x in enumerate(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
               if x == ir.ShapedType.get_dynamic_size()]
        for j, i in enumerate(dyn):
            operand = 1 + j
            v = op.operands[operand]
            extent = _extent_of(src, i) if off[i] == 0 and st.is_dynamic_dim(i) else None
            if extent is not None and extent == v:
                with ir.InsertionPoint(op), op.location:
                    op.operands[operand] = tensor_d.dim(src, arith_d.constant(ir.IndexType.get(), i))


def sink_transposes(func) -> None:
    """Moves every NHWC->NCHW transpose down through elementwise users, channel concats and
    layout-free barriers (builders.LAYOUT_FREE: fences of fusion alone) until it meets an
    NCHW->NHWC transpose (both vanish) or an op that needs NCHW (it stays); NDHWC->NCDHW ones
    (3-D convs) likewise through elementwise users."""
    work = [op for op in walk_ops(func) if to_first(op) is not None]
    while work:
        op = work.pop()
        rank = to_first(op)
        src = op.operands[0]
        users = []
        for use in op.results[0].uses:
            user = user_op(use)
            if not any(user == u for u, _ in users):
                users.append((user, use.operand_number))
        for user, operand_number in users:
            if is_transpose(user, TO_LAST[rank]):
                user.results[0].replace_all_uses_with(src)
                user.erase()
            elif user.name == "util.optimization_barrier" and LAYOUT_FREE in user.attributes \
                    and len(user.operands) == 1:
                with ir.InsertionPoint(user), user.location:
                    back = transpose(barrier(src, layout_free=True), TO_FIRST[rank])
                user.results[0].replace_all_uses_with(back)
                user.erase()
                work.append(owner(back))
            elif rank == 5:
                if _elementwise(user, 5) and operand_number < len(user.operands) - 1:
                    work.append(_sink_elementwise(user, 5))
            elif _channel_shuffle(user) is not None:
                shuffle, collapse = _channel_shuffle(user)
                with ir.InsertionPoint(collapse), collapse.location:
                    back = transpose(_shuffle_nhwc(src, user), NHWC_TO_NCHW)
                collapse.results[0].replace_all_uses_with(back)
                for dead in (collapse, shuffle, user):
                    dead.erase()
                work.append(owner(back))
            elif _is_slice_4d(user):
                with ir.InsertionPoint(user), user.location:
                    back = transpose(_slice_nhwc(src, user), NHWC_TO_NCHW)
                user.results[0].replace_all_uses_with(back)
                user.erase()
                work.append(owner(back))
            elif _is_channel_concat(user):
                with ir.InsertionPoint(user), user.location:
                    back = transpose(_concat_nhwc(user), NHWC_TO_NCHW)
                user.results[0].replace_all_uses_with(back)
                user.erase()
                work.append(owner(back))
            elif _elementwise(user, 4) and operand_number < len(user.operands) - 1:
                work.append(_sink_elementwise(user, 4))
        if not list(op.results[0].uses):
            op.erase()


def _sink_elementwise(user, rank: int):
    """Elementwise `user` of a back-transpose rebuilt channels-last, followed by the
    back-transpose of its result (returned, to sink further)."""
    nhwc_of = {}
    for v in list(user.operands)[:-1]:
        p = owner(v)
        if is_transpose(p, TO_FIRST[rank]):
            nhwc_of[v] = p.operands[0]
    with ir.InsertionPoint(user), user.location:
        back = transpose(_sink_through(user, nhwc_of, rank), TO_FIRST[rank])
    user.results[0].replace_all_uses_with(back)
    user.erase()
    return owner(back)

