"""convc-pad-channels: a dense conv whose output channel count F is not a multiple of 8 (an RGB
or mask output, F = 3 or 1; any odd F) computes F rounded up to a multiple of 8 with zero
filters, and its result is sliced back to the first F channels.

Why: convc's tensor-core kernels move output channels in 16-byte vectors (TMA filter boxes and
TMA-store epilogues), so such convs fell to the portable kernel (the VAE decoder's 256 -> 3
output conv: 445 us of its 1265 us of conv kernels on an H100), and IREE folds F = 1 away
altogether. With zero filters the padded channels cost tensor-core work only; the slice becomes
part of the consumer dispatch's loads (IREE moves it through elementwise consumers, so the
epilogue then runs in that dispatch instead of the conv's).

The filter is padded by inserting it into a zero tensor, not by tensor.pad: IREE turns the
insertion into a splat and an update outside any dispatch (or folds it into a constant), where
a tensor.pad would be fused into the conv's dispatch, which convc's matcher declines. The
accumulator keeps its form (a zero fill is re-made at the new width; anything else is inserted
into a zero tensor the same way). NVIDIA targets only: the AMD kernels take any F, and llvm-cpu
has no vector constraint. Grouped/depthwise convs are left alone (their own kernels), and so
are 1x1 filters (see _one_tap).
"""

from __future__ import annotations

from iree.compiler.dialects import linalg as linalg_d
from iree.compiler.dialects import tensor as tensor_d

from ..ir import ir, walk_ops
from .builders import mixed_sizes, owner, zero
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
    f8 = padded_width(f)
    if _one_tap(wt, fdim):
        return False
    with ir.InsertionPoint(op), op.location:
        scalar = _fill_of_empty(init)
        new_init = _zeros(init, ot.rank - 1, f8, scalar) if scalar is not None else _widen(init, ot.rank - 1, f8)
        new_w = _widen(w, fdim, f8)
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
    return True


def _erase_if_dead(op) -> None:
    """The old accumulator's fill (and its empty), once nothing reads them."""
    while op is not None and op.name in ("linalg.fill", "tensor.empty") and not list(op.results[0].uses):
        nxt = owner(op.operands[1]) if op.name == "linalg.fill" else None
        op.erase()
        op = nxt


def pad_channels(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-pad-channels (input-phase IR, after convc-trim-window)."""
    arch = getattr(options, "target", None) or "sm_90a"
    if get_target(arch).backend != "nvidia":
        return module
    with module.context, ir.Location.unknown():
        for op in [o for o in walk_ops(module.operation) if o.name in FILTER_F_DIM]:
            _pad_conv(op)
    return module
