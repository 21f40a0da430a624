"""convc-conv3d: 3-D convs as 2-D convs over views of the channels-last volume.

A 3-D conv (`linalg.conv_3d_ncdhw_fcdhw` from PyTorch's and ONNX's imports, or
`linalg.conv_3d_ndhwc_dhwcf`) over an NDHWC volume is a 2-D conv over a view of it, so every
kernel, epilogue and tuning decision of the 2-D convs applies unchanged:

- **frames** (one depth tap, T = 1, as the spatial half of an R(2+1)D block, 1 x k x k): each
  frame is an image, [N*D, H, W, C] is the same memory, and the conv is the 2-D conv of its
  R x S taps; a depth stride takes every sd-th frame first (a strided slice).
- **temporal** (one spatial tap at unit spatial strides without spatial padding, k x 1 x 1, the
  temporal half of an R(2+1)D block): [N, D, H*W, C] is the same memory, and the conv is a
  2-D conv of T x 1 taps with the depth's stride, dilation and padding as its row axis.
- **depth im2col** (everything else, a k x k x k conv): the T depth taps' frames of each output
  frame are concatenated along the channels, [N, Do, H, W, T*C], and a 2-D conv of R x S taps
  reads T*C channels; the filter's depth taps move next to its channels ([F, R, S, T*C], a
  constant expression for a constant filter). The concatenation is a chain of channel-slice
  copies that convc-copy-chains gives to convc's copy kernel; it moves T times the input
  (less the depth padding), the price of reusing the 2-D schedules.

Runs on the input-phase IR before convc-channels-last: an NCDHW conv becomes a transpose to
NDHWC, the views and 2-D NHWC conv, and a transpose back, which convc-channels-last sinks and
cancels between layers as it does for 2-D convs. A zero pad of the input (the import's
tensor.pad) is re-created on the view where it lands (depth padding as rows of the temporal
view, or on the volume before the im2col slices; spatial padding on the 2-D conv's input, where
IREE fuses it into the conv's dispatch). A non-zero accumulator (the import's bias broadcast)
is added after the conv, so the 2-D conv accumulates into a zero fill as the matcher requires.

Left as IREE imported it: dynamic shapes, padding of the batch or channel axes. Grouped and
depthwise 3-D convs never reach this pass: IREE 3.13's torch-to-linalg conversion has no
lowering for them (`torch.aten.convolution` with groups on 5-D tensors fails to legalize, from
PyTorch and from ONNX alike).
"""

from __future__ import annotations

from iree.compiler.dialects import linalg as linalg_d, tensor as tensor_d

from ..ir import ir, walk_ops
from .builders import (add_elementwise, barrier, pad, erase_dead, extract, insert, ints, is_zero_fill, owner, reshape,
                       transpose, value_of, zero)

CONV3D_OPS = ("linalg.conv_3d_ncdhw_fcdhw", "linalg.conv_3d_ndhwc_dhwcf")
NCDHW_TO_NDHWC = [0, 2, 3, 4, 1]
NDHWC_TO_NCDHW = [0, 4, 1, 2, 3]
_FILTER_TO_FTRSC = {"linalg.conv_3d_ncdhw_fcdhw": [0, 2, 3, 4, 1],    # [F, C, T, R, S]
                    "linalg.conv_3d_ndhwc_dhwcf": [4, 0, 1, 2, 3]}    # [T, R, S, C, F]


def _static(v: ir.Value) -> bool:
    return isinstance(v.type, ir.RankedTensorType) and v.type.rank == 5 and v.type.has_static_shape


def _unpadded(x: ir.Value, ncdhw: bool):
    """(source, low, high, pad value) of the conv input: a constant-valued tensor.pad is taken
    apart (pads in NDHWC order), anything else is its own source with no padding."""
    op = owner(x)
    if op is not None and op.name == "tensor.pad" and len(op.operands) == 1:
        body = [o.operation for o in op.regions[0].blocks[0].operations]
        if len(body) == 1 and len(body[0].operands) == 1 and not isinstance(body[0].operands[0].owner, ir.Block):
            value = body[0].operands[0]     # the yielded value is defined outside the pad's body
            low = [int(v) for v in op.attributes["static_low"]]
            high = [int(v) for v in op.attributes["static_high"]]
            if min(low + high) >= 0:
                perm = NCDHW_TO_NDHWC if ncdhw else list(range(5))
                return op.operands[0], [low[p] for p in perm], [high[p] for p in perm], value
    return x, [0] * 5, [0] * 5, None


def _frames(x5: ir.Value, T: int, Do: int, sd: int, dd: int, front: int, value) -> ir.Value:
    """[N, Do, H, W, T*C]: output frame o's channels t*C .. t*C + C - 1 hold input frame
    o*sd + t*dd - front (the pad value where that is outside the volume). x5 itself for one tap
    reading every frame; a strided slice for one tap (a copy of its own); else each tap's frames inserted into its
    channel slice of an empty tensor (a zero fill where some tap reads padding): IREE makes one
    copy dispatch per tap, which convc-copy-chains merges into one copy-kernel launch."""
    N, D, H, W, C = ir.RankedTensorType(x5.type).shape
    et = ir.RankedTensorType(x5.type).element_type
    spans = []
    for t in range(T):
        first = t * dd - front                      # the input frame output frame 0 reads
        lo = max(0, -(first // sd))                 # output frames [lo, hi) read inside the volume
        hi = min(Do, (D - 1 - first) // sd + 1) if first <= D - 1 else 0
        spans.append((first, lo, max(lo, hi)))
    if T == 1 and spans[0] == (0, 0, Do) and sd == 1:
        return x5
    if T == 1 and spans[0][1:] == (0, Do):
        # behind a barrier: IREE would fuse the strided read into the conv's dispatch (a layout
        # no kernel reads); alone it is a strided copy, which convc-copy-chains gives the copy kernel
        return barrier(extract(x5, [0, spans[0][0], 0, 0, 0], [N, Do, H, W, C], [1, sd, 1, 1, 1]))
    out_t = [N, Do, H, W, T * C]
    dest = tensor_d.EmptyOp(out_t, et).result
    if any((lo, hi) != (0, Do) for _, lo, hi in spans):
        dest = value_of(linalg_d.fill(value if value is not None else zero(et), outs=[dest]))
    for t, (first, lo, hi) in enumerate(spans):
        if hi > lo:
            n = hi - lo
            src = extract(x5, [0, first + lo * sd, 0, 0, 0], [N, n, H, W, C], [1, sd, 1, 1, 1])
            dest = insert(src, dest, [0, lo, 0, 0, t * C], [N, n, H, W, C], [1] * 5)
    return dest


def rewritable(op) -> bool:
    if op.name not in CONV3D_OPS or not all(_static(v) for v in list(op.operands)[:3]):
        return False
    _, low, high, _ = _unpadded(op.operands[0], op.name == CONV3D_OPS[0])
    return low[0] == high[0] == low[4] == high[4] == 0


def conv3d_form(T: int, R: int, S: int, stride: list[int], pad_hw: list[int]) -> str:
    """Which 2-D view a 3-D conv of T x R x S taps takes (the module docstring's three forms)."""
    if T == 1:
        return "frames"
    if R == S == 1 and stride[1] == stride[2] == 1 and not any(pad_hw):
        return "temporal"
    return "im2col"


def rewrite_conv3d(op) -> None:
    x, w, init = op.operands[0], op.operands[1], op.operands[2]
    ncdhw = op.name == CONV3D_OPS[0]
    sd, sh, sw = ints(op.attributes["strides"])
    dd, dh, dw = ints(op.attributes["dilations"])
    src, low, high, value = _unpadded(x, ncdhw)
    x5 = transpose(src, NCDHW_TO_NDHWC) if ncdhw else src
    N, D, H, W, C = ir.RankedTensorType(x5.type).shape
    to_ftrsc = _FILTER_TO_FTRSC[op.name]
    F, T, R, S, _ = [ir.RankedTensorType(w.type).shape[p] for p in to_ftrsc]
    ot = ir.RankedTensorType(init.type)
    Do, Ho, Wo = ot.shape[2:5] if ncdhw else ot.shape[1:4]
    et = ot.element_type
    form = conv3d_form(T, R, S, [sd, sh, sw], low[2:4] + high[2:4])
    if form == "temporal":
        x4 = reshape(x5, [N, D, H * W, C], [[0], [1], [2, 3], [4]])
        if low[1] or high[1]:
            x4 = pad(barrier(x4), [0, low[1], 0, 0], [0, high[1], 0, 0], value)
        w4 = reshape(transpose(w, to_ftrsc), [F, T, 1, C], [[0], [1], [2, 3], [4]])
        strides, dilations, out4 = [sd, 1], [dd, 1], [N, Do, H * W, F]
        groups = [[0], [1], [2, 3], [4]]
    else:
        x4 = reshape(_frames(x5, T, Do, sd, dd, low[1], value), [N * Do, H, W, T * C], [[0, 1], [2], [3], [4]])
        if any(low[2:4]) or any(high[2:4]):
            # behind a barrier, or IREE moves the view past the pad, which then no longer fuses
            # into the conv's dispatch
            x4 = pad(barrier(x4), [0, low[2], low[3], 0], [0, high[2], high[3], 0], value)
        # the depth taps next to the channels: K runs over (r, s, t, c)
        to_frstc = [to_ftrsc[i] for i in (0, 2, 3, 1, 4)]
        w4 = reshape(transpose(w, to_frstc), [F, R, S, T * C], [[0], [1], [2], [3, 4]])
        strides, dilations, out4 = [sh, sw], [dh, dw], [N * Do, Ho, Wo, F]
        groups = [[0, 1], [2], [3], [4]]
    # the barrier keeps the rearranged filter a dispatch operand (as convc-channels-last does)
    w4 = barrier(w4)
    acc = value_of(linalg_d.fill(zero(et), outs=[tensor_d.EmptyOp(out4, et).result]))
    y4 = value_of(linalg_d.conv_2d_nhwc_fhwc(x4, w4, outs=[acc], strides=strides, dilations=dilations))
    y = reshape(y4, [N, Do, Ho, Wo, F], groups)
    if not is_zero_fill(init):
        y = add_elementwise(y, transpose(init, NCDHW_TO_NDHWC) if ncdhw else init)
    if ncdhw:
        y = transpose(y, NDHWC_TO_NCDHW)
    op.results[0].replace_all_uses_with(y)
    op.erase()


def conv3d_to_2d(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-conv3d."""
    with module.context, ir.Location.unknown():
        for op in [o for o in walk_ops(module.operation) if rewritable(o)]:
            with ir.InsertionPoint(op), op.location:
                rewrite_conv3d(op)
        erase_dead(module, ("tensor.pad", "linalg.fill", "tensor.empty", "arith.constant"))
    return module
