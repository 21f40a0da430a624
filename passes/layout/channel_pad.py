"""convc-pad-channels: a dense conv whose output channel count F is not a multiple of 8 (an RGB
or mask output, F = 3 or 1; any odd F) computes F rounded up to a multiple of 8 with zero
filters, and its result is sliced back to the first F channels. An f32 conv whose input
channels no TF32 K step tiles (an f32 RGB stem) reads them zero-padded (_pad_f32_input).

Why: convc's tensor-core kernels move output channels in 16-byte vectors (TMA filter boxes and
TMA-store epilogues), so such convs fell to the portable kernel (the VAE decoder's 256 -> 3
output conv: 445 us of its 1265 us of conv kernels on an H100), and IREE folds F = 1 away
altogether. With zero filters the padded channels cost tensor-core work only; the slice becomes
part of the consumer dispatch's loads (IREE moves it through elementwise consumers, so the
epilogue then runs in that dispatch instead of the conv's).

Where the padded channels can flow on, the slice moves down instead (_sink_slice): through
elementwise ops (their per-channel operands widened with ones, so the extra channels stay
finite), reshapes that keep the channel axis, barriers and spatial pads, into a dense conv
whose filter gets zero input channels for them. The epilogue then stays in the padded conv's
dispatch and the next conv reads a whole number of vectors: R(2+1)D's 45-, 230- and
921-channel mid convs, whose BatchNorm + ReLU ran as IREE elementwise dispatches after the slice
(1.0 ms of 3.7 ms of kernels at batch 8, results/e2e/h200_zoo_latest.json).

The filter is padded by inserting it into a zero tensor, not by tensor.pad: IREE turns the
insertion into a splat and an update outside any dispatch (or folds it into a constant), where
a tensor.pad would be fused into the conv's dispatch, which convc's matcher declines. The
accumulator keeps its form (a zero fill is re-made at the new width; anything else is inserted
into a zero tensor the same way). NVIDIA targets only: the AMD kernels take any F, and llvm-cpu
has no vector constraint. Grouped/depthwise convs are left alone (their own kernels), and so
are 1x1 filters (see _one_tap).
"""

from __future__ import annotations

from iree.compiler.dialects import arith as arith_d, linalg as linalg_d, tensor as tensor_d

from ..ir import ir, walk_ops
from .builders import barrier, mixed_sizes, owner, user_op, zero
from ..target import get_target

VECTOR = 8              # output channels per 16-byte f16 vector

# dense channels-last convs: the filter's F dimension (the output's is the last)
FILTER_F_DIM = {"linalg.conv_2d_nhwc_fhwc": 0, "linalg.conv_2d_nhwc_hwcf": 3}


def _split(sizes: list) -> tuple[list[int], list[ir.Value]]:
    """Mixed sizes (ints and values) as slice ops take them: static sizes with dynamic ones
    marked, and the dynamic values."""
    dyn = ir.ShapedType.get_dynamic_size()
    return ([s if isinstance(s, int) else dyn for s in sizes], [s for s in sizes if not isinstance(s, int)])


def _zeros(v: ir.Value, dim: int, new: int, value: ir.Value | None = None) -> ir.Value:
    """A tensor shaped like v but `new` long along `dim`, filled with `value` (default zero)."""
    et = ir.RankedTensorType(v.type).element_type
    empty = tensor_d.EmptyOp(mixed_sizes(v, {dim: new}), et).result
    return linalg_d.fill(value if value is not None else zero(et), outs=[empty])


def _widen(v: ir.Value, dim: int, new: int) -> ir.Value:
    """v inserted at offset 0 into a zero tensor `new` long along `dim`."""
    rank = ir.RankedTensorType(v.type).rank
    dest = _zeros(v, dim, new)
    static, dynamic = _split(mixed_sizes(v))
    return tensor_d.InsertSliceOp(v, dest, [], dynamic, [], [0] * rank, static, [1] * rank).result


def _fill_of_empty(v: ir.Value):
    """The scalar of a linalg.fill of a tensor.empty producing v, or None."""
    op = owner(v)
    if op is None or op.name != "linalg.fill":
        return None
    dest = owner(op.operands[1])
    return op.operands[0] if dest is not None and dest.name == "tensor.empty" else None


def _one_tap(wt: ir.RankedTensorType, fdim: int) -> bool:
    """A 1x1 filter: IREE writes the conv as a matmul and moves the result slice into it as a
    slice of the filter, so the padding would come back undone, as a GEMM whose F no longer
    matches the model's 1x1 signatures (convc would not take it). Behind a barrier it stayed
    padded but measured slower (bench/NOTES.md): a detection head's F = 255 stays as it is."""
    spatial = (1, 2) if fdim == 0 else (0, 1)
    return all(not wt.is_dynamic_dim(d) and wt.shape[d] == 1 for d in spatial)


def padded_width(f: int) -> int:
    return -(-f // VECTOR) * VECTOR


def _pad_conv(op) -> bool:
    x, w, init = op.operands[0], op.operands[1], op.operands[2]
    if not all(isinstance(v.type, ir.RankedTensorType) for v in (x, w, init)):
        return False
    wt, ot = ir.RankedTensorType(w.type), ir.RankedTensorType(init.type)
    fdim = FILTER_F_DIM[op.name]
    if wt.is_dynamic_dim(fdim) or ot.is_dynamic_dim(ot.rank - 1):
        return False
    f = ot.shape[-1]
    if f % VECTOR == 0:
        return False
    if _one_tap(wt, fdim):
        return False
    f8 = padded_width(f)
    # where the extra channels can reach another conv, they go on into it (and are as many as
    # its input needs); otherwise the slice stays after the conv
    carry = not any(ot.is_dynamic_dim(i) for i in range(ot.rank)) and _reaches_conv(op.results[0])
    if carry:
        f8 = -(-f // CONV_INPUT_MULTIPLE) * CONV_INPUT_MULTIPLE
    with ir.InsertionPoint(op), op.location:
        scalar = _fill_of_empty(init)
        new_init = _zeros(init, ot.rank - 1, f8, scalar) if scalar is not None else _widen(init, ot.rank - 1, f8)
        new_w = _widen_filter(w, fdim, f8)
    op.operands[1] = new_w
    op.operands[2] = new_init
    res = op.results[0]
    res.set_type(new_init.type)
    with ir.InsertionPoint.after(op), op.location:
        # dynamic sizes from the new accumulator (tensor.dim of the result would be rewired to the slice)
        static, dynamic = _split(mixed_sizes(new_init, {ot.rank - 1: f}))
        sl = tensor_d.ExtractSliceOp(ot, res, [], dynamic, [], [0] * ot.rank, static, [1] * ot.rank)
    res.replace_all_uses_except(sl.result, sl.operation)
    _erase_if_dead(owner(init))
    if carry:
        _sink_slice(sl.operation)
    return True


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


def _carry(user, number: int, narrow: ir.Value):
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


def _reaches_conv(narrow: ir.Value, depth: int = 16) -> bool:
    """Whether the leading-channel slice `narrow` can be carried (as _sink_slice would) into a
    conv's input."""
    for user, number in _users(narrow):
        kind = _carry(user, number, narrow)
        if kind == "conv" or (kind is not None and depth and _reaches_conv(user.results[0], depth - 1)):
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


def _ones_widen(v: ir.Value, dim: int, new: int) -> ir.Value:
    """v inserted at offset 0 into a tensor of ones `new` long along `dim` (the values the
    extra channels meet in elementwise ops: finite whatever the op; a constant expression for
    constant v)."""
    et = ir.RankedTensorType(v.type).element_type
    one = ir.FloatAttr.get(et, 1.0) if isinstance(et, ir.FloatType) else ir.IntegerAttr.get(et, 1)
    dest = _zeros(v, dim, new, arith_d.constant(et, one))
    t = ir.RankedTensorType(v.type)
    return tensor_d.InsertSliceOp(v, dest, [], [], [], [0] * t.rank, list(t.shape), [1] * t.rank).result


def _widen_filter(w: ir.Value, dim: int, new: int) -> ir.Value:
    """The filter with zero input channels added; widened before its barrier (convc-channels-
    last's), so that a constant filter stays a constant expression."""
    op = owner(w)
    if op is not None and op.name == "util.optimization_barrier" and len(op.operands) == 1:
        return barrier(_widen(op.operands[0], dim, new))
    return _widen(w, dim, new)


def _rebuild(user, kind: str, wide: ir.Value, narrow: ir.Value):
    """user rebuilt on the wide tensor (its result, wide too); for a conv, the conv reading it."""
    width = ir.RankedTensorType(wide.type).shape[-1]
    if kind == "conv":
        user.operands[1] = _widen_filter(user.operands[1], FILTER_C_DIM[user.name], width)
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
        t = _wide_type(user.results[0], width)
        pad = tensor_d.PadOp(t, wide, [], [], low, high)
        b = pad.regions[0].blocks.append(*([ir.IndexType.get()] * t.rank))
        with ir.InsertionPoint(b):
            tensor_d.YieldOp([o.operation for o in user.regions[0].blocks[0].operations][0].operands[0])
        return pad.result
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
                       _widen(v, ir.RankedTensorType(v.type).rank - 1, width))
        elif role == "same":
            ins.append(v)
        else:
            ins.append(_ones_widen(v, list(m.results).index(ir.AffineDimExpr.get(m.n_dims - 1)), width))
    out_t = _wide_type(user.results[0], width)
    init = tensor_d.EmptyOp(list(out_t.shape), out_t.element_type).result
    new = linalg_d.GenericOp([out_t], ins, [init], user.attributes["indexing_maps"], user.attributes["iterator_types"])
    block = user.regions[0].blocks[0]
    nb = new.regions[0].blocks.append(*[a.type for a in block.arguments])
    for old_a, new_a in zip(block.arguments, nb.arguments):
        old_a.replace_all_uses_with(new_a)
    for o in list(block.operations):
        o.operation.detach_from_parent()
        ir.InsertionPoint(nb).insert(o.operation)
    return new.results[0]


def _sink_slice(sl) -> None:
    """Moves the channel slice `sl` of a padded conv's result down through the users that can
    carry the extra channels (module docstring), as far as they go; where they stop, a slice
    of the same channels stands again."""
    work = [sl]
    while work:
        s = work.pop()
        wide, narrow = s.operands[0], s.results[0]
        for user, number in _users(narrow):
            kind = _carry(user, number, narrow)
            if kind is None:
                continue
            with ir.InsertionPoint(user), user.location:
                got = _rebuild(user, kind, wide, narrow)
            if got is None:
                continue
            with ir.InsertionPoint(user), user.location:
                new_slice = _narrow(got, ir.RankedTensorType(user.results[0].type).shape[-1])
            user.results[0].replace_all_uses_with(new_slice.result)
            user.erase()
            work.append(new_slice.operation)
        if not list(narrow.uses):
            s.erase()


def _erase_if_dead(op) -> None:
    """The old accumulator's fill (and its empty), once nothing reads them."""
    while op is not None and op.name in ("linalg.fill", "tensor.empty") and not list(op.results[0].uses):
        nxt = owner(op.operands[1]) if op.name == "linalg.fill" else None
        op.erase()
        op = nxt


# f32 input channels per TF32 K step of the im2col TMA kernels with several filter taps (64
# bytes), tma_loader.k_tile_channels
TF32_INPUT_MULTIPLE = 16


def _pad_f32_input(op) -> bool:
    """An f32 conv (taken as TF32) whose input channels no TF32 K step tiles (the RGB stem:
    C = 3 with a 7x7 filter) reads them padded with zeros to a multiple of 16, with zero filter
    channels: a TF32 tensor-core kernel instead of the portable one (ResNet-50's f32 stem at
    batch 32: 737 us on the portable kernel, results/e2e/h200_latest.json). The activation is
    inserted into a zero tensor (a copy into a zero fill: the copy kernel, in place) before its
    spatial pad, which still fuses into the conv."""
    from ..lower.nvidia.tma_loader import k_tile_channels
    x, w = op.operands[0], op.operands[1]
    xt, wt = ir.RankedTensorType(x.type), ir.RankedTensorType(w.type)
    if op.name != "linalg.conv_2d_nhwc_fhwc" or not (xt.has_static_shape and wt.has_static_shape) \
            or str(xt.element_type) != "f32" or str(wt.element_type) != "f32":
        return False
    c, taps = wt.shape[3], wt.shape[1] * wt.shape[2]
    if k_tile_channels(c, taps, "f32") is not None:
        return False
    c16 = -(-c // TF32_INPUT_MULTIPLE) * TF32_INPUT_MULTIPLE
    with ir.InsertionPoint(op), op.location:
        pad = owner(x)
        if pad is not None and pad.name == "tensor.pad" and _carry(pad, 0, pad.operands[0]) == "pad":
            wide = _widen(pad.operands[0], 3, c16)
            x16 = _rebuild(pad, "pad", wide, pad.operands[0])
        else:
            x16 = _widen(x, 3, c16)
        op.operands[1] = _widen_filter(w, 3, c16)
        op.operands[0] = x16
    return True


def pad_channels(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-pad-channels (input-phase IR, after convc-trim-window)."""
    arch = getattr(options, "target", None) or "sm_90a"
    if get_target(arch).backend != "nvidia":
        return module
    with module.context, ir.Location.unknown():
        for op in [o for o in walk_ops(module.operation) if o.name in FILTER_F_DIM]:
            _pad_conv(op)
        if (getattr(options, "precision", None) or "tf32") == "tf32":
            for op in [o for o in walk_ops(module.operation) if o.name in FILTER_F_DIM]:
                _pad_f32_input(op)
    return module
