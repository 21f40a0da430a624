"""int8 convs on gfx942 / gfx950 without an Instinct: the LDS-direct MFMA kernel with
v_mfma_i32_16x16x32_i8 (gfx942) / v_mfma_i32_16x16x64_i8 (gfx950): twice the K of the 16-bit
MFMAs, the same 8 / 16 bytes per lane, so the loader keeps its byte geometry with twice the
elements per lane. Checked here: the planner's routing and reasons, the loader's numpy model
(test_amd_loader_model.py) on random i8 shapes of each sub-path, and the assembly of a
requantizing 3x3, a 1x1 with an i8 residual and an i32-output conv (the integer MFMA, no
spills, no scratch). Compile-only: the kernels' numerics were never run on AMD hardware (the
portable kernel's i32 sums are checked on CPU in test_int8.py)."""

import dataclasses
import glob
import zlib

import numpy as np
import pytest

from conftest import compile_layer
from test_amd_loader_model import check_problem, random_problem
from convc.passes.lower.amd.primitives import mfma_k
from convc.passes.plan.kernels.amd_lds_mfma import plan_amd_lds_mfma
from convc.passes.plan.plan_schedule import plan_schedule_for
from convc.passes.schedule import Kernel
from convc.passes.target import get_target
from convc.tools.layers import Layer

AMD = ("gfx942", "gfx950")
LAYERS = [
    Layer("i8_3x3_64_128", 2, 16, 16, 64, 128, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "i8", "bias_relu"),
    Layer("i8_1x1_128_256_res", 2, 14, 14, 128, 256, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "i8", "bias_residual_relu"),
    Layer("i8_3x3_128_64_i32_out", 1, 8, 8, 128, 64, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "i8", "none"),
]


@pytest.mark.parametrize("arch", AMD)
def test_int8_takes_the_mfma_kernel(arch):
    t = get_target(arch)
    assert mfma_k(arch, "i8") == 2 * mfma_k(arch, "f16")
    for L in LAYERS:
        s = plan_schedule_for(L.expected_problem(), t)
        assert s.kernel == Kernel.AMD_LDS_MFMA, s.reason
        assert f"MFMA 16x16x{mfma_k(arch, 'i8')} (i8, i32 sums)" in s.reason and s.block_k == 2 * mfma_k(arch, "i8")
    # C not a multiple of the lane's i8 width: portable, with the reason
    odd = dataclasses.replace(LAYERS[0].expected_problem(), C=t.lds_dma_bytes * 3 + 1)
    s = plan_schedule_for(odd, t)
    assert s.kernel == Kernel.PORTABLE_IGEMM and "LDS-direct MFMA path declined" in s.reason, s.reason


@pytest.mark.parametrize("arch", AMD)
@pytest.mark.parametrize("subpath", ["pointwise", "substrip", "per_lane"])
def test_int8_loader_matches_im2col(arch, subpath):
    """The loader and the MFMA waves' LDS reads, played in numpy, deliver exactly the i8 im2col
    and filter tiles (zeros past M / K / F) on random shapes of each sub-path."""
    rng = np.random.default_rng(zlib.crc32(f"i8/{arch}/{subpath}".encode()))
    t = get_target(arch)
    for i in range(5):
        p = random_problem(rng, arch, subpath, "i8")
        s = plan_amd_lds_mfma(p, t, block=64 if i % 2 else 128)
        assert check_problem(p, s, seed=i) == subpath, p


@pytest.mark.parametrize("arch", AMD)
@pytest.mark.parametrize("layer", LAYERS, ids=[L.name for L in LAYERS])
def test_int8_amd_assembly(tmp_path, arch, layer):
    from convc.tools.amd_table import rocmasm_resources
    _, res = compile_layer(tmp_path, layer, target=arch, dump_dir=str(tmp_path / "d"), tuning_cache="none")
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.schedule.kernel == Kernel.AMD_LDS_MFMA, conv.line()
    asm = "".join(open(f).read() for f in glob.glob(str(tmp_path / "d" / "intermediates" / "*.rocmasm")))
    r = rocmasm_resources(asm)
    want = "v_mfma_i32_16x16x32_i8" if arch == "gfx942" else "v_mfma_i32_16x16x64_i8"
    assert r["mfma_ops"] == [want] and r["mfma"] > 0 and r["lds_dma_loads"] > 0
    assert r["private_segment_fixed_size"] == 0 and r["vgpr_spill_count"] == 0 and r["sgpr_spill_count"] == 0
