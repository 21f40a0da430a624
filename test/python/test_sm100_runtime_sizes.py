"""Runtime sizes on sm_100a without a B200: a dynamic batch and runtime image sizes take the
tcgen05 kernel's 1-SM tiles as sm_90a's persistent kernel takes them (one CTA per SM, the tile
count computed from the runtime sizes, the activation map's images, height and width (and
their strides) and the output map's rows written in kernel, the im2col coordinates from the
runtime Ho and Wo), for 16-bit, TF32, int8 and fp8 operands; CTA pairs, whose tile walk is
sized at compile time, are declined for them, and RGB stems (no TMA K row) stay portable with
the reason. The kernels assemble with ptxas -arch=sm_100a (test/inputs/dynamic_batch_3x3_bias_relu.mlir,
runtime_hw_3x3_bias_relu.mlir; no spills). Compile-only: numerics need a Blackwell (the
runtime-size tile walk, descriptor writes and loader coordinates are the sm_90a kernel's,
checked on H200s)."""

import dataclasses
import glob
import os

import pytest

from conftest import assemble_sm100a, needs_ptxas_sm100a
from convc.compiler.driver import CompileOptions, compile_file
from convc.passes.kernel_families import Declined
from convc.passes.plan.kernels.sm100_ws import SM100_WS
from convc.passes.plan.plan_schedule import plan_schedule_for
from convc.passes.schedule import Kernel
from convc.passes.target import get_target
from convc.tools.layers import Layer

T = get_target("sm_100a")
INPUTS = os.path.join(os.path.dirname(__file__), "..", "inputs")


def _dynamic(L: Layer):
    return dataclasses.replace(L.expected_problem(), batch_constant=0, num_constants=1)


@pytest.mark.parametrize("dtype, kind", [("f16", "f16"), ("f32", "tf32"), ("i8", "i8"), ("f8E4M3FN", "f8f6f4")])
def test_dynamic_batch_takes_one_sm_tcgen05_tiles(dtype, kind):
    epi = "none" if dtype.startswith("f8") else "bias_relu"
    p = _dynamic(Layer("dyn", 8, 14, 14, 128, 128, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), dtype, epi))
    s = plan_schedule_for(p, T)
    assert s.kernel == Kernel.SM100_WS and s.config.cluster_m == 1, s.reason
    assert s.grid == (T.num_sms, 1, 1) and f"kind::{kind}" in s.reason and "batch read at run time" in s.reason


def test_runtime_image_sizes_take_one_sm_tcgen05_tiles():
    p = dataclasses.replace(Layer("hw", 2, 64, 64, 64, 128, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f16",
                                  "bias_relu").expected_problem(), h_constant=0, w_constant=1, num_constants=2)
    s = plan_schedule_for(p, T)
    assert s.kernel == Kernel.SM100_WS and s.grid == (T.num_sms, 1, 1) and "sizes read at run time" in s.reason, s.reason


def test_dynamic_batch_declines_pairs_and_stems():
    p = _dynamic(Layer("dyn", 32, 56, 56, 256, 512, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "f16", "bias_relu"))
    pair = SM100_WS.attempt(p, T, cluster=2)
    assert isinstance(pair, Declined) and "sizes read at run time on CTA pairs" in str(pair)
    stem = _dynamic(Layer("stem", 8, 64, 64, 3, 64, 7, 7, (2, 2), (1, 1), (3, 3, 3, 3), "f16", "bias_relu"))
    s = plan_schedule_for(stem, T)
    assert s.kernel == Kernel.PORTABLE_IGEMM and "tcgen05 kernel declined: C=3" in s.reason, s.reason


@needs_ptxas_sm100a
@pytest.mark.parametrize("model, runtime", [("dynamic_batch_3x3_bias_relu.mlir", "dynamic_batch"),
                                            ("runtime_hw_3x3_bias_relu.mlir", "dynamic_spatial")])
def test_runtime_size_kernels_assemble(tmp_path, model, runtime):
    res = compile_file(os.path.join(INPUTS, model), str(tmp_path / "m.vmfb"),
                       CompileOptions(target="sm_100a", dump_dir=str(tmp_path / "d"), tuning_cache="none"))
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert getattr(conv.problem, runtime) and conv.schedule.kernel == Kernel.SM100_WS, conv.line()
    (ptx,) = glob.glob(str(tmp_path / "d" / "binaries" / "*.ptx"))
    report, _ = assemble_sm100a(tmp_path, ptx)
    assert "0 bytes spill stores" in report and "0 bytes stack frame" in report, report
