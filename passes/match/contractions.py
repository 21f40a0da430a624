"""IREE's contraction forms of 1x1 convs (a GEMM, or a batched GEMM for grouped 1x1 convs):
recognising them and their signatures, which the driver matches against the 1x1 convs of the
input model so that genuine matmuls stay with IREE."""

from __future__ import annotations

from ..ir import ir
from .conv_forms import conv_geometry, is_conv
from .dispatch import Dispatch
from .ir_reading import Decline, linear_terms, static_shape


def _contraction(op):
    """(P, terms of each operand map) of a generic with P parallel loops and one reduction
    loop, the last, over two inputs and one output; (P, None) for anything else."""
    kinds = ["r" if "reduction" in str(a) else "p" for a in op.attributes["iterator_types"]]
    P = len(kinds) - 1
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if kinds.count("r") != 1 or kinds[-1] != "r" or len(maps) != 3:
        return P, None
    try:
        return P, [[linear_terms(e) for e in m.results] for m in maps]
    except Decline:
        return P, None


def is_gemm_1x1(op) -> bool:
    """A contraction out[m..., f] += in[m..., c] * filter[f, c]: IREE's form of a 1x1 conv."""
    if op.name not in ("linalg.generic", "linalg.matmul", "linalg.matmul_transpose_b"):
        return False
    if op.name != "linalg.generic":
        return op.name == "linalg.matmul_transpose_b"
    P, res = _contraction(op)
    if res is None or P + 1 not in (3, 4, 5):
        return False
    r = P
    return (res[2] == [{i: 1} for i in range(P)] and res[1] == [{P - 1: 1}, {r: 1}]
            and res[0] == [{i: 1} for i in range(P - 1)] + [{r: 1}])


def is_grouped_gemm_1x1(op) -> bool:
    """out[m..., g, f] += in[m..., g, c] * filter[g, f, c]: IREE's form of a grouped 1x1 conv
    (the same form as a batched matmul with a transposed B; signatures tell them apart)."""
    if op.name != "linalg.generic":
        return False
    P, res = _contraction(op)
    if res is None or P < 3:
        return False
    g, f, c = P - 2, P - 1, P
    return (res[2] == [{i: 1} for i in range(P)] and res[1] in ([{g: 1}, {f: 1}, {c: 1}], [{c: 1}, {g: 1}, {f: 1}])
            and res[0] == [{i: 1} for i in range(P - 2)] + [{g: 1}, {c: 1}])


def grouped_gemm_hwcf(op) -> bool:
    """Whether a grouped 1x1 contraction's filter is [C/G, G, F/G] (else [G, F/G, C/G])."""
    return linear_terms(ir.AffineMapAttr(op.attributes["indexing_maps"][1]).value.results[0]) != {len(
        op.attributes["iterator_types"]) - 3: 1}


def grouped_1x1_signature(op) -> tuple | None:
    """("grouped", M, G, C/G, F/G) of a static grouped 1x1 conv of the input model (a named
    conv_2d_nhwgc_gfhwc or a grouped generic), matched against IREE's contraction form of it;
    None for anything else."""
    if op.name not in ("linalg.generic", "linalg.conv_2d_nhwgc_gfhwc") or not is_conv(op):
        return None
    try:
        g = conv_geometry(op)
    except Decline:
        return None
    xs, fs, out = (ir.ShapedType(v.type) for v in list(op.operands)[:3])
    if g.kind != "grouped" or not (xs.has_static_shape and fs.has_static_shape and out.has_static_shape):
        return None
    size = lambda shape, k: shape[g.f_pos[k]] if g.f_pos[k] is not None else 1
    if size(fs.shape, "r") != 1 or size(fs.shape, "s") != 1:
        return None
    m = 1
    for v in out.shape[:len(out.shape) - 2]:
        m *= v
    return ("grouped", m, size(fs.shape, "g"), size(fs.shape, "c"), size(fs.shape, "f"))


def grouped_gemm_signature(op) -> tuple:
    xs = static_shape(op.operands[0].type)
    fs = static_shape(op.operands[1].type)
    m = 1
    for v in xs[:-2]:
        m *= v
    return ("grouped", m, xs[-2], xs[-1], fs[2] if grouped_gemm_hwcf(op) else fs[1])


def match_gemm_1x1(d: "Dispatch", op):
    """(N, H, W, C, F, stride, input operand, filter operand) of a GEMM-form 1x1 conv."""
    operand, full, strides = d.operand_of(op.operands[0], allow_strides=True)
    f_op = d.operand_of(op.operands[1])
    xs = d.shape(op.operands[0].type)
    fs = d.shape(op.operands[1].type)
    F, C = fs
    if len(xs) == 2:
        if strides != [1, 1] or full != xs:
            raise Decline("strided GEMM operand")
        return (1, xs[0], 1, C, F, (1, 1), operand, f_op)
    if len(xs) == 3:                  # (N, H*W, C): IREE collapsed the pixels of each image
        if strides != [1, 1, 1] or full != xs:
            raise Decline("strided GEMM operand")
        return (xs[0], xs[1], 1, C, F, (1, 1), operand, f_op)
    if strides[0] != 1 or strides[3] != 1:
        raise Decline("strided batch or channel access")
    N, H, W, _ = full
    sh, sw = strides[1], strides[2]
    if xs != [N, (H - 1) // sh + 1, (W - 1) // sw + 1, C]:
        raise Decline("1x1 conv reads a window that is not a plain strided grid")
    return (N, H, W, C, F, (sh, sw), operand, f_op)


def gemm_signature(op) -> tuple[int, int, int]:
    """(M, K, F) of a GEMM-form 1x1 conv; matched against the 1x1 convs of the input model."""
    xs = list(ir.ShapedType(op.operands[0].type).shape)
    fs = static_shape(op.operands[1].type)
    if ir.ShapedType(op.operands[0].type).is_dynamic_dim(0):
        return (None, xs[-1], fs[0])            # a dynamic batch (1x1 convs of any batch match)
    m = 1
    for d in xs[:-1]:
        m *= d
    return (m, xs[-1], fs[0])
