"""The conv itself: named or generic NHWC convs (dense, grouped, depthwise) read into a
Geometry (where each conv dimension sits in the operand tensors)."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import ir
from .ir_reading import Decline, linear_terms


@dataclass
class Geometry:
    """Where each conv dimension sits in the (possibly rank-reduced) operand tensors.

    IREE folds unit dimensions (N=1, R=1, ...) before dispatch formation, so positions are
    found by role. A missing position means that dimension has size 1 (same memory layout).
    """

    stride: tuple[int, int]
    dilation: tuple[int, int]
    x_pos: dict          # n, h, w, c (, g) -> position in the input tensor (None if folded)
    f_pos: dict          # f, r, s, c (, g) -> position in the filter tensor
    kind: str = "dense"  # "dense" | "grouped" | "depthwise"
    out_channel_dims: int = 1   # trailing output dims that index the channel (2: [.., G, F/G])
    filter_layout: str = "fhwc"  # ConvProblem.filter_layout


# Named grouped/depthwise convs, as their generic forms (loops n, oh, ow, then the rest):
# the same analysis then reads both.
NAMED_GROUPED = {
    "linalg.depthwise_conv_2d_nhwc_hwc": (
        "ppppr r", "(n, oh, ow, c, kh, kw)", "(n, oh * {sh} + kh * {dh}, ow * {sw} + kw * {dw}, c)",
        "(kh, kw, c)", "(n, oh, ow, c)"),
    "linalg.depthwise_conv_2d_nhwc_hwcm": (
        "pppppr r", "(n, oh, ow, c, m, kh, kw)", "(n, oh * {sh} + kh * {dh}, ow * {sw} + kw * {dw}, c)",
        "(kh, kw, c, m)", "(n, oh, ow, c, m)"),
    "linalg.conv_2d_nhwgc_gfhwc": (
        "pppppr r r", "(n, oh, ow, g, f, kh, kw, c)", "(n, oh * {sh} + kh * {dh}, ow * {sw} + kw * {dw}, g, c)",
        "(g, f, kh, kw, c)", "(n, oh, ow, g, f)"),
}


def _named_grouped_maps(op):
    iters, dims, x, f, o = NAMED_GROUPED[op.name]
    st = [int(v) for v in op.attributes["strides"]]
    dl = [int(v) for v in op.attributes["dilations"]]
    x = x.format(sh=st[0], sw=st[1], dh=dl[0], dw=dl[1])
    maps = [ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{dims} -> {r}>", op.context)).value
            for r in (x, f, o)]
    return ["r" if c == "r" else "p" for c in iters.replace(" ", "")], maps


def conv_geometry(op) -> Geometry:
    """Reads a named or generic nhwc_fhwc conv; Decline otherwise."""
    if op.name == "linalg.conv_2d_nhwc_fhwc":
        st = [int(x) for x in op.attributes["strides"]]
        dl = [int(x) for x in op.attributes["dilations"]]
        return Geometry((st[0], st[1]), (dl[0], dl[1]), dict(n=0, h=1, w=2, c=3),
                         dict(f=0, r=1, s=2, c=3))
    if op.name in NAMED_GROUPED:
        iters, maps = _named_grouped_maps(op)
    else:
        iters = ["r" if "reduction" in str(a) else "p" for a in op.attributes["iterator_types"]]
        maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if len(maps) != 3:
        raise Decline("convolution is not a two-operand linalg op")
    inp = [linear_terms(e) for e in maps[0].results]
    fil = [linear_terms(e) for e in maps[1].results]
    out = [linear_terms(e) for e in maps[2].results]
    shared = set.intersection(*[{d for t in ts for d in t if d >= 0} for ts in (inp, fil, out)])
    if any(iters[d] == "p" for d in shared):
        return _grouped_geometry(iters, inp, fil, out, [d for d in shared if iters[d] == "p"])
    single = lambda t: len(t) == 1 and list(t.values())[0] == 1 and -1 not in t
    if not all(single(t) for t in out + fil):
        raise Decline("filter or output is not indexed by plain loop dimensions")
    out_d = [next(iter(t)) for t in out]
    fil_d = [next(iter(t)) for t in fil]
    if any(iters[d] != "p" for d in out_d) or len(out_d) < 2:
        raise Decline("output is not indexed by parallel loops")
    if sum(iters[d] == "r" for d in fil_d) > 3:       # the window's axes and the input channels
        raise Decline(f"{sum(iters[d] == 'r' for d in fil_d) - 1}-D convolution: convc takes 2-D convs "
                      "(1 or 2 window axes) only")
    f_dim, c_dim = fil_d[0], fil_d[-1]
    # F = 1: IREE folded the output channel away (filter [R, S, C], output [N, Ho, Wo])
    one_f = iters[f_dim] == "r" and f_dim not in out_d and c_dim != f_dim
    if (iters[f_dim] != "p" and not one_f) or iters[c_dim] != "r":
        raise Decline("filter layout is not FHWC (only linalg.conv_2d_nhwc_fhwc is taken)")
    if not one_f and out_d[-1] != f_dim:
        raise Decline("output layout is not NHWF (channels last)")
    if inp[-1] != {c_dim: 1} or iters[c_dim] != "r":
        raise Decline("input layout is not NHWC, or filter layout is not FHWC "
                      "(only linalg.conv_2d_nhwc_fhwc is taken)")
    window = fil_d[:-1] if one_f else fil_d[1:-1]
    if any(iters[d] != "r" for d in window) or len(window) > 2:
        raise Decline("filter layout is not FHWC (only linalg.conv_2d_nhwc_fhwc is taken)")
    names, h, w = _window_roles(inp[:-1], iters, out_d if one_f else out_d[:-1], window)
    x_pos = {k: i for i, k in enumerate(names)}
    x_pos["c"] = len(names)
    x_pos.setdefault("n", None)
    f_pos = {"f": None if one_f else 0, "c": len(fil_d) - 1, "r": None, "s": None}
    for key, role in (("r", h), ("s", w)):
        if role[2] is not None:
            f_pos[key] = fil_d.index(role[2])
    return Geometry((h[1], w[1]), (h[3], w[3]), x_pos, f_pos, out_channel_dims=0 if one_f else 1)


def _window_roles(inp, iters, spatial_out, window):
    """The input's pixel dims (all but its channel dims): a batch dim (a plain output dim with
    no window) and two spatial windows stride*p + dilation*w. Returns (names, h, w) with
    h, w = (output dim, stride, window dim or None, dilation). A window axis indexed by its
    filter tap alone is one IREE folded the output pixel of (one output pixel along it, the
    input trimmed to the window: output dim None, stride 1; the caller's output-shape check
    confirms the single pixel)."""
    roles = []
    for t in inp:
        if -1 in t:
            raise Decline("input window has a constant offset")
        ps = [d for d in t if iters[d] == "p"]
        ws = [d for d in t if iters[d] == "r"]
        if not ps and len(ws) == 1:
            roles.append((None, 1, ws[0], t[ws[0]]))
            continue
        if len(ps) != 1 or len(ws) > 1 or ps[0] not in spatial_out:
            raise Decline("input window is not a plain strided/dilated 2-D window")
        roles.append((ps[0], t[ps[0]], ws[0] if ws else None, t[ws[0]] if ws else 1))
    if [r[0] for r in roles if r[0] is not None] != list(spatial_out):
        raise Decline("input and output pixel dimensions differ in order")
    if len(roles) == 3:
        (nb, nst, nw, _), h, w = roles
        if nb is None or nst != 1 or nw is not None:
            raise Decline("batch dimension is strided or windowed")
        names = ["n", "h", "w"]
    elif len(roles) == 2:
        h, w = roles
        names = ["h", "w"]
    else:
        raise Decline("convolution is not 2-D")
    used_windows = [r[2] for r in (h, w) if r[2] is not None]
    if sorted(used_windows) != sorted(window):
        raise Decline("filter window dimensions do not match the input window")
    return names, h, w


def _grouped_geometry(iters, inp, fil, out, groups) -> Geometry:
    """A grouped or depthwise conv: one parallel loop g indexes input, filter and output.
    Channels are group-major and last: input [.., G, C/G] (or [.., C] for depthwise, C = G),
    output [.., G, F/G] (or [.., G] when F = G); filter [G, F/G, R, S, C/G], [R, S, C/G, G, F/G]
    or, depthwise, [R, S, G, F/G]. Unit dimensions IREE folded away are simply absent."""
    if len(groups) != 1:
        raise Decline("convolution has several group dimensions")
    g = groups[0]
    single = lambda t: len(t) == 1 and list(t.values())[0] == 1 and -1 not in t
    if not all(single(t) for t in out + fil):
        raise Decline("grouped conv: filter or output is not indexed by plain loop dimensions")
    out_d = [next(iter(t)) for t in out]
    fil_d = [next(iter(t)) for t in fil]
    in_dims = {d for t in inp for d in t}
    if out_d[-1] == g:
        f, pix_out = None, out_d[:-1]
    elif len(out_d) >= 2 and out_d[-2] == g and iters[out_d[-1]] == "p" and out_d[-1] not in in_dims:
        f, pix_out = out_d[-1], out_d[:-2]
    else:
        raise Decline("grouped conv: output channels are not group-major and last")
    if inp[-1] == {g: 1}:
        c, x_pix = None, inp[:-1]
    elif (len(inp) >= 2 and inp[-2] == {g: 1} and single(inp[-1])
          and iters[next(iter(inp[-1]))] == "r" and next(iter(inp[-1])) in fil_d):
        c, x_pix = next(iter(inp[-1])), inp[:-2]
    else:
        raise Decline("grouped conv: input channels are not group-major and last")
    window = [d for d in fil_d if iters[d] == "r" and d != c]
    chans = [f] if f is not None else []
    if c is None:
        kind, layout, want = "depthwise", "hwf", [window + [g] + chans]
    else:
        kind, layout, want = "grouped", None, [[g] + chans + window + [c], window + [c, g] + chans]
    if fil_d not in want:
        raise Decline("grouped conv: filter layout is not [G, F/G, R, S, C/G], [R, S, C/G, G, F/G] or, "
                      "depthwise, [R, S, C, M]")
    layout = layout or ("fhwc" if fil_d == want[0] else "hwcf")
    names, h, w = _window_roles(x_pix, iters, pix_out, window)
    x_pos = {k: i for i, k in enumerate(names)}
    x_pos.setdefault("n", None)
    x_pos["g"] = len(names)
    x_pos["c"] = len(names) + 1 if c is not None else None
    f_pos = {"g": fil_d.index(g), "f": fil_d.index(f) if f is not None else None,
             "c": fil_d.index(c) if c is not None else None, "r": None, "s": None}
    for key, role in (("r", h), ("s", w)):
        if role[2] is not None:
            f_pos[key] = fil_d.index(role[2])
    return Geometry((h[1], w[1]), (h[3], w[3]), x_pos, f_pos, kind, 1 if f is None else 2, layout)


def check_conv_body(op) -> None:
    if op.name != "linalg.generic":
        return
    names = [o.operation.name for o in op.regions[0].blocks[0].operations]
    if "arith.muli" in names:
        types = [str(ir.ShapedType(v.type).element_type) for v in op.operands]
        if types != ["i8", "i8", "i32"]:
            raise Decline(f"{types[0]} convolution: the input type is not supported "
                          "(f16, bf16 or f32 convs, or i8 accumulated in i32)")
        bad = [n for n in names if n not in {"arith.extsi", "arith.muli", "arith.addi", "linalg.yield"}]
        if bad or names.count("arith.muli") != 1 or names.count("arith.addi") != 1:
            raise Decline(f"convolution body is not a multiply-accumulate ({', '.join(bad) or 'shape'})")
        return
    allowed = {"arith.extf", "arith.mulf", "arith.addf", "linalg.yield"}
    bad = [n for n in names if n not in allowed]
    if bad or names.count("arith.mulf") != 1 or names.count("arith.addf") != 1:
        raise Decline(f"convolution body is not a multiply-accumulate ({', '.join(bad) or 'shape'})")


def is_conv(op) -> bool:
    if op.name.startswith("linalg.conv") or op.name.startswith("linalg.depthwise_conv"):
        return True
    if op.name != "linalg.generic":
        return False
    iters = [str(a) for a in op.attributes["iterator_types"]]
    if not any("reduction" in s for s in iters):
        return False
    body = [o.operation.name for o in op.regions[0].blocks[0].operations]
    if "arith.mulf" not in body and "arith.muli" not in body:   # pooling windows multiply nothing
        return False
    for a in op.attributes["indexing_maps"]:
        for e in ir.AffineMapAttr(a).value.results:
            try:
                t = {k: c for k, c in linear_terms(e).items() if k >= 0}
            except Decline:
                continue
            if len(t) >= 2 or any(c > 1 for c in t.values()):   # a window, or a strided 1x1 grid
                return True
    return False

