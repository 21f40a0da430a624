"""convc-pad-channels: a dense conv whose output channel count F is not a multiple of 8 (an RGB
or mask output, F = 3 or 1; any odd F) computes F rounded up to a multiple of 8 with zero
filters, and its result is sliced back to the first F channels. An f32 conv whose input
channels no TF32 K step tiles (an f32 RGB stem) reads them zero-padded (_pad_f32_input).

Why: convc's tensor-core kernels move output channels in 16-byte vectors (TMA filter boxes and
TMA-store epilogues), so such convs fell to the portable kernel (the VAE decoder's 256 -> 3
output conv: 445 us of its 1265 us of conv kernels on an H100), and IREE folds F = 1 away
altogether. With zero filters the padded channels cost tensor-core work only; the slice becomes
part of the consumer dispatch's loads (IREE moves it through elementwise consumers, so the
epilogue then runs in that dispatch instead of the conv's).

Where the padded channels can flow on, the slice moves down instead (channel_carry.sink_slice): through
elementwise ops (their per-channel operands widened with ones, so the extra channels stay
finite), reshapes that keep the channel axis, barriers and spatial pads, into a dense conv
whose filter gets zero input channels for them. The epilogue then stays in the padded conv's
dispatch and the next conv reads a whole number of vectors: R(2+1)D's 45-, 230- and
921-channel mid convs, whose BatchNorm + ReLU ran as IREE elementwise dispatches after the slice
(1.0 ms of 3.7 ms of kernels at batch 8, results/e2e/h200_zoo_latest.json).

The filter is padded by inserting it into a zero tensor, not by tensor.pad: IREE turns the
insertion into a splat and an update outside any dispatch (or folds it into a constant), where
a tensor.pad would be fused into the conv's dispatch, which convc's matcher declines. The
accumulator keeps its form (a zero fill is re-made at the new width; anything else is inserted
into a zero tensor the same way). NVIDIA targets only: the AMD kernels take any F, and llvm-cpu
has no vector constraint. Grouped/depthwise convs are left alone (their own kernels), and so
are 1x1 filters (see _one_tap).
"""

from __future__ import annotations

from iree.compiler.dialects import tensor as tensor_d

from ..ir import ir, walk_ops
from .builders import mixed_sizes, owner
from .channel_carry import (CONV_INPUT_MULTIPLE, carry, rebuild, reaches_conv, sink_slice, split_sizes,
                            widen, widen_filter, zeros)
from ..target import get_target
from .window import zero_pad

VECTOR = 8              # output channels per 16-byte f16 vector

# dense channels-last convs: the filter's F dimension (the output's is the last)
FILTER_F_DIM = {"linalg.conv_2d_nhwc_fhwc": 0, "linalg.conv_2d_nhwc_hwcf": 3}


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
    if _one_tap(wt, fdim):
        return False
    f8 = padded_width(f)
    # where the extra channels can reach another conv, they go on into it (and are as many as
    # its input needs); otherwise the slice stays after the conv
    carry = not any(ot.is_dynamic_dim(i) for i in range(ot.rank)) and reaches_conv(op.results[0])
    if carry:
        f8 = -(-f // CONV_INPUT_MULTIPLE) * CONV_INPUT_MULTIPLE
    with ir.InsertionPoint(op), op.location:
        scalar = _fill_of_empty(init)
        new_init = zeros(init, ot.rank - 1, f8, scalar) if scalar is not None else widen(init, ot.rank - 1, f8)
        new_w = widen_filter(w, fdim, f8)
    op.operands[1] = new_w
    op.operands[2] = new_init
    res = op.results[0]
    res.set_type(new_init.type)
    with ir.InsertionPoint.after(op), op.location:
        # dynamic sizes from the new accumulator (tensor.dim of the result would be rewired to the slice)
        static, dynamic = split_sizes(mixed_sizes(new_init, {ot.rank - 1: f}))
        sl = tensor_d.ExtractSliceOp(ot, res, [], dynamic, [], [0] * ot.rank, static, [1] * ot.rank)
    res.replace_all_uses_except(sl.result, sl.operation)
    _erase_if_dead(owner(init))
    if carry:
        sink_slice(sl.operation)
    return True


def _erase_if_dead(op) -> None:
    """The old accumulator's fill (and its empty), once nothing reads them."""
    while op is not None and op.name in ("linalg.fill", "tensor.empty") and not list(op.results[0].uses):
        nxt = owner(op.operands[1]) if op.name == "linalg.fill" else None
        op.erase()
        op = nxt


# f32 input channels per TF32 K step of the im2col TMA kernels with several filter taps (64
# bytes), tma_loader.k_tile_channels
TF32_INPUT_MULTIPLE = 16


def _pad_f32_input(op, arch: str) -> bool:
    """An f32 conv (taken as TF32) whose input channels no TF32 K step tiles and whose input
    rows the row-slab kernel cannot take either (row_slab_stem) reads them padded with zeros
    to a multiple of 16, with zero filter channels: a TF32 tensor-core kernel instead of the
    portable one (ResNet-50's f32 stem at batch 32: 737 us on the portable kernel,
    results/e2e/h200_latest.json). The activation is inserted into a zero tensor (a copy into a
    zero fill: the copy kernel, in place) before its spatial pad, which still fuses into the
    conv."""
    from ..lower.nvidia.tma_loader import k_tile_channels
    x, w = op.operands[0], op.operands[1]
    xt, wt = ir.RankedTensorType(x.type), ir.RankedTensorType(w.type)
    if op.name != "linalg.conv_2d_nhwc_fhwc" or not (xt.has_static_shape and wt.has_static_shape) \
            or str(xt.element_type) != "f32" or str(wt.element_type) != "f32":
        return False
    c, taps = wt.shape[3], wt.shape[1] * wt.shape[2]
    # a 1x1 filter is a GEMM to IREE, which would read the padded input as a strided operand
    if taps == 1 or k_tile_channels(c, taps, "f32") is not None or row_slab_stem(op, arch):
        return False
    c16 = -(-c // TF32_INPUT_MULTIPLE) * TF32_INPUT_MULTIPLE
    with ir.InsertionPoint(op), op.location:
        pad = owner(x)
        if pad is not None and pad.name == "tensor.pad" and carry(pad, 0, pad.operands[0]) == "pad":
            wide = widen(pad.operands[0], 3, c16)
            x16 = rebuild(pad, "pad", wide, pad.operands[0])
        else:
            x16 = widen(x, 3, c16)
        op.operands[1] = widen_filter(w, 3, c16)
        op.operands[0] = x16
    return True


def row_slab_stem(op, arch: str) -> bool:
    """Whether the sm_90a row-slab kernel (TF32 register-A wgmma on the input rows as they
    are, lower/nvidia/row_slab.py) takes this f32 conv with its channels unpadded: ResNet-50's
    f32 stem at batch 32 took 237 us on 16 padded channels (5.3x the stem's multiply-adds)
    after a 24 us zero fill and a 47 us copy into them (results/e2e/h200_floors_latest.json).
    Judged on the conv alone: an epilogue the kernel declines later (a residual) sends it to
    the portable kernel."""
    from ..lower.nvidia import row_slab, sm90_rows, tensormap
    from ..problem import ConvProblem
    if not get_target(arch).has_wgmma:
        return False
    x, w = op.operands[0], op.operands[1]
    pad = zero_pad(x)
    src = pad.operands[0] if pad is not None else x
    st, wt = ir.RankedTensorType(src.type), ir.RankedTensorType(w.type)
    if not st.has_static_shape:
        return False
    low = [int(v) for v in pad.attributes["static_low"]] if pad is not None else [0] * 4
    high = [int(v) for v in pad.attributes["static_high"]] if pad is not None else [0] * 4
    if low[0] or high[0] or low[3] or high[3] or min(low + high) < 0:
        return False
    n, h, wd, c = st.shape
    f, r, sw = wt.shape[0], wt.shape[1], wt.shape[2]
    stride = tuple(int(v) for v in ir.DenseIntElementsAttr(op.attributes["strides"]))
    dilation = tuple(int(v) for v in ir.DenseIntElementsAttr(op.attributes["dilations"]))
    p = ConvProblem(N=n, H=h, W=wd, C=c, F=f, R=r, S=sw, stride=stride, dilation=dilation,
                    pad=(low[1], low[2], high[1], high[2]), dtype="f32", out_dtype="f32")
    try:
        sm90_rows.check_supported(p)
    except (row_slab.RowSlabUnsupported, tensormap.TensorMapError):
        return False
    return True


def pad_channels(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-pad-channels (input-phase IR, after convc-trim-window)."""
    arch = getattr(options, "target", None) or "sm_90a"
    if get_target(arch).backend != "nvidia":
        return module
    with module.context, ir.Location.unknown():
        for op in [o for o in walk_ops(module.operation) if o.name in FILTER_F_DIM]:
            _pad_conv(op)
        if (getattr(options, "precision", None) or "tf32") == "tf32":
            for op in [o for o in walk_ops(module.operation) if o.name in FILTER_F_DIM]:
                _pad_f32_input(op, arch)
    return module
