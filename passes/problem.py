"""ConvProblem: everything a kernel needs to know about one conv dispatch.

The problem is the contract between matching and everything after it: the planner and the
lowerings read only this, never the IR they came from. It round-trips through a DictAttr
(`convc.problem`) so each pass can run alone on a file.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field

# Element types convc kernels accept as conv inputs, and byte sizes of all types we touch.
INPUT_DTYPES = ("f16", "bf16", "f32")
# int8 convs (s8 x s8, accumulated in i32: convc-quantized-conv's, or linalg's own): dense only
INT_INPUT_DTYPES = ("i8",)
# fp8 convs (OCP e4m3 / e5m2 x the same type, summed in f32): dense only; dtype names are MLIR's
FP8_INPUT_DTYPES = ("f8E4M3FN", "f8E5M2")
DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i8": 1, "i16": 2, "i32": 4, "f8E4M3FN": 1, "f8E5M2": 1}
# how an epilogue operand is indexed (OperandLoad)
BROADCASTS = ("channel", "full", "image", "row")


@dataclass(frozen=True)
class OperandLoad:
    """A tensor the epilogue reads at each output element: kernel operand `operand`, indexed by
    output channel ("channel"), shaped like the output ("full"), by image and channel
    ("image": [N, F], a squeeze-excitation scale; elementwise maps only), or the output row's
    reduction over its channels ("row": computed by the kernel from operand `operand`, see
    ConvProblem.row_reduce; maps only), stored as `dtype`."""

    operand: int
    broadcast: str
    dtype: str

    def __post_init__(self):
        if self.operand < 0 or self.broadcast not in BROADCASTS:
            raise ValueError("an epilogue operand needs an index and a broadcast kind")
        if self.dtype not in DTYPE_BYTES:
            raise ValueError(f"unsupported epilogue dtype {self.dtype!r}")


@dataclass(frozen=True)
class EpilogueOp:
    """One instruction of a "program" step: the arith/math op `op` (arith.constant for scalar
    constants) re-created on earlier values. Values are numbered: 0 is the step's input (the
    conv value so far), 1..L the step's loads, then one per instruction in order."""

    op: str
    dtype: str                                 # result element type; "i1" for comparisons
    args: tuple[int, ...] = ()
    attrs: tuple[tuple[str, str], ...] = ()    # (name, attribute as MLIR text), sorted

    def to_dict(self) -> dict:
        return {"op": self.op, "dtype": self.dtype, "args": list(self.args), "attrs": dict(self.attrs)}

    @classmethod
    def from_dict(cls, d: dict) -> "EpilogueOp":
        return cls(d["op"], d["dtype"], tuple(d["args"]), tuple(sorted(d["attrs"].items())))


@dataclass(frozen=True)
class EpilogueStep:
    """One elementwise step applied to the f32 accumulator, in order.

    op: "add" | "mul" (with an operand), "max0" (relu), "cast" (to `dtype`), or "program":
    any elementwise arith/math computation (`program`, reading `loads`) whose result, of type
    `dtype`, replaces the value. The first four keep the encoding (and problem names) that
    existing kernels and tuning caches were built with; "program" takes everything else.
    operand: dispatch operand index of the tensor read by add/mul.
    broadcast: "channel" (indexed by output channel only), "full" (shaped like the output) or
    "image" (by image and channel).
    dtype: element type of that operand in memory, or the target type of a cast.
    """

    op: str
    dtype: str
    operand: int = -1
    broadcast: str = ""
    loads: tuple[OperandLoad, ...] = ()
    program: tuple[EpilogueOp, ...] = ()

    def __post_init__(self):
        if self.op not in ("add", "mul", "max0", "cast", "program"):
            raise ValueError(f"unknown epilogue op {self.op!r}")
        if self.op in ("add", "mul") and (self.operand < 0 or self.broadcast not in BROADCASTS):
            raise ValueError(f"epilogue {self.op} needs an operand and a broadcast kind")
        if (self.op == "program") != bool(self.program) or (self.loads and self.op != "program"):
            raise ValueError("only a program step has (and needs) a program and loads")
        if self.dtype not in DTYPE_BYTES:
            raise ValueError(f"unsupported epilogue dtype {self.dtype!r}")
        object.__setattr__(self, "loads", tuple(self.loads))
        object.__setattr__(self, "program", tuple(self.program))

    @property
    def operand_loads(self) -> tuple[OperandLoad, ...]:
        if self.op in ("add", "mul"):
            return (OperandLoad(self.operand, self.broadcast, self.dtype),)
        return self.loads

    def describe(self) -> str:
        if self.op == "max0":
            return "relu"
        if self.op == "cast":
            return self.dtype
        if self.op == "program":     # a short digest keeps names valid symbols of bounded length
            return "fx" + hashlib.sha1(repr(self.to_dict()).encode()).hexdigest()[:8]
        what = {"channel": "bias", "full": "residual", "image": "scale"}[self.broadcast]
        return f"{self.op}_{what}"

    def to_dict(self) -> dict:
        if self.op != "program":
            return {"op": self.op, "dtype": self.dtype, "operand": self.operand, "broadcast": self.broadcast}
        return {"op": self.op, "dtype": self.dtype, "loads": [dataclasses.asdict(x) for x in self.loads],
                "program": [x.to_dict() for x in self.program]}

    @classmethod
    def from_dict(cls, d: dict) -> "EpilogueStep":
        d = dict(d)
        d["loads"] = tuple(OperandLoad(**x) for x in d.get("loads", []))
        d["program"] = tuple(EpilogueOp.from_dict(x) for x in d.get("program", []))
        return cls(**d)


# how ConvProblem.name begins for each kind of problem: what a timeline tells convc's kernels by
KERNEL_NAME_PREFIXES = ("conv_", "poolmax_", "poolsum_", "map_", "rowmap", "copy")


@dataclass(frozen=True)
class ConvProblem:
    """A 2-D NHWC x FHWC -> NHWF convolution with fused zero padding and epilogue.

    pad is (top, left, bottom, right). input/filter are dispatch operand indices; the
    output is the dispatch's only result. acc_dtype is the conv's own result type.
    num_operands counts the kernel's operands: the dispatch's, then the constants the matcher
    hoisted out of it (`convc.constants` on the executable; the splice pass passes them).
    Grouped convs (`groups` G > 1): C and F count all channels, group-major (channel
    g*C/G + c of the input belongs to group g, as do outputs g*F/G .. (g+1)*F/G - 1); the
    filter is [F, R, S, C/G] ("fhwc", linalg's conv_2d_nhwgc_gfhwc), [R, S, C/G, F] ("hwcf",
    what convc-channels-last makes of imported grouped convs: output channels fastest), or for a
    depthwise conv (C = G, a channel multiplier F/G) [R, S, F] ("hwf", as linalg's
    depthwise_conv_2d_nhwc_hwc(m) keep it).
    A dynamic batch: the dispatch passes the input's leading size (images; output rows for a
    GEMM-form 1x1 conv, whose H = W = 1) in push-constant word `batch_constant` (the splice
    passes each index operand as one i32; the dispatch has `num_constants` words), and N is
    only the size the planner planned for; kernels take the batch at run time.
    """

    N: int
    H: int
    W: int
    C: int
    F: int
    R: int
    S: int
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    pad: tuple[int, int, int, int] = (0, 0, 0, 0)
    dtype: str = "f16"
    acc_dtype: str = "f32"
    out_dtype: str = "f32"
    epilogue: tuple[EpilogueStep, ...] = field(default_factory=tuple)
    input: int = 0
    filter: int = 1
    num_operands: int = 2
    gemm_form: bool = False     # IREE presented this 1x1 conv as a GEMM (M = N*H*W rows)
    batch_constant: int = -1    # push-constant word holding the runtime batch; -1: static
    num_constants: int = 0      # push-constant words the dispatch passes
    groups: int = 1             # channel groups (C for a depthwise conv)
    filter_layout: str = "fhwc"  # "fhwc": [F, R, S, C/G]; "hwcf": [R, S, C/G, F]; "hwf": [R, S, F] (depthwise)
    pool: str = ""              # "max" / "sum": a pooling window (no filter operand, filter = -1)
    # a map's reduction over each output row's channels (a LayerNorm's mean and variance), read
    # by its "row" epilogue loads: `row_combine` ("sum" / "max") of the program `row_reduce`
    # (EpilogueOps over value 0, the input element, in its type; none: the element itself)
    # over the row's channels
    row_reduce: tuple[EpilogueOp, ...] = ()
    row_combine: str = ""
    # a global pool's math on each input element before the combine (the BatchNorm and
    # activation of the conv before it, which IREE fuses into the reduction's dispatch): one
    # program step over value 0, the element in the input type, and loads per channel
    # ("channel") or shaped like the input ("full")
    prologue: tuple[EpilogueStep, ...] = ()
    # runtime image sizes: the push-constant words holding the input's H and W (-1: static).
    # H and W are then only the sizes the planner planned for; kernels read the words and derive
    # Ho and Wo (passes/lower/common/extents.py). The dispatch's workload is its index operands
    # in order (word k is workload ordinal k), which the count region reads.
    h_constant: int = -1
    w_constant: int = -1
    # the input is a channel slice of its operand (YOLO's C2f split, any chunk of a conv's
    # output): channels input_channel_offset .. + C of an operand with input_channels (> C)
    # channels per pixel; 0: the whole operand
    input_channels: int = 0
    input_channel_offset: int = 0
    # likewise the epilogue's output-shaped operands (a residual that is a chunk of a wider
    # tensor: C2f's shortcut): channels residual_channel_offset .. + F of residual_channels
    residual_channels: int = 0
    residual_channel_offset: int = 0

    # group, pool, row, prologue and runtime-size fields are written only where set, so convs
    # keep their encoding
    _GROUP_DEFAULTS = {"groups": 1, "filter_layout": "fhwc", "pool": "", "row_reduce": [], "row_combine": "",
                       "prologue": [], "h_constant": -1, "w_constant": -1, "input_channels": 0,
                       "input_channel_offset": 0, "residual_channels": 0, "residual_channel_offset": 0}

    @property
    def dynamic_batch(self) -> bool:
        return self.batch_constant >= 0

    @property
    def dynamic_spatial(self) -> bool:
        """H or W is known only at run time."""
        return self.h_constant >= 0 or self.w_constant >= 0

    @property
    def input_pitch(self) -> int:
        """Channels between neighbouring input pixels in memory (C unless the input is a slice)."""
        return self.input_channels or self.C

    @property
    def residual_pitch(self) -> int:
        """Channels between neighbouring pixels of the output-shaped epilogue operands."""
        return self.residual_channels or self.F

    @property
    def channel_windows(self) -> bool:
        """The input or the residuals are channel windows of wider operands."""
        return bool(self.input_channels or self.residual_channels)

    @property
    def runtime_sizes(self) -> bool:
        """Some size of the problem is read at run time (the batch, H or W)."""
        return self.dynamic_batch or self.dynamic_spatial

    def __post_init__(self):
        for k in ("N", "H", "W", "C", "F", "R", "S"):
            if getattr(self, k) <= 0:
                raise ValueError(f"{k} must be positive, got {getattr(self, k)}")
        if min(self.stride) <= 0 or min(self.dilation) <= 0 or min(self.pad) < 0:
            raise ValueError("strides and dilations must be positive, pads non-negative")
        if self.Ho <= 0 or self.Wo <= 0:
            raise ValueError("the convolution has an empty output")
        if self.groups <= 0 or self.C % self.groups or self.F % self.groups:
            raise ValueError(f"{self.groups} groups do not divide C={self.C} and F={self.F}")
        if self.filter_layout not in ("fhwc", "hwcf", "hwf") or (self.filter_layout == "hwf" and self.C != self.groups):
            raise ValueError(f"filter layout {self.filter_layout!r} needs one input channel per group")
        if self.filter_layout == "hwcf" and not self.grouped:
            raise ValueError("the hwcf filter layout is for grouped convs")
        if self.pool not in ("", "max", "sum"):
            raise ValueError(f"unknown pooling {self.pool!r} (max or sum)")
        if self.pool and not (self.C == self.F == self.groups and self.filter_layout == "hwf" and self.filter < 0):
            raise ValueError("a pooling window is per channel (groups = C = F, no filter operand)")
        object.__setattr__(self, "stride", tuple(self.stride))
        # a one-tap axis has no dilation (IREE drops it with the window): canonical form
        object.__setattr__(self, "dilation", (self.dilation[0] if self.R > 1 else 1,
                                              self.dilation[1] if self.S > 1 else 1))
        object.__setattr__(self, "pad", tuple(self.pad))
        object.__setattr__(self, "epilogue", tuple(self.epilogue))
        object.__setattr__(self, "row_reduce", tuple(self.row_reduce))
        object.__setattr__(self, "prologue", tuple(self.prologue))
        if self.prologue and not (self.is_global_pool and len(self.prologue) == 1 and self.prologue[0].op == "program"
                                  and all(ld.broadcast in ("channel", "full") for ld in self.prologue[0].loads)):
            raise ValueError("a prologue is one program step with per-channel or input-shaped loads, on a global pool")
        loads = {ld.broadcast for st in self.epilogue for ld in st.operand_loads}
        if loads & {"image", "row"} and not self.is_map:
            raise ValueError("per-image and per-row epilogue operands are read by elementwise maps only")
        if ("row" in loads) != bool(self.row_combine) or (self.row_reduce and not self.row_combine) \
                or self.row_combine not in ("", "sum", "max"):
            raise ValueError("a row reduction needs its combine and a row load")
        if self.input_channels and (self.input_channel_offset < 0 or self.input_channel_offset + self.C > self.input_channels
                                    or self.grouped or self.pool):
            raise ValueError("an input channel slice lies inside its operand (dense convs only)")
        if self.residual_channels and (self.residual_channel_offset < 0 or self.grouped or self.pool
                                       or self.residual_channel_offset + self.F > self.residual_channels
                                       or not self.residual_loads):
            raise ValueError("a residual channel slice lies inside its operand (dense convs with a residual only)")

    # Derived sizes of the implicit GEMM: M = N*Ho*Wo, N = F, K = R*S*C (channels fastest).
    @property
    def Ho(self) -> int:
        eff = self.dilation[0] * (self.R - 1) + 1
        return (self.H + self.pad[0] + self.pad[2] - eff) // self.stride[0] + 1

    @property
    def Wo(self) -> int:
        eff = self.dilation[1] * (self.S - 1) + 1
        return (self.W + self.pad[1] + self.pad[3] - eff) // self.stride[1] + 1

    @property
    def gemm_m(self) -> int:
        return self.N * self.Ho * self.Wo

    @property
    def gemm_n(self) -> int:
        return self.F

    @property
    def gemm_k(self) -> int:
        """The reduction length of one output: R*S*C/G."""
        return self.R * self.S * self.C // self.groups

    @property
    def is_map(self) -> bool:
        """An elementwise map over an NHWC activation: a sum over a 1x1 window at stride 1 is the
        identity, so the whole computation is the epilogue (IREE's elementwise dispatches
        between convs: squeeze-excitation scales, broadcast adds)."""
        return (self.pool == "sum" and self.R == self.S == 1 and self.stride == (1, 1)
                and self.pad == (0, 0, 0, 0))

    @property
    def is_global_pool(self) -> bool:
        """A pooling window covering the whole image (global average/max pooling): one output
        pixel per image and channel."""
        return (bool(self.pool) and self.R == self.H and self.S == self.W and self.pad == (0, 0, 0, 0)
                and self.Ho == self.Wo == 1 and (self.R > 1 or self.S > 1))

    @property
    def grouped(self) -> bool:
        return self.groups > 1

    @property
    def depthwise(self) -> bool:
        return self.groups > 1 and self.C == self.groups

    @property
    def operand_loads(self) -> list[OperandLoad]:
        """Every tensor the epilogue reads, in the order its steps consume them: the one list
        kernels load (per-channel ones per channel, full ones through their residual paths)."""
        return [ld for st in self.epilogue for ld in st.operand_loads]

    @property
    def residual_loads(self) -> list[OperandLoad]:
        """The epilogue's operands shaped like the output (residuals)."""
        return [ld for ld in self.operand_loads if ld.broadcast == "full"]

    @property
    def reads_residual(self) -> bool:
        return bool(self.residual_loads)

    @property
    def flops(self) -> int:
        return 2 * self.gemm_m * self.gemm_n * self.gemm_k

    @property
    def name(self) -> str:
        """Encodes the whole problem; used as kernel symbol and dump-file name."""
        p = "x".join(map(str, self.pad))
        epi = "_".join(s.describe() for s in self.epilogue) or "none"
        n = "D" if self.dynamic_batch else self.N
        h = "D" if self.h_constant >= 0 else self.H
        w = "D" if self.w_constant >= 0 else self.W
        g = f"_g{self.groups}{self.filter_layout}" if self.grouped and not self.pool else ""
        kind = "map" if self.is_map else f"pool{self.pool}" if self.pool else "conv"
        if self.row_combine:
            row = repr([self.row_combine] + [x.to_dict() for x in self.row_reduce])
            kind = f"rowmap{hashlib.sha1(row.encode()).hexdigest()[:8]}"
        if self.prologue:
            kind += "_pro" + "_".join(s.describe() for s in self.prologue)
        if self.input_channels:
            kind += f"_cs{self.input_channel_offset}of{self.input_channels}"
        if self.residual_channels:
            kind += f"_rs{self.residual_channel_offset}of{self.residual_channels}"
        return (f"{kind}_n{n}h{h}w{w}c{self.C}_f{self.F}r{self.R}s{self.S}{g}"
                f"_st{self.stride[0]}x{self.stride[1]}_dl{self.dilation[0]}x{self.dilation[1]}"
                f"_p{p}_{self.dtype}_{epi}")

    def shape_str(self) -> str:
        if self.is_map:
            n = f"N=? (planned for {self.N})" if self.dynamic_batch else f"N={self.N}"
            return f"elementwise map {n} pixels={self.H * self.W} C={self.C} {self.dtype}->{self.out_dtype}"
        if self.is_global_pool:
            n = f"N=? (planned for {self.N})" if self.dynamic_batch else f"N={self.N}"
            return f"global {self.pool}-pool {n} H={self.H} W={self.W} C={self.C} {self.dtype}->{self.out_dtype}"
        if self.pool:
            n = f"N=? (planned for {self.N})" if self.dynamic_batch else f"N={self.N}"
            return (f"{self.pool}-pool {n} H={self.H} W={self.W} C={self.C} window={self.R}x{self.S} "
                    f"stride={self.stride[0]}x{self.stride[1]} dil={self.dilation[0]}x{self.dilation[1]} "
                    f"pad={list(self.pad)} {self.dtype}->{self.out_dtype}")
        if self.grouped:
            kind = "depthwise" if self.depthwise else f"groups={self.groups}"
            return (f"N={self.N} H={self.H} W={self.W} C={self.C} F={self.F} R={self.R} S={self.S} {kind} "
                    f"stride={self.stride[0]}x{self.stride[1]} dil={self.dilation[0]}x{self.dilation[1]} "
                    f"pad={list(self.pad)} {self.dtype}->{self.out_dtype}")
        if self.dynamic_spatial:
            n = f"N=? (planned for {self.N})" if self.dynamic_batch else f"N={self.N}"
            h = f"H=? (planned for {self.H})" if self.h_constant >= 0 else f"H={self.H}"
            w = f"W=? (planned for {self.W})" if self.w_constant >= 0 else f"W={self.W}"
            return (f"{n} {h} {w} C={self.C} F={self.F} R={self.R} S={self.S} "
                    f"stride={self.stride[0]}x{self.stride[1]} dil={self.dilation[0]}x{self.dilation[1]} "
                    f"pad={list(self.pad)} {self.dtype}->{self.out_dtype}")
        if self.dynamic_batch:
            rows = "M" if self.gemm_form else "N"
            return (f"{rows}=? (planned for {self.N}) H={self.H} W={self.W} C={self.C} F={self.F} R={self.R} "
                    f"S={self.S} stride={self.stride[0]}x{self.stride[1]} dil={self.dilation[0]}x{self.dilation[1]} "
                    f"pad={list(self.pad)} {self.dtype}->{self.out_dtype}")
        if self.gemm_form:
            return (f"1x1 conv as GEMM M={self.gemm_m} C={self.C} F={self.F} "
                    f"stride={self.stride[0]}x{self.stride[1]} {self.dtype}->{self.out_dtype}")
        return (f"N={self.N} H={self.H} W={self.W} C={self.C} F={self.F} R={self.R} S={self.S} "
                f"stride={self.stride[0]}x{self.stride[1]} dil={self.dilation[0]}x{self.dilation[1]} "
                f"pad={list(self.pad)} {self.dtype}->{self.out_dtype}")

    # --- attribute round trip -------------------------------------------------------
    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["epilogue"] = [s.to_dict() for s in self.epilogue]
        d["row_reduce"] = [x.to_dict() for x in self.row_reduce]
        d["prologue"] = [s.to_dict() for s in self.prologue]
        for k, v in self._GROUP_DEFAULTS.items():
            if d[k] == v:
                del d[k]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ConvProblem":
        d = dict(d)
        d["epilogue"] = tuple(EpilogueStep.from_dict(s) for s in d.get("epilogue", []))
        d["row_reduce"] = tuple(EpilogueOp.from_dict(x) for x in d.get("row_reduce", []))
        d["prologue"] = tuple(EpilogueStep.from_dict(s) for s in d.get("prologue", []))
        for k in ("stride", "dilation", "pad"):
            d[k] = tuple(d[k])
        return cls(**d)
