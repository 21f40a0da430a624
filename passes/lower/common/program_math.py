"""Cheaper forms of an epilogue program's math (EpilogueStep "program").

A fused epilogue runs on the few warps that drain a tile, after its mainloop, so its
instruction count is the kernel's time once the math is heavy: ConvNeXt's GELU epilogue made
its MLP GEMMs (6272 x 384 x 1536 at batch 32) take 119 us where the GEMM is ~15 us of
tensor-core work, and EfficientNet's SiLU epilogues made its expand convs 2.5x slower than
the same convs with ReLU6 (H100, bench/NOTES.md). IREE expands the math it is given exactly:
math.exp and math.erf into range-reduced polynomials with per-interval selects (~30
instructions per element each), and every arith.divf into an IEEE division.

Two kinds of rewrite, chosen here and nowhere else:
- exact, for every program: constant subexpressions folded (sqrt(2.0) in GELU), computed in
  the op's own type with numpy (f16 rounded as f16); a division by a power-of-two constant
  taken as a multiplication (the same value).
- approximate, only where the program's result is 16-bit (f16/bf16 models): a division by a
  constant as a multiplication by its f32 reciprocal; other divisions approximate
  (the target's reciprocal instruction, else `afn`); math.exp as the hardware exp2 of x * log2(e);
  math.erf as Abramowitz-Stegun 7.1.26 (|error| <= 1.5e-7) on that exp2. Each is computed
  in f32, so its error (a few f32 ulp) is far below the half-ulp of the 16-bit result
  (2^-11 relative). f32 programs keep IREE's exact expansions. An int8 result (a quantized
  conv's requantize: x / scale rounded to an integer) takes them too: a few-ulp change of the
  value moves its rounding only where it lies within a few ulp of a half.
- a target instruction where IREE's expansion is long: math.roundeven (the requantize's
  rounding, ~40 instructions as IREE expands it) as the machine's round_even (cvt.rni on
  NVIDIA), exact.

On NVIDIA the reciprocal and erf's sign restore are the machine's instructions too
(rcp.approx.ftz, copysign.f32): LLVM's `afn` reciprocal is rcp.approx.f32, which ptxas
guards for denormals with 6 more instructions, and it narrows a copysign that feeds an f16
result to an f16 copysign of ~6 integer and select instructions. With both, ConvNeXt-T's GELU
MLP GEMM (6272 x 384 x 1536) went from 5700 to 3872 SASS instructions and from 43% to 8% of its
warp samples stalled on instruction fetch (Nsight Compute, H200), ConvNeXt-T b32 from 1.80 to
1.56 ms (results/index.jsonl).
"""

from __future__ import annotations

import contextlib
import contextvars
import math

import numpy as np

from ...ir import ir, arith_d, math_d
from ...problem import EpilogueOp
from .emit import convert, float_type, splat

_NP = {"f16": np.float16, "f32": np.float32}
_FOLD = {
    "arith.addf": lambda a, b: a + b, "arith.subf": lambda a, b: a - b, "arith.mulf": lambda a, b: a * b,
    "arith.divf": lambda a, b: a / b, "arith.negf": lambda a: -a, "math.sqrt": lambda a: np.sqrt(a),
}
# Abramowitz & Stegun 7.1.26: erf(x) = 1 - t (a1 + t (a2 + ...)) exp(-x^2), t = 1 / (1 + p |x|)
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _const_value(ins: EpilogueOp) -> float | None:
    if ins.op != "arith.constant":
        return None
    a = ir.Attribute.parse(dict(ins.attrs)["value"])
    return a.value if isinstance(a, ir.FloatAttr) else None


def _const(dtype: str, value: float) -> EpilogueOp:
    text = str(ir.FloatAttr.get(float_type(dtype), float(value)))
    return EpilogueOp("arith.constant", dtype, (), (("value", text),))


def fold_constants(program: tuple[EpilogueOp, ...], first: int) -> tuple[tuple[EpilogueOp, ...], dict[int, float]]:
    """The program with every op whose operands are all constants replaced by its value, as
    an arith.constant of the same type (value numbering unchanged; `first` is the number of
    the program's first result: 1 + its loads), and the values of its constants by number."""
    consts: dict[int, float] = {}
    out = []
    for i, ins in enumerate(program):
        v = _const_value(ins)
        np_t = _NP.get(ins.dtype)
        if v is None and ins.op in _FOLD and ins.args and np_t is not None and all(a in consts for a in ins.args):
            with np.errstate(all="ignore"):
                v = float(_FOLD[ins.op](*[np_t(consts[a]) for a in ins.args]))
            if math.isfinite(v):
                ins = _const(ins.dtype, v)
            else:
                v = None
        if v is not None:
            consts[first + i] = v
        out.append(ins)
    return tuple(out), consts


def fast_math(result_dtype: str) -> bool:
    """Whether a program's result is coarse enough for the approximate forms: 16-bit floats,
    and int8 (a requantized output, whose rounding a few-ulp change of the value moves only
    within a few ulp of a half: the quantize's division by its scale becomes a multiply)."""
    return result_dtype in ("f16", "bf16", "i8")


def _afn() -> ir.Attribute:
    return ir.Attribute.parse("#arith.fastmath<afn>")


# the Machine whose kernel is being emitted (lower_kernels sets it): its approximate exp2
_MACHINE = contextvars.ContextVar("convc_program_machine", default=None)


@contextlib.contextmanager
def target_machine(machine):
    """Programs emitted inside use `machine`'s approximate instructions (Machine.exp2_approx)."""
    token = _MACHINE.set(machine)
    try:
        yield
    finally:
        _MACHINE.reset(token)


def exp_fast(x: ir.Value) -> ir.Value:
    """exp(x) of an f32 vector as the target's approximate exp2 of x * log2(e)."""
    y = arith_d.mulf(x, splat(x.type, math.log2(math.e)))
    m = _MACHINE.get()
    got = m.exp2_approx(y) if m is not None else None
    return got if got is not None else math_d.exp2(y, fastmath=_afn())


def recip_fast(x: ir.Value) -> ir.Value:
    """1/x of an f32 vector: the target's approximate reciprocal, else an `afn` division."""
    m = _MACHINE.get()
    got = m.recip_approx(x) if m is not None else None
    return got if got is not None else arith_d.divf(splat(x.type, 1.0), x, fastmath=_afn())


def div_fast(a: ir.Value, b: ir.Value) -> ir.Value:
    """a / b of f32 vectors as a times the approximate reciprocal of b."""
    m = _MACHINE.get()
    got = m.recip_approx(b) if m is not None else None
    return arith_d.mulf(a, got) if got is not None else arith_d.divf(a, b, fastmath=_afn())


def copysign_fast(magnitude: ir.Value, sign: ir.Value) -> ir.Value:
    m = _MACHINE.get()
    got = m.copysign(magnitude, sign) if m is not None else None
    return got if got is not None else math_d.copysign(magnitude, sign)


def erf_fast(x: ir.Value) -> ir.Value:
    """erf of an f32 vector (A&S 7.1.26, odd: the sign of x restored at the end)."""
    ax = math_d.absf(x)
    one = splat(x.type, 1.0)
    # explicit fmas: without `contract`, LLVM keeps each multiply and add apart
    t = recip_fast(math_d.fma(ax, splat(x.type, _AS_P), one))
    poly = splat(x.type, _AS_A[-1])
    for a in reversed(_AS_A[:-1]):
        poly = math_d.fma(poly, t, splat(x.type, a))
    poly = arith_d.mulf(poly, t)
    e = exp_fast(arith_d.negf(arith_d.mulf(ax, ax)))
    r = math_d.fma(arith_d.negf(poly), e, one)
    return copysign_fast(r, x)


def emit_fast(ins: EpilogueOp, args: list, t: ir.Type, consts: dict[int, float], fast: bool) -> ir.Value | None:
    """The cheaper form of one program op on vector values (its result type t), or None to
    re-create it as it is."""
    f32 = ir.VectorType.get(ir.VectorType(t).shape, ir.F32Type.get()) if ins.dtype != "i1" else None

    def in_f32(fn, *vals):
        return convert(fn(*[convert(v, f32) for v in vals]), t)

    if ins.op == "math.roundeven" and ins.dtype == "f32":
        # the requantize of int8 epilogues: one instruction where the target has it
        m = _MACHINE.get()
        got = m.round_even(args[0]) if m is not None else None
        if got is not None:
            return got
    if ins.op == "arith.divf":
        c = consts.get(ins.args[1])
        if c is not None and c != 0.0:
            exact = math.frexp(abs(c))[0] == 0.5          # a power of two
            if exact or fast:
                return in_f32(lambda a: arith_d.mulf(a, splat(f32, float(np.float32(1.0) / np.float32(c)))), args[0])
        if fast:
            return in_f32(div_fast, *args)
        return None
    if not fast:
        return None
    if ins.op == "math.exp":
        return in_f32(exp_fast, args[0])
    if ins.op == "math.erf":
        return in_f32(erf_fast, args[0])
    return None
