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

Depthwise convs, max-pools and global average pools of dequantized int8 run on integer-valued
f16 (quantized_f16.py); the IR read and built here and there is in quantized_ops.py.

uint8 activations (onnxruntime's default; IREE marks their dequantize `input_unsigned`) take the
same path as the int8 values q - 128 (the top bit flipped, an elementwise op IREE fuses into
the producer's dispatch) with the zero point zx - 128.

linalg's convs with zero-point operands (IREE's import of ONNX ConvInteger) become the plain
int8 conv less the input zero point times the filter's column sums (rewrite_conv_q).

A matmul of a dequantized int8 activation [M, K] and a dequantized per-output-channel int8
weight (ONNX Gemm/MatMul: [F, K] through a transpose, or [K, F]), zero point 0, becomes the
same integer GEMM as a 1x1 conv's (`rewrite_quantized_matmul`): out[m, f] += x[m, c] * w[f, c]
in i32, then the accumulator's dequantization, which convc's int8 kernels take as a Linear
layer's GEMM (the driver lists its signature). IREE ran it as a float matmul with the weight's
dequantize cloned into its dispatch (QDQ ResNet-50's classifier: 40 us at batch 32).

A ReLU or Clip (ReLU6) between a dequantize and a quantize of the same scale and zero point
(QDQ graphs put one after every quantized add and activation: Q -> DQ -> Relu -> Q) is
min(max(q, zp + round(lo / s)), zp + round(hi / s)) on the integers (`integer_relus`): exact,
since the f32 round trip q * s / s rounds back to q and a clipped value quantizes to its
bound's integer. It spares each such epilogue a dequantize, a clamp and a requantize per
output (ResNet-50's residual epilogues: three requantizes per output before, two after).

Two rewritten convs meeting in one elementwise op (a ResNet block's residual add of its last
conv and its downsample, each quantized and dequantized by the QDQ graph): in IREE's flow IR
of QDQ ResNet-50 both requantizes land in one conv's dispatch with the add, and the other conv
writes its raw i32 sums for it to read (four convs with i32 outputs in convc's report; on an
H200 the layer-1 block's 64 -> 256 pair took 35 + 85 us where the others of that shape take
49). `fence_conv_meetings` puts every
such operand's quantized tensor but the first behind a barrier, so each conv writes int8 and
the first takes the add in its epilogue, reading the other's int8 output as a residual.

Declined (left as IREE's float conv): grouped convs other than depthwise, non-constant scales or
zero points, a weight zero point that is not 0, uint8 weights, other integer ranges.
"""

from __future__ import annotations

import numpy as np

from iree.compiler.dialects import arith as arith_d, linalg as linalg_d, tensor as tensor_d

from ..ir import float_const, int_const, ir, operand_segments, walk_ops
from .builders import barrier, erase_dead, owner, transpose, user_op, value_of, zero
from .linear_weights import plain_matmul_maps
from .quantized_f16 import exact_in_f16, quantized_pool, rewrite_as_f16, rewrite_quantized_pool
from .quantized_ops import (CONVS, DEPTHWISE, DEQUANTIZE, QUANTIZE, Dequantized, as_generic, channel_map,
                            channel_scales, dequantize_accumulator, dequantized_filter, dequantized_input,
                            f32_or_int, identity_map, iterator_types, map_elementwise, pad_apart, quantize_arith,
                            scalar_of, signed_view, window_attrs)


def quantized_operands(op):
    """(input dequantize, its pad, filter dequantize, zx) where op is a rewritable conv, else None."""
    if op.name not in CONVS:
        return None
    f_dim, _ = CONVS[op.name]
    got = dequantized_input(op.operands[0])
    wd = dequantized_filter(op.operands[1])
    if got is None or wd is None:
        return None
    xd, pad_op = got
    zx = xd.zero_point()
    if zx is None or list(xd.scale_map.results):
        return None
    if wd.unsigned or wd.zero_point() != 0 or not wd.channel_scale(f_dim):
        return None
    if not all(ir.RankedTensorType(v.type).has_static_shape for v in (xd.q, wd.q, op.results[0])):
        return None
    if op.name in DEPTHWISE and not exact_in_f16(op, zx, *xd.range):
        return None
    return xd, pad_op, wd, zx


def filter_sums(wq: ir.Value, f_dim: int) -> ir.Value:
    """[F] i32: the int8 filter summed over everything but its output-channel dimension."""
    t = ir.RankedTensorType(wq.type)
    i32 = ir.IntegerType.get_signless(32)
    F = t.shape[f_dim]
    acc = value_of(linalg_d.fill(zero(i32), outs=[tensor_d.EmptyOp([F], i32).result]))
    kinds = ["parallel" if d == f_dim else "reduction" for d in range(t.rank)]
    gen = linalg_d.GenericOp([acc.type], [wq], [acc],
                             ir.ArrayAttr.get([identity_map(t.rank), channel_map(t.rank, f_dim)]), iterator_types(kinds))
    block = gen.regions[0].blocks.append(t.element_type, i32)
    with ir.InsertionPoint(block):
        linalg_d.YieldOp([arith_d.addi(block.arguments[1], arith_d.extsi(i32, block.arguments[0]))])
    return gen.results[0]


def zero_point_correction(wq: ir.Value, f_dim: int, zx: int) -> ir.Value:
    """[F] i32: zx * colsum(wq)[f], what the input's zero point adds to each output channel's
    window sums (sum (x - zx) w = sum x w - zx * sum w)."""
    i32 = ir.IntegerType.get_signless(32)
    sums = filter_sums(wq, f_dim)
    corr = value_of(linalg_d.GenericOp(
        [sums.type], [sums], [tensor_d.EmptyOp(ir.RankedTensorType(sums.type).shape, i32).result],
        ir.ArrayAttr.get([identity_map(1)] * 2), iterator_types(["parallel"])))
    block = owner(corr).regions[0].blocks.append(i32, i32)
    with ir.InsertionPoint(block):
        linalg_d.YieldOp([arith_d.muli(block.arguments[0], arith_d.constant(i32, ir.IntegerAttr.get(i32, zx)))])
    return corr


# linalg's convs with zero-point operands (IREE's import of ONNX ConvInteger: uint8 inputs
# already shifted to int8, the pad holding the zero point) and their plain forms
CONV_Q = {"linalg.conv_2d_nchw_fchw_q": ("conv_2d_nchw_fchw", 0, 1),
          "linalg.conv_2d_nhwc_hwcf_q": ("conv_2d_nhwc_hwcf", 3, 3),
          "linalg.conv_2d_nhwc_fhwc_q": ("conv_2d_nhwc_fhwc", 0, 3)}


def rewrite_conv_q(op) -> bool:
    """A conv with an input zero point izp and a filter zero point 0 (i8 x i8 -> i32) as the
    plain conv less izp * colsum(w)[f]: exact, whatever the pad holds (a padded tap adds
    (v - izp) w like any other). A pad with a nonzero value goes between barriers (its own
    dispatch: the kernels' windows pad with zeros), as for a QDQ conv's. Other filter zero
    points, non-constant ones or other types: left as they are (IREE's)."""
    name, f_dim, c_dim = CONV_Q[op.name]
    x, w, izp_v, fzp_v, init = op.operands
    izp, fzp = int_const(izp_v), int_const(fzp_v)
    i8, i32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
    types = [ir.ShapedType(v.type).element_type for v in (x, w, init)]
    if izp is None or fzp != 0 or types != [i8, i8, i32] or \
            not all(ir.RankedTensorType(v.type).has_static_shape for v in (x, w, init)):
        return False
    p = owner(x)
    if izp and p is not None and p.name == "tensor.pad":
        value = int_const(p.regions[0].blocks[0].operations[0].operands[0])
        if value is None:
            return False
        if value:
            x = pad_apart(p.operands[0], list(ir.DenseI64ArrayAttr(p.attributes["static_low"])),
                          list(ir.DenseI64ArrayAttr(p.attributes["static_high"])), value)
    acc = value_of(getattr(linalg_d, name)(x, w, outs=[init], **window_attrs(op)))
    y = acc
    if izp:
        corr = zero_point_correction(w, f_dim, izp)
        t = ir.RankedTensorType(acc.type)
        y = value_of(linalg_d.GenericOp([t], [acc, corr], [tensor_d.EmptyOp(list(t.shape), i32).result],
                                        ir.ArrayAttr.get([identity_map(t.rank), channel_map(t.rank, c_dim),
                                                          identity_map(t.rank)]),
                                        iterator_types(["parallel"] * t.rank)))
        block = owner(y).regions[0].blocks.append(i32, i32, i32)
        with ir.InsertionPoint(block):
            linalg_d.YieldOp([arith_d.subi(block.arguments[0], block.arguments[1])])
    op.results[0].replace_all_uses_with(y)
    op.erase()
    return True


def rewrite_quantized_conv(op, xd: Dequantized, pad_op, wd: Dequantized, zx: int) -> None:
    f_dim, c_dim = CONVS[op.name]
    i32 = ir.IntegerType.get_signless(32)
    xq = xd.q
    channels = ir.RankedTensorType(xq.type).shape[1 if "nchw" in op.name else 3]
    if (channels % 16 or op.name in DEPTHWISE) and exact_in_f16(op, zx, *xd.range):
        # Few input channels (the RGB stem: 3): int8 rows of C bytes are no TMA vectors, but
        # the same integers in f16 are exact and take the f16 kernels built for such convs
        # (the row-slab stem), the zero point subtracted before the pad (zeros again)
        return rewrite_as_f16(op, xd, pad_op, wd, zx)
    if xd.unsigned:
        # uint8 activations: the int8 values q - 128 with the zero point zx - 128, the same
        # differences (q - zx)
        xq, zx = signed_view(xq), zx - 128
    if pad_op is not None:
        xq = pad_apart(xq, list(ir.DenseI64ArrayAttr(pad_op.attributes["static_low"])),
                       list(ir.DenseI64ArrayAttr(pad_op.attributes["static_high"])), zx)
    out_t = ir.RankedTensorType(op.results[0].type)
    acc0 = value_of(linalg_d.fill(zero(i32), outs=[tensor_d.EmptyOp(list(out_t.shape), i32).result]))
    acc = value_of(getattr(linalg_d, op.name.split(".", 1)[1])(xq, wd.q, outs=[acc0], **window_attrs(op)))
    corr = zero_point_correction(wd.q, f_dim, zx) if zx else None
    sx = scalar_of(xd.scale)
    if list(wd.scale_map.results):
        scale = channel_scales(sx, wd.scale)
    else:
        scale = arith_d.mulf(sx, scalar_of(wd.scale))
    y = dequantize_accumulator(acc, op.operands[2], c_dim, scale, corr)
    op.results[0].replace_all_uses_with(y)
    op.erase()


def quantized_matmul(op):
    """(input dequantize, [F, K] int8 weight, its dequantize, zx) of a rewritable linalg.matmul,
    else None."""
    if op.name != "linalg.matmul" or not plain_matmul_maps(op):
        return None
    a, b, init = op.operands[0], op.operands[1], op.operands[2]
    xd = Dequantized.of(a)
    tr = owner(b)
    if tr is not None and tr.name == "linalg.transpose" and list(ir.DenseI64ArrayAttr(tr.attributes["permutation"])) == [1, 0]:
        wd, f_dim = Dequantized.of(tr.operands[0]), 0          # [F, K]: ONNX Gemm transB = 1
    else:
        wd, f_dim = Dequantized.of(b), 1                         # [K, F]: MatMul, Gemm transB = 0
    if xd is None or wd is None or wd.unsigned or wd.zero_point() != 0 or not wd.channel_scale(f_dim):
        return None
    zx = xd.zero_point()
    if zx is None or list(xd.scale_map.results) or str(ir.RankedTensorType(init.type).element_type) != "f32":
        return None
    if not all(ir.RankedTensorType(v.type).has_static_shape for v in (xd.q, wd.q, op.results[0])):
        return None
    return xd, wd, f_dim, zx


def rewrite_quantized_matmul(op, xd: Dequantized, wd: Dequantized, f_dim: int, zx: int) -> None:
    i32 = ir.IntegerType.get_signless(32)
    xq = signed_view(xd.q) if xd.unsigned else xd.q
    zx = zx - 128 if xd.unsigned else zx
    w = wd.q if f_dim == 0 else transpose(wd.q, [1, 0])        # [F, K]; IREE transposes a constant at load
    out_t = ir.RankedTensorType(op.results[0].type)
    acc0 = value_of(linalg_d.fill(zero(i32), outs=[tensor_d.EmptyOp(list(out_t.shape), i32).result]))
    m, f, c = (ir.AffineExpr.get_dim(i) for i in range(3))
    maps = [ir.AffineMapAttr.get(ir.AffineMap.get(3, 0, r)) for r in ([m, c], [f, c], [m, f])]
    gen = linalg_d.GenericOp([acc0.type], [xq, w], [acc0], ir.ArrayAttr.get(maps),
                             iterator_types(["parallel", "parallel", "reduction"]))
    i8 = ir.IntegerType.get_signless(8)
    block = gen.regions[0].blocks.append(i8, i8, i32)
    with ir.InsertionPoint(block):
        x, y, acc = block.arguments
        linalg_d.YieldOp([arith_d.addi(acc, arith_d.muli(arith_d.extsi(i32, x), arith_d.extsi(i32, y)))])
    corr = zero_point_correction(w, 0, zx) if zx else None
    sx = scalar_of(xd.scale)
    scale = channel_scales(sx, wd.scale) if list(wd.scale_map.results) else arith_d.mulf(sx, scalar_of(wd.scale))
    y = dequantize_accumulator(gen.results[0], op.operands[2], 1, scale, corr)
    tr = owner(op.operands[1])
    op.results[0].replace_all_uses_with(y)
    op.erase()
    if tr is not None and tr.name == "linalg.transpose" and not list(tr.results[0].uses):
        tr.erase()              # the float weight's transpose (its dequantize goes with erase_dead)


def _clamp_of(op):
    """(x, lo, hi) where `op` is an elementwise linalg.generic computing clamp(x, lo, hi) of
    its first input with constant bounds (hi may be +inf), else None: ReLU as the ONNX import
    writes it (select(x > 0, x, 0)) or as maximumf / maxnumf with 0, and Clip (ReLU6) as
    select(x < lo, lo, x) then select(y > hi, hi, y), its bounds 0-d constant tensors."""
    if op is None or op.name != "linalg.generic" or len(op.results) != 1:
        return None
    ins = operand_segments(op, ("inputs", "outputs"))["inputs"]
    maps = [ir.AffineMapAttr(m).value for m in op.attributes["indexing_maps"]]
    rank = ir.RankedTensorType(op.results[0].type).rank
    if not ins or maps[0] != ir.AffineMap.get_identity(rank) or maps[-1] != ir.AffineMap.get_identity(rank) or \
            any("parallel" not in str(k) for k in ir.ArrayAttr(op.attributes["iterator_types"])):
        return None
    block = op.regions[0].blocks[0]
    args = list(block.arguments)
    x = args[0]

    def const(v):
        """A block value's constant: a scalar constant, or the block argument of a constant
        0-d (or splat) tensor input."""
        c = float_const(v)
        if c is not None:
            return c
        if v in args[1:len(ins)]:
            t = owner(ins[args.index(v)])
            if t is not None and t.name == "arith.constant":
                a = t.attributes["value"]
                if isinstance(a, ir.DenseElementsAttr) and a.is_splat:
                    return ir.FloatAttr(a.get_splat_value()).value
        return None

    def step(v):
        """(input, "max" | "min", bound) of one clamping op producing v, else None."""
        o = owner(v)
        if o is None:
            return None
        if o.name in ("arith.maximumf", "arith.maxnumf", "arith.minimumf", "arith.minnumf"):
            u, c = o.operands
            if const(c) is None:
                u, c = c, u
            return (u, "max" if "max" in o.name else "min", const(c)) if const(c) is not None else None
        if o.name == "arith.select":
            cond, a, b = o.operands
            cmp = owner(cond)
            if cmp is None or cmp.name != "arith.cmpf" or cmp.operands[1] != (b if const(b) is not None else a):
                return None
            pred = ir.IntegerAttr(cmp.attributes["predicate"]).value
            u = cmp.operands[0]
            if a == u and const(b) is not None and pred in _GREATER:     # x > c ? x : c   -> max
                return u, "max", const(b)
            if b == u and const(a) is not None and pred in _LESS:        # x < c ? c : x   -> max
                return u, "max", const(a)
            if b == u and const(a) is not None and pred in _GREATER:     # x > c ? c : x   -> min
                return u, "min", const(a)
        return None

    body = [o.operation for o in block.operations]
    if any(o.name not in _CLAMP_OPS for o in body[:-1]):
        return None
    v, lo, hi = body[-1].operands[0], float("-inf"), float("inf")
    while v != x:
        got = step(v)
        if got is None:
            return None
        v, kind, c = got
        lo, hi = (max(lo, c), hi) if kind == "max" else (lo, min(hi, c))
    return (ins[0], lo, hi) if lo <= hi and (lo > float("-inf") or hi < float("inf")) else None


# arith.cmpf predicates x > c / x >= c and x < c / x <= c (ordered and unordered): each picks
# the same value as the clamp at x == c
_GREATER = (2, 3, 9, 10)         # ogt, oge, ugt, uge
_LESS = (4, 5, 11, 12)           # olt, ole, ult, ule
_CLAMP_OPS = ("arith.cmpf", "arith.select", "arith.maximumf", "arith.maxnumf", "arith.minimumf", "arith.minnumf",
              "arith.constant")


def _qparams(op):
    """(scale, zero point, range, unsigned) of a per-tensor (de)quantize with constant scalar
    operands, else None."""
    ins = list(op.operands)[:-1]
    maps = [ir.AffineMapAttr(m).value for m in op.attributes["indexing_maps"]]
    if any(list(m.results) for m in maps[1:len(ins)]):
        return None
    scale = float_const(ins[1])
    zp = int_const(ins[2]) if len(ins) > 2 else 0
    rng = tuple(ir.IntegerAttr(op.attributes[k]).value for k in ("quant_min", "quant_max"))
    unsigned = "input_unsigned" in op.attributes or "storage_unsigned" in op.attributes
    if scale is None or not scale > 0 or zp is None:
        return None
    return scale, (zp & 0xFF if unsigned else zp), rng, unsigned


def _quantized_bound(c: float, scale: float) -> float:
    """roundeven(c / scale) as the float quantize computes it (f32 division)."""
    if c in (float("inf"), float("-inf")):
        return c
    return float(np.round(np.float32(c) / np.float32(scale)))


def integer_relus(module: ir.Module) -> int:
    """Every quantize(clamp(dequantize(q), lo, hi)) (ReLU, ReLU6) with the same per-tensor
    constant scale, zero point and range on both sides, q an 8-bit tensor, as
    min(max(q, zp + round(lo / s)), zp + round(hi / s)) on it, within the range (unsigned for
    uint8). Returns how many were rewritten."""
    done = 0
    for q2 in list(walk_ops(module.operation, QUANTIZE)):
        clamp = owner(q2.operands[0])
        got = _clamp_of(clamp)
        dq = owner(got[0]) if got is not None else None
        if dq is None or dq.name != DEQUANTIZE:
            continue
        a, b = _qparams(dq), _qparams(q2)
        q1 = dq.operands[0]
        t = ir.RankedTensorType(q1.type)
        if a is None or a != b or str(t.element_type) != "i8" or t != ir.RankedTensorType(q2.results[0].type):
            continue
        scale, zp, (qmin, qmax), unsigned = a
        lo = max(qmin, zp + _quantized_bound(got[1], scale))
        hi = min(qmax, zp + _quantized_bound(got[2], scale))
        if not lo <= hi:
            continue
        i8 = t.element_type

        def bound(v):
            v = int(v)
            return arith_d.constant(i8, ir.IntegerAttr.get(i8, v - 256 if v > 127 else v))

        def body(y):
            if lo > qmin:
                y = (arith_d.maxui if unsigned else arith_d.maxsi)(y, bound(lo))
            if hi < qmax:
                y = (arith_d.minui if unsigned else arith_d.minsi)(y, bound(hi))
            return y
        with ir.InsertionPoint(q2), q2.location:
            clamped = map_elementwise(q1, i8, body)
        q2.results[0].replace_all_uses_with(clamped)
        q2.erase()
        if not list(clamp.results[0].uses):
            clamp.erase()           # the dequantize, if now unused, goes with erase_dead
        done += 1
    return done


def _requantized_conv(v: ir.Value):
    """The DEQUANTIZE op reading v, where v is dequantize(quantize(the epilogue of an int8 conv
    this pass wrote)), else None."""
    dq = owner(v)
    if dq is None or dq.name != DEQUANTIZE:
        return None
    q = owner(dq.operands[0])
    y = owner(q.operands[0]) if q is not None and q.name == QUANTIZE else None
    acc = owner(y.operands[0]) if y is not None and y.name == "linalg.generic" else None
    if acc is None or acc.name not in CONVS or \
            not isinstance(ir.RankedTensorType(acc.results[0].type).element_type, ir.IntegerType):
        return None
    return dq


def fence_conv_meetings(module: ir.Module) -> int:
    """Every elementwise linalg.generic reading two or more requantized int8 convs (see the
    module docstring): the quantized tensor of each but the first behind a barrier. Returns
    how many were fenced."""
    fenced = 0
    for op in list(walk_ops(module.operation, "linalg.generic")):
        kinds = [str(k) for k in ir.ArrayAttr(op.attributes["iterator_types"])]
        if any("parallel" not in k for k in kinds):
            continue
        readers = [dq for dq in map(_requantized_conv, operand_segments(op, ("inputs", "outputs"))["inputs"])
                   if dq is not None]
        for dq in readers[1:]:
            with ir.InsertionPoint(dq), dq.location:
                dq.operands[0] = barrier(dq.operands[0], layout_free=True)
            fenced += 1
    return fenced


# ops through which a value leaves the model
_MODEL_OUTPUT = ("hal.tensor.barrier", "hal.tensor.export", "util.return", "func.return")


def float_quantized_outputs(module: ir.Module) -> int:
    """Every dequantize(quantize(x)) whose result only leaves the model (a QDQ classifier's
    logits) as one f32 elementwise op: (clamp(roundeven(x / s) + zp) - zp) * s, the same
    values. The int8 tensor between them was a dispatch's output of its own (IREE's flow IR of
    QDQ ResNet-50: the dequantize alone in `elementwise_32000_i8xf32`), whose rows of 1000 bytes
    no TMA store writes;
    as floats the pair fuses into the producer's epilogue (QDQ ResNet-50's classifier GEMM then
    takes the s8 wgmma kernel with f32 output rows). Returns how many were rewritten."""
    done = 0
    for dq in list(walk_ops(module.operation, DEQUANTIZE)):
        q = owner(dq.operands[0])
        if q is None or q.name != QUANTIZE or len(list(q.results[0].uses)) != 1:
            continue
        if not all(user_op(use).name in _MODEL_OUTPUT for use in dq.results[0].uses):
            continue
        a, b = _qparams(q), _qparams(dq)
        x = q.operands[0]
        t = ir.RankedTensorType(x.type)
        if a is None or a != b or str(t.element_type) != "f32":
            continue
        scale, zp, (lo, hi), _ = a
        f32 = t.element_type
        i32 = ir.IntegerType.get_signless(32)

        def body(v):
            s_ = arith_d.constant(f32, scale)
            v = quantize_arith(v, s_, lo, hi, arith_d.constant(i32, ir.IntegerAttr.get(i32, zp)) if zp else None)
            if zp:
                v = arith_d.subf(v, arith_d.constant(f32, float(zp)))
            return arith_d.mulf(v, s_)
        with ir.InsertionPoint(dq), dq.location:
            value = map_elementwise(x, f32, body)
        dq.results[0].replace_all_uses_with(value)
        dq.erase()
        q.erase()
        done += 1
    return done


def quantized_convs(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-quantized-conv."""
    with module.context, ir.Location.unknown():
        # first, so that the rewrites below read the integer ReLUs' inputs (a pool's or an f16
        # conv's requantize, raised to the ReLU's bound, quantized_f16.f16_integers)
        integer_relus(module)
        for op in list(walk_ops(module.operation)):
            if op.name in CONV_Q:
                with ir.InsertionPoint(op), op.location:
                    rewrite_conv_q(op)
                continue
            got = quantized_operands(op)
            if got is not None:
                with ir.InsertionPoint(op), op.location:
                    rewrite_quantized_conv(op, *got)
                continue
            mm = quantized_matmul(op)
            if mm is not None:
                with ir.InsertionPoint(op), op.location:
                    rewrite_quantized_matmul(op, *mm)
                continue
            pool = quantized_pool(op)
            if pool is not None:
                with ir.InsertionPoint(op), op.location:
                    rewrite_quantized_pool(op, *pool)
        erase_dead(module, (DEQUANTIZE, "tensor.pad", "linalg.fill", "tensor.empty", "linalg.broadcast",
                            "arith.constant"))
        fence_conv_meetings(module)
        float_quantized_outputs(module)
        for op in list(walk_ops(module.operation)):
            if op.name in (DEQUANTIZE, QUANTIZE) and all(f32_or_int(v) for v in op.operands):
                with ir.InsertionPoint(op), op.location:
                    as_generic(op)
    return module
