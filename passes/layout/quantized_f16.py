"""QDQ ops convc-quantized-conv (quantized.py) runs on integer-valued f16 instead of int8: the
int8 values less their zero point are integers of at most 9 bits, exact in f16, and their sums
stay exact in f32 accumulators below 2^24 (exact_in_f16). Taken where int8 has no kernel or a
slow one: convs whose C no 16-byte int8 TMA vector tiles (the RGB stem), depthwise convs (the
direct kernel), max-pools and the sums of global average pools (convc's pool kernels). Their
input is produced as f16 by the quantize that made it (requantized_f16) where there is one, so
the producer's epilogue writes f16 integers, else widened from the int8 tensor."""

from __future__ import annotations

from iree.compiler.dialects import arith as arith_d, linalg as linalg_d, tensor as tensor_d

from ..ir import float_const, int_const, ir
from .builders import barrier, owner, pad, value_of, zero
from .quantized_ops import (CONVS, QUANTIZE, Dequantized, channel_scales, dequantize_accumulator,
                            dequantized_input, integer_clamp_input, is_tensor, map_elementwise, quantize_arith,
                            scalar_of, window_attrs)


def integer_valued_f16(q: ir.Value, zp: int, unsigned: bool = False) -> ir.Value:
    """q - zp (an int8 or, `unsigned`, uint8 tensor less its zero point) as f16: exact
    (integers of at most 9 bits)."""
    f16, i32 = ir.F16Type.get(), ir.IntegerType.get_signless(32)

    def body(x):
        v = (arith_d.extui if unsigned else arith_d.extsi)(i32, x)
        if zp:
            v = arith_d.subi(v, arith_d.constant(i32, ir.IntegerAttr.get(i32, zp)))
        return arith_d.sitofp(f16, v)
    return map_elementwise(q, f16, body)


def requantized_f16(qop, zp: int, lo: int | None = None, hi: int | None = None) -> ir.Value:
    """The integers quantize_affine `qop` computes from its f32 input, less zero point zp, as
    f16 in one elementwise op from the f32 values: clamp(roundeven(x / s) + zp) - zp (`lo`,
    `hi`: of min(max(q, lo), hi), the integer clamp after it: the bounds tightened). Not a
    widening of the int8 tensor: IREE fused that into the conv's dispatch (flow IR of a QDQ
    model with an RGB stem: "operand is produced by linalg.generic", a conv convc declines)."""
    x, scale = qop.operands[0], qop.operands[1]
    qlo, qhi = (ir.IntegerAttr(qop.attributes[k]).value for k in ("quant_min", "quant_max"))
    qlo, qhi = max(qlo, lo) if lo is not None else qlo, min(qhi, hi) if hi is not None else qhi
    f16 = ir.F16Type.get()
    # clamp(q + zp, lo, hi) - zp = clamp(q, lo - zp, hi - zp)
    return map_elementwise(x, f16, lambda v: arith_d.truncf(f16, quantize_arith(v, scalar_of(scale), qlo - zp, qhi - zp)))


def quantize_zero_point(qop) -> int | None:
    """A per-tensor quantize_affine's constant zero point (0 without one), else None."""
    ins = list(qop.operands)[:-1]
    maps = [ir.AffineMapAttr(m).value for m in qop.attributes["indexing_maps"]]
    if list(maps[1].results) or is_tensor(ins[1]):
        return None
    if len(ins) < 3:
        return 0
    if list(maps[2].results):
        return None
    v = int_const(ins[2])
    return v & 0xFF if v is not None and "storage_unsigned" in qop.attributes else v


def exact_in_f16(op, zx: int, lo: int = -128, hi: int = 127) -> bool:
    """Whether the conv's sums stay exact on f16 operands with f32 accumulation (activations
    in lo..hi less zx, int8 weights): every product (at most 255 x 128) and every partial sum
    below 2^24."""
    wt = ir.RankedTensorType(op.operands[1].type)
    f_dim, _ = CONVS[op.name]
    k = 1
    for d, n in enumerate(wt.shape):
        k *= 1 if d == f_dim else n
    return k * max(hi - zx, zx - lo) * 128 < 2 ** 24


def rewrite_as_f16(op, xd: Dequantized, pad_op, wd: Dequantized, zx: int) -> None:
    """The conv of (xq - zx) and wq as integer-valued f16 operands summed in f32 (exact, see
    exact_in_f16), then init + acc * (sx * sw[f])."""
    f_dim, c_dim = CONVS[op.name]
    f16, f32 = ir.F16Type.get(), ir.F32Type.get()
    x = f16_integers(xd, zx)
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
    acc = value_of(getattr(linalg_d, op.name.split(".", 1)[1])(x, w, outs=[acc0], **window_attrs(op)))
    sx = scalar_of(xd.scale)
    scale = channel_scales(sx, wd.scale) if list(wd.scale_map.results) else arith_d.mulf(sx, scalar_of(wd.scale))
    y = dequantize_accumulator(acc, op.operands[2], c_dim, scale, None)
    op.results[0].replace_all_uses_with(y)
    op.erase()


def f16_integers(xd: Dequantized, zx: int) -> ir.Value:
    """xq - zx as f16: from the f32 values its quantize reads where it has one (the producer's
    epilogue then writes f16 integers), else widened from the int8 tensor behind a barrier."""
    q, bounds = xd.q, None
    inner = integer_clamp_input(q)
    if inner is not None:                          # an integer ReLU / ReLU6: the quantize before it
        q, bounds = inner[0], inner[1:]
    qop = owner(q)
    if qop is not None and qop.name == QUANTIZE and quantize_zero_point(qop) == zx and str(
            ir.RankedTensorType(qop.operands[0].type).element_type) == "f32":
        # through an integer clamp the f16 integers follow the producer's dequantized f32
        # directly, which IREE then fused into the consumer's dispatch (a global pool reading
        # the conv's raw i32 sums: test_int8.py); fenced, they stay the producer's epilogue
        f16 = requantized_f16(qop, zx, *(bounds or ()))
        return barrier(f16, layout_free=True) if bounds else f16
    return barrier(integer_valued_f16(xd.q, zx, xd.unsigned))     # kept out of the consumer's dispatch


POOLS = ("linalg.pooling_nchw_max", "linalg.pooling_nchw_sum")


def quantized_pool(op):
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
    got = dequantized_input(op.operands[0], pad_value=None)
    if got is None or not ir.RankedTensorType(op.results[0].type).has_static_shape:
        return None
    if got[1] is not None and float_const(got[1].regions[0].blocks[0].operations[0].operands[0]) > -1e30:
        return None                  # a pad a window's max could pick (not -inf / lowest)
    xd, pad_op = got
    zx = xd.zero_point()
    if zx is None or list(xd.scale_map.results) or is_tensor(xd.scale):
        return None
    return xd, pad_op, zx


def rewrite_quantized_pool(op, xd: Dequantized, pad_op, zx: int) -> None:
    """max(sx * (q - zx)) = sx * max(q - zx) (sx > 0), and sum(sx * (q - zx)) = sx * sum(q - zx):
    the pool on f16 integers (exact: a max picks one, a sum is accumulated in f32; half the
    bytes of the dequantized f32 it read, and convc's pool kernels instead of IREE's), scaled
    after; the quantize or division after it fuses in."""
    f16, f32 = ir.F16Type.get(), ir.F32Type.get()
    x = f16_integers(xd, zx)
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
    builder = linalg_d.pooling_nchw_max if is_max else linalg_d.pooling_nchw_sum
    pooled = value_of(builder(x, window, outs=[init], **window_attrs(op)))
    scaled = map_elementwise(pooled, f32, lambda v: arith_d.mulf(arith_d.extf(f32, v) if is_max else v,
                                                                 scalar_of(xd.scale)))
    op.results[0].replace_all_uses_with(scaled)
    op.erase()
