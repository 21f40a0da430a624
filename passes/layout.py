"""convc-channels-last: rewrite every conv and pool of a model into channels-last form.

Runs on the model at IREE's `input` phase (linalg on tensors, after the ONNX/PyTorch import).
PyTorch and ONNX convs are NCHW x FCHW (`linalg.conv_2d_nchw_fchw`), TensorFlow/JAX ones
NHWC x HWCF; convc's kernels read NHWC x FHWC. Each such op becomes

    transpose(NCHW -> NHWC) -> [zero pad in NHWC] -> linalg.conv_2d_nhwc_fhwc -> transpose back

with the filter transposed once (a constant expression IREE evaluates at compile time) and a
non-zero accumulator (the import's bias broadcast) added after the conv as an elementwise op,
so the conv itself accumulates into a zero fill, as the matcher requires. Pools get the same
treatment (`linalg.pooling_nchw_{max,sum}` -> `_nhwc_`), so that activations can stay
channels-last through them. Between two such ops the back-and-forth transposes meet; IREE's
global optimization propagates them through elementwise ops and cancels the pairs, leaving
transposes only at the model's boundaries and around ops that need NCHW.

The transposed filter is put behind a `util.optimization_barrier`: otherwise IREE fuses the
transpose of a runtime filter into the conv's dispatch, or folds a splat filter (test models)
into the conv's body, and neither is a conv a kernel can read.
"""

from __future__ import annotations

from .attrs import GROUPED_CONV_ATTR
from .ir import ir, walk_ops
from iree.compiler.dialects import arith as arith_d, flow as flow_d, linalg as linalg_d, tensor as tensor_d, util as util_d

NCHW_TO_NHWC = [0, 2, 3, 1]
NHWC_TO_NCHW = [0, 3, 1, 2]
HWCF_TO_FHWC = [3, 0, 1, 2]

CONV_OPS = ("linalg.conv_2d_nchw_fchw", "linalg.conv_2d_nhwc_hwcf")
# grouped and depthwise convs as PyTorch/ONNX imports produce them
GROUPED_OPS = ("linalg.depthwise_conv_2d_nchw_chw", "linalg.conv_2d_ngchw_gfchw")
# the channels-last forms convc's kernels read (and the matcher takes)
NHWC_CONVS = ("linalg.conv_2d_nhwc_fhwc", "linalg.depthwise_conv_2d_nhwc_hwc",
              "linalg.depthwise_conv_2d_nhwc_hwcm", "linalg.conv_2d_nhwgc_gfhwc")
POOL_OPS = {"linalg.pooling_nchw_max": linalg_d.pooling_nhwc_max,
            "linalg.pooling_nchw_sum": linalg_d.pooling_nhwc_sum}


def _ints(attr) -> list[int]:
    return [int(x) for x in ir.DenseIntElementsAttr(attr)]


def _empty_like(v: ir.Value, perm: list[int]) -> ir.Value:
    """tensor.empty of v's type permuted by perm (dynamic sizes read with tensor.dim)."""
    t = ir.RankedTensorType(v.type)
    sizes = []
    for p in perm:
        if t.is_dynamic_dim(p):
            sizes.append(tensor_d.dim(v, arith_d.constant(ir.IndexType.get(), p)))
        else:
            sizes.append(t.shape[p])
    return tensor_d.EmptyOp(sizes, t.element_type).result


def _transpose(v: ir.Value, perm: list[int]) -> ir.Value:
    return _value(linalg_d.transpose(v, outs=[_empty_like(v, perm)], permutation=perm))


def _value(x) -> ir.Value:
    """The single result of what a builder returned (an op view or already a value)."""
    if isinstance(x, ir.Value):
        return x
    if isinstance(x, (list, tuple)):
        return x[0]
    return x.results[0]


def _owner(v: ir.Value):
    o = v.owner
    return None if isinstance(o, ir.Block) else (o.operation if hasattr(o, "operation") else o)


def _is_zero_fill(v: ir.Value) -> bool:
    op = _owner(v)
    if op is None or op.name != "linalg.fill":
        return False
    c = _owner(op.operands[0])
    if c is None or c.name != "arith.constant":
        return False
    a = c.attributes["value"]
    return isinstance(a, ir.FloatAttr) and a.value == 0.0 or isinstance(a, ir.IntegerAttr) and a.value == 0


def _channels_last_input(x: ir.Value, view=None) -> ir.Value:
    """x (NCHW) in NHWC, then through `view` if given (a grouped conv's [N, H, W, G, C/G]);
    a pad of H/W only is re-created after the transpose and the view, so that IREE fuses it
    into the conv's dispatch as it does for NHWC models."""
    view = view or (lambda v: v)
    op = _owner(x)
    if op is not None and op.name == "tensor.pad":
        low = [int(v) for v in op.attributes["static_low"]]
        high = [int(v) for v in op.attributes["static_high"]]
        body = [o.operation for o in op.regions[0].blocks[0].operations]
        if (len(low) == 4 and low[:2] == [0, 0] and high[:2] == [0, 0] and min(low + high) >= 0
                and len(op.operands) == 1 and len(body) == 1):
            src = view(_transpose(op.operands[0], NCHW_TO_NHWC))
            value = body[0].operands[0]
            st = ir.RankedTensorType(src.type)
            extra = [0] * (st.rank - 4)
            lo = [0, low[2], low[3], 0] + extra
            hi = [0, high[2], high[3], 0] + extra
            shape = [ir.ShapedType.get_dynamic_size() if st.is_dynamic_dim(i) else st.shape[i] + lo[i] + hi[i]
                     for i in range(st.rank)]
            pad = tensor_d.PadOp(ir.RankedTensorType.get(shape, st.element_type), src, [], [], lo, hi)
            block = pad.regions[0].blocks.append(*([ir.IndexType.get()] * st.rank))
            with ir.InsertionPoint(block):
                tensor_d.YieldOp(value)
            return pad.result
    return view(_transpose(x, NCHW_TO_NHWC))


def _add(a: ir.Value, b: ir.Value) -> ir.Value:
    """a + b, elementwise, same shapes (a linalg.generic IREE fuses into the conv dispatch)."""
    t = ir.RankedTensorType(a.type)
    ident = ir.AffineMap.get_identity(t.rank)
    gen = linalg_d.GenericOp([t], [a, b], [_empty_like(a, list(range(t.rank)))],
                             ir.ArrayAttr.get([ir.AffineMapAttr.get(ident)] * 3),
                             ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * t.rank))
    block = gen.regions[0].blocks.append(t.element_type, t.element_type, t.element_type)
    with ir.InsertionPoint(block):
        linalg_d.YieldOp([arith_d.addf(block.arguments[0], block.arguments[1])])
    return gen.results[0]


def _rewrite_conv(op) -> None:
    x, w, init = op.operands[0], op.operands[1], op.operands[2]
    nchw = op.name == "linalg.conv_2d_nchw_fchw"
    strides = _ints(op.attributes["strides"])
    dilations = _ints(op.attributes["dilations"])
    xt = _channels_last_input(x) if nchw else x
    wt = _transpose(w, NCHW_TO_NHWC if nchw else HWCF_TO_FHWC)
    # the barrier keeps the transposed filter a dispatch operand: IREE would otherwise fuse a
    # runtime filter's transpose into the conv (a layout no kernel reads) or fold a splat
    # filter into the conv's body; constant filters are still transposed at compile time
    wt = _barrier(wt)
    out_perm = NCHW_TO_NHWC if nchw else [0, 1, 2, 3]
    et = ir.RankedTensorType(init.type).element_type
    zero = arith_d.constant(et, 0.0 if isinstance(et, ir.FloatType) else 0)
    acc = _value(linalg_d.fill(zero, outs=[_empty_like(init, out_perm)]))
    y = _value(linalg_d.conv_2d_nhwc_fhwc(xt, wt, outs=[acc], strides=strides, dilations=dilations))
    if not _is_zero_fill(init):
        y = _add(y, _transpose(init, out_perm) if nchw else init)
    if nchw:
        y = _transpose(y, NHWC_TO_NCHW)
    op.results[0].replace_all_uses_with(y)
    op.erase()


def _reshape(v: ir.Value, shape: list[int], groups: list[list[int]]) -> ir.Value:
    """v collapsed or expanded (by the rank change) to `shape` (static but for the batch)."""
    t = ir.RankedTensorType(v.type)
    rt = ir.RankedTensorType.get(shape, t.element_type)
    assoc = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
                                                for i in g]) for g in groups])
    if len(shape) < t.rank:
        return tensor_d.CollapseShapeOp(rt, v, assoc).result
    # a dynamic size is the batch, dimension 0 of both (its own group in every view here)
    dims = [tensor_d.dim(v, arith_d.constant(ir.IndexType.get(), 0))] if rt.is_dynamic_dim(0) else []
    return tensor_d.ExpandShapeOp(rt, v, assoc, dims, shape).result


def _grouped_hwcf_conv(x: ir.Value, w: ir.Value, acc: ir.Value, strides, dilations) -> ir.Value:
    """out[n, oh, ow, g, f] += x[n, oh*s + kh*d, ow*s + kw*d, g, c] * w[kh, kw, c, g, f]: a grouped
    conv whose filter keeps the output channels fastest (linalg has no named op for it), so
    that neighbouring threads of the direct kernel read neighbouring filter channels."""
    sh, sw = strides
    dh, dw = dilations
    maps = [f"affine_map<(n, oh, ow, g, f, kh, kw, c) -> (n, oh * {sh} + kh * {dh}, ow * {sw} + kw * {dw}, g, c)>",
            "affine_map<(n, oh, ow, g, f, kh, kw, c) -> (kh, kw, c, g, f)>",
            "affine_map<(n, oh, ow, g, f, kh, kw, c) -> (n, oh, ow, g, f)>"]
    iters = ["parallel"] * 5 + ["reduction"] * 3
    at = ir.RankedTensorType(acc.type)
    gen = linalg_d.GenericOp([at], [x, w], [acc], ir.ArrayAttr.get([ir.Attribute.parse(m) for m in maps]),
                             ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{i}>") for i in iters]))
    xe, we = ir.RankedTensorType(x.type).element_type, ir.RankedTensorType(w.type).element_type
    block = gen.regions[0].blocks.append(xe, we, at.element_type)
    with ir.InsertionPoint(block):
        a, b, o = block.arguments
        a = a if a.type == at.element_type else arith_d.extf(at.element_type, a)
        b = b if b.type == at.element_type else arith_d.extf(at.element_type, b)
        linalg_d.YieldOp([arith_d.addf(o, arith_d.mulf(a, b))])
    gen.attributes[GROUPED_CONV_ATTR] = ir.UnitAttr.get()
    return gen.results[0]


def _is_nhwc_conv(op) -> bool:
    return op.name in NHWC_CONVS or (op.name == "linalg.generic" and GROUPED_CONV_ATTR in op.attributes)


def _empty5(like: ir.Value, rest: list[int], et: ir.Type) -> ir.Value:
    """tensor.empty of [N, *rest], N being like's (possibly dynamic) batch."""
    t = ir.RankedTensorType(like.type)
    n = tensor_d.dim(like, arith_d.constant(ir.IndexType.get(), 0)) if t.is_dynamic_dim(0) else t.shape[0]
    return tensor_d.EmptyOp([n, *rest], et).result


_G_DIM = [[0], [1, 2], [3], [4]]        # NCHW <-> N,G,C/G,H,W (and F,R,S <-> G,F/G,R,S...)
_G_LAST = [[0], [1], [2], [3, 4]]       # NHWC <-> N,H,W,G,C/G


def _rewrite_grouped(op) -> None:
    """A grouped/depthwise NCHW conv in channels-last form: depthwise (one input channel per
    group) -> linalg.depthwise_conv_2d_nhwc_hwc / _hwcm, whose filter is [R, S, C(, M)]
    (output channel f = c * M + m, as in PyTorch); otherwise a grouped generic on
    [N, H, W, G, C/G] views (group-major channels, as in PyTorch) with an [R, S, C/G, G, F/G]
    filter (_grouped_hwcf_conv)."""
    x, w, init = op.operands[0], op.operands[1], op.operands[2]
    strides = _ints(op.attributes["strides"])
    dilations = _ints(op.attributes["dilations"])
    et = ir.RankedTensorType(init.type).element_type
    zero = arith_d.constant(et, 0.0 if isinstance(et, ir.FloatType) else 0)
    if op.name == "linalg.depthwise_conv_2d_nchw_chw":
        x4, init4 = x, init
        wt = _transpose(w, [1, 2, 0])                                  # C,R,S -> R,S,C
        acc = _value(linalg_d.fill(zero, outs=[_empty_like(init4, NCHW_TO_NHWC)]))
        y = _value(linalg_d.depthwise_conv_2d_nhwc_hwc(_channels_last_input(x4), _barrier(wt), outs=[acc],
                                                       strides=strides, dilations=dilations))
    else:
        n, g, cg, h, wd = ir.RankedTensorType(x.type).shape
        _, fg, _, r, sz = ir.RankedTensorType(w.type).shape
        ho, wo = ir.RankedTensorType(init.type).shape[3:]
        src = _owner(x)
        if src is not None and src.name == "tensor.expand_shape" and ir.RankedTensorType(src.operands[0].type).rank == 4:
            x4 = src.operands[0]
        else:
            x4 = _reshape(x, [n, g * cg, h, wd], _G_DIM)
        init4 = _reshape(init, [n, g * fg, ho, wo], _G_DIM)
        if cg == 1:
            xt = _channels_last_input(x4)
            w4 = _reshape(w, [g, fg, r, sz], [[0], [1, 2], [3], [4]])
            wt = _barrier(_transpose(w4, [2, 3, 0, 1]))                   # G,M,R,S -> R,S,G,M
            acc = _value(linalg_d.fill(zero, outs=[_empty5(xt, [ho, wo, g, fg], et)]))
            y5 = _value(linalg_d.depthwise_conv_2d_nhwc_hwcm(xt, wt, outs=[acc], strides=strides,
                                                             dilations=dilations))
        else:
            wt = _barrier(_transpose(w, [3, 4, 2, 0, 1]))              # G,F,C,R,S -> R,S,C,G,F
            xt5 = _channels_last_input(x4, lambda v: _reshape(v, [*ir.RankedTensorType(v.type).shape[:3], g, cg],
                                                               _G_LAST))
            acc = _value(linalg_d.fill(zero, outs=[_empty5(xt5, [ho, wo, g, fg], et)]))
            y5 = _grouped_hwcf_conv(xt5, wt, acc, strides, dilations)
        y = _reshape(y5, [n, ho, wo, g * fg], _G_LAST)
    if not _is_zero_fill(init):
        y = _add(y, _transpose(init4, NCHW_TO_NHWC))
    y = _transpose(y, NHWC_TO_NCHW)
    if op.name == "linalg.conv_2d_ngchw_gfchw":
        y = _reshape(y, list(ir.RankedTensorType(init.type).shape), _G_DIM)
    op.results[0].replace_all_uses_with(y)
    op.erase()


def _rewrite_pool(op) -> None:
    x, window, init = op.operands[0], op.operands[1], op.operands[2]
    y = _value(POOL_OPS[op.name](_channels_last_input(x), window,
                          outs=[_transpose(init, NCHW_TO_NHWC)],
                          strides=_ints(op.attributes["strides"]),
                          dilations=_ints(op.attributes["dilations"])))
    op.results[0].replace_all_uses_with(_transpose(y, NHWC_TO_NCHW))
    op.erase()


def _rewritable(op) -> bool:
    if op.name in GROUPED_OPS:         # static shapes but for a dynamic batch
        x, w, init = list(op.operands)[:3]
        return (isinstance(w.type, ir.RankedTensorType) and w.type.has_static_shape
                and all(isinstance(v.type, ir.RankedTensorType)
                        and all(not v.type.is_dynamic_dim(i) for i in range(1, v.type.rank)) for v in (x, init)))
    if op.name not in CONV_OPS and op.name not in POOL_OPS:
        return False
    tensors = [op.operands[0], op.operands[2]] + ([] if op.name in POOL_OPS else [op.operands[1]])
    # a dynamic batch is rewritten (convc's kernels read it at run time); other dynamic sizes
    # stay as they are
    return all(isinstance(v.type, ir.RankedTensorType) and v.type.rank == 4
               and all(not v.type.is_dynamic_dim(i) for i in range(1, 4)) for v in tensors)


# ------------------------------------------------------------------------------------------
# sinking the back-transposes through elementwise ops, so that pairs meet and cancel

def _is_transpose(op, perm: list[int]) -> bool:
    return (op is not None and op.name == "linalg.transpose"
            and list(ir.DenseI64ArrayAttr(op.attributes["permutation"])) == perm)


def _elementwise_4d(op) -> bool:
    """A linalg.generic that maps 4-D inputs to one 4-D output point by point (broadcasts
    allowed), with a body that does not read the loop indices."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return False
    if any("parallel" not in str(a) for a in op.attributes["iterator_types"]):
        return False
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if maps[-1] != ir.AffineMap.get_identity(4) or len(maps[-1].results) != 4:
        return False
    body = [o.operation.name for o in op.regions[0].blocks[0].operations]
    return "linalg.index" not in body and all(m.n_dims == 4 for m in maps)


# loop dims of an NCHW generic in terms of the NHWC one's: d = (e0, e3, e1, e2)
def _nchw_loops_in_nhwc() -> ir.AffineMap:
    e = [ir.AffineDimExpr.get(i) for i in range(4)]
    return ir.AffineMap.get(4, 0, [e[0], e[3], e[1], e[2]])


def _sink_through(gen, nhwc_of: dict) -> ir.Value:
    """Rebuilds elementwise generic `gen` (NCHW loops) over NHWC loops. Inputs that are
    back-transposes are read from their NHWC source; others keep their value with the map
    composed. Returns the NHWC result."""
    n_in = len(gen.operands) - 1
    maps = [ir.AffineMapAttr(a).value for a in gen.attributes["indexing_maps"]]
    to_old = _nchw_loops_in_nhwc()
    ins, new_maps = [], []
    ident = ir.AffineMap.get_identity(4)
    for v, m in zip(list(gen.operands)[:n_in], maps[:n_in]):
        if m == ident:
            # a full-size NCHW operand not yet channels-last gets its own transpose, which
            # cancels once its producer's back-transpose sinks to it
            ins.append(nhwc_of[v] if v in nhwc_of else _transpose(v, NCHW_TO_NHWC))
            new_maps.append(ident)
        else:
            ins.append(v)
            new_maps.append(ir.AffineMap.get(4, 0, [e.compose(to_old) for e in m.results]))
    out = gen.operands[n_in]
    init = _empty_like(out, NCHW_TO_NHWC)
    new_maps.append(ir.AffineMap.get_identity(4))
    new = linalg_d.GenericOp([init.type], ins, [init],
                             ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps]),
                             gen.attributes["iterator_types"])
    old_block = gen.regions[0].blocks[0]
    block = new.regions[0].blocks.append(*[a.type for a in old_block.arguments])
    for old_a, new_a in zip(old_block.arguments, block.arguments):
        old_a.replace_all_uses_with(new_a)
    for o in list(old_block.operations):
        o.operation.detach_from_parent()
        ir.InsertionPoint(block).insert(o.operation)
    return new.results[0]


def _is_channel_concat(op) -> bool:
    return (op.name == "tensor.concat" and ir.IntegerAttr(op.attributes["dim"]).value == 1
            and ir.RankedTensorType(op.results[0].type).rank == 4)


def _concat_nhwc(op) -> ir.Value:
    """A channel concat (NCHW dim 1) rebuilt on channels-last inputs (NHWC dim 3)."""
    ins = []
    for v in op.operands:
        p = _owner(v)
        ins.append(p.operands[0] if _is_transpose(p, NHWC_TO_NCHW) else _transpose(v, NCHW_TO_NHWC))
    t = ir.RankedTensorType(op.results[0].type)
    shape = [t.shape[p] for p in NCHW_TO_NHWC]
    return tensor_d.concat(ir.RankedTensorType.get(shape, t.element_type), 3, ins)


def _sink_transposes(func) -> None:
    """Moves every NHWC->NCHW transpose down through elementwise users and channel concats
    until it meets an NCHW->NHWC transpose (both vanish) or an op that needs NCHW (it stays)."""
    work = [op for op in walk_ops(func) if _is_transpose(op, NHWC_TO_NCHW)]
    while work:
        op = work.pop()
        src = op.operands[0]
        users = []
        for use in op.results[0].uses:
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if not any(user == u for u, _ in users):
                users.append((user, use.operand_number))
        for user, operand_number in users:
            if _is_transpose(user, NCHW_TO_NHWC):
                user.results[0].replace_all_uses_with(src)
                user.erase()
            elif _is_channel_concat(user):
                with ir.InsertionPoint(user), user.location:
                    back = _transpose(_concat_nhwc(user), NHWC_TO_NCHW)
                user.results[0].replace_all_uses_with(back)
                user.erase()
                work.append(_owner(back))
            elif _elementwise_4d(user) and operand_number < len(user.operands) - 1:
                nhwc_of = {}
                for v in list(user.operands)[:-1]:
                    p = _owner(v)
                    if _is_transpose(p, NHWC_TO_NCHW):
                        nhwc_of[v] = p.operands[0]
                with ir.InsertionPoint(user), user.location:
                    back = _transpose(_sink_through(user, nhwc_of), NHWC_TO_NCHW)
                user.results[0].replace_all_uses_with(back)
                user.erase()
                work.append(_owner(back))
        if not list(op.results[0].uses):
            op.erase()


def _truncf(v: ir.Value, et: ir.Type) -> ir.Value:
    """v converted elementwise to float type et (a linalg.generic)."""
    t = ir.RankedTensorType(v.type)
    init = tensor_d.EmptyOp([tensor_d.dim(v, arith_d.constant(ir.IndexType.get(), i)) if t.is_dynamic_dim(i)
                             else t.shape[i] for i in range(t.rank)], et).result
    ident = ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank))
    gen = linalg_d.GenericOp([init.type], [v], [init], ir.ArrayAttr.get([ident, ident]),
                             ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * t.rank))
    block = gen.regions[0].blocks.append(t.element_type, et)
    with ir.InsertionPoint(block):
        linalg_d.YieldOp([arith_d.truncf(et, block.arguments[0])])
    return gen.results[0]


def _demote_conv_inputs(module: ir.Module, et: ir.Type) -> None:
    """--precision f16/bf16: every f32 conv reads f16/bf16 activations and filters (f32
    accumulation and output). A zero pad is re-created on the demoted activation."""
    for conv in list(walk_ops(module.operation, "linalg.conv_2d_nhwc_fhwc")):
        x, w = conv.operands[0], conv.operands[1]
        if str(ir.RankedTensorType(x.type).element_type) != "f32":
            continue
        with ir.InsertionPoint(conv), conv.location:
            pad = _owner(x)
            if pad is not None and pad.name == "tensor.pad" and len(pad.operands) == 1:
                src = _truncf(pad.operands[0], et)
                t = ir.RankedTensorType(x.type)
                low = [int(v) for v in pad.attributes["static_low"]]
                high = [int(v) for v in pad.attributes["static_high"]]
                new = tensor_d.PadOp(ir.RankedTensorType.get(list(t.shape), et), src, [], [], low, high)
                block = new.regions[0].blocks.append(*([ir.IndexType.get()] * t.rank))
                with ir.InsertionPoint(block):
                    tensor_d.YieldOp(arith_d.constant(et, 0.0))
                xd = new.result
            else:
                xd = _truncf(x, et)
            y = _value(linalg_d.conv_2d_nhwc_fhwc(xd, _truncf(w, et), outs=[conv.operands[2]],
                                                  strides=_ints(conv.attributes["strides"]),
                                                  dilations=_ints(conv.attributes["dilations"])))
        conv.results[0].replace_all_uses_with(y)
        conv.erase()


def channels_last(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-channels-last (with options.precision f16/bf16, also the conv input demotion)."""
    with module.context, ir.Location.unknown():
        for op in [o for o in walk_ops(module.operation) if _rewritable(o)]:
            with ir.InsertionPoint(op), op.location:
                (_rewrite_pool if op.name in POOL_OPS else
                 _rewrite_grouped if op.name in GROUPED_OPS else _rewrite_conv)(op)
        for func in walk_ops(module.operation):
            if func.name in ("func.func", "util.func"):
                _sink_transposes(func)
        _isolate_transposes(module)
        demote = {"bf16": ir.BF16Type.get, "f16": ir.F16Type.get}.get(getattr(options, "precision", None))
        if demote is not None:
            _demote_conv_inputs(module, demote())
        _erase_dead(module)
    return module


def _after_conv(v: ir.Value, depth: int = 4) -> bool:
    """v is a conv's result, possibly through elementwise generics (its fused epilogue)."""
    op = _owner(v)
    if op is None or depth == 0:
        return False
    if _is_nhwc_conv(op):
        return True
    if op.name in ("tensor.collapse_shape", "tensor.expand_shape"):     # a grouped conv's view
        return _after_conv(op.operands[0], depth - 1)
    return op.name == "linalg.generic" and any(_after_conv(x, depth - 1) for x in list(op.operands)[:-1])


def _barrier(v: ir.Value) -> ir.Value:
    """v behind a util.optimization_barrier (IREE cannot fold or fuse across it). A dynamic
    size (the batch) is tied back onto the result, since IREE cannot resolve sizes through
    the barrier."""
    t = ir.RankedTensorType(v.type)
    dims = [tensor_d.dim(v, arith_d.constant(ir.IndexType.get(), i)) for i in range(t.rank) if t.is_dynamic_dim(i)]
    out = _value(util_d.optimization_barrier([v.type], [v]))
    return flow_d.tensor_tie_shape(out, dims) if dims else out


def _isolate_transposes(module: ir.Module) -> None:
    """Transposes left next to a conv get a barrier in between: IREE would fuse one feeding a
    conv (the model's NCHW input) into the conv's dispatch, which would then read NCHW, and
    one producing the model's NCHW output into the conv's epilogue, which would write it (one
    that feeds another op, e.g. a pool, fuses into that op instead)."""
    for t in list(walk_ops(module.operation, "linalg.transpose")):
        users = [u.owner.operation if hasattr(u.owner, "operation") else u.owner for u in t.results[0].uses]
        if (_is_transpose(t, NHWC_TO_NCHW) and not any(u.name.startswith("linalg.") for u in users)
                and _after_conv(t.operands[0])):
            with ir.InsertionPoint(t), t.location:
                x = t.operands[0]
                t.operands[0] = _barrier(x)
    for conv in [c for c in walk_ops(module.operation) if _is_nhwc_conv(c)]:
        x = conv.operands[0]
        holder, index = conv, 0
        # through the pad and (a grouped conv's input) the [N, H, W, G, C/G] view
        while _owner(x) is not None and _owner(x).name in ("tensor.pad", "tensor.expand_shape"):
            holder, index = _owner(x), 0
            x = holder.operands[0]
        if _is_transpose(_owner(x), NCHW_TO_NHWC):
            with ir.InsertionPoint(holder), holder.location:
                holder.operands[index] = _barrier(x)


def _erase_dead(module: ir.Module) -> None:
    """Drops transposes/empties/pads left without users by the rewrites."""
    dead = ("linalg.transpose", "tensor.empty", "tensor.pad", "linalg.fill", "arith.constant", "tensor.dim",
            "tensor.expand_shape", "tensor.collapse_shape")
    changed = True
    while changed:
        changed = False
        for op in list(walk_ops(module.operation)):
            if op.name in dead and all(not list(r.uses) for r in op.results):
                op.erase()
                changed = True



def layout_counts(module: ir.Module) -> dict[str, int]:
    """How many ops of each layout-relevant kind a module holds (for tests and --report)."""
    out: dict[str, int] = {}
    for op in walk_ops(module.operation):
        if op.name in CONV_OPS or op.name in POOL_OPS or op.name in GROUPED_OPS or op.name in NHWC_CONVS + (
                "linalg.transpose",):
            out[op.name] = out.get(op.name, 0) + 1
    return out


# ------------------------------------------------------------------------------------------
# what is left after IREE: transpose dispatches, each with why it exists

_LOOK_THROUGH = ("flow.tensor.reshape", "flow.tensor.bitcast", "hal.tensor.import", "hal.tensor.barrier",
                 "util.optimization_barrier")


def _is_transpose_function(func) -> bool:
    """A dispatch whose work is a layout change: a linalg.transpose, or a copy generic whose
    input map is a non-identity permutation."""
    ops = [o for o in walk_ops(func) if o.name.startswith("linalg.") and o.name != "linalg.yield"]
    if any(o.name == "linalg.transpose" for o in ops):
        return True
    gens = [o for o in ops if o.name == "linalg.generic"]
    if len(gens) != 1 or len(ops) != 1:
        return False
    maps = [ir.AffineMapAttr(a).value for a in gens[0].attributes["indexing_maps"]]
    return (len(maps) == 2 and maps[0].is_permutation and maps[1].is_permutation
            and maps[0] != maps[1] and len(maps[0].results) > 1)


def _entry(dispatch) -> str:
    ep = dispatch.attributes["entry_points"]
    return str(ep[0]).split("::")[-1].lstrip("@")


def _source(v: ir.Value):
    """The op producing v, looking through reshapes/imports (None for a function argument)."""
    while True:
        op = _owner(v)
        if op is None or op.name not in _LOOK_THROUGH:
            return op
        v = op.operands[0]


def _sinks(v: ir.Value) -> list:
    out = []
    for use in v.uses:
        op = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if op.name in _LOOK_THROUGH or op.name == "hal.tensor.export":
            for r in op.results:
                out += _sinks(r)
            if op.name == "hal.tensor.export":
                out.append(op)
        else:
            out.append(op)
    return out


def _in_initializer(op) -> bool:
    while op is not None:
        if op.name == "util.initializer":
            return True
        op = op.parent if hasattr(op, "parent") else None
    return False


def transpose_dispatches(module: ir.Module) -> list[tuple[str, str]]:
    """(dispatch entry, why it exists) for every transpose dispatch of a flow-phase module."""
    transposing = set()
    for exe in walk_ops(module.operation, "flow.executable"):
        for func in walk_ops(exe, "func.func"):
            if _is_transpose_function(func):
                transposing.add(ir.StringAttr(func.attributes["sym_name"]).value)
    out = []
    for d in walk_ops(module.operation, "flow.dispatch"):
        name = _entry(d)
        if name not in transposing:
            continue
        srcs = [_source(v) for v in d.operands if isinstance(v.type, ir.RankedTensorType)]
        sinks = [s for r in d.results for s in _sinks(r)]
        if _in_initializer(d):
            why = "module initialization (once per load): a weight's layout change"
        elif any(s is None for s in srcs):
            why = "model input: converts an NCHW input to channels-last"
        elif any(s.name in ("hal.tensor.export", "util.return", "func.return") for s in sinks):
            why = "model output: converts a channels-last result back to NCHW"
        else:
            prod = [_entry(s) for s in srcs if s is not None and s.name == "flow.dispatch"]
            cons = [_entry(s) for s in sinks if s.name == "flow.dispatch"]
            why = (f"between {', '.join(prod) or 'a non-dispatch value'} and "
                   f"{', '.join(cons) or 'a non-dispatch use'}: an op there needs another layout")
        out.append((name, why))
    return out
