"""fp8 convs on sm_100a without a B200: the planner takes the tcgen05 kernel with
kind::f8f6f4 MMAs (e4m3 or e5m2 operands, f32 accumulators in tensor memory, 32 bytes of K per
instruction as for kind::i8 and kind::f16), its instruction descriptor encodes what the PTX ISA
and CUTLASS's UMMA::InstrDescriptor say (D format f32 = 1; operand format e4m3 = 0, e5m2 = 1),
and its kernels assemble with ptxas -arch=sm_100a (no spills, no stack, the quarter-precision
tensor-core MMA in the SASS). Numerics need a Blackwell: none was available, so this path is
compile-only (the portable kernel's fp8 sums are checked on CPU in test_fp8.py)."""

import dataclasses
import glob

import pytest

from conftest import assemble_sm100a, compile_layer, needs_ptxas_sm100a
from convc.compiler.errors import ConvcError
from convc.passes.lower.nvidia import tcgen05 as tc
from convc.passes.plan.plan_schedule import plan_schedule_for
from convc.passes.schedule import Kernel
from convc.passes.target import get_target
from convc.tools.layers import Layer

T = get_target("sm_100a")
LAYERS = [
    Layer("e4m3_3x3_128_128", 2, 16, 16, 128, 128, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f8E4M3FN", "none"),
    Layer("e5m2_1x1_256_512", 2, 16, 16, 256, 512, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "f8E5M2", "none"),
    Layer("e4m3_3x3_64_192", 2, 16, 16, 64, 192, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f8E4M3FN", "none"),
]


def test_kind_f8f6f4_instruction_descriptor():
    e4m3 = tc.instr_descriptor(128, 64, "f8E4M3FN", "f32")
    assert e4m3 == (1 << 4) | (8 << 17) | (8 << 24)                 # the f16 operand format's bits
    e5m2 = tc.instr_descriptor(128, 64, "f8E5M2", "f32")
    assert e5m2 == (1 << 4) | (1 << 7) | (1 << 10) | (8 << 17) | (8 << 24)
    f = tc.decode_instr_descriptor(e5m2, kind="f8f6f4")
    assert (f.m, f.n, f.a_dtype, f.b_dtype, f.d_dtype) == (128, 64, "f8E5M2", "f8E5M2", "f32")
    assert f.a_k_major and f.b_k_major and not f.negate and not f.sparse
    assert tc.decode_instr_descriptor(e5m2).a_dtype == "bf16"       # the same bits under kind::f16
    assert tc.KIND["f8E4M3FN"] == tc.KIND["f8E5M2"] == "f8f6f4"
    with pytest.raises(ValueError, match="kind::f8f6f4 sums in f32"):
        tc.instr_descriptor(128, 64, "f8E4M3FN", "i32")


def test_fp8_convs_take_the_tcgen05_kernel():
    for L, bk in ((LAYERS[0], 128), (LAYERS[1], 128), (LAYERS[2], 64)):
        s = plan_schedule_for(L.expected_problem(), T)
        assert s.kernel == Kernel.SM100_WS and "kind::f8f6f4, f32 accumulators" in s.reason, s.reason
        assert s.block_k == bk and s.block_m == 128 and s.block_n % 32 == 0


def test_fp8_declines_on_sm100a_name_the_conv(tmp_path):
    """A conv the tcgen05 kernel cannot read (16-byte channel rows over 9 taps) has no fallback
    for CUDA (IREE 3.13 cannot convert fp8 there): an error naming it and the reason."""
    odd = dataclasses.replace(LAYERS[0], name="e4m3_c16", C=16)
    s = plan_schedule_for(odd.expected_problem(), T)
    assert s.kernel == Kernel.PORTABLE_IGEMM and "tcgen05 kernel declined: C=16" in s.reason, s.reason
    with pytest.raises(ConvcError, match=r"main_dispatch_0: .*C=16.* fp8 conv not supported on sm_100a"):
        compile_layer(tmp_path, odd, target="sm_100a", tuning_cache="none")


@needs_ptxas_sm100a
@pytest.mark.parametrize("layer", LAYERS, ids=[L.name for L in LAYERS])
def test_fp8_kernels_assemble_for_sm100a(tmp_path, layer):
    _, res = compile_layer(tmp_path, layer, target="sm_100a", dump_dir=str(tmp_path / "d"), tuning_cache="none")
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.schedule.kernel == Kernel.SM100_WS, conv.line()
    (ptx_path,) = glob.glob(str(tmp_path / "d" / "binaries" / "*.ptx"))
    ptx = open(ptx_path).read()
    assert "tcgen05.mma.cta_group::1.kind::f8f6f4" in ptx and "kind::f16" not in ptx and "kind::i8" not in ptx
    report, sass = assemble_sm100a(tmp_path, ptx_path)
    assert "0 bytes spill stores" in report and "0 bytes stack frame" in report, report
    if sass is not None:
        assert "UTCQMMA" in sass and "UTCHMMA" not in sass and "UTCIMMA" not in sass
