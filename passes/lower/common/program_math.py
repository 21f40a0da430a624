"""Cheaper forms of an epilogue program's math (EpilogueStep "program").

A fused epilogue runs on the few warps that drain a tile, after its mainloop, so its
instruction count is the kernel's time once the math is heavy: ConvNeXt's GELU epilogue made
its MLP GEMMs (6272 x 384 x 1536 at batch 32) take 119 us where the GEMM is ~15 us of
tensor-core work, and EfficientNet's SiLU epilogues made its expand convs 2.5x slower than
the same convs with ReLU6 (H100, bench/NOTES.md). IREE expands the math it is given exactly:
math.exp and math.erf into range-reduced polynomials with per-interval selects (~30
instructions per element each), and every arith.divf into an IEEE division.

Three kinds of rewrite, chosen here and nowhere else:
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
- promoted, where the program's result is 16-bit and every op is float arithmetic or math
  (`promotes`): the whole program in f32, its 16-bit values widened once (the loads, the
  input) and rounded once (the result); the truncf/extf pairs between the program's f16 steps
  become nothing. Rounding once instead of after every op moves the result towards the exact
  value of the program's math (the fp32 reference), by at most the intermediate roundings
  IREE would have made. The f16 round trips were a third of ConvNeXt's GELU epilogue: per
  output element 2 f16->f32 conversions, 1.5 packs and 2 f16 ops beside ~12 f32 ones
  (Nsight Compute SASS counts of its 6272 x 384 -> 1536 GEMM, H200), in a kernel whose time
  is its epilogue's issue time.
- a target instruction where IREE's expansion is long: math.roundeven (the requantize's
  rounding, ~40 instructions as IREE expands it) as the machine's round_even (cvt.rni on
  NVIDIA), exact.
- integer conversions through the f32 encoding, exact, for every program (`quantize_chains`,
  `small_int_to_float`): adding 1.5 * 2^23 to an f32 of magnitude below 2^22 rounds it to an
  integer, halves to even, and leaves that integer in the low bits of the sum's encoding; an
  8- or 16-bit integer OR-ed into those bits is the f32 1.5 * 2^23 + q. So a requantize's
  roundeven, clamp and fptosi become an add, the clamp and a truncation of the bits (its
  roundeven and clamp alone, as for integer-valued f16 outputs: an add, the clamp and a
  subtraction), and a dequantize's i8 -> f32 an OR and a subtraction: on NVIDIA, F2I, FRND and I2F.S8 issue at a
  quarter of the float rate (16 a cycle per SM), and an int8 epilogue took three of them per
  output where its bytes allow it ~8 cycles of the SM per 64 outputs.

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

from ...ir import ir, arith_d, math_d, vector_d
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


# 1.5 * 2^23 (and its f32 encoding): see the module docstring
MAGIC = 12582912.0
MAGIC_BITS = 0x4B400000
_INT_RANGE = {("i8", True): (-128, 127), ("i8", False): (0, 255),
              ("i16", True): (-32768, 32767), ("i16", False): (0, 65535)}


def _integer_valued(program: tuple[EpilogueOp, ...], consts: dict[int, float], first: int, k: int) -> bool:
    """Whether value k is an f32 holding an integer of magnitude below 2^16: an integer
    constant, or a conversion to f32 of an integer constant of that size or of an 8- or 16-bit
    integer op (a quantize's zero point)."""
    if k in consts:
        c = consts[k]
        return math.isfinite(c) and c == int(c) and abs(c) < 2 ** 16
    ins = program[k - first] if k >= first else None
    if ins is None or ins.op not in ("arith.sitofp", "arith.uitofp") or ins.args[0] < first:
        return False
    src = program[ins.args[0] - first]
    if src.dtype in ("i8", "i16"):
        return True
    if src.op == "arith.constant":
        a = ir.Attribute.parse(dict(src.attrs)["value"])
        return isinstance(a, ir.IntegerAttr) and abs(a.value) < 2 ** 16
    return False


def quantize_chains(program: tuple[EpilogueOp, ...], consts: dict[int, float], first: int
                    ) -> tuple[EpilogueOp, ...]:
    """Every requantize clamp(roundeven(v) (+ z), lo, hi), with integer constants lo <= hi
    below 2^22 in magnitude, z an integer-valued f32 and each intermediate used once, as
    convc.round_clamp(v, [z,] lo, hi): the same f32 for every v (NaN: lo, as maxnumf gives),
    computed as w = v + MAGIC (+ z) clamped to [MAGIC + lo, MAGIC + hi], less MAGIC: |v| < 2^22
    rounds exactly there, a larger |v| lands beyond the clamp on the same side, where the
    exact value would. An i8/i16 round trip of a round_clamp (sitofp(fptosi(...)), bounds
    inside the type: a QDQ graph's quantize and dequantize in one epilogue) is the round_clamp
    itself; a round_clamp whose one use is an fptosi/fptoui to i8/i16, its bounds inside that
    type, becomes convc.quantize_bits: w's encoding truncated (no subtraction, no conversion);
    a max of its integer with a constant (the integer ReLU quantized.integer_relus leaves) its
    clamp's lower bound raised. Numbering kept: the absorbed ops become constants (`consts`
    gains the values of those the rewrite reads)."""
    out = list(program)
    uses = _use_counts(program)

    def once(k, *ops):
        ins = out[k - first] if k >= first and uses.get(k) == 1 else None
        return ins if ins is not None and ins.op in ops and ins.dtype == "f32" else None

    for j, ins in enumerate(program):
        if ins.op not in ("arith.minnumf", "arith.maxnumf") or ins.dtype != "f32":
            continue
        inner_op = "arith.maxnumf" if ins.op == "arith.minnumf" else "arith.minnumf"
        bound, chain, cur = {}, [], ins
        for op in (ins.op, inner_op):
            x, c = cur.args if cur.args[1] in consts else cur.args[::-1]
            if c not in consts:
                break
            bound[op] = c
            chain.append(x)
            cur = once(x, inner_op) if op == ins.op else None
            if cur is None:
                break
        if len(bound) != 2:
            continue
        lo_k, hi_k = bound["arith.maxnumf"], bound["arith.minnumf"]
        lo, hi = consts[lo_k], consts[hi_k]
        if not (lo == int(lo) and hi == int(hi) and -2 ** 22 < lo <= hi < 2 ** 22):
            continue
        x = chain[-1]
        extra = ()
        add = once(x, "arith.addf")
        if add is not None:
            r, z = add.args if _integer_valued(program, consts, first, add.args[1]) else add.args[::-1]
            if not _integer_valued(program, consts, first, z):
                continue
            extra = (z,)
            chain.append(r)
            x = r
        rnd = once(x, "math.roundeven")
        if rnd is None:
            continue
        for k in chain:
            out[k - first] = _const("f32", 0.0)
        out[j] = EpilogueOp("convc.round_clamp", "f32", (rnd.args[0],) + extra + (lo_k, hi_k))
    uses = _use_counts(tuple(out))

    def single(k, op):
        ins = out[k - first] if k >= first and uses.get(k) == 1 else None
        return ins if ins is not None and ins.op == op else None

    for j, ins in enumerate(out):
        # a dequantize of the requantized value (QDQ graphs: Q then DQ inside one epilogue):
        # the round_clamp's f32 is that integer already
        if ins.op not in ("arith.sitofp", "arith.uitofp") or ins.dtype != "f32":
            continue
        to_int = single(ins.args[0], "arith.fptosi" if ins.op == "arith.sitofp" else "arith.fptoui")
        rng = _INT_RANGE.get((to_int.dtype, to_int.op == "arith.fptosi")) if to_int is not None else None
        rc = single(to_int.args[0], "convc.round_clamp") if rng is not None else None
        if rc is None or not rng[0] <= consts[rc.args[-2]] <= consts[rc.args[-1]] <= rng[1]:
            continue
        out[j] = rc
        out[ins.args[0] - first] = _const("f32", 0.0)
        out[to_int.args[0] - first] = _const("f32", 0.0)
    uses = _use_counts(tuple(out))
    for j, ins in enumerate(out):
        if ins.op not in ("arith.fptosi", "arith.fptoui"):
            continue
        rng = _INT_RANGE.get((ins.dtype, ins.op == "arith.fptosi"))
        k = ins.args[0]
        rc = out[k - first] if k >= first and uses.get(k) == 1 else None
        if rng is None or rc is None or rc.op != "convc.round_clamp" or \
                not rng[0] <= consts[rc.args[-2]] <= consts[rc.args[-1]] <= rng[1]:
            continue
        out[k - first] = _const("f32", 0.0)
        out[j] = EpilogueOp("convc.quantize_bits", ins.dtype, rc.args,
                            (("unsigned", "true"),) if ins.op == "arith.fptoui" else ())
    uses = _use_counts(tuple(out))
    for j, ins in enumerate(out):
        # an integer clamp of the quantized value (max(q, lo), min(q, hi): the ReLU and ReLU6
        # quantized.integer_relus writes): the clamp's bounds tightened
        if ins.op not in ("arith.maxsi", "arith.maxui", "arith.minsi", "arith.minui"):
            continue
        raise_lo = ins.op.startswith("arith.max")
        unsigned = ins.op.endswith("ui")
        for qk, ck in (ins.args, ins.args[::-1]):
            qb, c = single(qk, "convc.quantize_bits"), single(ck, "arith.constant")
            if qb is None or c is None or unsigned != (("unsigned", "true") in qb.attrs):
                continue
            value = ir.Attribute.parse(dict(c.attrs)["value"])
            if not isinstance(value, ir.IntegerAttr):
                continue
            bits = _INT_RANGE[(qb.dtype, True)][1].bit_length() + 1
            v = float(value.value & (2 ** bits - 1) if unsigned else value.value)
            lo, hi = consts[qb.args[-2]], consts[qb.args[-1]]
            if (raise_lo and v > hi) or (not raise_lo and v < lo):
                continue            # a constant result: left as it is
            args = qb.args
            if (raise_lo and v > lo) or (not raise_lo and v < hi):
                out[ck - first] = _const("f32", v)       # the bound it tightens
                consts[ck] = v
                args = qb.args[:-2] + ((ck, qb.args[-1]) if raise_lo else (qb.args[-2], ck))
            out[qk - first] = _const("f32", 0.0)
            out[j] = EpilogueOp("convc.quantize_bits", qb.dtype, args, qb.attrs)
            break
    return tuple(out)


def _clamped_magic(v: ir.Value, extra: list, lo: float, hi: float) -> ir.Value:
    w = arith_d.addf(v, splat(v.type, MAGIC))
    for z in extra:
        w = arith_d.addf(w, z)
    return arith_d.minnumf(arith_d.maxnumf(w, splat(v.type, MAGIC + lo)), splat(v.type, MAGIC + hi))


def round_clamp(v: ir.Value, extra: list, lo: float, hi: float) -> ir.Value:
    """convc.round_clamp (quantize_chains) on f32 vectors."""
    return arith_d.subf(_clamped_magic(v, extra, lo, hi), splat(v.type, MAGIC))


def quantize_bits(v: ir.Value, extra: list, lo: float, hi: float, t: ir.Type) -> ir.Value:
    """convc.quantize_bits (quantize_chains) on f32 vectors: the integer of type t."""
    w = _clamped_magic(v, extra, lo, hi)
    shape = ir.VectorType(v.type).shape
    bits = arith_d.bitcast(ir.VectorType.get(shape, ir.IntegerType.get_signless(32)), w)
    return arith_d.trunci(t, bits)


def small_int_to_float(x: ir.Value, signed: bool, t: ir.Type) -> ir.Value:
    """An i8/i16 vector as f32 (type t), exact: the integer made non-negative (the top bit
    flipped when signed), OR-ed into MAGIC's encoding, MAGIC (and the offset) subtracted.
    Up to 32 bits of lanes are taken as one i32 (one flip for all of them, then a byte
    select and an OR per lane: a PRMT on NVIDIA) rather than as a vector of small integers,
    which NVPTX widens lane by lane."""
    vt = ir.VectorType(x.type)
    width = vt.element_type.width
    n = vt.shape[0] if vt.rank == 1 else 0
    offset = 2 ** (width - 1) if signed else 0
    i32t = ir.IntegerType.get_signless(32)
    f32t = ir.F32Type.get()
    if 0 < n and n * width <= 32:
        one = ir.VectorType.get([1], ir.IntegerType.get_signless(n * width))
        packed = vector_d.extract(vector_d.bitcast(one, x) if n > 1 else x, [], [0])
        w = arith_d.extui(i32t, packed) if n * width < 32 else packed
        if signed:
            flip = sum(offset << (width * i) for i in range(n))
            w = arith_d.xori(w, arith_d.constant(i32t, flip))
        lanes = []
        mask = arith_d.constant(i32t, 2 ** width - 1)
        magic = arith_d.constant(i32t, MAGIC_BITS)
        for i in range(n):
            lane = arith_d.shrui(w, arith_d.constant(i32t, width * i)) if i else w
            lanes.append(arith_d.bitcast(f32t, arith_d.ori(arith_d.andi(lane, mask), magic)))
        f = vector_d.from_elements(t, lanes)
        return arith_d.subf(f, splat(t, MAGIC + offset))
    shape = vt.shape
    if signed:
        top = ir.DenseElementsAttr.get_splat(vt, ir.IntegerAttr.get(vt.element_type, -offset))
        x = arith_d.xori(x, arith_d.constant(vt, top))
    i32 = ir.VectorType.get(shape, i32t)
    wide = arith_d.extui(i32, x)
    magic = ir.DenseElementsAttr.get_splat(i32, ir.IntegerAttr.get(i32t, MAGIC_BITS))
    f = arith_d.bitcast(t, arith_d.ori(wide, arith_d.constant(i32, magic)))
    return arith_d.subf(f, splat(t, MAGIC + offset))


def fast_math(result_dtype: str) -> bool:
    """Whether a program's result is coarse enough for the approximate forms: 16-bit floats,
    and int8 (a requantized output, whose rounding a few-ulp change of the value moves only
    within a few ulp of a half: the quantize's division by its scale becomes a multiply)."""
    return result_dtype in ("f16", "bf16", "i8")


# Float ops a promoted program may hold: arithmetic and math on the value alone, whose f32
# form is the same function (comparisons and selects too: ReLU-like clamps). Anything else
# (integer ops, casts to integers, bitcasts) keeps the program in its own types.
PROMOTABLE = frozenset({
    "arith.constant", "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.negf",
    "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf", "arith.truncf", "arith.extf",
    "arith.cmpf", "arith.select",
    "math.exp", "math.exp2", "math.erf", "math.tanh", "math.sqrt", "math.rsqrt", "math.absf",
    "math.log", "math.log2", "math.log1p", "math.expm1", "math.fma", "math.copysign", "math.powf",
})
_WIDE = ("f16", "bf16")


def promotes(program: tuple[EpilogueOp, ...], result_dtype: str, input_dtype: str, load_dtypes: list[str],
             invariant: frozenset[int] = frozenset(), first: int = 0) -> bool:
    """Whether a program runs in f32 (see the module docstring): a 16-bit result, float
    inputs, only PROMOTABLE ops on float (or comparison) values, and at most one 16-bit load
    that an op per output element reads. `invariant`: the value numbers that are the same for
    every output of a channel (channel loads, constants; see channel_invariant), which a
    kernel computes once per channel; `first`: the program's first value number.
    Each 16-bit load read per output costs a conversion per output once promoted (or twice
    its registers), where unpromoted f16 math takes it two outputs per instruction:
    EfficientNet's BatchNorm + SiLU (mean, scale and shift in f16, read per output) promoted
    spilled 184 bytes per thread in its 16 -> 96 expansion and ran 47.5 -> 61.9 us (H200,
    convc-e2e), where GELU's one bias gains. Rewritten by hoist_channel_invariants, the
    BatchNorm reads only the conv value per output."""
    if not (result_dtype in _WIDE and input_dtype in _WIDE + ("f32",)
            and all(d in _WIDE + ("f32",) for d in load_dtypes)
            and all(ins.op in PROMOTABLE and ins.dtype in _WIDE + ("f32", "i1") for ins in program)):
        return False
    per_output = {a for i, ins in enumerate(program) if first + i not in invariant
                  for a in ins.args if 1 <= a <= len(load_dtypes)}      # loads an op per output reads
    return sum(load_dtypes[a - 1] in _WIDE for a in per_output) <= 1


def channel_invariant(program: tuple[EpilogueOp, ...], first: int, channel_loads: set[int]) -> frozenset[int]:
    """The value numbers that depend only on per-channel loads and constants."""
    inv = set(channel_loads)
    for i, ins in enumerate(program):
        if ins.op == "arith.constant" or (ins.args and all(a in inv for a in ins.args)):
            inv.add(first + i)
    return frozenset(inv)


def hoist_channel_invariants(program: tuple[EpilogueOp, ...], first: int, invariant: frozenset[int]) -> tuple[tuple[EpilogueOp, ...], frozenset[int]]:
    """An f32 rewrite (promoted programs only) that leaves per-output work to the conv value:
    inference BatchNorm (x - m) * s + b, with m, s and b the same for every output of a
    channel and each intermediate used once, becomes fma(x, s, b - m * s), whose b - m * s the
    kernel computes once per channel (the absorbed subtraction and product take its two
    per-channel ops; numbering kept). Returns the program and the grown invariant set."""
    out, inv = list(program), set(invariant)
    uses = _use_counts(program)

    def op_at(k):
        return out[k - first] if k >= first else None

    for j, ins in enumerate(program):
        if ins.op != "arith.addf" or first + j in inv:
            continue
        for mul_k, b in (ins.args, ins.args[::-1]):
            mul = op_at(mul_k)
            if mul is None or mul.op != "arith.mulf" or b not in inv or uses.get(mul_k) != 1:
                continue
            for sub_k, sc in (mul.args, mul.args[::-1]):
                sub = op_at(sub_k)
                if (sub is None or sub.op != "arith.subf" or sc not in inv or uses.get(sub_k) != 1
                        or sub.args[1] not in inv or sub.args[0] in inv):
                    continue
                x, m = sub.args
                out[sub_k - first] = EpilogueOp("arith.mulf", "f32", (m, sc))          # m * s
                out[mul_k - first] = EpilogueOp("arith.subf", "f32", (b, sub_k))        # b - m * s
                out[j] = EpilogueOp("math.fma", ins.dtype, (x, sc, mul_k))
                inv.update((sub_k, mul_k))
                break
            else:
                continue
            break
    return tuple(out), frozenset(inv)


def _use_counts(program: tuple[EpilogueOp, ...]) -> dict[int, int]:
    """How many op arguments name each value number."""
    uses: dict[int, int] = {}
    for ins in program:
        for a in ins.args:
            uses[a] = uses.get(a, 0) + 1
    return uses


def fuse_promoted(program: tuple[EpilogueOp, ...], consts: dict[int, float], first: int
                  ) -> tuple[tuple[EpilogueOp, ...], dict[int, float]]:
    """Two f32 peepholes of a promoted program (value numbering unchanged: the op a fusion
    absorbs becomes the constant the fused op needs):
    - (a + c1) * c2, the sum used once: fma(a, c2, c1 * c2) (GELU's (erf + 1) * 0.5);
    - erf(x * c) or erf(x / c), c > 0, the product used once: erf with c folded into its
      constants (convc.erf_scaled; GELU's x / sqrt(2)).
    Each saves an instruction per output element of an epilogue that is most of its
    kernel's time; each rounds once fewer."""
    out, consts = list(program), dict(consts)
    uses = _use_counts(program)

    def producer(k):
        return out[k - first] if k >= first and uses.get(k) == 1 else None

    for j, ins in enumerate(program):
        if ins.op == "arith.mulf" and ins.dtype in ("f32",) + _WIDE:
            for k, c in (ins.args, ins.args[::-1]):
                add, c2 = producer(k), consts.get(c)
                if add is None or add.op != "arith.addf" or c2 is None:
                    continue
                a, c1 = (add.args[0], consts.get(add.args[1])) if add.args[1] in consts else (add.args[1], consts.get(add.args[0]))
                if c1 is None:
                    continue
                out[k - first] = _const("f32", float(np.float32(c1) * np.float32(c2)))
                consts[k] = float(np.float32(c1) * np.float32(c2))
                out[j] = EpilogueOp("math.fma", ins.dtype, (a, c, k))
                break
        elif ins.op == "math.erf":
            scaled = producer(ins.args[0])
            if scaled is None or scaled.op not in ("arith.mulf", "arith.divf") or scaled.args[1] not in consts:
                continue
            c = consts[scaled.args[1]]
            scale = c if scaled.op == "arith.mulf" else (1.0 / c if c else 0.0)
            if not scale > 0 or not math.isfinite(scale):
                continue
            k = ins.args[0]
            out[k - first] = _const("f32", scale)
            consts[k] = scale
            out[j] = EpilogueOp("convc.erf_scaled", ins.dtype, (scaled.args[0], k))
    return tuple(out), consts


def promoted_dtype(dtype: str) -> str:
    """The type a promoted program computes a value of `dtype` in."""
    return "f32" if dtype in _WIDE else dtype


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
    return exp2_fast(arith_d.mulf(x, splat(x.type, math.log2(math.e))))


def exp2_fast(y: ir.Value) -> ir.Value:
    """2^y of an f32 vector: the target's approximate exp2."""
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


def erf_fast(x: ir.Value, scale: float = 1.0) -> ir.Value:
    """erf(scale * x) of an f32 vector, scale > 0 (A&S 7.1.26, odd: the sign of x restored at
    the end; the scale folded into the constants)."""
    ax = math_d.absf(x)
    one = splat(x.type, 1.0)
    # explicit fmas: without `contract`, LLVM keeps each multiply and add apart
    t = recip_fast(math_d.fma(ax, splat(x.type, _AS_P * scale), one))
    poly = splat(x.type, _AS_A[-1])
    for a in reversed(_AS_A[:-1]):
        poly = math_d.fma(poly, t, splat(x.type, a))
    poly = arith_d.mulf(poly, t)
    e = exp2_fast(arith_d.mulf(ax, arith_d.mulf(ax, splat(x.type, -scale * scale * math.log2(math.e)))))
    r = math_d.fma(arith_d.negf(poly), e, one)
    return copysign_fast(r, x)


def emit_fast(ins: EpilogueOp, args: list, t: ir.Type, consts: dict[int, float], fast: bool) -> ir.Value | None:
    """The cheaper form of one program op on vector values (its result type t), or None to
    re-create it as it is."""
    f32 = ir.VectorType.get(ir.VectorType(t).shape, ir.F32Type.get()) if ins.dtype != "i1" else None

    def in_f32(fn, *vals):
        return convert(fn(*[convert(v, f32) for v in vals]), t)

    if ins.op == "convc.quantize_bits":
        return quantize_bits(args[0], args[1:-2], consts[ins.args[-2]], consts[ins.args[-1]], t)
    if ins.op == "convc.round_clamp":
        return round_clamp(args[0], args[1:-2], consts[ins.args[-2]], consts[ins.args[-1]])
    if ins.op in ("arith.sitofp", "arith.uitofp") and ins.dtype == "f32":
        src = ir.VectorType(args[0].type).element_type
        if isinstance(src, ir.IntegerType) and src.width in (8, 16):
            return small_int_to_float(args[0], ins.op == "arith.sitofp", t)
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
    if ins.op == "convc.erf_scaled":
        return in_f32(lambda a: erf_fast(a, consts[ins.args[1]]), args[0])
    return None
