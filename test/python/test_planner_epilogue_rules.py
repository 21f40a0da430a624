"""Planner rules fitted this way (bench/NOTES.md, "sm_90a planner rules"): GEMMs whose epilogue
holds transcendental math (ConvNeXt's GELU MLPs) take 128-channel tiles, EfficientNet's narrow-K
SiLU expansions keep theirs; dense narrow-F convs weigh half-width grouped tiles at one CTA per
SM; f32 convs have TF32 tuning candidates, and exact f32 math one schedule."""

import dataclasses

import pytest

from convc.passes.plan.plan_schedule import candidate_schedules, plan_schedule_for
from convc.passes.problem import EpilogueOp, EpilogueStep, OperandLoad
from convc.passes.target import get_target
from convc.tools.layers import Layer

SM90 = get_target("sm_90a")
_C = lambda v: EpilogueOp("arith.constant", "f16", (), (("value", f"{v} : f16"),))     # noqa: E731
GELU = EpilogueStep("program", "f16", loads=(OperandLoad(2, "channel", "f16"),), program=(
    EpilogueOp("arith.truncf", "f16", (0,)), EpilogueOp("arith.addf", "f16", (2, 1)), _C("1.414060e+00"),
    EpilogueOp("arith.divf", "f16", (3, 4)), EpilogueOp("math.erf", "f16", (5,)), _C("1.000000e+00"),
    EpilogueOp("arith.addf", "f16", (6, 7)), _C("5.000000e-01"), EpilogueOp("arith.mulf", "f16", (8, 9)),
    EpilogueOp("arith.mulf", "f16", (3, 10))))


def _gemm(m: int, k: int, f: int, epilogue=(GELU,)):
    p = Layer("g", 1, m, 1, k, f, 1, 1, epilogue="none").expected_problem()
    return dataclasses.replace(p, epilogue=tuple(epilogue), num_operands=3, out_dtype="f16", gemm_form=True)


@pytest.mark.parametrize("m,k,f,kernel,tile,swap", [
    (100352, 96, 384, "sm90_ws_pingpong", (128, 128), False),   # K <= 128: 128 rows
    (25088, 192, 768, "sm90_ws_pingpong", (208, 64), True),     # 128 < K < 512: swapped 64-channel
    (6272, 384, 1536, "sm90_ws_pingpong", (192, 64), True),
    (1568, 768, 3072, "sm90_ws_cooperative", (144, 128), True),  # K >= 512: swapped 128-channel tiles
])
def test_gelu_gemm_tiles(m, k, f, kernel, tile, swap):
    s = plan_schedule_for(_gemm(m, k, f), SM90)
    assert s.kernel == kernel, s.reason
    assert (s.block_m, s.block_n) == tile and s.config.swap_ab == swap


def test_three_consumer_warpgroups_are_candidates_for_heavy_epilogues():
    c = [s for s in candidate_schedules(_gemm(6272, 384, 1536), SM90) if getattr(s.config, "consumers", 2) == 3]
    assert {(s.block_m, s.block_n) for s in c} == {(64, 64), (64, 128), (128, 64)}
    assert all(s.threads == 512 and s.kernel == "sm90_ws_pingpong" for s in c)
    bias = EpilogueStep("add", "f16", 2, "channel")
    plain = candidate_schedules(_gemm(6272, 384, 1536, (bias, EpilogueStep("cast", "f16"))), SM90)
    assert all(getattr(s.config, "consumers", 2) == 2 for s in plain)


def test_plain_epilogue_gemm_keeps_its_tile():
    bias = EpilogueStep("add", "f16", 2, "channel")
    s = plan_schedule_for(_gemm(6272, 384, 1536, (bias, EpilogueStep("cast", "f16"))), SM90)
    assert (s.block_m, s.block_n) == (64, 256)


def test_narrow_k_silu_expansion_keeps_its_rule():
    silu = dataclasses.replace(GELU, program=GELU.program[:4] + (EpilogueOp("math.exp", "f16", (5,)),))
    s = plan_schedule_for(_gemm(401408, 16, 96, (silu,)), SM90)
    assert s.kernel == "sm90_ws_cooperative" and s.block_m == 256


def test_narrow_f_output_conv_takes_tall_half_width_sliced_tiles():
    p = Layer("vae_out", 1, 256, 256, 256, 8, 3, 3, pad=(1, 1, 1, 1), epilogue="none").expected_problem()
    s = plan_schedule_for(p, SM90)
    assert s.kernel == "grouped_mma"
    assert (s.config.rows, s.config.cols, s.config.ctas_per_sm, s.config.slices, s.stages) == (16, 32, 1, 4, 2)
    # 48 input channels make no slices of whole 16-channel chunks of 32+ channels
    q = Layer("f5", 2, 40, 40, 48, 8, 5, 5, pad=(2, 2, 2, 2), epilogue="none").expected_problem()
    assert plan_schedule_for(q, SM90).config.slices == 1
    # its other tilings (narrower, two buffers, two CTAs) are tuning candidates
    assert sum(c.kernel == "grouped_mma" for c in candidate_schedules(p, SM90)) >= 10


def test_f32_tuning_candidates():
    p = Layer("r50f32", 32, 56, 56, 64, 64, 3, 3, pad=(1, 1, 1, 1), dtype="f32").expected_problem()
    tf32 = candidate_schedules(p, SM90)
    assert len(tf32) >= 5 and all(s.stages >= 3 and not s.config.direct_stages and not s.config.swap_ab for s in tf32)
    assert len({(s.kernel, s.block_m, s.block_n, s.config) for s in tf32}) == len(tf32)
    assert any(s.config.cluster_m == 2 for s in tf32)          # filter multicast (bench/NOTES.md)
    assert len(candidate_schedules(p, SM90, "fp32")) == 1
