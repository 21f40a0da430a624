"""Compile-only checks for the GPU targets (no GPU here): every suite layer takes the convc
path for sm_90a and gfx942 (on gfx942 all but the C = 3 stem on the LDS-direct MFMA kernel),
and the generated code has the instructions we intend."""

import re
import glob
import os
import shutil
import subprocess

import pytest

from conftest import compile_layer
from convc.tools.layers import load_suite

SUITE = load_suite()


def _dump_text(d, pattern):
    return "".join(open(f).read() for f in glob.glob(os.path.join(d, pattern)))


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
@pytest.mark.parametrize("layer", SUITE, ids=[L.name for L in SUITE])
def test_suite_layer_compiles_on_convc_path(tmp_path, target, layer):
    _, res = compile_layer(tmp_path, layer, target=target)
    assert [r.path for r in res.reports] == ["convc"], [r.line() for r in res.reports]
    if target == "gfx942":
        want = "amd_lds_mfma" if layer.C % 2 == 0 else "portable_igemm"
        assert res.reports[0].schedule.kernel == want, res.reports[0].line()
    assert res.timings["total"] < 30


def test_sm90a_ptx(tmp_path):
    tma = next(L for L in SUITE if L.name == "r50_l2_3x3_128")
    _, res = compile_layer(tmp_path, tma, target="sm_90a", dump_dir=str(tmp_path / "d"))
    sched = res.reports[0].schedule
    assert sched.kernel in ("sm90_tma_wgmma", "sm90_ws_cooperative", "sm90_ws_pingpong")
    ptx = _dump_text(tmp_path / "d" / "binaries", "*.ptx")
    assert ".target sm_90a" in ptx and ".version 8.6" in ptx      # +ptx86: relaxed cluster arrivals
    assert "cp.async.bulk.tensor.4d.shared::cluster.global.im2col" in ptx
    n = sched.block_m if getattr(sched.config, "swap_ab", False) else sched.block_n      # swapped: pixels on the wgmma's N
    assert f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16" in ptx
    if getattr(sched.config, "swap_ab", False):
        assert "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx
    assert "mbarrier.try_wait.parity" in ptx
    if sched.kernel.startswith("sm90_ws"):
        assert re.search(r"setmaxnreg.dec.sync.aligned.u32\s+40;", ptx)
        assert re.search(r"setmaxnreg.inc.sync.aligned.u32\s+232;", ptx)
        assert "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group" in ptx
    import dataclasses
    c24 = dataclasses.replace(next(L for L in SUITE if L.name == "c24_1x1_to_144"), name="c24_3x3",
                              R=3, S=3, pad=[1, 1, 1, 1])    # 24 channels over 9 taps: gathered
    _, res = compile_layer(tmp_path, c24, target="sm_90a", dump_dir=str(tmp_path / "g"))
    assert res.reports[0].schedule.kernel == "sm90_gather_wgmma"
    ptx = _dump_text(tmp_path / "g" / "binaries", "*.ptx")
    assert "fence.proxy.async.shared::cta" in ptx and "st.shared.v4" in ptx
    assert ".minnctapersm 2" in ptx                 # two CTAs per SM: gather overlaps wgmma
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in ptx
    # C = 96: im2col TMA with 32-channel K steps (64-byte rows): two k16 wgmmas per stage
    c96 = next(L for L in SUITE if L.name == "s2_5x5_96")
    _, res = compile_layer(tmp_path, c96, target="sm_90a", dump_dir=str(tmp_path / "n"))
    sched = res.reports[0].schedule
    assert (sched.kernel, sched.block_k) == ("sm90_ws_streamk", 32)
    ptx = _dump_text(tmp_path / "n" / "binaries", "*.ptx")
    assert "cp.async.bulk.tensor.4d.shared::cluster.global.im2col" in ptx
    assert len(re.findall(r"wgmma.mma_async.sync.aligned.m64n128k16", ptx)) == 4   # peeled + loop
    stem = next(L for L in SUITE if L.name == "r50_conv1_7x7s2")
    _, res = compile_layer(tmp_path, stem, target="sm_90a", dump_dir=str(tmp_path / "s"))
    assert res.reports[0].schedule.kernel == "sm90_rows_wgmma"
    ptx = _dump_text(tmp_path / "s" / "binaries", "*.ptx")
    # the 7 input rows of a tile in one [rows, groups, group] box of the 4-D input view
    assert len(re.findall(r"cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes", ptx)) == 1
    assert "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group" in ptx
    # register-A wgmma: the A operand is a brace list of 4 registers, not a descriptor
    assert re.search(r"wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 \{[^}]+\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}", ptx)
    assert ".minnctapersm 1" in ptx                 # lets ptxas honour setmaxnreg
    assert re.search(r"setmaxnreg.inc.sync.aligned.u32\s+232;", ptx)


def test_portable_ptx_on_sm100a(tmp_path):
    """C = 40 over a 3x3 filter (no TMA K row) stays on the portable kernel on sm_100a, with
    the reason; its loads are 16-byte vectors."""
    import dataclasses
    layer = dataclasses.replace(next(L for L in SUITE if L.name == "r50_l3_3x3_256"), name="c40_3x3", C=40)
    _, res = compile_layer(tmp_path, layer, target="sm_100a", dump_dir=str(tmp_path / "p"))
    assert res.reports[0].schedule.kernel == "portable_igemm"
    assert "tcgen05 kernel declined" in res.reports[0].reason
    ptx = _dump_text(tmp_path / "p" / "binaries", "*.ptx")
    assert "ld.global.nc.v4.b32" in ptx and "bar.sync" in ptx and "fma.rn.f32" in ptx
    assert "st.shared" in ptx and "ld.shared" in ptx


def test_sm100a_compiles(tmp_path):
    layer = next(L for L in SUITE if L.name == "r50_l2_3x3_128")
    _, res = compile_layer(tmp_path, layer, target="sm_100a", dump_dir=str(tmp_path / "d"))
    assert res.reports[0].path == "convc" and res.reports[0].schedule.kernel == "sm100_ws"
    ptx = _dump_text(tmp_path / "d" / "binaries", "*.ptx")
    assert ".target sm_100a" in ptx and "tcgen05.mma.cta_group::1.kind::f16" in ptx


@pytest.mark.parametrize("target", ["gfx942", "gfx950"])
def test_amd_assembly(tmp_path, target):
    """The bf16 UNet layer on the LDS-direct MFMA kernel: direct-to-LDS buffer loads (dword on
    gfx942, dwordx4 on gfx950), bf16 MFMAs, the ring's vmcnt waits, no scratch."""
    from convc.tools.amd_table import rocmasm_resources
    layer = next(L for L in SUITE if L.name == "unet_3x3_320_64x64_bf16")
    _, res = compile_layer(tmp_path, layer, target=target, dump_dir=str(tmp_path / "d"))
    assert res.reports[0].path == "convc" and res.reports[0].schedule.kernel == "amd_lds_mfma"
    asm = _dump_text(tmp_path / "d" / "intermediates", "*.rocmasm")
    assert f"-mcpu={target}" in asm
    lds_load = "buffer_load_dword " if target == "gfx942" else "buffer_load_dwordx4 "
    assert any(lds_load in line and line.rstrip().endswith(" lds") for line in asm.splitlines())
    mfma = "v_mfma_f32_16x16x16_bf16" if target == "gfx942" else "v_mfma_f32_16x16x32_bf16"
    r = rocmasm_resources(asm)
    assert r["mfma_ops"] == [mfma] and r["mfma"] > 0 and r["lds_dma_loads"] > 0
    assert "s_barrier" in asm and r["vmcnt_waits"]
    assert r["private_segment_fixed_size"] == 0 and r["vgpr_spill_count"] == 0 and r["sgpr_spill_count"] == 0
    assert r["group_segment_fixed_size"] == res.reports[0].schedule.smem_bytes


@pytest.mark.parametrize("target", ["gfx942", "gfx950"])
def test_amd_stem_falls_back_with_reason(tmp_path, target):
    """C = 3 is not a multiple of the per-lane direct-to-LDS width: portable kernel, reported."""
    layer = next(L for L in SUITE if L.name == "r50_conv1_7x7s2")
    _, res = compile_layer(tmp_path, layer, target=target)
    r = res.reports[0]
    assert r.path == "convc" and r.schedule.kernel == "portable_igemm"
    assert "LDS-direct MFMA path declined" in r.reason and "C=3 is not a multiple" in r.reason


TF32 = load_suite(os.path.join(os.path.dirname(__file__), "..", "inputs", "tf32_suite.json"))


@pytest.mark.parametrize("layer", TF32, ids=[L.name for L in TF32])
def test_tf32_layers_compile_to_tf32_wgmma(tmp_path, layer):
    """f32 convs (the tf32 default) run on the persistent kernels with k8 TF32 wgmmas over f32
    im2col TMA tiles; ptxas (where installed) assembles them without spills."""
    _, res = compile_layer(tmp_path, layer, target="sm_90a", dump_dir=str(tmp_path / "d"))
    assert [r.path for r in res.reports] == ["convc"], [r.line() for r in res.reports]
    assert res.reports[0].schedule.kernel in ("sm90_ws_cooperative", "sm90_ws_pingpong")
    ptx = _dump_text(tmp_path / "d" / "binaries", "*.ptx")
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k8\.f32\.tf32\.tf32", ptx)
    assert "k16" not in ptx and "cp.async.bulk.tensor.4d.shared::cluster.global.im2col" in ptx
    if shutil.which("ptxas"):
        for f in glob.glob(str(tmp_path / "d" / "binaries" / "*.ptx")):
            r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", "-o", os.devnull, f], capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
            assert "0 bytes spill stores, 0 bytes spill loads" in r.stderr, r.stderr
