"""convc-trim-window: a conv with one output pixel along an axis reads its input only as far
as its window reaches; the rest of the (padded) input is cut off.

IREE 3.13 folds such a unit output dimension away (iree-dispatch-creation-fold-unit-extent-
dims) and indexes the input by tap * dilation alone. With dilation 1 the folded generic verifies
only if the padded input is exactly as long as the window ("inferred input/output operand #1
has shape's dimension #1 to be 7, but found 5"; stock IREE too), and with one tap the index is a
constant, a reduction IREE's GPU codegen may fail to distribute. So before IREE's flow phase,
along such an axis the trailing pad, then the input itself, are trimmed to the reach (a dilated
window's index verifies against a longer input and is left alone); and where the window reads
only zero padding along an axis (every tap lands in the pad), the conv is its accumulator.
Grouped and depthwise convs (a parallel dimension in input, filter and output) whose window
IREE would fold this way it computes wrong on the GPU (IREE 3.13: a generic with a constant
or dilated tap index over the group dimension; rel. L2 ~1 or unwritten outputs, found by
convc-fuzz): along such an axis they are widened instead, to two output pixels (the input
padded by one stride more, the accumulator by one pixel, the conv's result sliced back to the
first), so no unit dimension is left to fold and the conv stays a conv.
Convs with more than one output pixel along both axes are left as they are (convc's problem,
tuning keys and kernels unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import ir, walk_ops
from .builders import pad as padded, zero
from iree.compiler.dialects import tensor as tensor_d

# channels-last convs: (input spatial dims, filter spatial dims)
WINDOW_DIMS = {"linalg.conv_2d_nhwc_fhwc": ((1, 2), (1, 2)),
               "linalg.conv_2d_nhwc_hwcf": ((1, 2), (0, 1)),
               "linalg.depthwise_conv_2d_nhwc_hwc": ((1, 2), (0, 1)),
               "linalg.depthwise_conv_2d_nhwc_hwcm": ((1, 2), (0, 1)),
               "linalg.conv_2d_nhwgc_gfhwc": ((1, 2), (2, 3))}


@dataclass
class _Axis:
    low: int        # zero pad before the input
    size: int       # input rows kept
    high: int       # zero pad after


@dataclass(frozen=True)
class _Window:
    dim: int        # the input dimension it slides along
    out: int        # output pixels along it
    taps: int
    dilation: int
    out_dim: int = -1   # the output dimension of those pixels
    stride: int = 1


def _owner(v: ir.Value):
    o = v.owner
    return None if isinstance(o, ir.Block) else (o.operation if hasattr(o, "operation") else o)


def zero_pad(v: ir.Value):
    """The static tensor.pad with a zero value producing v, or None."""
    op = _owner(v)
    if op is None or op.name != "tensor.pad" or len(op.operands) != 1:
        return None
    body = [o.operation for o in op.regions[0].blocks[0].operations]
    c = _owner(body[0].operands[0]) if len(body) == 1 and len(body[0].operands) == 1 else None
    if c is None or c.name != "arith.constant":
        return None
    a = c.attributes["value"]
    zero = isinstance(a, ir.FloatAttr) and a.value == 0.0 or isinstance(a, ir.IntegerAttr) and a.value == 0
    return op if zero else None


def _terms(e: ir.AffineExpr) -> dict[int, int] | None:
    """{dim: coefficient} of a linear expression of dims (None: anything else)."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineDimExpr):
        return {e.position: 1}
    if isinstance(e, ir.AffineAddExpr):
        a, b = _terms(e.lhs), _terms(e.rhs)
        return None if a is None or b is None or set(a) & set(b) else {**a, **b}
    if isinstance(e, ir.AffineMulExpr):
        a, c = e.lhs.maybe_downcast(), e.rhs.maybe_downcast()
        if isinstance(a, ir.AffineConstantExpr):
            a, c = c, a
        if isinstance(a, ir.AffineDimExpr) and isinstance(c, ir.AffineConstantExpr):
            return {a.position: c.value}
    return None


def _generic_windows(op, shapes) -> list[_Window] | None:
    """The windows of a conv written as a linalg.generic (x, w -> out): input expressions
    out_dim * stride + tap * dilation."""
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if len(maps) != 3 or len(op.operands) != 3:
        return None
    where = [{r.maybe_downcast().position: i for i, r in enumerate(m.results)
              if isinstance(r.maybe_downcast(), ir.AffineDimExpr)} for m in maps]
    out = []
    for i, e in enumerate(maps[0].results):
        t = _terms(e)
        if t is None or len(t) != 2:
            continue
        outs, taps = [d for d in t if d in where[2]], [d for d in t if d in where[1]]
        if len(outs) != 1 or len(taps) != 1 or outs == taps:
            continue
        o, k = outs[0], taps[0]
        out.append(_Window(i, shapes[2][where[2][o]], shapes[1][where[1][k]], t[k], where[2][o], t[o]))
    return out


def _windows(op, shapes) -> list[_Window] | None:
    if op.name == "linalg.generic":
        return _generic_windows(op, shapes)
    in_dims, f_dims = WINDOW_DIMS[op.name]
    dil = [int(x) for x in ir.DenseIntElementsAttr(op.attributes["dilations"])]
    st = [int(x) for x in ir.DenseIntElementsAttr(op.attributes["strides"])]
    return [_Window(d, shapes[2][d], shapes[1][fd], dil[a], d, st[a]) for a, (d, fd) in enumerate(zip(in_dims, f_dims))]


def _grouped(op) -> bool:
    """A parallel dimension indexes input, filter and output alike: a group (or depthwise
    channel) dimension."""
    if op.name != "linalg.generic":
        return op.name in ("linalg.depthwise_conv_2d_nhwc_hwc", "linalg.depthwise_conv_2d_nhwc_hwcm",
                           "linalg.conv_2d_nhwgc_gfhwc")
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    dims = [{r.maybe_downcast().position for r in m.results if isinstance(r.maybe_downcast(), ir.AffineDimExpr)}
            for m in maps]
    return bool(dims[0] & dims[1] & dims[2])


def _sums_products(op) -> bool:
    """The body accumulates x * w (through extensions): a zero x adds nothing."""
    if op.name != "linalg.generic":
        return True
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    acc = _owner(ops[-1].operands[0]) if ops[-1].operands else None
    if acc is None or acc.name != "arith.addf" or block.arguments[2] not in list(acc.operands):
        return False
    mul = [_owner(v) for v in acc.operands if v != block.arguments[2]]
    return len(mul) == 1 and mul[0] is not None and mul[0].name == "arith.mulf"


def _trim(op) -> None:
    if len(op.operands) != 3 or not all(isinstance(v.type, ir.RankedTensorType) for v in op.operands):
        return
    x, w, init = op.operands[0], op.operands[1], op.operands[2]
    types = [ir.RankedTensorType(v.type) for v in (x, w, init)]
    if not all(t.has_static_shape for t in types):
        return
    windows = _windows(op, [list(t.shape) for t in types])
    if not windows:
        return
    pad = zero_pad(x)
    src = pad.operands[0] if pad is not None else x
    st = ir.RankedTensorType(src.type)
    if not st.has_static_shape:
        return
    low = [int(v) for v in pad.attributes["static_low"]] if pad is not None else [0] * st.rank
    high = [int(v) for v in pad.attributes["static_high"]] if pad is not None else [0] * st.rank
    if min(low + high) < 0:
        return
    axes = [_Axis(low[d], st.shape[d], high[d]) for d in range(st.rank)]
    changed = False
    widen = []                                          # output dims widened to two pixels
    grouped = _grouped(op)
    for win in windows:
        if win.out != 1:
            continue
        ax = axes[win.dim]
        taps = [k * win.dilation for k in range(win.taps)]
        if pad is not None and not any(ax.low <= t < ax.low + ax.size for t in taps) and _sums_products(op):
            op.results[0].replace_all_uses_with(init)      # every product is with a zero pad
            op.erase()
            if not list(pad.results[0].uses):
                pad.erase()
            return
        if grouped and win.out_dim >= 0:
            ax.high += win.stride
            widen.append(win.out_dim)
            changed = True
            continue
        excess = ax.low + ax.size + ax.high - ((win.taps - 1) * win.dilation + 1)
        if excess > 0 and (win.dilation == 1 or win.taps == 1):
            cut = min(excess, ax.high)
            ax.high -= cut
            ax.size -= excess - cut
            changed = True
    if not changed:
        return
    with ir.InsertionPoint(op), op.location:
        v = src
        if any(ax.size != n for ax, n in zip(axes, st.shape)):
            v = tensor_d.ExtractSliceOp(ir.RankedTensorType.get([ax.size for ax in axes], st.element_type), v,
                                        [], [], [], [0] * st.rank, [ax.size for ax in axes], [1] * st.rank).result
        if pad is not None or widen:
            value = ([o.operation for o in pad.regions[0].blocks[0].operations][0].operands[0] if pad is not None
                     else zero(st.element_type))
            v = padded(v, [ax.low for ax in axes], [ax.high for ax in axes], value)
        if widen:
            it = types[2]
            op.operands[2] = padded(init, [0] * it.rank, [1 if d in widen else 0 for d in range(it.rank)],
                                  zero(it.element_type))
    op.operands[0] = v
    if widen:
        _slice_result(op, list(types[2].shape))
    if pad is not None and not list(pad.results[0].uses):
        pad.erase()


def _slice_result(op, shape: list[int]) -> None:
    """The widened conv's result gets its padded init's type; its users read the first
    pixel(s): an extract_slice back to `shape`."""
    res = op.results[0]
    res.set_type(op.operands[2].type)
    with ir.InsertionPoint.after(op), op.location:
        t = ir.RankedTensorType(res.type)
        sl = tensor_d.ExtractSliceOp(ir.RankedTensorType.get(shape, t.element_type), res, [], [], [],
                                     [0] * t.rank, shape, [1] * t.rank)
    res.replace_all_uses_except(sl.result, sl.operation)


def trim_windows(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-trim-window (input-phase IR, after convc-channels-last)."""
    with module.context, ir.Location.unknown():
        for op in [o for o in walk_ops(module.operation) if o.name in WINDOW_DIMS or o.name == "linalg.generic"]:
            _trim(op)
    return module
