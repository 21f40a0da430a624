"""Small readers of the flow-phase IR the matcher shares, and its decline exception."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import float_const, int_const, ir, owner_op  # noqa: F401 (the matcher's modules import these from here)
from ..problem import DTYPE_BYTES


class Decline(Exception):
    """A conv we recognise but cannot take; the message is the user-facing reason."""


@dataclass
class Operand:
    index: int      # dispatch operand index
    dtype: str


def element_dtype(t: ir.Type) -> str:
    s = str(t)
    if s not in DTYPE_BYTES:
        raise Decline(f"element type {s} not supported")
    return s


# The batch a dynamic-batch conv is planned for (images; rows of a GEMM-form 1x1 conv): kernels
# take the real one at run time, the schedule only needs a typical size.
BATCH_HINT = 8
ROWS_HINT = 8192
# runtime image sizes are planned for (and read in the matcher's shape checks) as this size; the
# output's then reads the same, so checks relating input and output sizes skip such dims
SPATIAL_HINT = 64


def static_shape(t, batch: int | None = None, spatial: int | None = None, hwc: bool = False) -> list[int]:
    """The shape of t; a dynamic leading size (the batch) reads as `batch`, dynamic dims 1 and 2
    of a rank-4 (NHWC) tensor as `spatial`, where given; with hwc (no dynamic batch), dims 0 and
    1 of a rank-3 tensor too (the [H, W, C] image of a unit batch)."""
    st = ir.ShapedType(t)
    shape = list(st.shape)
    if batch is not None and st.rank and st.is_dynamic_dim(0):
        shape[0] = batch
    if spatial is not None and (st.rank == 4 or (hwc and st.rank == 3)):
        for i in ((1, 2) if st.rank == 4 else (0, 1)):
            if st.is_dynamic_dim(i):
                shape[i] = spatial
    if any(x == ir.ShapedType.get_dynamic_size() for x in shape):
        raise Decline("dynamic sizes other than the batch (the leading dimension) or an image's height "
                      "and width are not supported")
    return shape


def tensor_text(t) -> str:
    """tensor<...> of a !iree_tensor_ext.dispatch.tensor<access:tensor<...>> type."""
    t = str(t)
    return t[t.index("tensor<", t.index(":")):-1]


def linear_terms(e: ir.AffineExpr) -> dict[int, int]:
    """Flattens a linear affine expression into {dim: coefficient} (-1: constant)."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineDimExpr):
        return {e.position: 1}
    if isinstance(e, ir.AffineConstantExpr):
        return {-1: e.value}
    if isinstance(e, ir.AffineAddExpr):
        out = dict(linear_terms(e.lhs))
        for k, v in linear_terms(e.rhs).items():
            out[k] = out.get(k, 0) + v
        return out
    if isinstance(e, ir.AffineMulExpr):
        lhs, rhs = linear_terms(e.lhs), linear_terms(e.rhs)
        if list(rhs) == [-1]:
            return {k: v * rhs[-1] for k, v in lhs.items()}
        if list(lhs) == [-1]:
            return {k: v * lhs[-1] for k, v in rhs.items()}
    raise Decline(f"non-linear indexing expression {e}")
