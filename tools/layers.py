"""Conv layers as data, and the MLIR models convc is tested and benchmarked on.

A Layer is one entry of a suite JSON (../shared/bench/suite.json format). `layer_mlir` writes
it as a model: tensor.pad + linalg.conv_2d_nhwc_fhwc + an elementwise epilogue generic, the
way a frontend would emit it. Grouped layers (`groups` > 1) use the forms convc-channels-last
makes of imported ones: linalg.depthwise_conv_2d_nhwc_hwc(m) with a [R, S, F] filter when
C = groups, else a grouped linalg.generic on [N, H, W, G, C/G] views with a [R, S, C/G, F]
filter. With `output_arg`, the result is written into a caller buffer
(`iree.abi.output`), which lets checks poison the output before a run.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass

from ..passes.problem import ConvProblem, EpilogueStep
from ..runtime.arrays import FP8

SUITE_PATH = os.path.join(os.path.dirname(__file__), "data", "suite.json")
EPILOGUES = ("none", "bias", "bias_relu", "bias_residual_relu")


@dataclass(frozen=True)
class Layer:
    name: str
    N: int
    H: int
    W: int
    C: int
    F: int
    R: int
    S: int
    stride: tuple = (1, 1)
    dilation: tuple = (1, 1)
    pad: tuple = (0, 0, 0, 0)
    dtype: str = "f16"
    epilogue: str = "bias_relu"
    group: str = ""
    groups: int = 1

    def __post_init__(self):
        if self.epilogue not in EPILOGUES:
            raise ValueError(f"unknown epilogue {self.epilogue!r}")
        if self.dtype in FP8 and (self.epilogue != "none" or self.groups != 1):
            raise ValueError(f"{self.name}: fp8 layers are dense with the raw f32 sums as output (epilogue none)")
        for k in ("stride", "dilation", "pad"):
            object.__setattr__(self, k, tuple(getattr(self, k)))

    @property
    def Ho(self):
        return self.expected_problem().Ho

    @property
    def Wo(self):
        return self.expected_problem().Wo

    @property
    def out_dtype(self):
        """f32 sums without an epilogue; i8: i32 sums, or requantized to i8; fp8 (f8E4M3FN,
        f8E5M2 operands): their f32 sums (no fp8 requantization in the epilogue yet)."""
        if self.dtype == "i8":      # the raw i32 accumulator, or requantized to i8
            return "i32" if self.epilogue == "none" else "i8"
        return "f32" if self.epilogue == "none" else self.dtype

    @property
    def int8(self) -> bool:
        return self.dtype == "i8"

    @property
    def requant_scale(self) -> float:
        """An i8 layer's accumulator scale (a constant of its model): random i8 operands make
        sums of std ~ 74^2 sqrt(K), which this brings to std ~ 32 before rounding to i8."""
        return 32.0 / (74.0 * 74.0 * (self.C // self.groups * self.R * self.S) ** 0.5)

    @property
    def flops(self) -> int:
        return self.expected_problem().flops

    @property
    def depthwise(self) -> bool:
        return self.groups > 1 and self.C == self.groups

    @property
    def filter_layout(self) -> str:
        """ConvProblem.filter_layout: what convc-channels-last makes of an imported conv."""
        return "hwf" if self.depthwise else "hwcf" if self.groups > 1 else "fhwc"

    def filter_shape(self) -> tuple[int, ...]:
        """[F, R, S, C], [R, S, C/G, F] for a grouped layer, [R, S, F] for a depthwise one (its
        channel c*M + m)."""
        if self.depthwise:
            return (self.R, self.S, self.F)
        if self.groups > 1:
            return (self.R, self.S, self.C // self.groups, self.F)
        return (self.F, self.R, self.S, self.C)

    def input_shapes(self) -> list[tuple[tuple[int, ...], str]]:
        """(shape, dtype) of each model argument, in order (output storage excluded)."""
        out = [((self.N, self.H, self.W, self.C), self.dtype),
               (self.filter_shape(), self.dtype)]
        if self.epilogue != "none":
            out.append(((self.F,), "f32" if self.int8 else self.dtype))
        if self.epilogue == "bias_residual_relu":
            out.append(((self.N, self.Ho, self.Wo, self.F), self.dtype))
        return out

    def output_shape(self) -> tuple[int, ...]:
        return (self.N, self.Ho, self.Wo, self.F)

    def expected_problem(self) -> ConvProblem:
        """The ConvProblem convc's matcher must read off this layer's model (an i8 layer's
        epilogue, a program the matcher reads off the IR, is left out: its shape and types are
        what planning needs)."""
        if self.int8:
            return ConvProblem(N=self.N, H=self.H, W=self.W, C=self.C, F=self.F, R=self.R, S=self.S,
                               stride=self.stride, dilation=self.dilation, pad=self.pad, dtype="i8",
                               acc_dtype="i32", out_dtype=self.out_dtype, input=0, filter=1,
                               num_operands=2 + (self.epilogue != "none") + (self.epilogue == "bias_residual_relu"),
                               groups=self.groups,
                               filter_layout=self.filter_layout)
        steps = []
        if self.epilogue != "none":
            steps.append(EpilogueStep("add", self.dtype, 2, "channel"))
        if self.epilogue == "bias_residual_relu":
            steps.append(EpilogueStep("add", self.dtype, 3, "full"))
        if self.epilogue in ("bias_relu", "bias_residual_relu"):
            steps.append(EpilogueStep("max0", "f32"))
        if self.epilogue != "none" and self.dtype != "f32":
            steps.append(EpilogueStep("cast", self.dtype))
        return ConvProblem(N=self.N, H=self.H, W=self.W, C=self.C, F=self.F, R=self.R, S=self.S,
                           stride=self.stride, dilation=self.dilation, pad=self.pad,
                           dtype=self.dtype, out_dtype=self.out_dtype, epilogue=tuple(steps),
                           input=0, filter=1, num_operands=2 + (self.epilogue != "none")
                           + (self.epilogue == "bias_residual_relu"), groups=self.groups,
                           filter_layout=self.filter_layout)


def random_grouped_layers(seed: int, count: int, wide: bool = False) -> list[Layer]:
    """Randomized grouped and depthwise layers (group "grouped_random"): depthwise with and
    without a channel multiplier and grouped convs with 2-24 channels per group, odd channel
    counts, rectangular windows, strides and dilations 1-2 per axis, asymmetric pads, f16, bf16
    and f32, every epilogue. `wide`: depthwise convs with multiplier 1 and windows of 7-9
    columns (ConvNeXt-like: the kernels' rules for 7+ column windows), group
    "depthwise_wide_random", channel counts of 4-byte, 8-byte and 16-byte vectors. The same
    seed gives the same layers."""
    if wide:
        return _random_wide_layers(seed, count)
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        kind = rng.choice(["depthwise", "multiplier", "grouped", "grouped"])
        if kind == "grouped":
            groups = rng.randint(2, 8)
            cg, fg = rng.choice([2, 3, 4, 5, 8, 12, 16, 24]), rng.choice([1, 2, 3, 4, 8, 16])
        else:
            groups = rng.choice([3, 5, 8, 16, 24, 40, 72])
            cg, fg = 1, 1 if kind == "depthwise" else rng.choice([2, 3, 4])
        R, S = rng.choice([1, 3, 3, 5, 7]), rng.choice([1, 3, 3, 5])
        stride = (rng.randint(1, 2), rng.randint(1, 2))
        dilation = (rng.randint(1, 2), rng.randint(1, 2))
        pad = (rng.randint(0, R), rng.randint(0, S), rng.randint(0, R), rng.randint(0, S))
        L = Layer(name=f"rg{len(out):03d}_{kind}", N=rng.randint(1, 4), H=rng.randint(4, 30), W=rng.randint(4, 30),
                  C=groups * cg, F=groups * fg, R=R, S=S, stride=stride, dilation=dilation, pad=pad,
                  dtype=rng.choice(["f16", "f16", "bf16", "f32"]), epilogue=rng.choice(EPILOGUES),
                  group="grouped_random", groups=groups)
        if has_output(L):
            out.append(L)
    return out


def _random_wide_layers(seed: int, count: int) -> list[Layer]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        C = rng.choice([6, 12, 20, 36, 44, 68, 96, 100, 136, 192])
        R, S = rng.choice([3, 5, 7, 7, 9]), rng.choice([7, 7, 8, 9])
        stride = (rng.choice([1, 1, 2]), rng.choice([1, 1, 1, 2]))
        dilation = (rng.choice([1, 1, 2]), rng.choice([1, 1, 1, 2]))
        pad = (rng.randint(0, R), rng.randint(0, S), rng.randint(0, R), rng.randint(0, S))
        L = Layer(name=f"rw{len(out):03d}_depthwise", N=rng.choice([1, 1, 2, 3, 8]), H=rng.randint(5, 40),
                  W=rng.randint(5, 40), C=C, F=C, R=R, S=S, stride=stride, dilation=dilation, pad=pad,
                  dtype=rng.choice(["f16", "f16", "f16", "bf16", "f32"]), epilogue=rng.choice(EPILOGUES),
                  group="depthwise_wide_random", groups=C)
        if has_output(L):
            out.append(L)
    return out


def random_narrow_layers(seed: int, count: int) -> list[Layer]:
    """Randomized dense layers with few or odd output channels (group "narrow_random"): F of
    1-37, mostly not a multiple of 8 (what convc-pad-channels pads), C from 3 to 256,
    rectangular windows of 1-7 taps, strides and dilations 1-2 per axis, asymmetric pads,
    batches 1-4, f16, bf16 and f32, every epilogue. The same seed gives the same layers."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        F = rng.choice([1, 2, 3, 3, 4, 5, 6, 7, 9, 11, 12, 13, 17, 20, 21, 24, 27, 31, 32, 33, 37])
        C = rng.choice([3, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256])
        R, S = rng.choice([1, 2, 3, 3, 5, 7]), rng.choice([1, 3, 3, 5, 7])
        stride = (rng.randint(1, 2), rng.randint(1, 2))
        dilation = (rng.randint(1, 2), rng.randint(1, 2))
        pad = (rng.randint(0, R), rng.randint(0, S), rng.randint(0, R), rng.randint(0, S))
        L = Layer(name=f"rn{len(out):03d}_f{F}", N=rng.randint(1, 4), H=rng.randint(4, 40), W=rng.randint(4, 40),
                  C=C, F=F, R=R, S=S, stride=stride, dilation=dilation, pad=pad,
                  dtype=rng.choice(["f16", "f16", "bf16", "f32"]), epilogue=rng.choice(EPILOGUES),
                  group="narrow_random")
        if has_output(L):
            out.append(L)
    return out


def has_output(L: Layer) -> bool:
    """Whether a drawn layer is a conv at all (its window fits its padded image)."""
    try:
        L.expected_problem()
    except ValueError:
        return False
    return True


def load_suite(path: str | None = None) -> list[Layer]:
    with open(path or SUITE_PATH) as f:
        data = json.load(f)
    fields = set(Layer.__dataclass_fields__)
    return [Layer(**{k: v for k, v in d.items() if k in fields}) for d in data["layers"]]


def _t(shape, dtype) -> str:
    return "tensor<" + "x".join(map(str, shape)) + f"x{dtype}>"


def _zero_pad(L: Layer, lines: list, src: str, x_t: str, x_shape: list, zero: str) -> tuple[str, str]:
    """Appends the zero tensor.pad of the layer's input `src` (H and W; a grouped view's extra
    dims unpadded) to lines; returns the padded value and its type."""
    pt, pl, pb, pr = L.pad
    extra = [0] * (len(x_shape) - 4)
    padded = _t([L.N, L.H + pt + pb, L.W + pl + pr] + x_shape[3:], L.dtype)
    idx = ", ".join(f"%i{i}: index" for i in range(len(x_shape)))
    lines += [f"  %zero = arith.constant {zero} : {L.dtype}",
              f"  %xp = tensor.pad {src} low{[0, pt, pl, 0] + extra} high{[0, pb, pr, 0] + extra} {{",
              f"  ^bb0({idx}):",
              f"    tensor.yield %zero : {L.dtype}",
              f"  }} : {x_t} to {padded}"]
    return "%xp", padded


def layer_mlir(L: Layer, func_name: str = "main", output_arg: bool = False) -> str:
    """A single-conv model for layer L."""
    if L.int8:
        return _int8_layer_mlir(L, func_name, output_arg)
    x_t = _t((L.N, L.H, L.W, L.C), L.dtype)
    w_t = _t(L.filter_shape(), L.dtype)
    o = L.output_shape()
    acc_t = _t(o, "f32")
    res_t = _t(o, L.out_dtype)
    args = [f"%x: {x_t}", f"%w: {w_t}"]
    if L.epilogue != "none":
        args.append(f"%b: {_t((L.F,), L.dtype)}")
    if L.epilogue == "bias_residual_relu":
        args.append(f"%res: {_t(o, L.dtype)}")
    if output_arg:
        args.append(f"%out: {res_t} {{iree.abi.output = 0 : index}}")
    lines = [f"func.func @{func_name}({', '.join(args)}) -> {res_t} {{"]
    src = "%x"
    grouped = L.groups > 1 and not L.depthwise
    G = L.groups
    x_shape = [L.N, L.H, L.W, L.C]
    if grouped:          # the group view first, so that IREE fuses the pad into the conv
        x_shape = [L.N, L.H, L.W, G, L.C // G]
        lines.append(f"  %x5 = tensor.expand_shape %x [[0], [1], [2], [3, 4]] output_shape {x_shape} "
                     f": {x_t} into {_t(x_shape, L.dtype)}")
        src, x_t = "%x5", _t(x_shape, L.dtype)
    if any(L.pad):
        src, x_t = _zero_pad(L, lines, src, x_t, x_shape, "0.0")
    attrs = (f"{{dilations = dense<[{L.dilation[0]}, {L.dilation[1]}]> : tensor<2xi64>, "
             f"strides = dense<[{L.stride[0]}, {L.stride[1]}]> : tensor<2xi64>}}")
    lines += ["  %fz = arith.constant 0.0 : f32"]
    if L.groups == 1 or (L.depthwise and L.F == L.C):
        op = "linalg.conv_2d_nhwc_fhwc" if L.groups == 1 else "linalg.depthwise_conv_2d_nhwc_hwc"
        lines += [f"  %e = tensor.empty() : {acc_t}",
                  f"  %acc = linalg.fill ins(%fz : f32) outs(%e : {acc_t}) -> {acc_t}",
                  f"  %conv = {op} {attrs} ins({src}, %w : {x_t}, {w_t}) outs(%acc : {acc_t}) -> {acc_t}"]
    else:
        if L.depthwise:      # channel multiplier M: [R, S, C, M] filter, [.., C, M] output
            w5 = [L.R, L.S, L.C, L.F // L.C]
            o5 = list(o[:3]) + [L.C, L.F // L.C]
            w_assoc, op = "[[0], [1], [2, 3]]", "linalg.depthwise_conv_2d_nhwc_hwcm"
        else:
            w5 = [L.R, L.S, L.C // G, G, L.F // G]
            o5 = list(o[:3]) + [G, L.F // G]
            w_assoc, op = "[[0], [1], [2], [3, 4]]", None
        acc5 = _t(o5, "f32")
        lines += [f"  %w5 = tensor.expand_shape %w {w_assoc} output_shape {w5} : {w_t} into {_t(w5, L.dtype)}",
                  f"  %e = tensor.empty() : {acc5}",
                  f"  %acc = linalg.fill ins(%fz : f32) outs(%e : {acc5}) -> {acc5}"]
        if op:
            lines.append(f"  %c5 = {op} {attrs} ins({src}, %w5 : {x_t}, {_t(w5, L.dtype)}) outs(%acc : {acc5}) -> {acc5}")
        else:                # the grouped form convc-channels-last makes: [R, S, C/G, G, F/G] filter
            (sh, sw), (dh, dw) = L.stride, L.dilation
            dims = "(n, oh, ow, g, f, kh, kw, c)"
            cast = [] if L.dtype == "f32" else [f"    %xf = arith.extf %xi : {L.dtype} to f32",
                                                f"    %wf = arith.extf %wi : {L.dtype} to f32"]
            a, b = ("%xi", "%wi") if L.dtype == "f32" else ("%xf", "%wf")
            lines += [f"  %c5 = linalg.generic {{indexing_maps = [affine_map<{dims} -> (n, oh * {sh} + kh * {dh}, "
                      f"ow * {sw} + kw * {dw}, g, c)>, affine_map<{dims} -> (kh, kw, c, g, f)>, "
                      f"affine_map<{dims} -> (n, oh, ow, g, f)>], iterator_types = [" + ", ".join(
                          ['"parallel"'] * 5 + ['"reduction"'] * 3) + "]} "
                      f"ins({src}, %w5 : {x_t}, {_t(w5, L.dtype)}) outs(%acc : {acc5}) {{",
                      f"  ^bb0(%xi: {L.dtype}, %wi: {L.dtype}, %o: f32):"] + cast + [
                      f"    %m = arith.mulf {a}, {b} : f32",
                      "    %s = arith.addf %o, %m : f32",
                      "    linalg.yield %s : f32",
                      f"  }} -> {acc5}"]
        lines.append(f"  %conv = tensor.collapse_shape %c5 [[0], [1], [2], [3, 4]] : {acc5} into {acc_t}")
    if L.epilogue == "none":
        lines += [f"  return %conv : {acc_t}", "}"]
        return "\n".join(lines) + "\n"
    ident = "affine_map<(n, h, w, f) -> (n, h, w, f)>"
    chan = "affine_map<(n, h, w, f) -> (f)>"
    ins = ["%conv", "%b"]
    ins_t = [acc_t, _t((L.F,), L.dtype)]
    maps = [ident, chan]
    bargs = ["%a: f32", f"%bb: {L.dtype}"]
    f32_in = L.dtype == "f32"      # f32 layers need no casts around the f32 epilogue math
    body = ([] if f32_in else [f"    %b32 = arith.extf %bb : {L.dtype} to f32"]) + \
        [f"    %v0 = arith.addf %a, {'%bb' if f32_in else '%b32'} : f32"]
    last = "%v0"
    if L.epilogue == "bias_residual_relu":
        ins.append("%res")
        ins_t.append(_t(o, L.dtype))
        maps.append(ident)
        bargs.append(f"%rr: {L.dtype}")
        body += ([] if f32_in else [f"    %r32 = arith.extf %rr : {L.dtype} to f32"]) + \
            [f"    %v1 = arith.addf %v0, {'%rr' if f32_in else '%r32'} : f32"]
        last = "%v1"
    if L.epilogue in ("bias_relu", "bias_residual_relu"):
        body += [f"    %v2 = arith.maximumf {last}, %fz : f32"]
        last = "%v2"
    body += ([f"    linalg.yield {last} : f32"] if f32_in else
             [f"    %v3 = arith.truncf {last} : f32 to {L.dtype}", f"    linalg.yield %v3 : {L.dtype}"])
    bargs.append(f"%o: {L.dtype}")
    lines += [f"  %e2 = tensor.empty() : {res_t}",
              f"  %y = linalg.generic {{indexing_maps = [{', '.join(maps + [ident])}], "
              "iterator_types = [\"parallel\", \"parallel\", \"parallel\", \"parallel\"]} "
              f"ins({', '.join(ins)} : {', '.join(ins_t)}) outs(%e2 : {res_t}) {{",
              f"  ^bb0({', '.join(bargs)}):"] + body + [f"  }} -> {res_t}", f"  return %y : {res_t}", "}"]
    return "\n".join(lines) + "\n"


def _int8_layer_mlir(L: Layer, func_name: str, output_arg: bool) -> str:
    """An i8 layer as a quantized model's conv: s8 x s8 summed in i32 (linalg's named conv on
    i8 operands with an i32 accumulator); with an epilogue, requantized to i8 the way
    convc-quantized-conv and QuantizeLinear leave it: acc * scale + bias[f] (+ residual) (relu),
    rounded half to even, clamped to [-128, 127]. Dense layers only."""
    if L.groups != 1:
        raise ValueError(f"{L.name}: i8 layers are dense")
    x_t = _t((L.N, L.H, L.W, L.C), "i8")
    w_t = _t(L.filter_shape(), "i8")
    o = L.output_shape()
    acc_t, res_t = _t(o, "i32"), _t(o, L.out_dtype)
    args = [f"%x: {x_t}", f"%w: {w_t}"]
    if L.epilogue != "none":
        args.append(f"%b: {_t((L.F,), 'f32')}")
    if L.epilogue == "bias_residual_relu":
        args.append(f"%res: {_t(o, 'i8')}")
    if output_arg:
        args.append(f"%out: {res_t} {{iree.abi.output = 0 : index}}")
    lines = [f"func.func @{func_name}({', '.join(args)}) -> {res_t} {{"]
    src = "%x"
    if any(L.pad):
        src, x_t = _zero_pad(L, lines, src, x_t, [L.N, L.H, L.W, L.C], "0")
    attrs = (f"{{dilations = dense<[{L.dilation[0]}, {L.dilation[1]}]> : tensor<2xi64>, "
             f"strides = dense<[{L.stride[0]}, {L.stride[1]}]> : tensor<2xi64>}}")
    lines += ["  %iz = arith.constant 0 : i32",
              f"  %e = tensor.empty() : {acc_t}",
              f"  %acc = linalg.fill ins(%iz : i32) outs(%e : {acc_t}) -> {acc_t}",
              f"  %conv = linalg.conv_2d_nhwc_fhwc {attrs} ins({src}, %w : {x_t}, {w_t}) outs(%acc : {acc_t}) -> {acc_t}"]
    if L.epilogue == "none":
        lines += [f"  return %conv : {acc_t}", "}"]
        return "\n".join(lines) + "\n"
    ident = "affine_map<(n, h, w, f) -> (n, h, w, f)>"
    chan = "affine_map<(n, h, w, f) -> (f)>"
    ins, ins_t, maps = ["%conv", "%b"], [acc_t, _t((L.F,), "f32")], [ident, chan]
    bargs = ["%a: i32", "%bb: f32"]
    body = [f"    %s = arith.constant {L.requant_scale!r} : f32",
            "    %af = arith.sitofp %a : i32 to f32",
            "    %v0m = arith.mulf %af, %s : f32",
            "    %v0 = arith.addf %v0m, %bb : f32"]
    last = "%v0"
    if L.epilogue == "bias_residual_relu":
        ins.append("%res")
        ins_t.append(_t(o, "i8"))
        maps.append(ident)
        bargs.append("%rr: i8")
        body += ["    %rf = arith.sitofp %rr : i8 to f32", "    %v1 = arith.addf %v0, %rf : f32"]
        last = "%v1"
    if L.epilogue in ("bias_relu", "bias_residual_relu"):
        body += ["    %fz = arith.constant 0.0 : f32", f"    %v2 = arith.maximumf {last}, %fz : f32"]
        last = "%v2"
    body += [f"    %q0 = math.roundeven {last} : f32",
             "    %lo = arith.constant -128.0 : f32",
             "    %hi = arith.constant 127.0 : f32",
             "    %q1 = arith.maxnumf %q0, %lo : f32",
             "    %q2 = arith.minnumf %q1, %hi : f32",
             "    %q = arith.fptosi %q2 : f32 to i8",
             "    linalg.yield %q : i8"]
    bargs.append("%o: i8")
    lines += [f"  %e2 = tensor.empty() : {res_t}",
              f"  %y = linalg.generic {{indexing_maps = [{', '.join(maps + [ident])}], "
              "iterator_types = [\"parallel\", \"parallel\", \"parallel\", \"parallel\"]} "
              f"ins({', '.join(ins)} : {', '.join(ins_t)}) outs(%e2 : {res_t}) {{",
              f"  ^bb0({', '.join(bargs)}):"] + body + [f"  }} -> {res_t}", f"  return %y : {res_t}", "}"]
    return "\n".join(lines) + "\n"
