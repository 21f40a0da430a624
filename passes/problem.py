"""ConvProblem: everything a kernel needs to know about one conv dispatch.

The problem is the contract between matching and everything after it: the planner and the
lowerings read only this, never the IR they came from. It round-trips through a DictAttr
(`convc.problem`) so each pass can run alone on a file.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

# Element types convc kernels accept as conv inputs, and byte sizes of all types we touch.
INPUT_DTYPES = ("f16", "bf16")
DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4}


@dataclass(frozen=True)
class EpilogueStep:
    """One elementwise step applied to the f32 accumulator, in order.

    op: "add" | "mul" (with an operand), "max0" (relu), "cast" (to `dtype`).
    operand: dispatch operand index of the tensor read by add/mul.
    broadcast: "channel" (indexed by output channel only) or "full" (shaped like the output).
    dtype: element type of that operand in memory, or the target type of a cast.
    """

    op: str
    dtype: str
    operand: int = -1
    broadcast: str = ""

    def __post_init__(self):
        if self.op not in ("add", "mul", "max0", "cast"):
            raise ValueError(f"unknown epilogue op {self.op!r}")
        if self.op in ("add", "mul") and (self.operand < 0 or self.broadcast not in ("channel", "full")):
            raise ValueError(f"epilogue {self.op} needs an operand and a broadcast kind")
        if self.dtype not in DTYPE_BYTES:
            raise ValueError(f"unsupported epilogue dtype {self.dtype!r}")

    def describe(self) -> str:
        if self.op == "max0":
            return "relu"
        if self.op == "cast":
            return self.dtype
        what = "bias" if self.broadcast == "channel" else "residual"
        return f"{self.op}_{what}"


@dataclass(frozen=True)
class ConvProblem:
    """A 2-D NHWC x FHWC -> NHWF convolution with fused zero padding and epilogue.

    pad is (top, left, bottom, right). input/filter are dispatch operand indices; the
    output is the dispatch's only result. acc_dtype is the conv's own result type.
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

    def __post_init__(self):
        for k in ("N", "H", "W", "C", "F", "R", "S"):
            if getattr(self, k) <= 0:
                raise ValueError(f"{k} must be positive, got {getattr(self, k)}")
        if min(self.stride) <= 0 or min(self.dilation) <= 0 or min(self.pad) < 0:
            raise ValueError("strides and dilations must be positive, pads non-negative")
        if self.Ho <= 0 or self.Wo <= 0:
            raise ValueError("the convolution has an empty output")
        object.__setattr__(self, "stride", tuple(self.stride))
        object.__setattr__(self, "dilation", tuple(self.dilation))
        object.__setattr__(self, "pad", tuple(self.pad))
        object.__setattr__(self, "epilogue", tuple(self.epilogue))

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
        return self.R * self.S * self.C

    @property
    def residual_steps(self) -> list:
        """Epilogue steps whose operand is shaped like the output (residuals)."""
        return [st for st in self.epilogue if st.op in ("add", "mul") and st.broadcast == "full"]

    @property
    def reads_residual(self) -> bool:
        return bool(self.residual_steps)

    @property
    def flops(self) -> int:
        return 2 * self.gemm_m * self.gemm_n * self.gemm_k

    @property
    def name(self) -> str:
        """Encodes the whole problem; used as kernel symbol and dump-file name."""
        p = "x".join(map(str, self.pad))
        epi = "_".join(s.describe() for s in self.epilogue) or "none"
        return (f"conv_n{self.N}h{self.H}w{self.W}c{self.C}_f{self.F}r{self.R}s{self.S}"
                f"_st{self.stride[0]}x{self.stride[1]}_dl{self.dilation[0]}x{self.dilation[1]}"
                f"_p{p}_{self.dtype}_{epi}")

    def shape_str(self) -> str:
        if self.gemm_form:
            return (f"1x1 conv as GEMM M={self.gemm_m} C={self.C} F={self.F} "
                    f"stride={self.stride[0]}x{self.stride[1]} {self.dtype}->{self.out_dtype}")
        return (f"N={self.N} H={self.H} W={self.W} C={self.C} F={self.F} R={self.R} S={self.S} "
                f"stride={self.stride[0]}x{self.stride[1]} dil={self.dilation[0]}x{self.dilation[1]} "
                f"pad={list(self.pad)} {self.dtype}->{self.out_dtype}")

    # --- attribute round trip -------------------------------------------------------
    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["epilogue"] = [dataclasses.asdict(s) for s in self.epilogue]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ConvProblem":
        d = dict(d)
        d["epilogue"] = tuple(EpilogueStep(**s) for s in d.get("epilogue", []))
        for k in ("stride", "dilation", "pad"):
            d[k] = tuple(d[k])
        return cls(**d)
