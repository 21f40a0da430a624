"""convc-quantized-conv: float convs of dequantized int8 operands as int8 convs.

A QDQ model (ONNX QuantizeLinear/DequantizeLinear around each Conv, as onnxruntime's
quantize_static writes it) reaches IREE's input phase as

    x = dequantize_affine(xq: i8, sx, zx)          per tensor
    w = dequantize_affine(wq: i8, sw[F])           per output channel (or per tensor), zero point 0
    y = conv(pad(x, 0.0), w) outs(init)            f32 (init: the broadcast bias, or zeros)
    yq = quantize_affine(y, sy, zy)                ... which the next conv dequantizes

and IREE runs it as an f32 conv beside the (de)quantize dispatches. This pass rewrites the conv
into the integer conv the tensor cores run (s8 x s8 -> s32) and an elementwise epilogue:

    acc = conv(pad(xq, zx), wq) outs(0: i32)
    y   = init + float(acc - zx * colsum(wq)[f]) * (sx * sw[f])

which is the same sum: (xq - zx) * wq summed over the window, the padded taps holding zx
(dequantized 0.0). IREE fuses the epilogue and the quantize that follows into the conv's
dispatch, so the conv reads and writes int8 and the activations stay int8 between convs.
colsum (the filter's sum per output channel) is an IR reduction over the constant filter, which
IREE evaluates at compile time.

The pad with the zero point: a symmetric activation (zx = 0) pads with zeros, fused into the
conv as usual. An asymmetric one pads with zx, which the kernels' zero-filled windows cannot
give, so its padded input is built by its own dispatch (behind a barrier, as convc's other
materialized pads): correct, one extra pass over the int8 activation.

Few input channels (C not a multiple of 16, the RGB stem: int8 pixel rows that are no 16-byte
TMA vectors): the conv runs on (xq - zx) and wq as integer-valued f16 tensors summed in f32,
which is exact while every partial sum stays below 2^24 (checked from the filter size), on the
f16 kernels built for such convs; the zero point is subtracted before the pad, so it pads with
zeros.

Declined (left as IREE's float conv): grouped and depthwise convs, non-constant scales or
zero points, a weight zero point that is not 0, other integer ranges (uint8: quant_min 0).
"""

from __future__ import annotations

from iree.compiler.dialects import arith as arith_d, linalg as linalg_d, math as math_d, tensor as tensor_d

from ..ir import float_const, int_const, ir, walk_ops
from .builders import barrier, erase_dead, owner, pad, value_of, zero

# the named dense convs the rewrite takes, and the position of F in their filter / output
CONVS = {
    "linalg.conv_2d_nchw_fchw": (0, 1),
    "linalg.conv_2d_nhwc_fhwc": (0, 3),
    "linalg.conv_2d_nhwc_hwcf": (3, 3),
    # depthwise: the f16 route always (the direct kernel; no int8 depthwise kernel)
    "linalg.depthwise_conv_2d_nchw_chw": (0, 1),
}
DEPTHWISE = ("linalg.depthwise_conv_2d_nchw_chw",)
DEQUANTIZE = "iree_linalg_ext.dequantize_affine"
QUANTIZE = "iree_linalg_ext.quantize_affine"
INT8_RANGE = (-128, 127)


class Dequantized:
    """A dequantize_affine of an int8 tensor: its operands read off the op."""

    def __init__(self, op):
        self.view = None        # a collapse_shape of the dequantized tensor the conv reads
        ins = list(op.operands)[:-1]
        maps = [ir.AffineMapAttr(m).value for m in op.attributes["indexing_maps"]]
        self.q, self.scale = ins[0], ins[1]
        self.scale_map = maps[1]
        self.zp = ins[2] if len(ins) > 2 else None
        self.zp_map = maps[2] if len(ins) > 2 else None
        self.range = (ir.IntegerAttr(op.attributes["quant_min"]).value, ir.IntegerAttr(op.attributes["quant_max"]).value)

    @classmethod
    def of(cls, v: ir.Value) -> "Dequantized | None":
        op = owner(v)
        if op is None or op.name != DEQUANTIZE:
            return None
        d = cls(op)
        if str(ir.ShapedType(d.q.type).element_type) != "i8" or d.range != INT8_RANGE:
            return None
        return d

    def zero_point(self) -> int | None:
        """The per-tensor zero point (0 without one); None: not a scalar constant."""
        if self.zp is None:
            return 0
        if list(self.zp_map.results):
            return None
        return int_const(self.zp)

    def channel_scale(self, f_dim: int) -> bool:
        """Whether the scale is per tensor or indexed by dimension f_dim only."""
        results = list(self.scale_map.results)
        return not results or (len(results) == 1 and str(results[0]) == f"d{f_dim}")


def _input(x: ir.Value, pad_value: float | None = 0.0):
    """(dequantized input, pad op or None) of a conv input (a pool's: any constant pad value,
    pad_value=None), or None."""
    op = owner(x)
    if op is not None and op.name == "tensor.pad":
        yielded = op.regions[0].blocks[0].operations[0].operands[0]
        value = float_const(yielded)
        if value is None or (pad_value is not None and value != pad_value):
            return None
        d = Dequantized.of(op.operands[0])
        return (d, op) if d is not None else None
    d = Dequantized.of(x)
    return (d, None) if d is not None else None


def _filter(w: ir.Value) -> "Dequantized | None":
    """The dequantized filter, read through a collapse_shape (a depthwise filter's [C, 1, R, S]
    as [C, R, S])."""
    view = owner(w)
    if view is not None and view.name == "tensor.collapse_shape":
        d = Dequantized.of(view.operands[0])
        if d is not None:
            d.view = view
        return d
    return Dequantized.of(w)


def quantized_operands(op):
    """(input dequantize, its pad, filter dequantize, zx) where op is a rewritable conv, else None."""
    if op.name not in CONVS:
        return None
    f_dim, _ = CONVS[op.name]
    got = _input(op.operands[0])
    wd = _filter(op.operands[1])
    if got is None or wd is None:
        return None
    xd, pad_op = got
    zx = xd.zero_point()
    if zx is None or list(xd.scale_map.results):
        return None
    if wd.zero_point() != 0 or not wd.channel_scale(f_dim):
        return None
    if not all(ir.RankedTensorType(v.type).has_static_shape for v in (xd.q, wd.q, op.results[0])):
        return None
    if op.name in DEPTHWISE and not exact_in_f16(op, zx):
        return None
    return xd, pad_op, wd, zx


def _channel_map(rank: int, dim: int) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(dim)]))


def _identity(rank: int) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))


def _iterators(kinds: list[str]) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])


def filter_sums(wq: ir.Value, f_dim: int) -> ir.Value:
    """[F] i32: the int8 filter summed over everything but its output-channel dimension."""
    t = ir.RankedTensorType(wq.type)
    i32 = ir.IntegerType.get_signless(32)
    F = t.shape[f_dim]
    acc = value_of(linalg_d.fill(zero(i32), outs=[tensor_d.EmptyOp([F], i32).result]))
    kinds = ["parallel" if d == f_dim else "reduction" for d in range(t.rank)]
    gen = linalg_d.GenericOp([acc.type], [wq], [acc],
                             ir.ArrayAttr.get([_identity(t.rank), _channel_map(t.rank, f_dim)]), _iterators(kinds))
    block = gen.regions[0].blocks.append(t.element_type, i32)
    with ir.InsertionPoint(block):
        linalg_d.YieldOp([arith_d.addi(block.arguments[1], arith_d.extsi(i32, block.arguments[0]))])
    return gen.results[0]


def channel_scales(sx: ir.Value, sw: ir.Value) -> ir.Value:
    """[F] f32: sx * sw[f], the accumulator's scale per output channel (constant-folded by IREE)."""
    t = ir.RankedTensorType(sw.type)
    gen = linalg_d.GenericOp([t], [sw], [tensor_d.EmptyOp(list(t.shape), t.element_type).result],
                             ir.ArrayAttr.get([_identity(1)] * 2), _iterators(["parallel"]))
    block = gen.regions[0].blocks.append(t.element_type, t.element_type)
    with ir.InsertionPoint(block):
        linalg_d.YieldOp([arith_d.mulf(block.arguments[0], sx)])
    return gen.results[0]


def dequantize_accumulator(acc: ir.Value, init: ir.Value, c_dim: int, scale: ir.Value,
                           corr: ir.Value | None) -> ir.Value:
    """init + float(acc - corr[c]) * scale[c] (scale: [F], or a scalar): the f32 conv result
    of the int32 accumulator (or of an exact f32 one, _rewrite_as_f16)."""
    t = ir.RankedTensorType(acc.type)
    f32 = ir.F32Type.get()
    rank = t.rank
    chan = _channel_map(rank, c_dim)
    ins, maps = [acc], [_identity(rank)]
    if corr is not None:
        ins.append(corr)
        maps.append(chan)
    if _shaped(scale):
        ins.append(scale)
        maps.append(chan)
    ins.append(init)
    maps.append(_identity(rank))
    out = tensor_d.EmptyOp(list(t.shape), f32).result
    gen = linalg_d.GenericOp([out.type], ins, [out], ir.ArrayAttr.get(maps + [_identity(rank)]),
                             _iterators(["parallel"] * rank))
    block = gen.regions[0].blocks.append(*[ir.ShapedType(v.type).element_type for v in ins], f32)
    args = list(block.arguments)
    with ir.InsertionPoint(block):
        a = args.pop(0)
        if corr is not None:
            a = arith_d.subi(a, args.pop(0))
        s = args.pop(0) if _shaped(scale) else scale
        if isinstance(a.type, ir.IntegerType):
            a = arith_d.sitofp(f32, a)
        y = arith_d.addf(args.pop(0), arith_d.mulf(a, s))
        linalg_d.YieldOp([y])
    return gen.results[0]


def _shaped(v: ir.Value) -> bool:
    return str(v.type).startswith("tensor<")


def f32_or_int(v: ir.Value) -> bool:
    """Whether v (a tensor or scalar) holds f32 or signless integers: the types as_generic writes for."""
    t = ir.ShapedType(v.type).element_type if _shaped(v) else v.type
    return str(t) == "f32" or isinstance(t, ir.IntegerType)


def _scalar(v: ir.Value) -> ir.Value:
    """A scalar f32 operand of a dequantize (a 0-d tensor is read through tensor.extract)."""
    if _shaped(v):
        return tensor_d.extract(v, [])
    return v


def integer_valued_f16(q: ir.Value, zp: int) -> ir.Value:
    """q - zp (an int8 tensor less its zero point) as f16: exact (integers of at most 9 bits)."""
    t = ir.RankedTensorType(q.type)
    f16, i32 = ir.F16Type.get(), ir.IntegerType.get_signless(32)
    out = tensor_d.EmptyOp(list(t.shape), f16).result
    gen = linalg_d.GenericOp([out.type], [q], [out], ir.ArrayAttr.get([_identity(t.rank)] * 2),
                             _iterators(["parallel"] * t.rank))
    block = gen.regions[0].blocks.append(t.element_type, f16)
    with ir.InsertionPoint(block):
        v = arith_d.extsi(i32, block.arguments[0])
        if zp:
            v = arith_d.subi(v, arith_d.constant(i32, ir.IntegerAttr.get(i32, zp)))
        linalg_d.YieldOp([arith_d.sitofp(f16, v)])
    return gen.results[0]


def _quantized(x: ir.Value, scale: ir.Value, lo: int, hi: int, zp: ir.Value | None = None) -> ir.Value:
    """clamp(roundeven(x / scale) (+ zp), lo, hi) in f32: a quantize's arithmetic (IREE's)."""
    f32 = ir.F32Type.get()
    v = math_d.roundeven(arith_d.divf(x, scale))
    if zp is not None:
        v = arith_d.addf(v, arith_d.sitofp(f32, zp))
    return arith_d.minnumf(arith_d.maxnumf(v, arith_d.constant(f32, float(lo))), arith_d.constant(f32, float(hi)))


def requantized_f16(qop, zp: int) -> ir.Value:
    """The integers quantize_affine `qop` computes from its f32 input, less zero point zp, as
    f16 in one elementwise op from the f32 values: clamp(roundeven(x / s) + zp) - zp. Not a
    widening of the int8 tensor: IREE fused that into the conv's dispatch (flow IR of a QDQ
    model with an RGB stem: "operand is produced by linalg.generic", a conv convc declines)."""
    x, scale = qop.operands[0], qop.operands[1]
    lo, hi = (ir.IntegerAttr(qop.attributes[k]).value for k in ("quant_min", "quant_max"))
    t = ir.RankedTensorType(x.type)
    f16 = ir.F16Type.get()
    out = tensor_d.EmptyOp(list(t.shape), f16).result
    gen = linalg_d.GenericOp([out.type], [x], [out], ir.ArrayAttr.get([_identity(t.rank)] * 2),
                             _iterators(["parallel"] * t.rank))
    block = gen.regions[0].blocks.append(t.element_type, f16)
    with ir.InsertionPoint(block):
        # clamp(q + zp, lo, hi) - zp = clamp(q, lo - zp, hi - zp)
        linalg_d.YieldOp([arith_d.truncf(f16, _quantized(block.arguments[0], _scalar(scale), lo - zp, hi - zp))])
    return gen.results[0]


def _quantize_zero_point(qop) -> int | None:
    """A per-tensor quantize_affine's constant zero point (0 without one), else None."""
    ins = list(qop.operands)[:-1]
    maps = [ir.AffineMapAttr(m).value for m in qop.attributes["indexing_maps"]]
    if list(maps[1].results) or _shaped(ins[1]):
        return None
    if len(ins) < 3:
        return 0
    return None if list(maps[2].results) else int_const(ins[2])


def exact_in_f16(op, zx: int) -> bool:
    """Whether the conv's sums stay exact on f16 operands with f32 accumulation: every product
    (at most 255 x 128) and every partial sum below 2^24."""
    wt = ir.RankedTensorType(op.operands[1].type)
    f_dim, _ = CONVS[op.name]
    k = 1
    for d, n in enumerate(wt.shape):
        k *= 1 if d == f_dim else n
    return k * max(127 - zx, 128 + zx) * 128 < 2 ** 24


def rewrite_quantized_conv(op, xd: Dequantized, pad_op, wd: Dequantized, zx: int) -> None:
    f_dim, c_dim = CONVS[op.name]
    i8, i32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
    xq = xd.q
    channels = ir.RankedTensorType(xq.type).shape[1 if "nchw" in op.name else 3]
    if (channels % 16 or op.name in DEPTHWISE) and exact_in_f16(op, zx):
        # Few input channels (the RGB stem: 3): int8 rows of C bytes are no TMA vectors, but
        # the same integers in f16 are exact and take the f16 kernels built for such convs
        # (the row-slab stem), the zero point subtracted before the pad (zeros again)
        return _rewrite_as_f16(op, xd, pad_op, wd, zx)
    if pad_op is not None:
        low = list(ir.DenseI64ArrayAttr(pad_op.attributes["static_low"]))
        high = list(ir.DenseI64ArrayAttr(pad_op.attributes["static_high"]))
        if zx:
            # its own dispatch (the kernels' windows pad with zeros), fused neither into the conv
            # nor into the producer (which would write the padded buffer in place: a conv
            # result tied to its operand, which convc declines)
            xq = barrier(pad(barrier(xq), low, high, arith_d.constant(i8, ir.IntegerAttr.get(i8, zx))))
        else:
            xq = pad(xq, low, high, arith_d.constant(i8, ir.IntegerAttr.get(i8, zx)))
    out_t = ir.RankedTensorType(op.results[0].type)
    acc0 = value_of(linalg_d.fill(zero(i32), outs=[tensor_d.EmptyOp(list(out_t.shape), i32).result]))
    attrs = {k: op.attributes[k] for k in ("strides", "dilations") if k in op.attributes}
    builder = getattr(linalg_d, op.name.split(".", 1)[1])
    acc = value_of(builder(xq, wd.q, outs=[acc0], **{k: [int(x) for x in ir.DenseIntElementsAttr(v)]
                                                     for k, v in attrs.items()}))
    corr = None
    if zx:
        sums = filter_sums(wd.q, f_dim)
        corr = value_of(linalg_d.GenericOp(
            [sums.type], [sums], [tensor_d.EmptyOp(ir.RankedTensorType(sums.type).shape, i32).result],
            ir.ArrayAttr.get([_identity(1)] * 2), _iterators(["parallel"])))
        gen = owner(corr)
        block = gen.regions[0].blocks.append(i32, i32)
        with ir.InsertionPoint(block):
            linalg_d.YieldOp([arith_d.muli(block.arguments[0], arith_d.constant(i32, ir.IntegerAttr.get(i32, zx)))])
    sx = _scalar(xd.scale)
    if list(wd.scale_map.results):
        scale = channel_scales(sx, wd.scale)
    else:
        scale = arith_d.mulf(sx, _scalar(wd.scale))
    y = dequantize_accumulator(acc, op.operands[2], c_dim, scale, corr)
    op.results[0].replace_all_uses_with(y)
    op.erase()


def _rewrite_as_f16(op, xd: Dequantized, pad_op, wd: Dequantized, zx: int) -> None:
    """The conv of (xq - zx) and wq as integer-valued f16 operands summed in f32 (exact, see
    exact_in_f16), then init + acc * (sx * sw[f])."""
    f_dim, c_dim = CONVS[op.name]
    f16, f32 = ir.F16Type.get(), ir.F32Type.get()
    x = _f16_integers(xd, zx)
    if pad_op is not None:
        low = list(ir.DenseI64ArrayAttr(pad_op.attributes["static_low"]))
        high = list(ir.DenseI64ArrayAttr(pad_op.attributes["static_high"]))
        x = pad(x, low, high, arith_d.constant(f16, 0.0))
    w = integer_valued_f16(wd.q, 0)
    if wd.view is not None:
        shape = ir.RankedTensorType(wd.view.results[0].type).shape
        w = tensor_d.CollapseShapeOp(ir.RankedTensorType.get(shape, f16), w,
                                     wd.view.attributes["reassociation"]).result
    out_t = ir.RankedTensorType(op.results[0].type)
    acc0 = value_of(linalg_d.fill(zero(f32), outs=[tensor_d.EmptyOp(list(out_t.shape), f32).result]))
    attrs = {k: [int(v) for v in ir.DenseIntElementsAttr(op.attributes[k])] for k in ("strides", "dilations")
             if k in op.attributes}
    acc = value_of(getattr(linalg_d, op.name.split(".", 1)[1])(x, w, outs=[acc0], **attrs))
    sx = _scalar(xd.scale)
    scale = channel_scales(sx, wd.scale) if list(wd.scale_map.results) else arith_d.mulf(sx, _scalar(wd.scale))
    y = dequantize_accumulator(acc, op.operands[2], c_dim, scale, None)
    op.results[0].replace_all_uses_with(y)
    op.erase()


def as_generic(op) -> None:
    """A quantize_affine / dequantize_affine rewritten as the linalg.generic IREE decomposes it
    into (same arithmetic; scalar scales and zero points used in the body, not operands), so
    that convc-channels-last moves transposes through it like any elementwise op:
    quantize: clamp(roundeven(x / scale) + zp, qmin, qmax) -> int; dequantize: (q - zp) * scale,
    the difference taken in a wider integer."""
    operands, out = list(op.operands)[:-1], op.operands[-1]
    maps = list(op.attributes["indexing_maps"])
    out_t = ir.RankedTensorType(out.type)
    tensors = [i for i, v in enumerate(operands) if _shaped(v)]
    lo, hi = (ir.IntegerAttr(op.attributes[k]).value for k in ("quant_min", "quant_max"))
    gen = linalg_d.GenericOp([out_t], [operands[i] for i in tensors], [out],
                             ir.ArrayAttr.get([maps[i] for i in tensors] + [maps[-1]]),
                             _iterators(["parallel"] * out_t.rank))
    block = gen.regions[0].blocks.append(*[ir.ShapedType(operands[i].type).element_type for i in tensors],
                                         out_t.element_type)
    a = list(operands)
    for i, arg in zip(tensors, block.arguments):
        a[i] = arg
    f32 = ir.F32Type.get()
    with ir.InsertionPoint(block):
        if op.name == DEQUANTIZE:
            bits = ir.IntegerType(a[0].type).width
            wide = ir.IntegerType.get_signless(32 if bits < 32 else 64)
            v = arith_d.extsi(wide, a[0]) if bits < wide.width else a[0]
            if len(a) > 2:
                zbits = ir.IntegerType(a[2].type).width
                zp = (arith_d.extsi(wide, a[2]) if zbits < wide.width else
                      arith_d.trunci(wide, a[2]) if zbits > wide.width else a[2])
                v = arith_d.subi(v, zp)
            linalg_d.YieldOp([arith_d.mulf(arith_d.sitofp(f32, v), a[1])])
        else:
            v = _quantized(a[0], a[1], lo, hi, a[2] if len(a) > 2 else None)
            linalg_d.YieldOp([arith_d.fptosi(out_t.element_type, v)])
    op.results[0].replace_all_uses_with(gen.results[0])
    op.erase()


def _f16_integers(xd: Dequantized, zx: int) -> ir.Value:
    """xq - zx as f16: from the f32 values its quantize reads where it has one (the producer's
    epilogue then writes f16 integers), else widened from the int8 tensor behind a barrier."""
    qop = owner(xd.q)
    if qop is not None and qop.name == QUANTIZE and _quantize_zero_point(qop) == zx and str(
            ir.RankedTensorType(qop.operands[0].type).element_type) == "f32":
        return requantized_f16(qop, zx)
    return barrier(integer_valued_f16(xd.q, zx))     # kept out of the consumer's dispatch


POOLS = ("linalg.pooling_nchw_max", "linalg.pooling_nchw_sum")


def quantized_max_pool(op):
    """(input dequantize, its pad, zx) of a max- or sum-pool (a global average pool's sum) of
    dequantized int8 values, else None. Sums take no pad."""
    if op.name not in POOLS:
        return None
    if op.name.endswith("_sum"):
        taps = 1
        for n in ir.RankedTensorType(op.operands[1].type).shape:
            taps *= n
        x = owner(op.operands[0])
        if (x is not None and x.name == "tensor.pad") or taps * 256 >= 2 ** 24:
            return None              # padded, or a window whose f32 sum could round
    got = _input(op.operands[0], pad_value=None)
    if got is None or not ir.RankedTensorType(op.results[0].type).has_static_shape:
        return None
    if got[1] is not None and float_const(got[1].regions[0].blocks[0].operations[0].operands[0]) > -1e30:
        return None                  # a pad a window's max could pick (not -inf / lowest)
    xd, pad_op = got
    zx = xd.zero_point()
    if zx is None or list(xd.scale_map.results) or _shaped(xd.scale):
        return None
    return xd, pad_op, zx


def rewrite_quantized_max_pool(op, xd: Dequantized, pad_op, zx: int) -> None:
    """max(sx * (q - zx)) = sx * max(q - zx) (sx > 0), and sum(sx * (q - zx)) = sx * sum(q - zx):
    the pool on f16 integers (exact: a max picks one, a sum is accumulated in f32; half the
    bytes of the dequantized f32 it read, and convc's pool kernels instead of IREE's), scaled
    after; the quantize or division after it fuses in."""
    f16, f32 = ir.F16Type.get(), ir.F32Type.get()
    x = _f16_integers(xd, zx)
    is_max = op.name.endswith("_max")
    lowest = arith_d.constant(f16, float("-inf"))
    if pad_op is not None:
        low = list(ir.DenseI64ArrayAttr(pad_op.attributes["static_low"]))
        high = list(ir.DenseI64ArrayAttr(pad_op.attributes["static_high"]))
        x = pad(x, low, high, lowest)
    out_t = ir.RankedTensorType(op.results[0].type)
    acc_t, start = (f16, lowest) if is_max else (f32, arith_d.constant(f32, 0.0))
    init = value_of(linalg_d.fill(start, outs=[tensor_d.EmptyOp(list(out_t.shape), acc_t).result]))
    window = tensor_d.EmptyOp(ir.RankedTensorType(op.operands[1].type).shape, f16).result
    attrs = {k: [int(v) for v in ir.DenseIntElementsAttr(op.attributes[k])] for k in ("strides", "dilations")}
    builder = linalg_d.pooling_nchw_max if is_max else linalg_d.pooling_nchw_sum
    pooled = value_of(builder(x, window, outs=[init], **attrs))
    out = tensor_d.EmptyOp(list(out_t.shape), f32).result
    gen = linalg_d.GenericOp([out.type], [pooled], [out], ir.ArrayAttr.get([_identity(out_t.rank)] * 2),
                             _iterators(["parallel"] * out_t.rank))
    block = gen.regions[0].blocks.append(acc_t, f32)
    with ir.InsertionPoint(block):
        v = arith_d.extf(f32, block.arguments[0]) if is_max else block.arguments[0]
        linalg_d.YieldOp([arith_d.mulf(v, _scalar(xd.scale))])
    op.results[0].replace_all_uses_with(gen.results[0])
    op.erase()


def quantized_convs(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-quantized-conv."""
    with module.context, ir.Location.unknown():
        for op in list(walk_ops(module.operation)):
            got = quantized_operands(op)
            if got is not None:
                with ir.InsertionPoint(op), op.location:
                    rewrite_quantized_conv(op, *got)
                continue
            pool = quantized_max_pool(op)
            if pool is not None:
                with ir.InsertionPoint(op), op.location:
                    rewrite_quantized_max_pool(op, *pool)
        erase_dead(module, (DEQUANTIZE, "tensor.pad", "linalg.fill", "tensor.empty", "linalg.broadcast",
                            "arith.constant"))
        for op in list(walk_ops(module.operation)):
            if op.name in (DEQUANTIZE, QUANTIZE) and all(f32_or_int(v) for v in op.operands):
                with ir.InsertionPoint(op), op.location:
                    as_generic(op)
    return module
