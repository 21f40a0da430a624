"""ConvProblem / Schedule data: derived sizes, validation, attribute round trips."""

import dataclasses
import re

import pytest

from convc.passes.kernel_configs import PortableConfig
from convc.passes.ir import ir, attr_to_py, dict_attr
from convc.passes.plan.plan_schedule import plan_schedule_for
from convc.passes.problem import ConvProblem, EpilogueStep
from convc.passes.schedule import Schedule
from convc.passes.target import TARGETS, get_target, UnknownTargetError
from convc.tools.layers import load_suite


def test_gemm_sizes_and_output_shape():
    p = ConvProblem(N=32, H=224, W=224, C=3, F=64, R=7, S=7, stride=(2, 2), pad=(3, 3, 3, 3))
    assert (p.Ho, p.Wo) == (112, 112)
    assert (p.gemm_m, p.gemm_n, p.gemm_k) == (32 * 112 * 112, 64, 147)
    q = ConvProblem(N=8, H=33, W=33, C=256, F=256, R=3, S=3, dilation=(2, 2), pad=(2, 2, 2, 2))
    assert (q.Ho, q.Wo) == (33, 33)
    a = ConvProblem(N=8, H=30, W=30, C=128, F=128, R=3, S=3, pad=(0, 0, 1, 1))
    assert (a.Ho, a.Wo) == (29, 29)


@pytest.mark.parametrize("bad", [dict(C=0), dict(stride=(0, 1)), dict(pad=(-1, 0, 0, 0)), dict(H=1, R=3)])
def test_invalid_problems_are_rejected(bad):
    args = dict(N=1, H=8, W=8, C=8, F=8, R=3, S=3)
    args.update(bad)
    with pytest.raises(ValueError):
        ConvProblem(**args)


def test_epilogue_step_validation():
    with pytest.raises(ValueError):
        EpilogueStep("add", "f16")             # no operand
    with pytest.raises(ValueError):
        EpilogueStep("sigmoid", "f32")


def test_problem_and_schedule_round_trip_through_attributes():
    p = load_suite()[3].expected_problem()
    s = plan_schedule_for(p, get_target("sm_90a"))
    with ir.Context():
        assert ConvProblem.from_dict(attr_to_py(dict_attr(p.to_dict()))) == p
        assert Schedule.from_dict(attr_to_py(dict_attr(s.to_dict()))) == s


def test_names_encode_the_whole_problem():
    names = {L.expected_problem().name for L in load_suite()}
    assert len(names) == len(load_suite())


@pytest.mark.parametrize("arch", sorted(TARGETS))
def test_every_suite_layer_has_a_valid_schedule(arch):
    t = get_target(arch)
    for L in load_suite():
        s = plan_schedule_for(L.expected_problem(), t)
        assert s.smem_bytes <= t.smem_bytes
        if isinstance(s.config, PortableConfig):
            assert L.C % s.config.vec_a == 0 and (L.R * L.S * L.C) % s.config.vec_b == 0
        assert s.grid[0] * s.block_m >= L.N * L.Ho * L.Wo or s.grid[0] * s.block_n >= L.F


def test_unknown_target():
    with pytest.raises(UnknownTargetError):
        get_target("sm_75")


def test_sm90a_takes_tma_path_for_every_eligible_suite_layer():
    t = get_target("sm_90a")
    for L in load_suite():
        s = plan_schedule_for(L.expected_problem(), t)
        # 64-channel K steps, or 32 (64-byte rows; with one tap any C = 0 mod 8, zero-filled)
        eligible = (L.C % 32 == 0 or (L.R * L.S == 1 and L.C % 8 == 0)) and L.F % 8 == 0
        assert (s.kernel in TMA_KERNELS) == eligible, (L.name, s.reason)
        if not eligible:
            # row-slab TMA where whole input rows are TMA-addressable (the 3-channel stem),
            # else thread-gathered
            expected = "sm90_rows_wgmma" if L.name == "r50_conv1_7x7s2" else "sm90_gather_wgmma"
            assert s.kernel == expected and "TMA declined" in s.reason, (L.name, s.reason)
        elif s.kernel == "sm90_tma_wgmma":
            assert s.smem_bytes <= t.smem_bytes // 2          # two CTAs per SM
            assert s.scratch_bytes == s.grid[0] * 2 * 128      # one slot per CTA and descriptor
        else:
            assert s.grid[0] <= t.num_sms and s.smem_bytes <= t.smem_bytes   # persistent: one CTA per SM
            if s.kernel == "sm90_ws_streamk":                  # + flags and one partial tile per CTA
                assert s.scratch_bytes >= s.grid[0] * (4 * 128 + 8 + s.block_m * s.block_n * 4)
            else:
                assert s.scratch_bytes == s.grid[0] * 4 * 128  # + output and residual descriptors


TMA_KERNELS = ("sm90_tma_wgmma", "sm90_ws_cooperative", "sm90_ws_pingpong", "sm90_ws_streamk")


def test_small_grids_split_k_over_a_cluster_or_use_64_row_tiles():
    """The non-persistent TMA kernel's own small-grid policy (a tuning candidate everywhere)."""
    from convc.passes.plan.kernels.sm90_tma import plan_sm90_tma
    t = get_target("sm_90a")
    by_name = {L.name: plan_sm90_tma(L.expected_problem(), t) for L in load_suite()
               if L.C % 64 == 0 and L.F % 8 == 0}
    # 52 tiles of 128x128 and 72 k-tiles: split K in two over a cluster
    assert by_name["r50_l4_3x3_512"].config.split_k == 2 and by_name["r50_l4_3x3_512"].grid[0] == 104
    # one row of tiles (N=1, 7x7): split K four ways
    assert by_name["n1_3x3_512_7x7"].config.split_k == 4
    # short K: 64-row tiles instead
    s = by_name["r50_l4_1x1_2048_512"]
    assert s.config.split_k == 1 and s.block_m == 64
    # enough tiles: neither
    s = by_name["vae_3x3_512_64x64"]
    assert (s.config.split_k, s.block_m, s.block_n, s.stages) == (1, 128, 128, 3)


def test_program_steps_round_trip_and_name_briefly():
    from convc.passes.problem import EpilogueOp, OperandLoad
    silu = EpilogueStep("program", "f16", loads=(OperandLoad(3, "full", "f16"),), program=(
        EpilogueOp("arith.extf", "f32", (1,)), EpilogueOp("arith.addf", "f32", (0, 2)),
        EpilogueOp("arith.negf", "f32", (3,)), EpilogueOp("math.exp", "f32", (4,)),
        EpilogueOp("arith.constant", "f32", (), (("value", "1.000000e+00 : f32"),)),
        EpilogueOp("arith.addf", "f32", (5, 6)), EpilogueOp("arith.divf", "f32", (3, 7)),
        EpilogueOp("arith.truncf", "f16", (8,))))
    p = dataclasses.replace(load_suite()[3].expected_problem(), epilogue=(EpilogueStep("add", "f16", 2, "channel"), silu))
    with ir.Context():
        assert ConvProblem.from_dict(attr_to_py(dict_attr(p.to_dict()))) == p
    assert p.operand_loads == [OperandLoad(2, "channel", "f16"), OperandLoad(3, "full", "f16")]
    assert p.residual_loads == [OperandLoad(3, "full", "f16")] and p.reads_residual
    assert p.name.endswith("_add_bias_" + silu.describe()) and re.fullmatch(r"fx[0-9a-f]{8}", silu.describe())
    other = dataclasses.replace(silu, program=silu.program[:-1] + (EpilogueOp("arith.truncf", "f16", (7,)),))
    assert other.describe() != silu.describe()
    with pytest.raises(ValueError):
        EpilogueStep("program", "f16")                      # no program
    with pytest.raises(ValueError):
        EpilogueStep("add", "f16", 2, "channel", loads=(OperandLoad(3, "full", "f16"),))
