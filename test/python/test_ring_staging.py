"""Epilogue staged in the ring (Sm90WsConfig.epilogue_slots = 0): the shared-memory layout, what
the planner offers and refuses, and how the tuning cache tells the candidates apart."""

import dataclasses

import pytest

from convc.passes.lower.nvidia.sm90_ws import WsUnsupported, check_supported, ws_layout
from convc.passes.plan.plan_schedule import PlanError, candidate_schedules, knobs_of
from convc.passes.plan.kernels.sm90 import plan_sm90
from convc.passes.plan.kernels.sm90_ws import plan_sm90_ws
from convc.passes.target import get_target
from convc.tools.layers import load_suite

T = get_target("sm_90a")


def _problem(name):
    return next(L for L in load_suite() if L.name == name).expected_problem()


def test_ring_layout_has_no_staging_slots():
    """128x256 cooperative: each warpgroup's 64x256 f16 slice (32 KB) is a stage's filter part,
    so the allocation is 4 stages of 48 KB plus barriers (3 stages with staging slots)."""
    p = _problem("r50_l4_1x1_512_2048")
    ring = plan_sm90_ws(p, T, "sm90_ws_cooperative", 128, 256, slots=0)
    slots = plan_sm90_ws(p, T, "sm90_ws_cooperative", 128, 256)
    assert (ring.stages, slots.stages) == (4, 3)
    lay = ws_layout(p, "sm90_ws_cooperative", 128, 256, ring.stages, slots=0)
    assert lay.out_slot == lay.b_stage == 32768 and (lay.out0, lay.slot_stride) == (lay.b0, lay.b_stage)
    assert lay.res0 == lay.out0 and lay.res_in_place
    assert lay.bars == 4 * (lay.a_stage + lay.b_stage)
    assert lay.total == lay.bars + 8 * (2 * 4 + 2) == ring.smem_bytes <= T.smem_bytes


def test_swapped_ring_stages_in_the_activation_part():
    """Swapped 224x128: a warpgroup's 64 channels x 224 pixels (28 KB) fit the activation part
    (224 rows of 128 B), not the 16 KB filter part; 5 stages instead of 3."""
    p = _problem("r50_l4_1x1_512_2048")
    s = plan_sm90_ws(p, T, "sm90_ws_cooperative", 224, 128, slots=0, swap=True)
    lay = ws_layout(p, s.kernel, 224, 128, s.stages, slots=0, swap=True)
    assert s.stages == 5 and plan_sm90_ws(p, T, "sm90_ws_cooperative", 224, 128, swap=True).stages == 3
    assert lay.out_slot == lay.a_stage == 224 * 128 and (lay.out0, lay.slot_stride) == (lay.a0, lay.a_stage)
    for st in range(s.stages):           # each lent slot lies inside its own stage's part
        assert lay.a0 + st * lay.a_stage + lay.out_slot <= lay.b0


@pytest.mark.parametrize("kernel,bm,bn,kw,why", [
    ("sm90_ws_pingpong", 64, 256, {}, "cooperative"),
    ("sm90_ws_cooperative", 128, 256, {"cluster_m": 2}, "cluster"),
    ("sm90_ws_streamk", 64, 128, {}, "epilogue slots"),
])
def test_ring_refusals(kernel, bm, bn, kw, why):
    p = _problem("r50_l4_1x1_2048_512")
    with pytest.raises(WsUnsupported, match=why):
        check_supported(p, kernel, bm, bn, 0, **kw)


def test_ring_needs_a_slice_that_fits_a_stage_part():
    """f32 outputs (64x128 x 4 B = 32 KB against 16 KB parts) and 32-channel K steps (halved
    parts) do not fit."""
    p = dataclasses.replace(_problem("r50_l2_1x1_512_128"), out_dtype="f32")
    with pytest.raises(WsUnsupported, match="does not fit"):
        check_supported(p, "sm90_ws_cooperative", 128, 128, 0)
    p16 = _problem("r50_l2_1x1_512_128")
    check_supported(p16, "sm90_ws_cooperative", 128, 128, 0)
    with pytest.raises(WsUnsupported, match="does not fit"):
        check_supported(p16, "sm90_ws_cooperative", 128, 128, 0, block_k=32)


def test_ring_needs_three_stages():
    """A warpgroup hands its lent stage back only after the next tile's first k-step, which a
    2-stage ring could not hold alongside."""
    p = _problem("r50_l4_1x1_512_2048")
    small = dataclasses.replace(T, smem_bytes=3 * 48 * 1024)
    with pytest.raises(PlanError, match="2-stage ring"):
        plan_sm90_ws(p, small, "sm90_ws_cooperative", 128, 256, slots=0)


def test_one_wave_residual_layers_default_to_the_ring():
    """One wave of residual tiles: swapped cooperative tiles staged in the ring, the fewest
    pixel tiles evenly sized (1568 pixels: 7 x 224, 112 tiles of 132 SMs); many-wave layers
    keep staging slots."""
    s = plan_sm90(_problem("r50_l4_1x1_512_2048"), T)
    assert (s.kernel, s.block_m, s.block_n, s.config.swap_ab, s.config.epilogue_slots, s.stages) == \
        ("sm90_ws_cooperative", 224, 128, True, 0, 5)
    for L in load_suite():
        if L.name != "r50_l4_1x1_512_2048":
            assert getattr(plan_sm90(L.expected_problem(), T).config, "epilogue_slots", 1) != 0, L.name


def test_ring_candidates_are_tuned():
    """The tuner times ring-staged cooperative tiles (plain and swapped), and the cache key
    tells them apart from the same tiles with staging slots."""
    for name in ("r50_l4_1x1_512_2048", "r50_l2_1x1_128_512", "vae_3x3_512_64x64"):
        cands = candidate_schedules(_problem(name), T)
        ring = [c for c in cands if getattr(c.config, "epilogue_slots", 1) == 0]
        assert {(c.block_m, c.block_n) for c in ring if not c.config.swap_ab} >= {(128, 256), (128, 128)}
        assert any(c.config.swap_ab for c in ring) or name.startswith("vae")
        assert all(c.kernel == "sm90_ws_cooperative" and c.stages >= 3 for c in ring)
        knobs = [knobs_of(c) for c in cands]
        assert len(set(knobs)) == len(knobs)
        assert all(knobs_of(c.with_config(direct_stages=0))[-2:] == (0, c.config.swap_ab)
                   for c in cands if getattr(c.config, "epilogue_slots", 1) == 0)
