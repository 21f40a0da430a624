"""Per-family kernel configs (passes/kernel_configs.py): each kernel takes exactly its config
type, lowerings refuse another family's schedule, schedules round-trip through the IR attribute
and JSON, and flat records and tuning caches written before the configs still load."""

import json
import os

import pytest

from convc.passes.plan.kernels.direct_grouped import ItemShape, plan_grouped

from convc.passes.ir import ir, attr_to_py, dict_attr
from convc.passes.kernel_configs import (DirectGroupedConfig, EpilogueStrategy, GatherConfig, GroupedMmaConfig,
                                         LdsMfmaConfig, PersistentConfig, PortableConfig, RowSlabConfig, Sm90WsConfig,
                                         Sm100WsConfig, TmaWgmmaConfig)
from convc.passes.plan.kernels.sm100_ws import plan_sm100_ws
from convc.passes.plan.kernels.sm90_tma import plan_sm90_tma
from convc.passes.plan.kernels.sm90_ws import plan_sm90_ws
from convc.passes.lower.common.igemm import PortableIgemm
from convc.passes.lower.nvidia.machine import NvidiaMachine
from convc.passes.lower.nvidia.sm90_ws import Sm90WarpSpecialized
from convc.passes.lower.nvidia.tile_scheduler import origin_model
from convc.passes.problem import ConvProblem, EpilogueOp, EpilogueStep, OperandLoad
from convc.passes.copy_problem import CopyPiece, CopyProblem
from convc.passes.plan.kernels.copy_pieces import plan_copy
from convc.passes.plan.plan_schedule import candidate_schedules, candidate_with, choose_schedule, knobs_of, plan_schedule_for
from convc.passes.registry import PassOptions
from convc.passes.schedule import CONFIG_TYPES, Kernel, Schedule, WarpRole
from convc.passes.target import get_target
from convc.passes.plan.tuning import TuningCache
from convc.tools.layers import load_suite

T90, T100 = get_target("sm_90a"), get_target("sm_100a")
SUITE = {L.name: L.expected_problem() for L in load_suite()}
GROUPED = {L.name: L.expected_problem() for L in load_suite("tools/data/depthwise_grouped.json")}
FLAT = os.path.join(os.path.dirname(__file__), "..", "inputs", "flat_schedules.json")

# How each record of test/inputs/flat_schedules.json was planned (by the flat-record convc).
PLANNED = {
    "ws_swapped_direct": lambda p: plan_sm90_ws(p, T90, "sm90_ws_cooperative", 96, 128, swap=True),
    "ws_ring_cluster": lambda p: plan_sm90_ws(p, T90, "sm90_ws_cooperative", 128, 256, raster=4, cluster_m=2),
    "ws_two_slots": lambda p: plan_sm90_ws(p, T90, "sm90_ws_pingpong", 128, 128, slots=2),
    "tma_split_k": lambda p: plan_sm90_tma(p, T90),
    "gather": lambda p: candidate_schedules(p, T90)[1],
    "rows": lambda p: plan_schedule_for(p, T90),
    "portable": lambda p: plan_schedule_for(p, T100),
    "amd": lambda p: plan_schedule_for(p, get_target("gfx942")),
    "sm100_pair": lambda p: plan_sm100_ws(p, T100, cluster=2),
    "resnext_g3x3_s1": lambda p: plan_schedule_for(p, T90),
    # the depthwise item shape 1036a31 planned (the rule table's defaults changed since)
    "mbv2_dw3x3_56": lambda p: plan_grouped(p, T90, ItemShape()),
}


def _between_convs() -> list[ConvProblem]:
    """A global pool, a squeeze-excitation FC (a GEMM of 32 rows) and a LayerNorm half (a map
    reading a row reduction): the families of the work between convs."""
    pool = dict(groups=64, filter=-1, filter_layout="hwf", pool="sum", dtype="f16", out_dtype="f16")
    norm = EpilogueStep("program", "f16", loads=(OperandLoad(0, "row", "f16"),),
                        program=(EpilogueOp("arith.subf", "f16", (0, 1)),))
    return [ConvProblem(N=2, H=49, W=1, C=64, F=64, R=49, S=1, **pool),
            ConvProblem(N=1, H=32, W=1, C=672, F=28, R=1, S=1, gemm_form=True, dtype="f16", out_dtype="f16"),
            ConvProblem(N=1, H=1, W=100, C=64, F=64, R=1, S=1, **pool, row_combine="sum",
                        epilogue=(EpilogueStep("cast", "f16"), norm))]


def _concatenation() -> CopyProblem:
    """A channel concatenation of 64 + 32 f16 channels: the copy kernel's problem."""
    return CopyProblem((2, 8, 8, 96), "f16", (CopyPiece(0, (0, 0, 0, 0), (2, 8, 8, 64), (1, 1, 1, 1)),
                                              CopyPiece(1, (0, 0, 0, 64), (2, 8, 8, 32), (1, 1, 1, 1))))


def _every_family() -> list[Schedule]:
    """Defaults and tuning candidates over the suites on every target, and the copy kernel's
    plan (not a conv: planned by its own rule): every kernel family."""
    out = []
    for arch in ("sm_90a", "sm_100a", "gfx942", "gfx950", "llvm-cpu"):
        t = get_target(arch)
        for p in list(SUITE.values()) + list(GROUPED.values()) + _between_convs():
            out += candidate_schedules(p, t)
        out.append(plan_copy(_concatenation(), t))
    return out


ALL = _every_family()


def test_every_kernel_family_is_planned_with_its_config_type():
    assert {s.kernel for s in ALL} == set(Kernel)
    assert all(type(s.config) is CONFIG_TYPES[s.kernel] for s in ALL)


def test_every_problem_kind_is_named_as_convc_kernel():
    """Timelines (convc-e2e) tell convc's kernels from IREE's by these name prefixes."""
    from convc.passes.problem import KERNEL_NAME_PREFIXES
    for p in list(SUITE.values())[:3] + list(GROUPED.values())[:3] + _between_convs():
        assert p.name.startswith(KERNEL_NAME_PREFIXES), p.name


def test_schedules_round_trip_through_the_attribute_and_json():
    with ir.Context():
        for s in ALL:
            assert Schedule.from_dict(attr_to_py(dict_attr(s.to_dict()))) == s, s.describe()
            assert Schedule.from_dict(json.loads(json.dumps(s.to_dict()))) == s, s.describe()


def test_the_attribute_nests_only_the_familys_knobs():
    s = plan_sm90_ws(SUITE["r50_l3_3x3_256"], T90, "sm90_ws_cooperative", 96, 128, swap=True)
    d = s.to_dict()
    assert d["config"] == {"raster": 1, "cluster_m": 1, "epilogue_slots": 1, "swap_ab": True, "direct_stages": 2,
                           "late_channel_ops": False, "consumers": 2}
    assert not {"k_order", "thread_m", "vec_a", "split_k", "min_ctas_per_sm", "subgroup_size"} & set(d)
    assert plan_sm90_tma(SUITE["r50_l4_3x3_512"], T90).to_dict()["config"] == {"split_k": 2}


@pytest.mark.parametrize("case", json.load(open(FLAT)), ids=lambda c: c["case"])
def test_flat_records_load_as_the_schedule_planned_today(case):
    """Records written before the configs (IR attributes, bundles, fuzz results) convert to
    the family's config: the schedule today's planner makes for the same call, with the
    describe() text and tuning knobs the flat-record convc gave it."""
    flat = case["schedule"]
    s = Schedule.from_dict(flat)
    p = SUITE.get(case["layer"]) or GROUPED[case["layer"]]
    assert s == PLANNED[case["case"]](p)
    assert s.describe() == case["describe"]
    if s.kernel == "direct_grouped":    # its item shape joined the knobs after 1036a31
        assert list(knobs_of(s))[:len(case["knobs"])] == case["knobs"]
    else:
        assert list(knobs_of(s)) == case["knobs"]
    assert s.config.cluster_size == max(flat["split_k"], flat["cluster_m"])
    assert s.config.min_ctas_per_sm == flat["min_ctas_per_sm"]
    assert s.subgroup_size == flat["subgroup_size"]          # now the target's


def test_a_flat_record_of_an_unknown_kernel_is_refused():
    flat = dict(json.load(open(FLAT))[0]["schedule"], kernel="depthwise_tiled")
    with pytest.raises(ValueError, match="unknown kernel 'depthwise_tiled'"):
        Schedule.from_dict(flat)


def test_a_kernel_takes_only_its_config_type():
    s = plan_schedule_for(SUITE["r50_conv1_7x7s2"], T100)            # portable
    assert isinstance(s.config, PortableConfig)
    with pytest.raises(TypeError, match="portable_igemm takes a PortableConfig, not Sm90WsConfig"):
        Schedule(**{**s.to_dict(), "config": Sm90WsConfig()})
    with pytest.raises(TypeError, match="sm90_ws_pingpong takes a Sm90WsConfig, not Sm100WsConfig"):
        Schedule(**{**s.to_dict(), "kernel": "sm90_ws_pingpong", "config": Sm100WsConfig()})


def test_configs_are_validated_against_the_schedule():
    s = plan_schedule_for(SUITE["r50_conv1_7x7s2"], T100)
    with pytest.raises(ValueError, match="exactly once"):
        s.with_config(thread_m=2)
    with pytest.raises(ValueError, match="divide the block tile"):
        s.with_config(thread_n=3)
    with pytest.raises(ValueError, match="divide block_k"):
        s.with_config(vec_a=3)
    ws = plan_sm90_ws(SUITE["r50_l3_3x3_256"], T90)
    for bad in ({"raster": 0}, {"cluster_m": 0}, {"epilogue_slots": -1}, {"direct_stages": -1}):
        with pytest.raises(ValueError):
            ws.with_config(**bad)
    with pytest.raises(ValueError, match="split_k=0"):
        plan_sm90_tma(SUITE["r50_l4_3x3_512"], T90).with_config(split_k=0)
    amd = plan_schedule_for(SUITE["r50_l2_3x3_128"], get_target("gfx942"))
    with pytest.raises(ValueError, match="lane width 3"):
        amd.with_config(lane_elems=3)


def test_lowerings_refuse_another_familys_schedule():
    p = SUITE["r50_l3_3x3_256"]
    portable = plan_schedule_for(SUITE["r50_conv1_7x7s2"], T100)
    ws = plan_sm90_ws(p, T90)
    with ir.Context(), pytest.raises(TypeError, match="a Sm90WsConfig reader was given a portable_igemm schedule"):
        Sm90WarpSpecialized(p, portable, None)
    with ir.Context(), pytest.raises(TypeError, match="a PortableConfig reader was given a sm90_ws_cooperative schedule"):
        PortableIgemm(p, ws, None)
    with pytest.raises(TypeError, match="PersistentConfig reader"):
        origin_model(p, plan_sm90_tma(SUITE["r50_l4_3x3_512"], T90), 0)
    assert ws.config_as(PersistentConfig) is ws.config


def test_derived_values():
    assert {k: k.role for k in Kernel if k.role} == {
        Kernel.SM90_WS_COOPERATIVE: WarpRole.COOPERATIVE, Kernel.SM90_WS_PINGPONG: WarpRole.PINGPONG,
        Kernel.SM90_WS_STREAMK: WarpRole.STREAM_K}
    assert Sm90WsConfig(epilogue_slots=0).epilogue is EpilogueStrategy.LENT_RING_STAGE
    assert Sm90WsConfig(epilogue_slots=2).epilogue is EpilogueStrategy.OWN_SLOTS
    assert [c.min_ctas_per_sm for c in (GatherConfig(), RowSlabConfig(), Sm100WsConfig(), Sm90WsConfig(),
                                        GroupedMmaConfig(1, 8, 3), TmaWgmmaConfig(4))] == [2, 1, 1, 0, 3, 0]
    assert [c.cluster_size for c in (TmaWgmmaConfig(4), Sm90WsConfig(cluster_m=2), Sm100WsConfig(cluster_m=2),
                                     DirectGroupedConfig(4), LdsMfmaConfig(8))] == [4, 2, 2, 1, 1]
    assert TmaWgmmaConfig(4).filter_multicast == 1 and Sm90WsConfig(cluster_m=2).filter_multicast == 2


def test_launch_attributes_follow_the_config():
    m = NvidiaMachine()
    with ir.Context():
        split = m.func_attributes(plan_sm90_tma(SUITE["r50_l4_3x3_512"], T90))
        assert str(split["nvvm.cluster_dim"]) == "array<i32: 2, 1, 1>" and "nvvm.minctasm" not in split
        pair = m.func_attributes(plan_sm100_ws(SUITE["vae_3x3_256_128x128"], T100, cluster=2))
        assert str(pair["nvvm.cluster_dim"]) == "array<i32: 2, 1, 1>" and str(pair["nvvm.minctasm"]) == "1 : i32"
        gather = m.func_attributes(candidate_schedules(SUITE["r50_conv1_7x7s2"], T90)[1])
        assert str(gather["nvvm.minctasm"]) == "2 : i32" and "nvvm.cluster_dim" not in gather


def test_settings_name_config_fields():
    p = SUITE["r50_l3_3x3_256"]
    cands = candidate_schedules(p, T90)
    i = candidate_with(cands, "kernel=sm90_tma_wgmma,split_k=1")
    assert cands[i].kernel == "sm90_tma_wgmma" and cands[i].setting("split_k") == 1
    with pytest.raises(AttributeError, match="no setting 'swap_ab'"):
        cands[i].setting("swap_ab")
    s = cands[candidate_with(cands, "epilogue_slots=0,swap_ab=true")]
    assert (s.config.epilogue_slots, s.config.swap_ab) == (0, True)


def test_tuning_caches_written_before_the_configs_still_pick_their_winner(tmp_path):
    """Knobs as the flat-record convc stored them: a grouped_mma tile (rows, columns, patch
    buffers after the six common knobs) and an sm_100a CTA pair."""
    grouped = GROUPED["resnext_g3x3_s1"]
    pair = SUITE["vae_3x3_256_128x128"]
    entries = {
        f"sm_90a|NVIDIA H200|{grouped.name}": {"knobs": ["grouped_mma", 112, 128, 1, 1, 1, 2, 56, 2], "us": 3.0,
                                               "tried": 4, "date": "2026-11-20T00:00:00+00:00"},
        f"sm_100a|NVIDIA B200|{pair.name}": {"knobs": ["sm100_ws", 128, 256, 1, 1, 2], "us": 30.0, "tried": 2,
                                              "date": "2026-11-20T00:00:00+00:00"},
    }
    path = tmp_path / "cache.json"
    TuningCache(entries).write(str(path))
    s = choose_schedule(grouped, T90, PassOptions(tuning_cache=str(path)))
    assert s.kernel == "grouped_mma" and (s.config.rows, s.config.cols, s.stages) == (2, 56, 2)
    assert s.reason.startswith("tuned on NVIDIA H200")
    s = choose_schedule(pair, T100, PassOptions(tuning_cache=str(path)))
    assert s.kernel == "sm100_ws" and s.config.cluster_m == 2 and s.reason.startswith("tuned on NVIDIA B200")
