"""OCP fp8 convs on AMD without an Instinct: gfx950 computes on OCP e4m3 / e5m2, so its
LDS-direct MFMA kernel takes them with v_mfma_f32_16x16x32_fp8_fp8 / _bf8_bf8 (f32 sums, 8 bytes
of K per lane; the ring moves bytes, the MFMA waves reinterpret them), its loading lanes
narrowed to 4-byte direct-to-LDS loads (an 8-byte operand granule, and gfx950 has no 8-byte
load). gfx942's fp8 arithmetic takes the FNUZ encodings only, so there an fp8 conv is an error
naming it (IREE 3.13's ROCm code generation refuses OCP fp8 on gfx942 as well). Checked here:
routing and reasons, the loader's numpy model on random fp8 shapes of each sub-path, the
assembly (the fp8 MFMA, no spills, no scratch). Compile-only: never run on AMD hardware."""

import glob
import zlib

import numpy as np
import pytest

from conftest import compile_layer
from test_amd_loader_model import check_problem, random_problem
from convc.compiler.errors import ConvcError
from convc.passes.lower.amd.lds_loader import lane_elements
from convc.passes.lower.amd.primitives import mfma_k
from convc.passes.plan.kernels.amd_lds_mfma import plan_amd_lds_mfma
from convc.passes.plan.plan_schedule import plan_schedule_for
from convc.passes.schedule import Kernel
from convc.passes.target import get_target
from convc.tools.layers import Layer

GFX950 = get_target("gfx950")
LAYERS = [
    Layer("e4m3_3x3_128_128", 2, 16, 16, 128, 128, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f8E4M3FN", "none"),
    Layer("e5m2_1x1_256_512", 2, 16, 16, 256, 512, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "f8E5M2", "none"),
    Layer("e4m3_5x5_s2_72_96", 1, 19, 21, 72, 96, 5, 5, (2, 2), (1, 1), (2, 1, 2, 2), "f8E4M3FN", "none"),
]


def test_fp8_takes_the_mfma_kernel_on_gfx950():
    assert mfma_k("gfx950", "f8E4M3FN") == 32 and lane_elements(GFX950, "f8E5M2") == 4
    assert lane_elements(GFX950, "f16") == 8 and lane_elements(GFX950, "i8") == 16      # as before
    for L in LAYERS:
        s = plan_schedule_for(L.expected_problem(), GFX950)
        assert s.kernel == Kernel.AMD_LDS_MFMA, s.reason
        assert f"MFMA 16x16x32 ({L.dtype}, f32 sums)" in s.reason and "4 B/lane" in s.reason and s.block_k == 64


def test_fp8_on_gfx942_is_an_error_naming_the_conv(tmp_path):
    s = plan_schedule_for(LAYERS[0].expected_problem(), get_target("gfx942"))
    assert s.kernel == Kernel.PORTABLE_IGEMM and "FNUZ" in s.reason, s.reason
    with pytest.raises(ConvcError, match=r"main_dispatch_0: .*C=128.* fp8 conv not supported on gfx942: .*FNUZ"):
        compile_layer(tmp_path, LAYERS[0], target="gfx942", tuning_cache="none")


@pytest.mark.parametrize("dtype", ["f8E4M3FN", "f8E5M2"])
@pytest.mark.parametrize("subpath", ["pointwise", "substrip", "per_lane"])
def test_fp8_loader_matches_im2col(dtype, subpath):
    """The loader and the MFMA waves' LDS reads, played in numpy, deliver exactly the im2col
    and filter tiles (zeros past M / K / F) on random fp8 shapes of each sub-path."""
    rng = np.random.default_rng(zlib.crc32(f"{dtype}/{subpath}".encode()))
    for i in range(4):
        p = random_problem(rng, "gfx950", subpath, dtype)
        s = plan_amd_lds_mfma(p, GFX950, block=64 if i % 2 else 128)
        assert check_problem(p, s, seed=i) == subpath, p


@pytest.mark.parametrize("layer", LAYERS, ids=[L.name for L in LAYERS])
def test_fp8_gfx950_assembly(tmp_path, layer):
    from convc.tools.amd_table import rocmasm_resources
    _, res = compile_layer(tmp_path, layer, target="gfx950", dump_dir=str(tmp_path / "d"), tuning_cache="none")
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.schedule.kernel == Kernel.AMD_LDS_MFMA, conv.line()
    asm = "".join(open(f).read() for f in glob.glob(str(tmp_path / "d" / "intermediates" / "*.rocmasm")))
    r = rocmasm_resources(asm)
    want = "v_mfma_f32_16x16x32_fp8_fp8" if layer.dtype == "f8E4M3FN" else "v_mfma_f32_16x16x32_bf8_bf8"
    assert r["mfma_ops"] == [want] and r["mfma"] > 0 and r["lds_dma_loads"] > 0
    assert r["private_segment_fixed_size"] == 0 and r["vgpr_spill_count"] == 0 and r["sgpr_spill_count"] == 0
