"""Reading and writing the QDQ IR of convc-quantized-conv (quantized.py): what IREE 3.13 imports
an ONNX QDQ model into (iree_linalg_ext.dequantize_affine / quantize_affine around float ops)
read off the ops (Dequantized: the int8 tensor, its scale and zero point, through a pad or a
collapse_shape), and the elementwise ops the rewrites build: the accumulator's dequantization
(init + float(acc - corr[f]) * scale[f]), the per-channel scale product, a quantize's
arithmetic, and every (de)quantize left over as the linalg.generic IREE decomposes it into."""

from __future__ import annotations

from iree.compiler.dialects import arith as arith_d, linalg as linalg_d, math as math_d, tensor as tensor_d

from ..ir import float_const, int_const, ir
from .builders import barrier, owner, pad


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
UINT8_RANGE = (0, 255)        # onnxruntime's default activation type: IREE marks it input_unsigned


class Dequantized:
    """A dequantize_affine of an int8 or uint8 tensor (`unsigned`: the signless i8 holds
    0..255): its operands read off the op."""

    def __init__(self, op):
        self.view = None        # a collapse_shape of the dequantized tensor the conv reads
        ins = list(op.operands)[:-1]
        maps = [ir.AffineMapAttr(m).value for m in op.attributes["indexing_maps"]]
        self.q, self.scale = ins[0], ins[1]
        self.scale_map = maps[1]
        self.zp = ins[2] if len(ins) > 2 else None
        self.zp_map = maps[2] if len(ins) > 2 else None
        self.range = (ir.IntegerAttr(op.attributes["quant_min"]).value, ir.IntegerAttr(op.attributes["quant_max"]).value)
        self.unsigned = "input_unsigned" in op.attributes

    @classmethod
    def of(cls, v: ir.Value) -> "Dequantized | None":
        op = owner(v)
        if op is None or op.name != DEQUANTIZE:
            return None
        d = cls(op)
        if str(ir.ShapedType(d.q.type).element_type) != "i8" or d.range != (UINT8_RANGE if d.unsigned else INT8_RANGE):
            return None
        return d

    def zero_point(self) -> int | None:
        """The per-tensor zero point (0 without one; 0..255 for uint8); None: not a scalar
        constant."""
        if self.zp is None:
            return 0
        if list(self.zp_map.results):
            return None
        v = int_const(self.zp)
        return v & 0xFF if v is not None and self.unsigned else v

    def channel_scale(self, f_dim: int) -> bool:
        """Whether the scale is per tensor or indexed by dimension f_dim only."""
        results = list(self.scale_map.results)
        return not results or (len(results) == 1 and str(results[0]) == f"d{f_dim}")


def integer_clamp_input(v: ir.Value):
    """(q, lo, hi) where v = min(max(q, lo), hi) on int8, either bound optional (None) (the
    integer ReLU / ReLU6 quantized.integer_relus writes: a one-input linalg.generic of
    arith.maxsi / maxui and minsi / minui with constants; unsigned bounds as 0..255), else
    None."""
    op = owner(v)
    if op is None or op.name != "linalg.generic" or len(op.operands) != 2:
        return None
    block = op.regions[0].blocks[0]
    body = [o.operation for o in block.operations]
    y = body[-1].operands[0]
    lo = hi = None
    while y != block.arguments[0]:
        o = owner(y)
        if o is None or o.name not in ("arith.maxsi", "arith.maxui", "arith.minsi", "arith.minui"):
            return None
        y, c = o.operands
        c = int_const(c)
        if c is None:
            return None
        c = c & 0xFF if o.name.endswith("ui") else c
        if o.name.startswith("arith.max"):
            lo = c
        else:
            hi = c
    return op.operands[0], lo, hi


def dequantized_input(x: ir.Value, pad_value: float | None = 0.0):
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


def dequantized_filter(w: ir.Value) -> "Dequantized | None":
    """The dequantized filter, read through a collapse_shape (a depthwise filter's [C, 1, R, S]
    as [C, R, S])."""
    view = owner(w)
    if view is not None and view.name == "tensor.collapse_shape":
        d = Dequantized.of(view.operands[0])
        if d is not None:
            d.view = view
        return d
    return Dequantized.of(w)


def channel_map(rank: int, dim: int) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(dim)]))


def identity_map(rank: int) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))


def iterator_types(kinds: list[str]) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])


def window_attrs(op) -> dict:
    """A conv's or pool's strides and dilations as the linalg builders take them (lists)."""
    return {k: [int(v) for v in ir.DenseIntElementsAttr(op.attributes[k])] for k in ("strides", "dilations")
            if k in op.attributes}


def pad_apart(x: ir.Value, low: list, high: list, value: int) -> ir.Value:
    """x (i8) padded with `value`: a nonzero pad between barriers (its own dispatch: the
    kernels' windows pad with zeros, and fused into the producer it would make a conv write
    into the padded buffer in place, a result tied to its operand, which convc declines); a
    zero pad as it is (it fuses into the conv)."""
    i8 = ir.IntegerType.get_signless(8)
    c = arith_d.constant(i8, ir.IntegerAttr.get(i8, value))
    return barrier(pad(barrier(x), low, high, c)) if value else pad(x, low, high, c)


def map_elementwise(x: ir.Value, out_type: ir.Type, body) -> ir.Value:
    """A one-input elementwise linalg.generic of x to a tensor of `out_type` elements:
    body(element) builds the value each element yields."""
    t = ir.RankedTensorType(x.type)
    out = tensor_d.EmptyOp(list(t.shape), out_type).result
    gen = linalg_d.GenericOp([out.type], [x], [out], ir.ArrayAttr.get([identity_map(t.rank)] * 2),
                             iterator_types(["parallel"] * t.rank))
    block = gen.regions[0].blocks.append(t.element_type, out_type)
    with ir.InsertionPoint(block):
        linalg_d.YieldOp([body(block.arguments[0])])
    return gen.results[0]


def signed_view(q: ir.Value) -> ir.Value:
    """A uint8 tensor (signless i8 holding 0..255) as the int8 values q - 128: its top bit
    flipped. An elementwise op IREE fuses into the producer's dispatch (after its quantize)."""
    i8 = ir.RankedTensorType(q.type).element_type
    return map_elementwise(q, i8, lambda v: arith_d.xori(v, arith_d.constant(i8, ir.IntegerAttr.get(i8, -128))))


def is_tensor(v: ir.Value) -> bool:
    return str(v.type).startswith("tensor<")


def f32_or_int(v: ir.Value) -> bool:
    """Whether v (a tensor or scalar) holds f32 or signless integers: the types as_generic writes for."""
    t = ir.ShapedType(v.type).element_type if is_tensor(v) else v.type
    return str(t) == "f32" or isinstance(t, ir.IntegerType)


def scalar_of(v: ir.Value) -> ir.Value:
    """A scalar f32 operand of a dequantize (a 0-d tensor is read through tensor.extract)."""
    if is_tensor(v):
        return tensor_d.extract(v, [])
    return v


def quantize_arith(x: ir.Value, scale: ir.Value, lo: int, hi: int, zp: ir.Value | None = None) -> ir.Value:
    """clamp(roundeven(x / scale) (+ zp), lo, hi) in f32: a quantize's arithmetic (IREE's)."""
    f32 = ir.F32Type.get()
    v = math_d.roundeven(arith_d.divf(x, scale))
    if zp is not None:
        v = arith_d.addf(v, arith_d.sitofp(f32, zp))
    return arith_d.minnumf(arith_d.maxnumf(v, arith_d.constant(f32, float(lo))), arith_d.constant(f32, float(hi)))


def channel_scales(sx: ir.Value, sw: ir.Value) -> ir.Value:
    """[F] f32: sx * sw[f], the accumulator's scale per output channel (constant-folded by IREE)."""
    t = ir.RankedTensorType(sw.type)
    gen = linalg_d.GenericOp([t], [sw], [tensor_d.EmptyOp(list(t.shape), t.element_type).result],
                             ir.ArrayAttr.get([identity_map(1)] * 2), iterator_types(["parallel"]))
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
    chan = channel_map(rank, c_dim)
    ins, maps = [acc], [identity_map(rank)]
    if corr is not None:
        ins.append(corr)
        maps.append(chan)
    if is_tensor(scale):
        ins.append(scale)
        maps.append(chan)
    ins.append(init)
    maps.append(identity_map(rank))
    out = tensor_d.EmptyOp(list(t.shape), f32).result
    gen = linalg_d.GenericOp([out.type], ins, [out], ir.ArrayAttr.get(maps + [identity_map(rank)]),
                             iterator_types(["parallel"] * rank))
    block = gen.regions[0].blocks.append(*[ir.ShapedType(v.type).element_type for v in ins], f32)
    args = list(block.arguments)
    with ir.InsertionPoint(block):
        a = args.pop(0)
        if corr is not None:
            a = arith_d.subi(a, args.pop(0))
        s = args.pop(0) if is_tensor(scale) else scale
        if isinstance(a.type, ir.IntegerType):
            a = arith_d.sitofp(f32, a)
        y = arith_d.addf(args.pop(0), arith_d.mulf(a, s))
        linalg_d.YieldOp([y])
    return gen.results[0]


def as_generic(op) -> None:
    """A quantize_affine / dequantize_affine rewritten as the linalg.generic IREE decomposes it
    into (same arithmetic; scalar scales and zero points used in the body, not operands), so
    that convc-channels-last moves transposes through it like any elementwise op:
    quantize: clamp(roundeven(x / scale) + zp, qmin, qmax) -> int; dequantize: (q - zp) * scale,
    the difference taken in a wider integer."""
    operands, out = list(op.operands)[:-1], op.operands[-1]
    maps = list(op.attributes["indexing_maps"])
    out_t = ir.RankedTensorType(out.type)
    tensors = [i for i, v in enumerate(operands) if is_tensor(v)]
    lo, hi = (ir.IntegerAttr(op.attributes[k]).value for k in ("quant_min", "quant_max"))
    gen = linalg_d.GenericOp([out_t], [operands[i] for i in tensors], [out],
                             ir.ArrayAttr.get([maps[i] for i in tensors] + [maps[-1]]),
                             iterator_types(["parallel"] * out_t.rank))
    block = gen.regions[0].blocks.append(*[ir.ShapedType(operands[i].type).element_type for i in tensors],
                                         out_t.element_type)
    a = list(operands)
    for i, arg in zip(tensors, block.arguments):
        a[i] = arg
    f32 = ir.F32Type.get()
    # uint8 (ONNX's default activation type): the signless i8 holds 0..255, and so does its
    # zero point (`input_unsigned` / `storage_unsigned` on the op)
    unsigned = "input_unsigned" in op.attributes or "storage_unsigned" in op.attributes
    ext = arith_d.extui if unsigned else arith_d.extsi
    with ir.InsertionPoint(block):
        if op.name == DEQUANTIZE:
            bits = ir.IntegerType(a[0].type).width
            wide = ir.IntegerType.get_signless(32 if bits < 32 else 64)
            v = ext(wide, a[0]) if bits < wide.width else a[0]
            if len(a) > 2:
                zbits = ir.IntegerType(a[2].type).width
                zp = (ext(wide, a[2]) if zbits < wide.width else
                      arith_d.trunci(wide, a[2]) if zbits > wide.width else a[2])
                v = arith_d.subi(v, zp)
            linalg_d.YieldOp([arith_d.mulf(arith_d.sitofp(f32, v), a[1])])
        else:
            zp = a[2] if len(a) > 2 else None
            if zp is not None and unsigned and ir.IntegerType(zp.type).width < 32:
                zp = arith_d.extui(ir.IntegerType.get_signless(32), zp)     # as a value in 0..255
            v = quantize_arith(a[0], a[1], lo, hi, zp)
            linalg_d.YieldOp([(arith_d.fptoui if unsigned else arith_d.fptosi)(out_t.element_type, v)])
    op.results[0].replace_all_uses_with(gen.results[0])
    op.erase()
