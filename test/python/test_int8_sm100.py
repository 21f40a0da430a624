"""int8 convs on sm_100a without a B200: the planner takes the tcgen05 kernel with kind::i8
MMAs (s8 x s8 -> s32 in tensor memory, 32 bytes of K per instruction as for kind::f16), its
instruction descriptor encodes what the PTX ISA and CUTLASS's UMMA::InstrDescriptor say (D
format s32 = 2, operand format s8 = 1), and the kernels of a requantizing 3x3, a 1x1 with an i8
residual and an i32-output conv assemble with ptxas -arch=sm_100a (no spills, no stack, an
integer tensor-core MMA in the SASS). Numerics need a Blackwell: none was available, so this
path is compile-only (the portable kernel's i32 sums are checked on CPU in test_int8.py)."""

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
    Layer("i8_3x3_64_128", 2, 16, 16, 64, 128, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "i8", "bias_relu"),
    Layer("i8_1x1_128_256_res", 2, 14, 14, 128, 256, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "i8", "bias_residual_relu"),
    Layer("i8_3x3_128_64_i32_out", 1, 8, 8, 128, 64, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "i8", "none"),
]


def test_kind_i8_instruction_descriptor():
    d = tc.instr_descriptor(128, 64, "i8", "i32")
    assert d == (2 << 4) | (1 << 7) | (1 << 10) | (8 << 17) | (8 << 24)
    f = tc.decode_instr_descriptor(d)
    assert (f.m, f.n, f.a_dtype, f.b_dtype, f.d_dtype) == (128, 64, "i8", "i8", "i32")
    assert f.a_k_major and f.b_k_major and not f.negate and not f.sparse
    # the same operand format bits mean bf16 with an f32 D
    assert tc.decode_instr_descriptor(tc.instr_descriptor(128, 64, "bf16")).a_dtype == "bf16"
    with pytest.raises(ValueError, match="kind::i8 sums in s32"):
        tc.instr_descriptor(128, 64, "i8", "f32")
    with pytest.raises(ValueError, match="kind::f16 sums in f32 or f16"):
        tc.instr_descriptor(128, 64, "f16", "i32")


def test_int8_convs_take_the_tcgen05_kernel():
    for L, bk in ((LAYERS[0], 64), (LAYERS[1], 128)):
        s = plan_schedule_for(L.expected_problem(), T)
        assert s.kernel == Kernel.SM100_WS and "kind::i8, i32 accumulators" in s.reason, s.reason
        assert s.block_k == bk and s.block_m == 128 and s.block_n % 32 == 0


def test_int8_declines_on_sm100a_name_the_reason():
    p = LAYERS[0].expected_problem()
    odd = dataclasses.replace(p, C=16)          # 16-byte rows over 9 taps: no TMA K row
    s = plan_schedule_for(odd, T)
    assert s.kernel == Kernel.PORTABLE_IGEMM and "tcgen05 kernel declined: C=16" in s.reason, s.reason


@needs_ptxas_sm100a
@pytest.mark.parametrize("layer", LAYERS, ids=[L.name for L in LAYERS])
def test_int8_kernels_assemble_for_sm100a(tmp_path, layer):
    _, res = compile_layer(tmp_path, layer, target="sm_100a", dump_dir=str(tmp_path / "d"), tuning_cache="none")
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.schedule.kernel == Kernel.SM100_WS, conv.line()
    (ptx_path,) = glob.glob(str(tmp_path / "d" / "binaries" / "*.ptx"))
    ptx = open(ptx_path).read()
    assert "tcgen05.mma.cta_group::1.kind::i8" in ptx and "kind::f16" not in ptx
    report, sass = assemble_sm100a(tmp_path, ptx_path)
    assert "0 bytes spill stores" in report and "0 bytes stack frame" in report, report
    if sass is not None:
        assert "UTCIMMA" in sass and "UTCHMMA" not in sass
