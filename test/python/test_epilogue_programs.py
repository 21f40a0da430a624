"""Epilogues beyond bias/residual/relu, as exported networks put them after a conv: each model
is a conv and one elementwise generic whose body is arbitrary arith/math (BatchNorm, clamps,
leaky ReLU, SiLU, hard-swish, GELU, tanh, sigmoid, casts), reading per-channel and
output-shaped arguments, dense constants the dispatch inlines (hoisted into kernel operands)
or splat ones (folded to scalars), and scalar constants of the function. Checked on llvm-cpu
against a numpy fp32 reference with a NaN-poisoned output; sm_90a compiles them to PTX."""

import glob
import os
import re
import zlib
from dataclasses import dataclass

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.arrays import poison, random_input, storage_dtype, to_f32, from_f32
from convc.runtime.module import LoadedModule
from convc.tools.gpu.reference import conv_nhwc_fhwc_numpy


@dataclass(frozen=True)
class Case:
    name: str
    body: str               # MLIR: %a is the f32 conv value, arguments by name; yields %y
    ref: object             # (conv f32, {name: f32 array}) -> f32 output
    args: tuple = ()        # (name, "channel" | "full", dtype): model arguments the body reads
    consts: tuple = ()      # (name, "dense" | "splat", dtype): per-channel constants in the model
    dtype: str = "f16"
    out_dtype: str = "f16"


def _sig(v):
    return 1 / (1 + np.exp(-v))


def _erf(v):
    from math import erf
    return np.vectorize(erf, otypes=[np.float32])(v)


F32 = "f32"
CASES = [
    Case("batchnorm", """
    %s = arith.subf %a, %mean : f32
    %m = arith.mulf %s, %inv_std : f32
    %g32 = arith.extf %gamma : f16 to f32
    %g = arith.mulf %m, %g32 : f32
    %b = arith.addf %g, %beta : f32
    %y = arith.truncf %b : f32 to f16""",
         lambda y, o: (y - o["mean"]) * o["inv_std"] * o["gamma"] + o["beta"],
         args=(("mean", "channel", F32), ("gamma", "channel", "f16")),
         consts=(("inv_std", "dense", F32), ("beta", "splat", F32))),
    Case("batchnorm_rsqrt_relu6", """
    %s = arith.subf %a, %mean : f32
    %v = math.absf %var : f32
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    %n = arith.mulf %s, %r : f32
    %g = arith.mulf %n, %gamma : f32
    %b = arith.addf %g, %beta : f32
    %lo = arith.maximumf %b, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    %y = arith.truncf %hi : f32 to f16""",
         lambda y, o: np.clip((y - o["mean"]) / np.sqrt(np.abs(o["var"]) + 1e-3) * o["gamma"] + o["beta"], 0, 6),
         args=(("mean", "channel", F32), ("var", "channel", F32)),
         consts=(("gamma", "dense", F32), ("beta", "dense", F32))),
    Case("relu6", """
    %b32 = arith.extf %bias : f16 to f32
    %v = arith.addf %a, %b32 : f32
    %lo = arith.maxnumf %v, %zero : f32
    %hi = arith.minnumf %lo, %six : f32
    %y = arith.truncf %hi : f32 to f16""",
         lambda y, o: np.clip(y + o["bias"], 0, 6), args=(("bias", "channel", "f16"),)),
    Case("leaky_relu", """
    %p = arith.cmpf ugt, %a, %zero : f32
    %alpha = arith.constant 0.01 : f32
    %m = arith.mulf %a, %alpha : f32
    %s = arith.select %p, %a, %m : f32
    %y = arith.truncf %s : f32 to f16""",
         lambda y, o: np.where(y > 0, y, 0.01 * y)),
    Case("silu", """
    %n = arith.negf %a : f32
    %e = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %e, %one : f32
    %r = arith.divf %one, %d : f32
    %s = arith.mulf %a, %r : f32
    %y = arith.truncf %s : f32 to f16""",
         lambda y, o: y * _sig(y)),
    Case("hardswish", """
    %three = arith.constant 3.0 : f32
    %x3 = arith.addf %a, %three : f32
    %lo = arith.maximumf %x3, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    %m = arith.mulf %a, %hi : f32
    %d = arith.divf %m, %six : f32
    %y = arith.truncf %d : f32 to f16""",
         lambda y, o: y * np.clip(y + 3, 0, 6) / 6),
    Case("gelu_erf", """
    %half = arith.constant 0.5 : f32
    %rs2 = arith.constant 0.70710678118654752 : f32
    %one = arith.constant 1.0 : f32
    %s = arith.mulf %a, %rs2 : f32
    %e = math.erf %s : f32
    %p = arith.addf %e, %one : f32
    %h = arith.mulf %a, %half : f32
    %g = arith.mulf %h, %p : f32
    %y = arith.truncf %g : f32 to f16""",
         lambda y, o: 0.5 * y * (1 + _erf(y / np.sqrt(2)))),
    # the form PyTorch's f16 GELU takes after IREE's import (ConvNeXt's MLP): every step in
    # f16 with a per-channel bias; promoted to f32 (one rounding), with the (erf + 1) * 0.5
    # fma and x / sqrt(2) folded into erf's constants (program_math.fuse_promoted)
    Case("gelu_erf_f16_steps", """
    %t = arith.truncf %a : f32 to f16
    %v = arith.addf %t, %bias : f16
    %two = arith.constant 2.0 : f16
    %s2 = math.sqrt %two : f16
    %u = arith.divf %v, %s2 : f16
    %e = math.erf %u : f16
    %one = arith.constant 1.0 : f16
    %p = arith.addf %e, %one : f16
    %half = arith.constant 0.5 : f16
    %h = arith.mulf %p, %half : f16
    %y = arith.mulf %v, %h : f16""",
         lambda y, o: 0.5 * (y + o["bias"]) * (1 + _erf((y + o["bias"]) / np.sqrt(np.float16(2.0)).astype(np.float32))),
         args=(("bias", "channel", "f16"),)),
    # EfficientNet's inference BatchNorm in f16 steps, then SiLU in f32 (as IREE imports it):
    # promoted, the BatchNorm as fma(x, scale, shift - mean * scale) per channel
    Case("batchnorm_silu_f16_steps", """
    %t = arith.truncf %a : f32 to f16
    %d = arith.subf %t, %mean : f16
    %m = arith.mulf %d, %scale : f16
    %v = arith.addf %m, %shift : f16
    %wv = arith.extf %v : f16 to f32
    %n = arith.negf %wv : f32
    %ex = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %q = arith.addf %ex, %one : f32
    %r = arith.divf %one, %q : f32
    %z = arith.mulf %wv, %r : f32
    %y = arith.truncf %z : f32 to f16""",
         lambda y, o: ((y - o["mean"]) * o["scale"] + o["shift"]) * _sig((y - o["mean"]) * o["scale"] + o["shift"]),
         args=(("mean", "channel", "f16"), ("scale", "channel", "f16"), ("shift", "channel", "f16"))),
    Case("tanh_bf16", """
    %b32 = arith.extf %bias : bf16 to f32
    %v = arith.addf %a, %b32 : f32
    %t = math.tanh %v : f32
    %y = arith.truncf %t : f32 to bf16""",
         lambda y, o: np.tanh(y + o["bias"]), args=(("bias", "channel", "bf16"),), dtype="bf16", out_dtype="bf16"),
    Case("sigmoid_f32_out", """
    %n = arith.negf %a : f32
    %e = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %e, %one : f32
    %y = arith.divf %one, %d : f32""",
         lambda y, o: _sig(y), out_dtype="f32"),
    Case("residual_silu", """
    %b32 = arith.extf %bias : f16 to f32
    %r32 = arith.extf %res : f16 to f32
    %x0 = arith.addf %a, %b32 : f32
    %v = arith.addf %x0, %r32 : f32
    %n = arith.negf %v : f32
    %e = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %v, %d : f32
    %y = arith.truncf %s : f32 to f16""",
         lambda y, o: (y + o["bias"] + o["res"]) * _sig(y + o["bias"] + o["res"]),
         args=(("bias", "channel", "f16"), ("res", "full", "f16"))),
    Case("clamp_in_f16", """
    %b32 = arith.extf %bias : f16 to f32
    %v = arith.addf %a, %b32 : f32
    %h = arith.truncf %v : f32 to f16
    %z = arith.constant 0.0 : f16
    %c = arith.constant 6.0 : f16
    %lo = arith.maximumf %h, %z : f16
    %y = arith.minimumf %lo, %c : f16""",
         lambda y, o: np.clip(y + o["bias"], 0, 6), args=(("bias", "channel", "f16"),)),
    Case("two_residuals", """
    %r32 = arith.extf %r1 : f16 to f32
    %s32 = arith.extf %r2 : f16 to f32
    %m = arith.mulf %a, %r32 : f32
    %v = arith.addf %m, %s32 : f32
    %y = arith.truncf %v : f32 to f16""",
         lambda y, o: y * o["r1"] + o["r2"], args=(("r1", "full", "f16"), ("r2", "full", "f16"))),
]


def _t(shape, dtype):
    return "tensor<" + "x".join(map(str, shape)) + f"x{dtype}>"


def _const_values(case: Case, name: str, kind: str, dtype: str, F: int) -> np.ndarray:
    """Deterministic per-channel values of an inlined constant (rounded to its dtype)."""
    rng = np.random.default_rng(zlib.crc32(f"{case.name}/{name}".encode()))
    v = rng.uniform(0.5, 1.5, size=F if kind == "dense" else 1).astype(np.float32)
    return to_f32(from_f32(np.broadcast_to(v, (F,)), dtype), dtype)


def model_mlir(case: Case, shape) -> str:
    """conv_2d_nhwc_fhwc (3x3, pad 1) + one elementwise generic with case.body."""
    N, H, W, C, F = shape
    x_t, w_t, xp_t = _t((N, H, W, C), case.dtype), _t((F, 3, 3, C), case.dtype), _t((N, H + 2, W + 2, C), case.dtype)
    o = (N, H, W, F)
    acc_t, out_t = _t(o, "f32"), _t(o, case.out_dtype)
    arg_t = {n: _t(o if k == "full" else (F,), dt) for n, k, dt in case.args}
    params = [f"%x: {x_t}", f"%w: {w_t}"] + [f"%arg_{n}: {arg_t[n]}" for n, _, _ in case.args]
    lines = [f"func.func @main({', '.join(params)}, %out: {out_t} {{iree.abi.output = 0 : index}}) -> {out_t} {{",
             "  %zero = arith.constant 0.0 : f32", "  %six = arith.constant 6.0 : f32",
             "  %eps = arith.constant 1.0e-3 : f32", f"  %pz = arith.constant 0.0 : {case.dtype}"]
    for n, k, dt in case.consts:
        v = _const_values(case, n, k, dt, F)
        text = repr(float(v[0])) if k == "splat" else "[" + ", ".join(repr(float(x)) for x in v) + "]"
        lines.append(f"  %k_{n} = arith.constant dense<{text}> : {_t((F,), dt)}")
    ident, chan = "affine_map<(n, h, w, f) -> (n, h, w, f)>", "affine_map<(n, h, w, f) -> (f)>"
    ins = [("conv", acc_t, ident, "a", "f32")]       # (value, type, map, block argument, its type)
    ins += [(f"arg_{n}", arg_t[n], ident if k == "full" else chan, n, dt) for n, k, dt in case.args]
    ins += [(f"k_{n}", _t((F,), dt), chan, n, dt) for n, _, dt in case.consts]
    lines += [
        f"  %m_xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {{",
        "  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):",
        f"    tensor.yield %pz : {case.dtype}", f"  }} : {x_t} to {xp_t}",
        f"  %m_e = tensor.empty() : {acc_t}",
        f"  %m_acc = linalg.fill ins(%zero : f32) outs(%m_e : {acc_t}) -> {acc_t}",
        "  %conv = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} "
        f"ins(%m_xp, %w : {xp_t}, {w_t}) outs(%m_acc : {acc_t}) -> {acc_t}",
        f"  %m_e2 = tensor.empty() : {out_t}",
        f"  %m_r = linalg.generic {{indexing_maps = [{', '.join([m for _, _, m, _, _ in ins] + [ident])}], "
        "iterator_types = [\"parallel\", \"parallel\", \"parallel\", \"parallel\"]} "
        f"ins({', '.join('%' + v for v, _, _, _, _ in ins)} : {', '.join(t for _, t, _, _, _ in ins)}) "
        f"outs(%m_e2 : {out_t}) {{",
        f"  ^bb0({', '.join(f'%{b}: {dt}' for _, _, _, b, dt in ins)}, %o: {case.out_dtype}):",
        case.body.strip("\n"),
        f"    linalg.yield %y : {case.out_dtype}",
        f"  }} -> {out_t}", f"  return %m_r : {out_t}", "}"]
    return "\n".join(lines) + "\n"


def _compile(tmp_path, case, shape, target, **kw):
    src = tmp_path / f"{case.name}.mlir"
    src.write_text(model_mlir(case, shape))
    out = tmp_path / f"{case.name}.{target}.vmfb"
    return out, compile_file(str(src), str(out), CompileOptions(target=target, **kw))


CPU_SHAPE = (2, 9, 7, 16, 24)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_program_epilogue_matches_reference(tmp_path, case):
    vmfb, res = _compile(tmp_path, case, CPU_SHAPE, "llvm-cpu")
    assert [r.path for r in res.reports] == ["convc"], [r.line() for r in res.reports]
    N, H, W, C, F = CPU_SHAPE
    o = (N, H, W, F)
    rng = np.random.default_rng(0)
    x = random_input(rng, (N, H, W, C), case.dtype)
    w = random_input(rng, (F, 3, 3, C), case.dtype)
    args = [random_input(rng, o if k == "full" else (F,), dt) for _, k, dt in case.args]
    out = poison(o, case.out_dtype)
    got = LoadedModule(str(vmfb), "local-task").call(
        "main", [(x, case.dtype), (w, case.dtype)] + [(a, dt) for a, (_, _, dt) in zip(args, case.args)],
        (out, case.out_dtype))
    got = to_f32(got.view(storage_dtype(case.out_dtype)), case.out_dtype)
    named = {n: to_f32(a, dt) for a, (n, _, dt) in zip(args, case.args)}
    named.update({n: _const_values(case, n, k, dt, F) for n, k, dt in case.consts})
    y = conv_nhwc_fhwc_numpy(to_f32(x, case.dtype), to_f32(w, case.dtype), (1, 1), (1, 1), (1, 1, 1, 1))
    ref = case.ref(y, named)
    assert not np.isnan(got).any(), "unwritten (poisoned) or NaN outputs"
    err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    assert err <= (1e-2 if case.out_dtype != "f32" else 1e-5), err


GPU_SHAPE = (2, 16, 16, 64, 128)
PERSISTENT = ("sm90_ws_cooperative", "sm90_ws_pingpong", "sm90_ws_streamk")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_program_epilogue_compiles_on_sm90a(tmp_path, case):
    """The persistent TMA kernels take every epilogue with at most one output-shaped operand
    (loaded by TMA into the residual slot); with two, the planner picks a kernel that reads
    them from global memory."""
    _, res = _compile(tmp_path, case, GPU_SHAPE, "sm_90a", dump_dir=str(tmp_path / "d"))
    assert [r.path for r in res.reports] == ["convc"], [r.line() for r in res.reports]
    kernel = res.reports[0].schedule.kernel
    full = sum(k == "full" for _, k, _ in case.args)
    assert (kernel in PERSISTENT) == (full <= 1), res.reports[0].line()
    ptx = "".join(open(f).read() for f in glob.glob(os.path.join(tmp_path, "d", "binaries", "*.ptx")))
    assert ".target sm_90a" in ptx and "wgmma.mma_async" in ptx


@pytest.mark.parametrize("name", ["residual_silu", "batchnorm", "clamp_in_f16"])
def test_every_sm90a_candidate_lowers_program_epilogues(tmp_path, name):
    """Every tuning candidate (cooperative, ping-pong, swapped tiles, ring-staged epilogues,
    stream-K, non-persistent) emits a verified kernel for a program epilogue; the residual
    one goes through the TMA residual slot."""
    from convc.passes.registry import PassOptions
    from convc.tools.opt import run_on_text
    case = next(c for c in CASES if c.name == name)
    _compile(tmp_path, case, (8, 28, 28, 64, 256), "sm_90a", dump_dir=str(tmp_path / "d"))
    flow = (tmp_path / "d" / f"{name}.flow.mlir").read_text()
    kernels = set()
    for i in range(64):
        out = run_on_text(flow, ["convc-match-conv", "convc-plan-schedule", "convc-lower-kernel"],
                          PassOptions(target="sm_90a", candidate=i))
        sched = re.search(r"convc.schedule = \{.*?\}[^{}]*\}", out).group(0)     # one nested config
        if "tuning candidate" not in sched:           # past the last candidate
            break
        assert "hal.executable.source" in out
        kernels.add(re.search(r'kernel = "(\w+)"', sched).group(1) + (" swapped" if "swap_ab = true" in sched else ""))
    assert len(kernels) >= 4, kernels


@pytest.mark.parametrize("name,fast", [("gelu_erf", True), ("silu", True), ("hardswish", True),
                                       ("sigmoid_f32_out", False)])
def test_program_math_forms_on_sm90a(tmp_path, name, fast):
    """program_math.py: a 16-bit program's exp, erf and divisions take the hardware forms
    (ex2.approx, rcp.approx, a multiplication for a constant divisor), no IEEE division and no
    exp polynomial; an f32 program keeps IREE's exact expansions."""
    case = next(c for c in CASES if c.name == name)
    _compile(tmp_path, case, GPU_SHAPE, "sm_90a", dump_dir=str(tmp_path / "d"))
    ptx = "".join(open(f).read() for f in glob.glob(os.path.join(tmp_path, "d", "binaries", "*.ptx")))
    kernel = ptx[ptx.index(".entry conv_"):]
    assert ("div.rn.f32" in kernel or "rcp.rn.f32" in kernel) != fast
    assert ("ex2.approx" in kernel) == (fast and name != "hardswish")
    if name == "hardswish":                    # x * relu6(x + 3) / 6: the division is a multiply
        assert "rcp.approx" not in kernel
    if fast and name != "hardswish":
        # one MUFU.RCP each: the flush-to-zero form (ptxas guards the other with 6 more
        # instructions per value)
        assert "rcp.approx.ftz.f32" in kernel and "rcp.approx.f32" not in kernel
    # erf's sign restored in f32 (an f16 copysign is ~6 integer and select instructions)
    assert ("copysign.f32" in kernel) == (name == "gelu_erf")


def test_program_constant_folding():
    from convc.passes.ir import ir
    from convc.passes.lower.common.program_math import fold_constants
    from convc.passes.problem import EpilogueOp
    with ir.Context(), ir.Location.unknown():
        prog = (EpilogueOp("arith.constant", "f16", (), (("value", "2.000000e+00 : f16"),)),
                EpilogueOp("math.sqrt", "f16", (2,)),
                EpilogueOp("arith.divf", "f16", (0, 3)),
                EpilogueOp("math.erf", "f16", (4,)))
        out, consts = fold_constants(prog, 2)
        assert out[1].op == "arith.constant" and out[2:] == prog[2:]
        # sqrt(2) rounded as f16 math rounds it
        assert consts[3] == float(np.sqrt(np.float16(2.0)))


def _gelu_f16_program():
    from convc.passes.problem import EpilogueOp
    c = lambda v: EpilogueOp("arith.constant", "f16", (), (("value", f"{v} : f16"),))    # noqa: E731
    # 0: the conv value (f32), 1: the bias (f16)
    return (EpilogueOp("arith.truncf", "f16", (0,)), EpilogueOp("arith.addf", "f16", (2, 1)), c("2.000000e+00"),
            EpilogueOp("math.sqrt", "f16", (4,)), EpilogueOp("arith.divf", "f16", (3, 5)),
            EpilogueOp("math.erf", "f16", (6,)), c("1.000000e+00"), EpilogueOp("arith.addf", "f16", (7, 8)),
            c("5.000000e-01"), EpilogueOp("arith.mulf", "f16", (9, 10)), EpilogueOp("arith.mulf", "f16", (3, 11)))


def test_promotion_rules():
    """program_math.promotes: 16-bit results of float math with at most one 16-bit load read
    per output run in f32; several (x * a * b + c with per-channel f16 a, b, c), integer ops
    or an f32 result keep the program's own types. Inference BatchNorm (x - m) * s + b becomes
    fma(x, s, b - m * s) (hoist_channel_invariants), which reads no load per output."""
    from convc.passes.ir import ir
    from convc.passes.lower.common.program_math import channel_invariant, hoist_channel_invariants, promotes
    from convc.passes.problem import EpilogueOp as Op
    with ir.Context(), ir.Location.unknown():
        gelu = _gelu_f16_program()
        inv = channel_invariant(gelu, 2, {1})
        assert promotes(gelu, "f16", "f32", ["f16"], inv, 2)
        assert not promotes(gelu, "f32", "f32", ["f16"], inv, 2)
        assert not promotes(gelu + (Op("arith.fptosi", "i8", (12,)),), "f16", "f32", ["f16"], inv, 2)
        f16 = ["f16"] * 3        # 0: the conv value, 1-3: per-channel loads, 4...: ops
        scaled = (Op("arith.truncf", "f16", (0,)), Op("arith.mulf", "f16", (4, 1)), Op("arith.mulf", "f16", (5, 2)),
                  Op("arith.addf", "f16", (6, 3)))
        inv = channel_invariant(scaled, 4, {1, 2, 3})
        assert not promotes(*hoist_channel_invariants(scaled, 4, inv)[:1], "f16", "f32", f16, inv, 4)
        bn = (Op("arith.truncf", "f16", (0,)), Op("arith.subf", "f16", (4, 1)), Op("arith.mulf", "f16", (5, 2)),
              Op("arith.addf", "f16", (6, 3)))
        inv = channel_invariant(bn, 4, {1, 2, 3})
        assert not promotes(bn, "f16", "f32", f16, inv, 4)
        hoisted, inv = hoist_channel_invariants(bn, 4, inv)
        assert [(o.op, o.args) for o in hoisted[1:]] == [("arith.mulf", (1, 2)), ("arith.subf", (3, 5)),
                                                         ("math.fma", (4, 2, 6))]
        assert promotes(hoisted, "f16", "f32", f16, inv, 4)
        # a residual (shaped like the output, so never invariant) and a bias, both f16, both
        # read per output: not promoted
        res = (Op("arith.truncf", "f16", (0,)), Op("arith.addf", "f16", (3, 1)), Op("arith.addf", "f16", (4, 2)))
        assert not promotes(res, "f16", "f32", ["f16", "f16"], channel_invariant(res, 3, {1}), 3)
        assert promotes(res, "f16", "f32", ["f16", "f32"], channel_invariant(res, 3, {1}), 3)


def test_promoted_peepholes():
    """fuse_promoted on GELU: (erf + 1) * 0.5 becomes an fma with constants 0.5 and 0.5, erf of
    x / sqrt(2) a scaled erf of x; the absorbed ops become those constants (numbering kept)."""
    from convc.passes.ir import ir
    from convc.passes.lower.common.program_math import fold_constants, fuse_promoted
    with ir.Context(), ir.Location.unknown():
        prog, consts = fold_constants(_gelu_f16_program(), 2)
        fused, consts = fuse_promoted(prog, consts, 2)
        ops = [ins.op for ins in fused]
        assert ops.count("convc.erf_scaled") == 1 and ops.count("math.fma") == 1
        assert "math.erf" not in ops and "arith.divf" not in ops
        erf = fused[ops.index("convc.erf_scaled")]
        assert erf.args[0] == 3                                   # the biased value itself
        assert abs(consts[erf.args[1]] - 1 / float(np.sqrt(np.float16(2.0)))) < 1e-7
        fma = fused[ops.index("math.fma")]
        assert consts[fma.args[1]] == 0.5 and consts[fma.args[2]] == 0.25 * 2     # (e + 1) * 0.5


def _quantize_program(order="max_min", zp=None, lo="-1.280000e+02", hi="1.270000e+02", to="arith.fptosi",
                      dtype="i8"):
    """0: the conv value, 1: a bias; v = a * s + b, relu, roundeven (+ zp), clamp, to int."""
    from convc.passes.problem import EpilogueOp as Op
    c = lambda v: Op("arith.constant", "f32", (), (("value", f"{v} : f32"),))    # noqa: E731
    prog = [Op("arith.sitofp", "f32", (0,)), c("7.300000e-04"), Op("arith.mulf", "f32", (2, 3)),
            Op("arith.addf", "f32", (4, 1)), c("0.000000e+00"), Op("arith.maximumf", "f32", (5, 6)),
            Op("math.roundeven", "f32", (7,))]
    x = 8
    if zp is not None:
        prog += [Op("arith.constant", "i32", (), (("value", f"{zp} : i32"),)), Op("arith.sitofp", "f32", (9,)),
                 Op("arith.addf", "f32", (8, 10))]
        x = 11
    k = 2 + len(prog)
    first, second = (("arith.maxnumf", lo), ("arith.minnumf", hi)) if order == "max_min" else \
        (("arith.minnumf", hi), ("arith.maxnumf", lo))
    prog += [c(first[1]), Op(first[0], "f32", (x, k)), c(second[1]), Op(second[0], "f32", (k + 1, k + 2)),
             Op(to, dtype, (k + 3,))]
    return tuple(prog)


@pytest.mark.parametrize("order", ["max_min", "min_max"])
@pytest.mark.parametrize("zp", [None, 3])
def test_quantize_chain_becomes_bits(order, zp):
    """program_math.quantize_chains: a requantize's roundeven (+ integer zero point), clamp in
    either order and fptosi become one convc.quantize_bits reading the unrounded value, the
    zero point and the two bounds; the absorbed ops become constants (numbering kept)."""
    from convc.passes.ir import ir
    from convc.passes.lower.common.program_math import fold_constants, quantize_chains
    with ir.Context(), ir.Location.unknown():
        prog, consts = fold_constants(_quantize_program(order, zp), 2)
        out = quantize_chains(prog, consts, 2)
        q = out[-1]
        assert q.op == "convc.quantize_bits" and q.dtype == "i8"
        assert q.args[0] == 7                                   # relu's result, before rounding
        assert [consts[a] for a in q.args[-2:]] == [-128.0, 127.0]
        assert len(q.args) == (4 if zp is not None else 3)
        ops = [ins.op for ins in out]
        assert "math.roundeven" not in ops and "arith.minnumf" not in ops and "arith.maxnumf" not in ops
        assert len(out) == len(prog)


@pytest.mark.parametrize("change", ["wide_bounds", "fractional_bound", "unsigned_negative", "shared_round"])
def test_quantize_chain_left_alone(change):
    """No quantize_bits where the bits would not be the same integer: bounds past the result
    type or an fptoui with a negative lower bound keep the fptosi of a convc.round_clamp
    (whose f32 is still exact); a fractional bound or a rounded value used twice leave the
    program as it is."""
    from convc.passes.ir import ir
    from convc.passes.lower.common.program_math import fold_constants, quantize_chains
    from convc.passes.problem import EpilogueOp as Op
    prog = {"wide_bounds": lambda: _quantize_program(lo="-3.000000e+02"),
            "fractional_bound": lambda: _quantize_program(hi="1.265000e+02"),
            "unsigned_negative": lambda: _quantize_program(to="arith.fptoui"),
            "shared_round": lambda: _quantize_program() + (Op("arith.addf", "f32", (8, 8)),)}[change]()
    with ir.Context(), ir.Location.unknown():
        prog, consts = fold_constants(prog, 2)
        out = quantize_chains(prog, consts, 2)
        if change in ("wide_bounds", "unsigned_negative"):
            assert [o.op for o in out[-2:]] == ["convc.round_clamp", prog[-1].op]
        else:
            assert out == prog


def test_round_clamp_feeding_f16():
    """A requantize to integer-valued f16 (the f16 route of an RGB stem): roundeven and the
    clamp as one convc.round_clamp, the truncf kept."""
    from convc.passes.ir import ir
    from convc.passes.lower.common.program_math import fold_constants, quantize_chains
    with ir.Context(), ir.Location.unknown():
        prog, consts = fold_constants(_quantize_program(to="arith.truncf", dtype="f16"), 2)
        out = quantize_chains(prog, consts, 2)
        assert [o.op for o in out[-2:]] == ["convc.round_clamp", "arith.truncf"]
        assert "math.roundeven" not in [o.op for o in out]


def test_integer_conversion_identities():
    """The f32-encoding forms program_math emits, evaluated in numpy float32 (IEEE round to
    nearest even, as the GPU's FADD): convc.quantize_bits and convc.round_clamp equal
    clamp(roundeven(v) + z) on halves, large and non-finite values (NaN: the lower bound, as
    maxnumf gives), and the small-integer conversion equals the integer for every i8, u8 and
    i16 value."""
    from convc.passes.lower.common.program_math import MAGIC, MAGIC_BITS
    f32 = np.float32
    rng = np.random.default_rng(0)
    v = np.concatenate([np.arange(-300, 300, 0.25), rng.normal(0, 100, 20000), [2.0 ** 22 - 0.5, 2.0 ** 22 + 1,
                        -2.0 ** 22 - 3, 1e9, -1e9, 3e38, -3e38, np.inf, -np.inf, np.nan, -0.0, 0.5, -0.5, 1.5, -2.5]]
                       ).astype(f32)
    for z, lo, hi, bits in ((0, -128, 127, 8), (3, -128, 127, 8), (-128, -128, 127, 8), (0, 0, 255, 8),
                            (7, -32768, 32767, 16)):
        with np.errstate(invalid="ignore"):
            w = (v + f32(MAGIC)) + f32(z)
            w = np.fmin(np.fmax(w, f32(MAGIC + lo)), f32(MAGIC + hi))
            got = (w.view(np.uint32) & (2 ** bits - 1)).astype(np.int64)
            got = np.where(got >= 2 ** (bits - 1), got - 2 ** bits, got) if lo < 0 else got
            ref = np.fmin(np.fmax(np.round(v.astype(np.float64)) + z, lo), hi)
            as_float = w - f32(MAGIC)                              # convc.round_clamp
        ref = np.where(np.isnan(v), lo, ref).astype(np.int64)
        assert (got == ref).all(), v[got != ref][:8]
        assert (as_float == ref).all()
    for bits, signed in ((8, True), (8, False), (16, True)):
        q = np.arange(-(2 ** (bits - 1)), 2 ** (bits - 1)) if signed else np.arange(2 ** bits)
        offset = 2 ** (bits - 1) if signed else 0
        enc = ((q + offset) & (2 ** bits - 1)).astype(np.uint32) | np.uint32(MAGIC_BITS)
        assert (enc.view(f32) - f32(MAGIC + offset) == q.astype(f32)).all()


def test_int8_epilogue_has_no_quarter_rate_conversions(tmp_path):
    """An i8 layer's requantize with an i8 residual compiles for sm_90a without cvt.rni,
    cvt.rzi or an 8-bit cvt (F2I, FRND and I2F.S8: a quarter of the float rate), its
    multiply-add contracted."""
    from convc.tools.layers import Layer, layer_mlir
    L = Layer("q", 2, 8, 8, 64, 128, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "i8", "bias_residual_relu")
    src = tmp_path / "q.mlir"
    src.write_text(layer_mlir(L))
    compile_file(str(src), str(tmp_path / "q.vmfb"), CompileOptions(target="sm_90a", dump_dir=str(tmp_path / "d"),
                                                                      tuning_cache="none"))
    ptx = "".join(open(f).read() for f in glob.glob(os.path.join(tmp_path, "d", "binaries", "*.ptx")))
    kernel = ptx[ptx.index(".entry conv_"):]
    assert "s8.s8" in kernel                                   # the s8 wgmma kernel
    assert not re.search(r"cvt\.(rni|rzi)", kernel), "rounding conversions left"
    assert not re.search(r"cvt\.rn\.f32\.s(8|16)", kernel), "8/16-bit int -> float conversions left"


def test_requantize_round_trips_and_integer_relu():
    """A QDQ epilogue's quantize then dequantize (sitofp(fptosi(...))) is the convc.round_clamp's
    f32 itself; an integer ReLU max(q, 0) of the final quantize raises its clamp's lower bound."""
    from convc.passes.ir import ir
    from convc.passes.lower.common.program_math import fold_constants, quantize_chains
    from convc.passes.problem import EpilogueOp as Op
    base = _quantize_program()
    n = 2 + len(base)                                       # the fptosi's value number
    trip = base + (Op("arith.sitofp", "f32", (n - 1,)),)
    relu = base + (Op("arith.constant", "i8", (), (("value", "0 : i8"),)), Op("arith.maxsi", "i8", (n - 1, n)))
    with ir.Context(), ir.Location.unknown():
        prog, consts = fold_constants(trip, 2)
        out = quantize_chains(prog, consts, 2)
        assert out[-1].op == "convc.round_clamp" and "arith.fptosi" not in [o.op for o in out]
        prog, consts = fold_constants(relu, 2)
        out = quantize_chains(prog, consts, 2)
        q = out[-1]
        assert q.op == "convc.quantize_bits" and [consts[a] for a in q.args[-2:]] == [0.0, 127.0]
        assert "arith.maxsi" not in [o.op for o in out]
