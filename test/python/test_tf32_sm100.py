"""f32 convs on sm_100a without a B200: with the default --precision tf32 the planner takes the
tcgen05 kernel with kind::tf32 MMAs (f32 operands read as TF32, f32 accumulators in tensor
memory, 8 values = 32 bytes of K per instruction as for the other kinds; the f32 RGB stem reads
its channels zero-padded to 16 as for sm_90a's persistent TF32 kernel), whose instruction
descriptor says operand format TF32 = 2 (PTX ISA, CUTLASS's UMMA::InstrDescriptor), and the
kernels assemble with ptxas -arch=sm_100a (no spills, no stack). --precision fp32 keeps the
exact portable kernel. Compile-only: numerics need a Blackwell, none was available."""

import dataclasses
import glob

import pytest

from conftest import assemble_sm100a, compile_layer, needs_ptxas_sm100a
from convc.passes.lower.nvidia import tcgen05 as tc
from convc.passes.plan.plan_schedule import plan_schedule_for
from convc.passes.schedule import Kernel
from convc.passes.target import get_target
from convc.tools.layers import Layer

T = get_target("sm_100a")
LAYERS = [
    Layer("tf32_3x3_64_128", 2, 14, 14, 64, 128, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f32", "bias_relu"),
    Layer("tf32_1x1_128_256_res", 2, 14, 14, 128, 256, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "f32", "bias_residual_relu"),
    Layer("tf32_rgb_stem", 2, 32, 32, 3, 64, 7, 7, (2, 2), (1, 1), (3, 3, 3, 3), "f32", "bias_relu"),
]


def test_kind_tf32_instruction_descriptor():
    d = tc.instr_descriptor(128, 64, "f32", "f32")
    assert d == (1 << 4) | (2 << 7) | (2 << 10) | (8 << 17) | (8 << 24)
    f = tc.decode_instr_descriptor(d, kind="tf32")
    assert (f.m, f.n, f.a_dtype, f.b_dtype, f.d_dtype) == (128, 64, "f32", "f32", "f32")
    assert tc.KIND["f32"] == "tf32"
    with pytest.raises(ValueError, match="kind::tf32 sums in f32"):
        tc.instr_descriptor(128, 64, "f32", "f16")


def test_f32_convs_take_the_tcgen05_kernel():
    for L, bk in ((LAYERS[0], 32), (LAYERS[1], 32)):
        s = plan_schedule_for(L.expected_problem(), T)
        assert s.kernel == Kernel.SM100_WS and "kind::tf32, f32 accumulators" in s.reason, s.reason
        assert s.block_k == bk and s.block_m == 128
    p = LAYERS[0].expected_problem()
    exact = plan_schedule_for(p, T, precision="fp32")
    assert exact.kernel == Kernel.PORTABLE_IGEMM and "--precision fp32" in exact.reason
    odd = plan_schedule_for(dataclasses.replace(p, C=12), T)      # 48-byte rows over 9 taps: no TMA K row
    assert odd.kernel == Kernel.PORTABLE_IGEMM and "tcgen05 kernel declined: C=12" in odd.reason, odd.reason


@needs_ptxas_sm100a
@pytest.mark.parametrize("layer", LAYERS, ids=[L.name for L in LAYERS])
def test_tf32_kernels_assemble_for_sm100a(tmp_path, layer):
    _, res = compile_layer(tmp_path, layer, target="sm_100a", dump_dir=str(tmp_path / "d"), tuning_cache="none")
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.schedule.kernel == Kernel.SM100_WS, conv.line()
    assert conv.problem.C == (16 if layer.C == 3 else layer.C)      # the RGB stem read on 16 padded channels
    (ptx_path,) = glob.glob(str(tmp_path / "d" / "binaries" / "*.ptx"))
    ptx = open(ptx_path).read()
    assert "tcgen05.mma.cta_group::1.kind::tf32" in ptx and "kind::f16" not in ptx
    report, _ = assemble_sm100a(tmp_path, ptx_path)
    assert "0 bytes spill stores" in report and "0 bytes stack frame" in report, report
