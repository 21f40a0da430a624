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
fill; each phase is inserted into the output with strides (s, s) at its offset (rows and columns
past the output's end dropped).

The elementwise ops after the conv (the import's bias add, the activation, the cast to the
model's type) move before the interleave, onto each phase's output: IREE then fuses them into
the phase convs' dispatches (convc's epilogue), so the phases write the model's type, the
interleave moves half the bytes of f32 and no elementwise dispatch follows it (measured before:
an f32 interleave and a separate bias + ReLU map, results/bench/h200_transposed_latest.json).
They move when each reads the value before it in loop order and otherwise only per-channel
vectors (a broadcast of an [F] tensor, possibly transposed from NCHW); one conv of s^2 F
channels takes each vector tiled s^2 times, where its depth-to-space needs no final crop.

Left as IREE imported it (still correct, with the zero-inserted input): dilated or strided
inner convs (a dilated transposed conv), a dynamic batch, a phase that meets no tap (a filter
smaller than the stride).
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler.dialects import linalg as linalg_d, tensor as tensor_d

from ..ir import ir, walk_ops
from .builders import (NCHW_TO_NHWC, barrier, erase_dead, extract, insert, ints, is_transpose, is_zero_fill, owner, transpose,
                       user_op, value_of, zero)


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
    same = all(len({a.phase(r)[1:] for r in range(a.stride)}) == 1 for a in axes)
    chain = _epilogue_chain(conv.results[0], out_t.shape[3])
    with ir.InsertionPoint(conv), conv.location:
        x = ins.operands[0]
        # the input transposed once (behind a barrier, as convc-channels-last leaves a conv's
        # input transpose: IREE would fuse it into the phase convs' dispatches)
        xt = barrier(transpose(x, NCHW_TO_NHWC)) if nchw else x
        parts, assemble = (_one_conv if same else _phase_convs)(xt, w_pre, axes, phases, out_t)
        if not chain:
            y = assemble(parts, out_t.element_type)
    if not chain:
        conv.results[0].replace_all_uses_with(y)
        conv.erase()
        return True
    last = chain[-1][0]
    tiles = 1 if not same else len(phases)
    with ir.InsertionPoint(last), last.location:
        parts = [_apply_chain(v, chain, tiles) for v in parts]
        y = assemble(parts, ir.RankedTensorType(last.results[0].type).element_type)
    last.results[0].replace_all_uses_with(y)
    for op, _ in reversed(chain):
        op.erase()
    conv.erase()
    return True


def _identity4(m: ir.AffineMap) -> bool:
    return str(m) == "(d0, d1, d2, d3) -> (d0, d1, d2, d3)"


def _channel_vector(v: ir.Value, f: int) -> ir.Value | None:
    """The [f] tensor v broadcasts along N, H and W of the channels-last output (a
    linalg.broadcast, possibly behind the NCHW -> NHWC transpose), else None."""
    op = owner(v)
    channel = 3
    if op is not None and op.name == "linalg.transpose":
        perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
        channel = perm[3]
        op = owner(op.operands[0])
    if op is None or op.name != "linalg.broadcast":
        return None
    vec = op.operands[0]
    vt = ir.RankedTensorType(vec.type)
    if vt.rank != 1 or vt.shape[0] != f or sorted(list(ir.DenseI64ArrayAttr(op.attributes["dimensions"])) + [channel]) != [0, 1, 2, 3]:
        return None
    return vec


def _epilogue_chain(v: ir.Value, f: int) -> list:
    """The elementwise generics after the conv that can move onto its phases: [(generic,
    {operand index: per-channel [f] vector})], each the only user of the value before it,
    reading it and per-channel vectors in loop order into a fresh tensor. Stops at the first
    that cannot."""
    chain = []
    while True:
        uses = list(v.uses)
        if len(uses) != 1:
            return chain
        op = user_op(uses[0])
        if op is None or op.name != "linalg.generic" or len(op.results) != 1:
            return chain
        n_in = len(op.operands) - 1
        maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
        block = op.regions[0].blocks[0]
        if (any("parallel" not in str(a) for a in op.attributes["iterator_types"]) or len(maps) != n_in + 1
                or not all(_identity4(m) for m in maps) or list(block.arguments[-1].uses)
                or owner(op.operands[n_in]) is None or owner(op.operands[n_in]).name != "tensor.empty"):
            return chain
        vectors = {}
        for i in range(n_in):
            if op.operands[i] == v:
                continue
            vec = _channel_vector(op.operands[i], f)
            if vec is None:
                return chain
            vectors[i] = vec
        if len(vectors) != n_in - 1:
            return chain
        chain.append((op, vectors))
        v = op.results[0]


def _cast_of(vec: ir.Value):
    """(source, cast op name) when vec is an elementwise generic that only casts a tensor
    (extf/truncf of a constant bias, which IREE leaves unhoisted and would put inside the phase
    conv's dispatch as a producer the epilogue cannot read), else None."""
    op = owner(vec)
    if op is None or op.name != "linalg.generic" or len(op.operands) != 2:
        return None
    body = [o.operation if hasattr(o, "operation") else o for o in op.regions[0].blocks[0].operations]
    if len(body) != 2 or body[0].name not in ("arith.extf", "arith.truncf") or body[1].name != "linalg.yield":
        return None
    if body[0].operands[0] != op.regions[0].blocks[0].arguments[0] or body[1].operands[0] != body[0].results[0]:
        return None
    return op.operands[0], body[0].name


def _apply_chain(v: ir.Value, chain: list, tiles: int) -> ir.Value:
    """The chain's generics re-created on one phase's output v ([N, Qh, Qw, C]): each
    per-channel vector broadcast to v's shape, tiled `tiles` times along the channels (one conv
    holding s^2 phases' channels)."""
    shape = list(ir.RankedTensorType(v.type).shape)
    for op, vectors in chain:
        n_in = len(op.operands) - 1
        ins, casts = [], {}
        for i in range(n_in):
            if i in vectors:
                vec = vectors[i]
                cast = _cast_of(vec)
                if cast is not None:       # the cast moves into the generic's body
                    vec, casts[i] = cast
                vt = ir.RankedTensorType(vec.type)
                if tiles > 1:
                    vec = tensor_d.ConcatOp(ir.RankedTensorType.get([vt.shape[0] * tiles], vt.element_type),
                                            0, [vec] * tiles).result
                out = value_of(tensor_d.EmptyOp(shape, vt.element_type))
                ins.append(value_of(linalg_d.broadcast(vec, outs=[out], dimensions=[0, 1, 2])))
            else:
                ins.append(v)
        et = ir.RankedTensorType(op.results[0].type).element_type
        init = value_of(tensor_d.EmptyOp(shape, et))
        new = op.clone(ip=ir.InsertionPoint.current)
        for i, x in enumerate(ins + [init]):
            new.operands[i] = x
        new.results[0].set_type(ir.RankedTensorType.get(shape, et))
        block = new.regions[0].blocks[0]
        for i, name in casts.items():
            arg = block.arguments[i]
            wide = arg.type
            arg.set_type(ir.RankedTensorType(ins[i].type).element_type)
            with ir.InsertionPoint.at_block_begin(block):
                c = ir.Operation.create(name, results=[wide], operands=[arg])
            arg.replace_all_uses_except(c.results[0], c)
        v = new.results[0]
    return v


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
    return extract(w, [0, kh0, kw0, 0], [wt.shape[0], krh, krw, wt.shape[3]], [1, sh, sw, 1])


def _crop(y: ir.Value, start: list[int], size: list[int]) -> ir.Value:
    """y[:, start_h:start_h + size_h, start_w:start_w + size_w, :] (y itself if that is all of it)."""
    t = ir.RankedTensorType(y.type)
    if list(t.shape[1:3]) == size and start == [0, 0]:
        return y
    return extract(y, [0, start[0], start[1], 0], [t.shape[0], size[0], size[1], t.shape[3]], [1, 1, 1, 1])


def _phase_convs(xt, w, axes, phases, out_t):
    """A conv per phase ([N, Qh, Qw, F] each), and how they assemble: each inserted with strides
    (sh, sw) at its phase's offset into the output, its last row and column dropped where the
    output ends before them (an output size not a multiple of the stride)."""
    n, f, et = out_t.shape[0], out_t.shape[3], out_t.element_type
    qh, qw = axes[0].phase_out, axes[1].phase_out
    sh, sw = axes[0].stride, axes[1].stride
    ho, wo = out_t.shape[1:3]
    parts = []
    for rh, rw, ph, pw in phases:
        # a phase whose last output row (column) lies past the output's end computes one less
        # (a smaller high pad) rather than cropping it after: a slice between the conv and its
        # epilogue would keep IREE from fusing them
        rows, cols = -(-(ho - rh) // sh), -(-(wo - rw) // sw)
        if ph[4] == 0 and 0 < qh - rows <= ph[3]:
            ph = (*ph[:3], ph[3] - (qh - rows), ph[4])
        if pw[4] == 0 and 0 < qw - cols <= pw[3]:
            pw = (*pw[:3], pw[3] - (qw - cols), pw[4])
        y = _phase_conv(xt, _sub_filter(w, ph, pw, sh, sw), ph, pw, f, et)
        parts.append(_crop(y, [ph[4], pw[4]], [min(qh, ir.RankedTensorType(y.type).shape[1] - ph[4]),
                                               min(qw, ir.RankedTensorType(y.type).shape[2] - pw[4])]))

    def assemble(values, et):
        y = value_of(tensor_d.EmptyOp([n, ho, wo, f], et))
        for (rh, rw, _, _), yr in zip(phases, values):
            rows, cols = -(-(ho - rh) // sh), -(-(wo - rw) // sw)
            if rows <= 0 or cols <= 0:
                continue
            yr = _crop(yr, [0, 0], [rows, cols])
            y = insert(yr, y, [0, rh, rw, 0], [n, rows, cols, f], [1, sh, sw, 1])
        return y
    return parts, assemble


def _one_conv(xt, w, axes, phases, out_t):
    """Every phase with the same window and pads (e.g. K = s, the 2x2 stride-2 up-convs of a
    U-Net): one conv whose s^2 * F output channels are the phases' (sub-filters concatenated),
    then depth-to-space: each phase's F channels inserted with strides (sh, sw) at its offset
    into the output (copies, which convc-copy-chains makes one launch; rows and columns past
    the output's end left out)."""
    n, f, et = out_t.shape[0], out_t.shape[3], out_t.element_type
    qh, qw = axes[0].phase_out, axes[1].phase_out
    sh, sw = axes[0].stride, axes[1].stride
    subs = [_sub_filter(w, ph, pw, sh, sw) for _, _, ph, pw in phases]       # phases in (rh, rw) order
    st = ir.RankedTensorType(subs[0].type)
    wall = tensor_d.ConcatOp(ir.RankedTensorType.get([len(subs) * f, *st.shape[1:]], st.element_type), 0, subs).result
    _, _, ph, pw = phases[0]
    y = _crop(_phase_conv(xt, wall, ph, pw, len(subs) * f, et), [ph[4], pw[4]], [qh, qw])

    ho, wo = out_t.shape[1:3]

    def assemble(values, et):
        y, = values
        out = value_of(tensor_d.EmptyOp([n, ho, wo, f], et))
        for i, (rh, rw, _, _) in enumerate(phases):
            rows, cols = -(-(ho - rh) // sh), -(-(wo - rw) // sw)
            if rows <= 0 or cols <= 0:
                continue
            part = extract(y, [0, 0, 0, i * f], [n, rows, cols, f], [1, 1, 1, 1])
            out = insert(part, out, [0, rh, rw, 0], [n, rows, cols, f], [1, sh, sw, 1])
        return out
    return [y], assemble


def subpixel_convs(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-subpixel-conv: every channels-last conv over a zero-inserted input (a
    transposed conv as imported) becomes stride^2 sub-pixel convs over the real input."""
    with module.context, ir.Location.unknown():
        for conv in list(walk_ops(module.operation, "linalg.conv_2d_nhwc_fhwc")):
            rewrite_transposed(conv)
        # the zero-inserted tensor and its barrier / transpose, the filter's old barrier
        erase_dead(module, ("linalg.transpose", "tensor.empty", "tensor.insert_slice", "linalg.fill",
                            "util.optimization_barrier", "tensor.extract_slice", "linalg.broadcast"))
    return module
