"""int8 convs on sm_90a without a GPU: the planner routes them to the warp-specialized
persistent TMA + wgmma kernel (s8 x s8 -> s32 wgmma, k32), its refusals name their reasons,
and the kernels of a requantizing 3x3, a 1x1 with an i8 residual and an f32-output conv are
assembled by ptxas -arch=sm_90a (no spills). Numerics need a GPU (convc.tools.gpu.check takes
i8 layers)."""

import dataclasses
import glob
import re
import subprocess

import pytest

from conftest import PTXAS, compile_layer
from convc.compiler.driver import CompileOptions, compile_file
from convc.passes.lower.nvidia import tensormap as tm
from convc.passes.lower.nvidia.tma_loader import activation_map_args, epilogue_map_args, filter_map_args
from convc.passes.plan.kernels.common import PlanError
from convc.passes.plan.kernels.sm90_ws import plan_sm90_ws
from convc.passes.plan.plan_schedule import candidate_schedules, plan_schedule_for
from convc.passes.schedule import Kernel
from convc.passes.target import get_target
from convc.tools.layers import Layer

T = get_target("sm_90a")
REQUANT_3X3 = Layer("i8_3x3_64_128", 2, 16, 16, 64, 128, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "i8", "bias_relu")
RESIDUAL_1X1 = Layer("i8_1x1_128_256_res", 2, 8, 8, 128, 256, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "i8",
                     "bias_residual_relu")


def test_int8_convs_take_the_s8_wgmma_kernel():
    """The tiles the f16 rules pick for the shape (persistent cooperative or ping-pong), 128- or
    64-byte K rows of 128 or 64 i8 channels, no direct prologue loads; i8 TMA maps move UINT8
    (the output's and the residual's too; an i32 output as INT32)."""
    persistent = (Kernel.SM90_WS_COOPERATIVE, Kernel.SM90_WS_PINGPONG)
    for L, bk in ((REQUANT_3X3, 64), (RESIDUAL_1X1, 128)):
        p = L.expected_problem()
        s = plan_schedule_for(p, T)
        assert s.kernel in persistent and "s8 wgmma" in s.reason, s.reason
        assert s.block_k == bk and s.config.direct_stages == 0
        assert activation_map_args(p, s).data_type == filter_map_args(p, s).data_type == tm.DataType.UINT8
        assert epilogue_map_args(p, "i8", 64, 128).data_type == tm.DataType.UINT8
    narrow = dataclasses.replace(RESIDUAL_1X1.expected_problem(), F=48)
    assert plan_schedule_for(narrow, T).block_n == 64
    raw = Layer("i8_raw", 2, 16, 16, 64, 128, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "i8", "none").expected_problem()
    assert raw.out_dtype == "i32" and plan_schedule_for(raw, T).kernel in persistent
    assert epilogue_map_args(raw, "i32", 64, 128).data_type == tm.DataType.INT32


def test_int8_declines_name_the_reason():
    """C that no 64- or 128-byte K row tiles, and targets without wgmma, take the portable
    kernel (i32 sums); wgmma N the integer wgmma lacks are refused. Stream-K is taken: its
    partials travel as i32."""
    p = REQUANT_3X3.expected_problem()
    odd = dataclasses.replace(p, C=16)
    s = plan_schedule_for(odd, T)
    assert s.kernel == Kernel.PORTABLE_IGEMM and "s8 wgmma kernel declined: C=16" in s.reason, s.reason
    assert "multiple of 64, or of 16 with one filter tap" in s.reason
    s = plan_schedule_for(p, get_target("llvm-cpu"))
    assert s.kernel == Kernel.PORTABLE_IGEMM and "no s8 tensor-core kernel for llvm-cpu" in s.reason, s.reason
    assert plan_sm90_ws(p, T, Kernel.SM90_WS_STREAMK, 64, 128).kernel == Kernel.SM90_WS_STREAMK
    f32_out = dataclasses.replace(p, out_dtype="f32", epilogue=())
    with pytest.raises(PlanError, match="s8 wgmma with N=40"):
        plan_sm90_ws(f32_out, T, block_n=40)
    assert plan_sm90_ws(f32_out, T, block_n=80).block_n == 80
    with pytest.raises(PlanError, match="accumulated in f32"):
        plan_sm90_ws(dataclasses.replace(p, acc_dtype="f32"), T)


def _f32_output_mlir() -> str:
    """An i8 3x3 conv (pad 1) dequantized to f32 in its epilogue: i32 sums * scale[f] + bias[f]."""
    x, xp, w = "tensor<2x16x16x64xi8>", "tensor<2x18x18x64xi8>", "tensor<128x3x3x64xi8>"
    acc, out, vec = "tensor<2x16x16x128xi32>", "tensor<2x16x16x128xf32>", "tensor<128xf32>"
    ident, chan = "affine_map<(n, h, w, f) -> (n, h, w, f)>", "affine_map<(n, h, w, f) -> (f)>"
    args = f"%x: {x}, %w: {w}, %s: {vec}, %b: {vec}, %out: {out} {{iree.abi.output = 0 : index}}"
    return f"""func.func @main({args}) -> {out} {{
  %zero = arith.constant 0 : i8
  %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : i8
  }} : {x} to {xp}
  %iz = arith.constant 0 : i32
  %e = tensor.empty() : {acc}
  %acc = linalg.fill ins(%iz : i32) outs(%e : {acc}) -> {acc}
  %conv = linalg.conv_2d_nhwc_fhwc {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
      ins(%xp, %w : {xp}, {w}) outs(%acc : {acc}) -> {acc}
  %e2 = tensor.empty() : {out}
  %y = linalg.generic {{indexing_maps = [{ident}, {chan}, {chan}, {ident}],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%conv, %s, %b : {acc}, {vec}, {vec}) outs(%e2 : {out}) {{
  ^bb0(%a: i32, %ss: f32, %bb: f32, %o: f32):
    %af = arith.sitofp %a : i32 to f32
    %m = arith.mulf %af, %ss : f32
    %v = arith.addf %m, %bb : f32
    linalg.yield %v : f32
  }} -> {out}
  return %y : {out}
}}
"""


def _compile(tmp_path, case):
    """(the conv's report, its dumped PTX path) for a Layer or ("name", MLIR text)."""
    dump = tmp_path / "dump"
    if isinstance(case, Layer):
        _, res = compile_layer(tmp_path, case, target="sm_90a", dump_dir=str(dump), tuning_cache="none")
    else:
        src = tmp_path / f"{case[0]}.mlir"
        src.write_text(case[1])
        res = compile_file(str(src), str(tmp_path / "m.vmfb"),
                           CompileOptions(target="sm_90a", dump_dir=str(dump), tuning_cache="none"))
    (r,) = [r for r in res.reports if r.problem is not None]
    (ptx,) = glob.glob(str(dump / "binaries" / "*.ptx"))
    return r, ptx


CASES = [REQUANT_3X3, RESIDUAL_1X1, ("i8_3x3_f32_out", _f32_output_mlir())]


@pytest.mark.parametrize("case", CASES, ids=[c.name if isinstance(c, Layer) else c[0] for c in CASES])
def test_int8_kernel_compiles_and_assembles(tmp_path, case):
    r, ptx = _compile(tmp_path, case)
    p, s = r.problem, r.schedule
    assert r.path == "convc" and p.dtype == "i8" and p.acc_dtype == "i32", r.line()
    assert s.kernel in (Kernel.SM90_WS_COOPERATIVE, Kernel.SM90_WS_PINGPONG) and "s8 wgmma" in r.reason, r.line()
    assert p.out_dtype == ("f32" if isinstance(case, tuple) else "i8")
    text = open(ptx).read()
    if p.out_dtype == "i8":
        # the requantize rounds by an add of 1.5 * 2^23 (program_math.quantize_chains): no
        # quarter-rate cvt.rni / cvt.rzi
        assert "0f4B400000" in text and "cvt.rni" not in text and "cvt.rzi" not in text
    # descriptors and scale-d alone: PTX takes no imm-scale or transpose operands on integer wgmma
    mma = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k32\.s32\.s8\.s8 \{[^}]*\}, %rd\d+, %rd\d+, p;",
                     text)
    assert set(mma) == {str(s.block_n)} and text.count("wgmma.mma_async") == len(mma)
    assert "k16.f32" not in text and "k8.f32.tf32" not in text
    if p.out_dtype == "i8":
        assert "st.shared.v2.b8" in text            # pairs of adjacent i8 channels staged per thread
    if PTXAS is None:
        pytest.skip("no ptxas (pip install nvidia-cuda-nvcc)")
    out = subprocess.run([PTXAS, "-arch=sm_90a", "-v", ptx, "-o", str(tmp_path / "k.cubin")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", out.stderr)
    assert spills and all(a == b == "0" for a, b in spills), out.stderr


def test_int8_stream_k_candidate_sums_partials_in_i32(tmp_path):
    """convc-tune's int8 candidates include stream-K tiles; their partial sums travel through
    the scratch buffer as i32 (st/ld.global.v4.s32, integer adds), and ptxas assembles them."""
    layer = dataclasses.replace(REQUANT_3X3, N=8, H=14, W=14, C=256, F=256)
    _, res = compile_layer(tmp_path, layer, target="sm_90a", tuning_cache="none")
    cands = candidate_schedules(res.reports[0].problem, T)
    index = next(i for i, c in enumerate(cands) if c.kernel == Kernel.SM90_WS_STREAMK)
    _, res = compile_layer(tmp_path, layer, target="sm_90a", dump_dir=str(tmp_path / "d"), tuning_cache="none",
                           candidate=index)
    assert res.reports[0].schedule.kernel == Kernel.SM90_WS_STREAMK
    (ptx,) = glob.glob(str(tmp_path / "d" / "binaries" / "*.ptx"))
    text = open(ptx).read()
    assert "st.global.v4.s32" in text and "ld.global.cg.v4.s32" in text
    assert "ld.global.cg.v4.f32" not in text
    if PTXAS is None:
        pytest.skip("no ptxas (pip install nvidia-cuda-nvcc)")
    out = subprocess.run([PTXAS, "-arch=sm_90a", ptx, "-o", str(tmp_path / "k.cubin")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
