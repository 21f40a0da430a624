"""sm_100a without a B200: the planner's choices, and every suite layer's kernel (plus seeded
random shapes) assembled by ptxas -arch=sm_100a: no spills, no stack, the tcgen05 instructions
in the PTX and in the SASS (UTCHMMA, UTCBAR, UTCATOMSWS, LDTM), and no tensor-memory load
register read before its wait. ptxas comes from the `nvidia-cuda-nvcc` wheel (the `test`
extra); without one that knows sm_100a the assembly tests skip and say so."""

import dataclasses
import os
import re

import pytest

from convc.passes.plan.plan_schedule import plan_schedule_for
from convc.passes.plan.kernels.sm100_ws import PAIR_GAIN, model_us, plan_sm100_ws
from convc.passes.target import get_target
from convc.tools.layers import Layer, load_suite
from convc.tools.sm100_table import find_cuda_tool, layer_entry, ptxas_supports_sm100a, random_layers, roofline

T = get_target("sm_100a")
SUITE = load_suite()
PTXAS = find_cuda_tool("ptxas")
NVDISASM = find_cuda_tool("nvdisasm")
HAVE_PTXAS = PTXAS is not None and ptxas_supports_sm100a(PTXAS)
needs_ptxas = pytest.mark.skipif(not HAVE_PTXAS, reason="no ptxas that knows sm_100a (pip install nvidia-cuda-nvcc)")


def _layer(name):
    return next(L for L in SUITE if L.name == name)


def test_planner_takes_the_tcgen05_kernel_where_it_applies():
    """Every f16/bf16 suite layer the im2col TMA reads is planned on sm100_ws; the RGB stem
    (C = 3) falls back to the portable kernel with the reason; f32 convs take kind::tf32, or
    the portable kernel under --precision fp32."""
    for L in SUITE:
        s = plan_schedule_for(L.expected_problem(), T)
        if L.C == 3:
            assert s.kernel == "portable_igemm" and "tcgen05 kernel declined (C=3" in s.reason, s.reason
            continue
        assert s.kernel == "sm100_ws", (L.name, s.reason)
        assert (s.block_m, s.threads) == (128, 192) and s.block_n % 32 == 0 and s.block_n <= 256
        assert s.grid[0] <= T.num_sms and s.stages >= 2 and s.smem_bytes <= T.smem_bytes
        # CTA pairs where the B200 model gives them >= 15% and the pair tiles fill the pairs twice
        one = plan_sm100_ws(L.expected_problem(), T)
        if s.config.cluster_size == 2:
            assert "chosen over one SM per tile" in s.reason and s.grid[0] % 2 == 0
            assert model_us(L.expected_problem(), T, s) < PAIR_GAIN * model_us(L.expected_problem(), T, one)
        else:
            assert s == one
    pairs = [L.name for L in SUITE if L.C != 3 and plan_schedule_for(L.expected_problem(), T).config.cluster_size == 2]
    assert "vae_3x3_256_128x128" in pairs and "r50_l4_3x3_512" not in pairs     # large vs few tiles
    f32 = dataclasses.replace(_layer("r50_l2_3x3_128").expected_problem(), dtype="f32")
    s = plan_schedule_for(f32, T)                      # TF32 (kind::tf32); exact f32 math portable
    assert s.kernel == "sm100_ws" and "kind::tf32" in s.reason, s.reason
    s = plan_schedule_for(f32, T, precision="fp32")
    assert s.kernel == "portable_igemm" and "--precision fp32" in s.reason


def test_declines_name_the_reason():
    p = _layer("r50_l2_3x3_128").expected_problem()
    with pytest.raises(Exception, match="multiple of 32"):
        plan_sm100_ws(p, T, block_n=80)
    odd = dataclasses.replace(p, F=100)
    s = plan_schedule_for(odd, T)
    assert s.kernel == "portable_igemm" and "F=100 is not a multiple of 8" in s.reason
    assert get_target("sm_90a").has_tcgen05 is False


def test_roofline_numbers():
    """FLOPs / 2.25 PFLOP/s against ideal bytes / 8 TB/s: the 3x3 ResNet layers are
    compute-bound on a B200, the stem and the residual 1x1 layers memory-bound."""
    r = roofline(_layer("r50_l2_3x3_128"))
    assert r["bound"] == "compute" and r["roofline_us"] == pytest.approx(r["flops"] / 2.25e15 * 1e6, rel=1e-3)
    assert roofline(_layer("r50_l1_1x1_64_256"))["bound"] == "memory"


# outputs of 3 and 13 channels: convc-pad-channels makes them 8- and 16-channel convs the
# tcgen05 kernel takes (sm_100a is compile-only: these must be right by construction)
NARROW = [Layer("narrow_rgb_out_f3", 1, 66, 66, 128, 3, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f16", "bias"),
          Layer("narrow_f13_bf16", 2, 30, 30, 64, 13, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "bf16", "bias_relu")]
CASES = SUITE + random_layers(6) + NARROW


@needs_ptxas
@pytest.mark.parametrize("layer", CASES, ids=[L.name for L in CASES])
def test_kernel_assembles_without_spills(tmp_path, layer):
    e = layer_entry(layer, str(tmp_path), PTXAS, NVDISASM)
    assert "error" not in e, e.get("error")
    assert e["spill_stores"] == e["spill_loads"] == e["stack"] == 0, e
    if layer.C == 3:
        assert e["kernel"] == "portable_igemm"
        return
    assert e["kernel"] == "sm100_ws", e["reason"]
    assert {"tcgen05.alloc", "tcgen05.relinquish_alloc_permit", "tcgen05.mma", "tcgen05.commit", "tcgen05.ld",
            "tcgen05.wait", "tcgen05.fence", "tcgen05.dealloc"} <= set(e["tcgen05_ptx"])
    assert e["tmem_loads_read_early"] == 0
    assert e["tmem_columns"] in (64, 128, 256, 512) and e["named_barriers"] == (2 if e["cluster"] == 2 else 3)
    if NVDISASM:
        sass = e["sass_tcgen05"]
        assert sass.get("UTCHMMA", 0) >= 1 and sass.get("UTCBAR", 0) >= 2 and sass.get("UTCATOMSWS", 0) >= 2
        assert sass.get("LDTM", 0) >= 1


PAIR_CASES = [L for L in SUITE if L.name in ("r50_l2_3x3_128", "r50_l3_1x1_256_1024", "vae_3x3_512_64x64",
                                               "unet_3x3_320_64x64_bf16", "s2_5x5_96", "valid_3x3_64_odd")]


def test_both_variants_are_offered():
    """The default (1-SM or, for large problems, the CTA pair) is followed by the other variant
    as tuning candidate 1; a pair has an even grid of at most 148 CTAs and half of the filter
    rows per CTA."""
    from convc.passes.plan.plan_schedule import candidate_schedules
    for L in SUITE:
        if L.C == 3:
            continue
        cands = candidate_schedules(L.expected_problem(), T)
        assert {c.config.cluster_size for c in cands[:2]} == {1, 2} and all(c.kernel == "sm100_ws" for c in cands[:2]), L.name
        s = next(c for c in cands if c.config.cluster_size == 2)
        assert s.grid[0] % 2 == 0 and s.grid[0] <= T.num_sms and "cta_group::2" in s.reason
        assert s.block_n // 2 % 8 == 0 and s.smem_bytes <= T.smem_bytes


@needs_ptxas
@pytest.mark.parametrize("layer", PAIR_CASES, ids=[L.name for L in PAIR_CASES])
def test_pair_kernel_assembles_without_spills(tmp_path, layer):
    default = plan_schedule_for(layer.expected_problem(), T)
    e = layer_entry(layer, str(tmp_path), PTXAS, NVDISASM, candidate=None if default.config.cluster_size == 2 else 1)
    assert "error" not in e, e.get("error")
    assert e["cluster"] == 2 and e["spill_stores"] == e["spill_loads"] == e["stack"] == 0, e
    assert e["tmem_loads_read_early"] == 0
    if NVDISASM:
        assert e["sass_tcgen05"].get("UTCHMMA", 0) >= 1 and e["sass_tcgen05"].get("LDTM", 0) >= 1


def test_committed_table_covers_the_suite():
    """results/sm100/ptxas_table.json lists every suite layer, none spilling."""
    import json
    path = os.path.join(os.path.dirname(__file__), "..", "..", "results", "sm100", "ptxas_table.json")
    with open(path) as f:
        table = json.load(f)
    rows = {e["layer"]: e for e in table["layers"] if "candidate" not in e}
    assert {L.name for L in SUITE} <= set(rows)
    for e in table["layers"]:
        assert "error" not in e and e["spill_stores"] == e["spill_loads"] == 0
        assert re.match(r"\d+x\d+x\d+", e["tile"]) and e["roofline_us"] > 0
