"""convc-linear-weights: a Linear layer's matmul reads its weight as [F, K], the form of a
1x1 conv's filter, so convc's GEMM kernels take it.

A channel-wise Linear on a channels-last activation is a 1x1 conv: M = pixels (or images), K =
input features, F = output features. PyTorch and ONNX hand it to IREE as `linalg.matmul(x,
transpose(W))` with W = [F, K] (PyTorch's nn.Linear layout, `aten.t` + `aten.mm`) or as a plain
`linalg.matmul(x, B)` with B = [K, F] (ONNX Gemm/MatMul initializers). IREE then runs the
transpose once at load and computes the matmul with its own codegen: 1-2% of the tensor-core
peak on Hopper (ConvNeXt-T's MLP matmuls, 640 us each at batch 32; ResNet-50's classifier, 38
us), which the matcher could not take: its GEMM form is out[m, f] += in[m, c] * filter[f, c].

Before IREE's flow phase, every static 2-D `linalg.matmul` whose right operand is a weight
(a util.global or constant, optionally through a transpose) becomes that contraction as a
linalg.generic over the [F, K] weight: a transposed weight is read untransposed, a [K, F] one
through a transpose IREE evaluates at load. The driver then lists its (M, K, F) with the 1x1
convs' GEMM signatures (convc-match-conv takes those and leaves other matmuls to IREE).
Matmuls of two activations (attention), splat weights and dynamic K or F are left alone.
"""

from __future__ import annotations

from iree.compiler.dialects import arith as arith_d, linalg as linalg_d

from ..ir import ir, walk_ops
from .builders import is_transpose, owner, transpose


def _weight_source(v: ir.Value) -> bool:
    """Whether v is computed from module constants alone (a util.global, an arith.constant,
    through transposes, casts and reshapes): IREE evaluates a transpose of it at load."""
    op = owner(v)
    while op is not None and op.name in ("linalg.transpose", "tensor.collapse_shape", "tensor.expand_shape",
                                          "tensor.cast"):
        op = owner(op.operands[0])
    if op is not None and op.name == "linalg.generic" and len(op.operands) == 2:
        op = owner(op.operands[0])        # an elementwise cast of the weight (f32 -> f16 demotion)
    if op is not None and op.name == "arith.constant":
        # a splat weight (stripped test models) IREE folds into the contraction's body, leaving a
        # reduction its GPU codegen cannot distribute: it stays a matmul, with IREE
        a = op.attributes["value"]
        return not (isinstance(a, ir.DenseElementsAttr) and a.is_splat)
    return op is not None and op.name == "util.global.load"


def _filter_of(b: ir.Value) -> ir.Value | None:
    """The [F, K] weight a matmul's right operand [K, F] comes from (a transposed weight read
    untransposed, else transposed here); None when the operand is not a weight."""
    if not _weight_source(b):
        return None
    src = owner(b)
    return src.operands[0] if is_transpose(src, [1, 0]) else transpose(b, [1, 0])


def _contraction(a: ir.Value, w: ir.Value, init: ir.Value) -> ir.Value:
    """out[m, f] += a[m, c] * w[f, c], the operands widened to the accumulator's type."""
    m, f, c = (ir.AffineExpr.get_dim(i) for i in range(3))
    maps = [ir.AffineMapAttr.get(ir.AffineMap.get(3, 0, r)) for r in ([m, c], [f, c], [m, f])]
    it = lambda k: ir.Attribute.parse(f"#linalg.iterator_type<{k}>")
    out_t = ir.RankedTensorType(init.type)
    gen = linalg_d.GenericOp([out_t], [a, w], [init], ir.ArrayAttr.get(maps),
                             ir.ArrayAttr.get([it("parallel"), it("parallel"), it("reduction")]))
    at, wt, et = (ir.RankedTensorType(v.type).element_type for v in (a, w, init))
    block = gen.regions[0].blocks.append(at, wt, et)
    with ir.InsertionPoint(block):
        x, y, acc = block.arguments
        x = x if at == et else arith_d.extf(et, x)
        y = y if wt == et else arith_d.extf(et, y)
        linalg_d.YieldOp([arith_d.addf(acc, arith_d.mulf(x, y))])
    return gen.results[0]


def plain_matmul_maps(op) -> bool:
    """A matmul without maps of its own (transposed or broadcast operands): its maps, if
    printed, are the default (m, k), (k, n), (m, n)."""
    if "indexing_maps" not in op.attributes:
        return True
    d = ir.AffineExpr.get_dim
    default = [ir.AffineMap.get(3, 0, [d(i), d(j)]) for i, j in ((0, 2), (2, 1), (0, 1))]
    return [str(ir.AffineMapAttr(x).value) for x in op.attributes["indexing_maps"]] == [str(m) for m in default]


def _rewrite(op) -> bool:
    a, b, init = op.operands[0], op.operands[1], op.operands[2]
    if not plain_matmul_maps(op):
        return False
    ts = [v.type for v in (a, b, init)]
    if not all(isinstance(t, ir.RankedTensorType) for t in ts):
        return False
    at, bt, ot = (ir.RankedTensorType(t) for t in ts)
    if bt.rank != 2 or not bt.has_static_shape or at.is_dynamic_dim(1) or ot.is_dynamic_dim(1):
        return False
    if not all(isinstance(t.element_type, (ir.F16Type, ir.BF16Type, ir.F32Type)) for t in (at, bt, ot)):
        return False
    with ir.InsertionPoint(op), op.location:
        w = _filter_of(b)
        if w is None:
            return False
        res = _contraction(a, w, init)
    op.results[0].replace_all_uses_with(res)
    dead = owner(b)
    op.erase()
    if is_transpose(dead, [1, 0]) and not list(dead.results[0].uses):
        dead.erase()
    return True


def linear_weights(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-linear-weights (input-phase IR, after convc-pad-channels)."""
    with module.context, ir.Location.unknown():
        for op in [o for o in walk_ops(module.operation, "linalg.matmul")]:
            _rewrite(op)
    return module
