"""The per-op rewrites into channels-last form: dense convs, grouped/depthwise convs, pools."""

from __future__ import annotations

from iree.compiler.dialects import arith as arith_d, linalg as linalg_d, tensor as tensor_d

from ..attrs import GROUPED_CONV_ATTR
from ..ir import ir
from .builders import (HWCF_TO_FHWC, NCHW_TO_NHWC, NHWC_TO_NCHW, add_elementwise, barrier, empty_like, ints, is_zero_fill,
                       owner, reshape, transpose, value_of)

CONV_OPS = ("linalg.conv_2d_nchw_fchw", "linalg.conv_2d_nhwc_hwcf")
# grouped and depthwise convs as PyTorch/ONNX imports produce them
GROUPED_OPS = ("linalg.depthwise_conv_2d_nchw_chw", "linalg.conv_2d_ngchw_gfchw")
# the channels-last forms convc's kernels read (and the matcher takes)
NHWC_CONVS = ("linalg.conv_2d_nhwc_fhwc", "linalg.depthwise_conv_2d_nhwc_hwc",
              "linalg.depthwise_conv_2d_nhwc_hwcm", "linalg.conv_2d_nhwgc_gfhwc")
POOL_OPS = {"linalg.pooling_nchw_max": linalg_d.pooling_nhwc_max,
            "linalg.pooling_nchw_sum": linalg_d.pooling_nhwc_sum}



def channels_last_input(x: ir.Value, view=None) -> ir.Value:
    """x (NCHW) in NHWC, then through `view` if given (a grouped conv's [N, H, W, G, C/G]);
    a pad of H/W only is re-created after the transpose and the view, so that IREE fuses it
    into the conv's dispatch as it does for NHWC models."""
    view = view or (lambda v: v)
    op = owner(x)
    if op is not None and op.name == "util.optimization_barrier" and len(op.operands) == 1:
        inner = owner(op.operands[0])
        if inner is not None and inner.name == "tensor.pad":
            # a pad kept out of the conv's dispatch (a quantized input's zero point,
            # convc-quantized-conv): re-created channels-last, still behind its barrier
            return barrier(channels_last_input(op.operands[0], view))
    if op is not None and op.name == "tensor.pad":
        low = [int(v) for v in op.attributes["static_low"]]
        high = [int(v) for v in op.attributes["static_high"]]
        body = [o.operation for o in op.regions[0].blocks[0].operations]
        if (len(low) == 4 and low[:2] == [0, 0] and high[:2] == [0, 0] and min(low + high) >= 0
                and len(op.operands) == 1 and len(body) == 1):
            inner = owner(op.operands[0])
            if inner is not None and inner.name == "util.optimization_barrier" and len(inner.operands) == 1:
                # the padded tensor kept apart from its producer too (convc-quantized-conv's
                # zero-point pads): transposed before that barrier, where it meets the producer's
                src = view(barrier(transpose(inner.operands[0], NCHW_TO_NHWC)))
            else:
                src = view(transpose(op.operands[0], NCHW_TO_NHWC))
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
    return view(transpose(x, NCHW_TO_NHWC))



def rewrite_conv(op) -> None:
    x, w, init = op.operands[0], op.operands[1], op.operands[2]
    nchw = op.name == "linalg.conv_2d_nchw_fchw"
    strides = ints(op.attributes["strides"])
    dilations = ints(op.attributes["dilations"])
    xt = channels_last_input(x) if nchw else x
    wt = transpose(w, NCHW_TO_NHWC if nchw else HWCF_TO_FHWC)
    # the barrier keeps the transposed filter a dispatch operand: IREE would otherwise fuse a
    # runtime filter's transpose into the conv (a layout no kernel reads) or fold a splat
    # filter into the conv's body; constant filters are still transposed at compile time
    wt = barrier(wt)
    out_perm = NCHW_TO_NHWC if nchw else [0, 1, 2, 3]
    et = ir.RankedTensorType(init.type).element_type
    zero = arith_d.constant(et, 0.0 if isinstance(et, ir.FloatType) else 0)
    acc = value_of(linalg_d.fill(zero, outs=[empty_like(init, out_perm)]))
    y = value_of(linalg_d.conv_2d_nhwc_fhwc(xt, wt, outs=[acc], strides=strides, dilations=dilations))
    if not is_zero_fill(init):
        y = add_elementwise(y, transpose(init, out_perm) if nchw else init)
    if nchw:
        y = transpose(y, NHWC_TO_NCHW)
    op.results[0].replace_all_uses_with(y)
    op.erase()



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
    return grouped_generic(x, w, acc, ir.ArrayAttr.get([ir.Attribute.parse(m) for m in maps]),
                           ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{i}>") for i in iters]))


def grouped_generic(x: ir.Value, w: ir.Value, acc: ir.Value, maps: ir.ArrayAttr, iters: ir.ArrayAttr) -> ir.Value:
    """The grouped conv generic over (maps, iters): products of x and w (widened to the
    accumulator's type) summed into acc, marked as a grouped conv."""
    at = ir.RankedTensorType(acc.type)
    gen = linalg_d.GenericOp([at], [x, w], [acc], maps, iters)
    xe, we = ir.RankedTensorType(x.type).element_type, ir.RankedTensorType(w.type).element_type
    block = gen.regions[0].blocks.append(xe, we, at.element_type)
    with ir.InsertionPoint(block):
        a, b, o = block.arguments
        a = a if a.type == at.element_type else arith_d.extf(at.element_type, a)
        b = b if b.type == at.element_type else arith_d.extf(at.element_type, b)
        linalg_d.YieldOp([arith_d.addf(o, arith_d.mulf(a, b))])
    gen.attributes[GROUPED_CONV_ATTR] = ir.UnitAttr.get()
    return gen.results[0]


def is_nhwc_conv(op) -> bool:
    return op.name in NHWC_CONVS or (op.name == "linalg.generic" and GROUPED_CONV_ATTR in op.attributes)


def _empty5(like: ir.Value, rest: list[int], et: ir.Type) -> ir.Value:
    """tensor.empty of [N, *rest], N being like's (possibly dynamic) batch."""
    t = ir.RankedTensorType(like.type)
    n = tensor_d.dim(like, arith_d.constant(ir.IndexType.get(), 0)) if t.is_dynamic_dim(0) else t.shape[0]
    return tensor_d.EmptyOp([n, *rest], et).result


_G_DIM = [[0], [1, 2], [3], [4]]        # NCHW <-> N,G,C/G,H,W (and F,R,S <-> G,F/G,R,S...)
_G_LAST = [[0], [1], [2], [3, 4]]       # NHWC <-> N,H,W,G,C/G


def rewrite_grouped(op) -> None:
    """A grouped/depthwise NCHW conv in channels-last form: depthwise (one input channel per
    group) -> linalg.depthwise_conv_2d_nhwc_hwc / _hwcm, whose filter is [R, S, C(, M)]
    (output channel f = c * M + m, as in PyTorch); otherwise a grouped generic on
    [N, H, W, G, C/G] views (group-major channels, as in PyTorch) with an [R, S, C/G, G, F/G]
    filter (_grouped_hwcf_conv)."""
    x, w, init = op.operands[0], op.operands[1], op.operands[2]
    strides = ints(op.attributes["strides"])
    dilations = ints(op.attributes["dilations"])
    et = ir.RankedTensorType(init.type).element_type
    zero = arith_d.constant(et, 0.0 if isinstance(et, ir.FloatType) else 0)
    if op.name == "linalg.depthwise_conv_2d_nchw_chw":
        x4, init4 = x, init
        wt = transpose(w, [1, 2, 0])                                  # C,R,S -> R,S,C
        acc = value_of(linalg_d.fill(zero, outs=[empty_like(init4, NCHW_TO_NHWC)]))
        y = value_of(linalg_d.depthwise_conv_2d_nhwc_hwc(channels_last_input(x4), barrier(wt), outs=[acc],
                                                       strides=strides, dilations=dilations))
    else:
        n, g, cg, h, wd = ir.RankedTensorType(x.type).shape
        _, fg, _, r, sz = ir.RankedTensorType(w.type).shape
        ho, wo = ir.RankedTensorType(init.type).shape[3:]
        src = owner(x)
        if src is not None and src.name == "tensor.expand_shape" and ir.RankedTensorType(src.operands[0].type).rank == 4:
            x4 = src.operands[0]
        else:
            x4 = reshape(x, [n, g * cg, h, wd], _G_DIM)
        init4 = reshape(init, [n, g * fg, ho, wo], _G_DIM)
        if cg == 1:
            xt = channels_last_input(x4)
            w4 = reshape(w, [g, fg, r, sz], [[0], [1, 2], [3], [4]])
            wt = barrier(transpose(w4, [2, 3, 0, 1]))                   # G,M,R,S -> R,S,G,M
            acc = value_of(linalg_d.fill(zero, outs=[_empty5(xt, [ho, wo, g, fg], et)]))
            y5 = value_of(linalg_d.depthwise_conv_2d_nhwc_hwcm(xt, wt, outs=[acc], strides=strides,
                                                             dilations=dilations))
        else:
            wt = barrier(transpose(w, [3, 4, 2, 0, 1]))              # G,F,C,R,S -> R,S,C,G,F
            xt5 = channels_last_input(x4, lambda v: reshape(v, [*ir.RankedTensorType(v.type).shape[:3], g, cg],
                                                               _G_LAST))
            acc = value_of(linalg_d.fill(zero, outs=[_empty5(xt5, [ho, wo, g, fg], et)]))
            y5 = _grouped_hwcf_conv(xt5, wt, acc, strides, dilations)
        y = reshape(y5, [n, ho, wo, g * fg], _G_LAST)
    if not is_zero_fill(init):
        y = add_elementwise(y, transpose(init4, NCHW_TO_NHWC))
    y = transpose(y, NHWC_TO_NCHW)
    if op.name == "linalg.conv_2d_ngchw_gfchw":
        y = reshape(y, list(ir.RankedTensorType(init.type).shape), _G_DIM)
    op.results[0].replace_all_uses_with(y)
    op.erase()


def rewrite_pool(op) -> None:
    x, window, init = op.operands[0], op.operands[1], op.operands[2]
    y = value_of(POOL_OPS[op.name](channels_last_input(x), window,
                          outs=[transpose(init, NCHW_TO_NHWC)],
                          strides=ints(op.attributes["strides"]),
                          dilations=ints(op.attributes["dilations"])))
    op.results[0].replace_all_uses_with(transpose(y, NHWC_TO_NCHW))
    op.erase()


def rewritable(op) -> bool:
    if op.name in GROUPED_OPS:
        # depthwise: a dynamic batch and image sizes (the direct kernel reads them at run time);
        # grouped [N, G, C/G, H, W] views: static shapes but for a dynamic batch
        x, w, init = list(op.operands)[:3]
        image = (2, 3) if op.name == "linalg.depthwise_conv_2d_nchw_chw" else ()
        return (isinstance(w.type, ir.RankedTensorType) and w.type.has_static_shape
                and all(isinstance(v.type, ir.RankedTensorType)
                        and all(not v.type.is_dynamic_dim(i) for i in range(1, v.type.rank) if i not in image)
                        for v in (x, init)))
    if op.name not in CONV_OPS and op.name not in POOL_OPS:
        return False
    acts = [op.operands[0], op.operands[2]]
    filters = [] if op.name in POOL_OPS else [op.operands[1]]
    # a dynamic batch and dynamic image sizes are rewritten (convc's kernels read them at run
    # time); dynamic channels or filter sizes stay as they are
    image = (1, 2) if op.name == "linalg.conv_2d_nhwc_hwcf" else (2, 3)
    return (all(isinstance(v.type, ir.RankedTensorType) and v.type.rank == 4 for v in acts + filters)
            and all(not v.type.is_dynamic_dim(i) for v in acts for i in range(1, 4) if i not in image)
            and all(v.type.has_static_shape for v in filters))

