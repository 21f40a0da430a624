"""convc-subpixel-conv: transposed convs as sub-pixel convs over their real input.

PyTorch's and ONNX's imports lower a stride-s transposed conv (`ConvTranspose`,
`nn.ConvTranspose2d`) to a stride-1 conv over a zero-inserted input: the input scattered into
a zero tensor with `tensor.insert_slice` strides (s, s) (a copy dispatch of IREE's), then every
tap of the flipped filter multiplied in, 1 - 1/s^2 of them by zeros. Per output phase
(oh mod s, ow mod s) only the taps k = k0 + s*j meet input pixels, so the same result is s^2
dense stride-1 convs over the input itself, each with the phase's sub-filter, interleaved:

    y[s*q + r] = sum_j x[q + j + d_r] * w[k0_r + s*j],   k0_r = (p - r) mod s,  d_r = (r + k0_r - p) / s

per spatial axis, p being the zero-inserted tensor's leading pad (the offset of the insert).

Runs on the input-phase IR after convc-channels-last, on the channels-last conv it made: the
conv's input is (behind its barrier) the NCHW -> NHWC transpose of the zero-inserted tensor,
or an NHWC zero-inserted tensor. Each phase conv reads the transposed input through a zero
pad (fused into its dispatch, as for any conv), a strided slice of the transposed filter (a
constant expression for a constant filter) behind a barrier, and accumulates into a zero
fill; the phases are inserted into an [N, Qh, sh, Qw, sw, F] tensor collapsed to the output.
The elementwise ops after the conv (bias, activation) stay where they were.

Left as IREE imported it (still correct, with the zero-inserted input): dilated or strided
inner convs (a dilated transposed conv), a dynamic batch, a phase that meets no tap (a filter
smaller than the stride).
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler.dialects import linalg as linalg_d, tensor as tensor_d

from ..ir import ir, walk_ops
from .builders import NCHW_TO_NHWC, barrier, erase_dead, ints, is_transpose, is_zero_fill, owner, reshape, transpose, value_of, zero


@dataclass(frozen=True)
class Axis:
    """One spatial axis of a transposed conv: input size, stride, the zero-inserted tensor's
    leading pad, filter size, output size."""
    size: int
    stride: int
    pad: int
    taps: int
    out: int

    @property
    def phase_out(self) -> int:
        """Outputs per phase (the last phases of an output not a multiple of the stride
        compute one more, cropped after the interleave)."""
        return -(-self.out // self.stride)

    def phase(self, r: int) -> tuple[int, int, int, int, int] | None:
        """(first tap, taps, input pad low, input pad high, outputs to drop first) of phase r, or
        None when the phase meets no tap (a filter smaller than the stride). A phase whose first
        output reads past the first input pixel (d > 0: a pad of K - 1 or more) computes d
        leading outputs more and drops them."""
        s = self.stride
        k0 = (self.pad - r) % s
        if k0 >= self.taps:
            return None
        kr = -(-(self.taps - k0) // s)
        d = (r + k0 - self.pad) // s
        lo, crop = max(0, -d), max(0, d)
        hi = max(0, self.phase_out + crop + kr - 1 - self.size - lo)
        return k0, kr, lo, hi, crop


def _zero_inserted(v: ir.Value):
    """(the insert op, whether its tensor is NCHW) when v is, through a barrier and possibly an
    NCHW -> NHWC transpose, a strided insert of x into a zero fill; else None."""
    op = owner(v)
    if op is not None and op.name == "util.optimization_barrier":
        op = owner(op.operands[0])
    nchw = is_transpose(op, NCHW_TO_NHWC)
    if nchw:
        op = owner(op.operands[0])
    if op is None or op.name != "tensor.insert_slice" or len(op.operands) != 2 or not is_zero_fill(op.operands[1]):
        return None
    return op, nchw


def _axes(ins, nchw: bool, conv, wt: ir.RankedTensorType) -> list[Axis] | None:
    """The two spatial axes of the transposed conv, or None if the insert is not one."""
    offsets = list(ir.DenseI64ArrayAttr(ins.attributes["static_offsets"]))
    strides = list(ir.DenseI64ArrayAttr(ins.attributes["static_strides"]))
    src = ir.RankedTensorType(ins.operands[0].type)
    dst = ir.RankedTensorType(ins.operands[1].type)
    if not src.has_static_shape or not dst.has_static_shape or src.rank != 4:
        return None
    hw = (2, 3) if nchw else (1, 2)
    ch = (0, 1) if nchw else (0, 3)
    if any(offsets[i] or strides[i] != 1 for i in ch) or any(strides[i] < 1 for i in hw):
        return None
    if all(strides[i] == 1 for i in hw):
        return None                                  # a plain pad, not a zero insert
    out = ir.RankedTensorType(conv.results[0].type).shape
    axes = []
    for a, i in enumerate(hw):
        k = wt.shape[1 + a]
        ax = Axis(size=src.shape[i], stride=strides[i], pad=offsets[i], taps=k, out=dst.shape[i] - k + 1)
        if ax.out != out[1 + a] or offsets[i] + (ax.size - 1) * ax.stride >= dst.shape[i]:
            return None
        axes.append(ax)
    return axes


def _pad(x: ir.Value, lo: list[int], hi: list[int]) -> ir.Value:
    """x (NHWC) zero-padded on H and W."""
    if not any(lo + hi):
        return x
    t = ir.RankedTensorType(x.type)
    low, high = [0, lo[0], lo[1], 0], [0, hi[0], hi[1], 0]
    shape = [t.shape[i] + low[i] + high[i] for i in range(4)]
    pad = tensor_d.PadOp(ir.RankedTensorType.get(shape, t.element_type), x, [], [], low, high)
    block = pad.regions[0].blocks.append(*([ir.IndexType.get()] * 4))
    with ir.InsertionPoint(block):
        tensor_d.YieldOp(zero(t.element_type))
    return pad.result


def _slice(v: ir.Value, offsets: list[int], sizes: list[int], strides: list[int]) -> ir.Value:
    t = ir.RankedTensorType(v.type)
    return tensor_d.ExtractSliceOp(ir.RankedTensorType.get(sizes, t.element_type), v, [], [], [],
                                   offsets, sizes, strides).result


def rewrite_transposed(conv) -> bool:
    """Rewrites one channels-last conv over a zero-inserted input; False where it does not apply."""
    if conv.name != "linalg.conv_2d_nhwc_fhwc" or not is_zero_fill(conv.operands[2]):
        return False
    if ints(conv.attributes["strides"]) != [1, 1] or ints(conv.attributes["dilations"]) != [1, 1]:
        return False
    found = _zero_inserted(conv.operands[0])
    if found is None:
        return False
    ins, nchw = found
    w = conv.operands[1]
    wop = owner(w)
    w_pre = wop.operands[0] if wop is not None and wop.name == "util.optimization_barrier" else w
    wt = ir.RankedTensorType(w_pre.type)
    axes = _axes(ins, nchw, conv, wt)
    if axes is None or not wt.has_static_shape:
        return False
    phases = [(rh, rw, axes[0].phase(rh), axes[1].phase(rw))
              for rh in range(axes[0].stride) for rw in range(axes[1].stride)]
    if any(ph is None or pw is None for _, _, ph, pw in phases):
        return False
    out_t = ir.RankedTensorType(conv.results[0].type)
    with ir.InsertionPoint(conv), conv.location:
        x = ins.operands[0]
        # the input transposed once (behind a barrier, as convc-channels-last leaves a conv's
        # input transpose: IREE would fuse it into the phase convs' dispatches)
        xt = barrier(transpose(x, NCHW_TO_NHWC)) if nchw else x
        same = all(len({a.phase(r)[1:] for r in range(a.stride)}) == 1 for a in axes)
        y = (_one_conv if same else _phase_convs)(xt, w_pre, axes, phases, out_t)
    conv.results[0].replace_all_uses_with(y)
    conv.erase()
    return True


def _phase_conv(xt: ir.Value, w: ir.Value, ph, pw, f: int, et) -> ir.Value:
    """One conv of a phase's window (ph, pw: Axis.phase of each axis) over xt, F = f; the
    filter w is the phase's sub-filter(s) [f, taps_h, taps_w, C], put behind a barrier."""
    (_, krh, loh, hih, _), (_, krw, low_, hiw, _) = ph, pw
    xr = _pad(xt, [loh, low_], [hih, hiw])
    xs = ir.RankedTensorType(xr.type).shape
    oh, ow = xs[1] - krh + 1, xs[2] - krw + 1
    acc = value_of(linalg_d.fill(zero(et), outs=[value_of(tensor_d.EmptyOp([xs[0], oh, ow, f], et))]))
    return value_of(linalg_d.conv_2d_nhwc_fhwc(xr, barrier(w), outs=[acc], strides=[1, 1], dilations=[1, 1]))


def _sub_filter(w: ir.Value, ph, pw, sh: int, sw: int) -> ir.Value:
    wt = ir.RankedTensorType(w.type)
    (kh0, krh, *_), (kw0, krw, *_) = ph, pw
    return _slice(w, [0, kh0, kw0, 0], [wt.shape[0], krh, krw, wt.shape[3]], [1, sh, sw, 1])


def _crop(y: ir.Value, start: list[int], size: list[int]) -> ir.Value:
    """y[:, start_h:start_h + size_h, start_w:start_w + size_w, :] (y itself if that is all of it)."""
    t = ir.RankedTensorType(y.type)
    if list(t.shape[1:3]) == size and start == [0, 0]:
        return y
    return _slice(y, [0, start[0], start[1], 0], [t.shape[0], size[0], size[1], t.shape[3]], [1, 1, 1, 1])


def _phase_convs(xt, w, axes, phases, out_t) -> ir.Value:
    """A conv per phase, inserted into an [N, Qh, sh, Qw, sw, F] tensor collapsed to the output."""
    n, f, et = out_t.shape[0], out_t.shape[3], out_t.element_type
    qh, qw = axes[0].phase_out, axes[1].phase_out
    sh, sw = axes[0].stride, axes[1].stride
    stacked = value_of(tensor_d.EmptyOp([n, qh, sh, qw, sw, f], et))
    for rh, rw, ph, pw in phases:
        yr = _crop(_phase_conv(xt, _sub_filter(w, ph, pw, sh, sw), ph, pw, f, et), [ph[4], pw[4]], [qh, qw])
        stacked = tensor_d.InsertSliceOp(yr, stacked, [], [], [], [0, 0, rh, 0, rw, 0], [n, qh, 1, qw, 1, f],
                                         [1] * 6).result
    y = reshape(stacked, [n, qh * sh, qw * sw, f], [[0], [1, 2], [3, 4], [5]])
    return _crop(y, [0, 0], list(out_t.shape[1:3]))


def _one_conv(xt, w, axes, phases, out_t) -> ir.Value:
    """Every phase with the same window and pads (e.g. K = s, the 2x2 stride-2 up-convs of a
    U-Net): one conv whose s^2 * F output channels are the phases' (sub-filters concatenated),
    then depth-to-space: [N, Qh, Qw, sh, sw, F] -> [N, Qh, sh, Qw, sw, F] -> the output."""
    n, f, et = out_t.shape[0], out_t.shape[3], out_t.element_type
    qh, qw = axes[0].phase_out, axes[1].phase_out
    sh, sw = axes[0].stride, axes[1].stride
    subs = [_sub_filter(w, ph, pw, sh, sw) for _, _, ph, pw in phases]       # phases in (rh, rw) order
    st = ir.RankedTensorType(subs[0].type)
    wall = tensor_d.ConcatOp(ir.RankedTensorType.get([len(subs) * f, *st.shape[1:]], st.element_type), 0, subs).result
    _, _, ph, pw = phases[0]
    y = _crop(_phase_conv(xt, wall, ph, pw, len(subs) * f, et), [ph[4], pw[4]], [qh, qw])
    y = reshape(y, [n, qh, qw, sh, sw, f], [[0], [1], [2], [3, 4, 5]])
    y = transpose(y, [0, 1, 3, 2, 4, 5])
    y = reshape(y, [n, qh * sh, qw * sw, f], [[0], [1, 2], [3, 4], [5]])
    return _crop(y, [0, 0], list(out_t.shape[1:3]))


def subpixel_convs(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-subpixel-conv: every channels-last conv over a zero-inserted input (a
    transposed conv as imported) becomes stride^2 sub-pixel convs over the real input."""
    with module.context, ir.Location.unknown():
        for conv in list(walk_ops(module.operation, "linalg.conv_2d_nhwc_fhwc")):
            rewrite_transposed(conv)
        # the zero-inserted tensor and its barrier / transpose, the filter's old barrier
        erase_dead(module, ("linalg.transpose", "tensor.empty", "tensor.insert_slice", "linalg.fill",
                            "util.optimization_barrier", "tensor.extract_slice"))
    return module
