"""Tuning: candidate lists, the cache file, collect, and how convc reads the cache."""

import json
import os

import pytest

from convc.compiler.cli import main as convc_main, parse_arguments as convc_args
from convc.passes.plan.plan_schedule import PlanError, candidate_schedules, candidate_with, choose_schedule, knobs_of, plan_schedule_for
from convc.passes.registry import PassOptions
from convc.passes.problem import ConvProblem, EpilogueStep
from convc.passes.target import get_target
from convc.passes.plan.tuning import FORMAT, TuningCache, TuningCacheError, load_cache
from convc.tools.layers import Layer, layer_mlir, load_suite
from convc.tools.tune import collect, signature
from convc.tools.tune import main as tune_main, parse_arguments as tune_args

SM90 = get_target("sm_90a")


@pytest.mark.parametrize("layer", load_suite(None), ids=lambda L: L.name)
def test_candidates_are_distinct_and_start_with_the_default(layer):
    p = layer.expected_problem()
    cands = candidate_schedules(p, SM90)
    assert knobs_of(cands[0]) == knobs_of(plan_schedule_for(p, SM90))
    assert len({knobs_of(s) for s in cands}) == len(cands)
    for s in cands:
        assert s.smem_bytes <= SM90.smem_bytes
        if s.kernel.startswith("sm90_ws"):
            assert s.grid[0] <= SM90.num_sms and s.threads == 384


def test_candidates_are_forced_by_their_settings():
    """A tuning candidate named by its settings is the first candidate that has them all, and
    gets the same schedule and reason as when forced by its index."""
    p = next(L for L in load_suite(None) if L.name == "r50_l3_3x3_256").expected_problem()
    cands = candidate_schedules(p, SM90)
    i = candidate_with(cands, "kernel=sm90_ws_pingpong, block_m=64,swap_ab=False")
    assert (cands[i].kernel, cands[i].block_m, cands[i].config.swap_ab) == ("sm90_ws_pingpong", 64, False)
    assert all(not (s.kernel == "sm90_ws_pingpong" and s.block_m == 64 and not getattr(s.config, "swap_ab", False)) for s in cands[:i])
    by_settings = choose_schedule(p, SM90, PassOptions(candidate_settings="kernel=sm90_ws_pingpong,block_m=64,swap_ab=false"))
    assert by_settings == choose_schedule(p, SM90, PassOptions(candidate=i))
    assert by_settings.reason.startswith(f"tuning candidate {i + 1}/{len(cands)}: ")
    with pytest.raises(PlanError, match="no tuning candidate has"):
        candidate_with(cands, "kernel=sm90_ws_pingpong,block_m=48")
    with pytest.raises(PlanError, match="Schedule or kernel config fields"):
        candidate_with(cands, "tile=64")


def _results(problem="conv_a", device="NVIDIA H200"):
    return {"device": device, "target": "sm_90a", "date": "2026-11-22T10:00:00+00:00", "commit": "abc",
            "problems": {problem: {"candidates": [
                {"knobs": ["sm90_ws_cooperative", 128, 128, 1, 1, 1], "schedule": "a", "us": 10.0, "ok": True},
                {"knobs": ["sm90_ws_pingpong", 64, 128, 1, 1, 1], "schedule": "b", "us": 8.0, "ok": True},
                {"knobs": ["sm90_ws_pingpong", 64, 64, 1, 1, 1], "schedule": "c", "us": 1.0, "ok": False}]}}}


def test_collect_keeps_the_fastest_correct_candidate(tmp_path):
    cache = TuningCache({}, str(tmp_path / "t.json"))
    lines = collect(_results(), cache)
    assert "8.0 us" in lines[0]
    w = cache.lookup("sm_90a", "conv_a")
    assert w.knobs == ("sm90_ws_pingpong", 64, 128, 1, 1, 1) and w.us == 8.0 and w.tried == 3
    path = cache.write()
    data = json.load(open(path))
    assert data["format"] == FORMAT and "sm_90a|NVIDIA H200|conv_a" in data["entries"]


def test_lookup_by_device_and_recency(tmp_path):
    cache = TuningCache({}, str(tmp_path / "t.json"))
    collect(_results(device="NVIDIA H100"), cache)
    newer = _results(device="NVIDIA H200")
    newer["date"] = "2026-11-23T00:00:00+00:00"
    newer["problems"]["conv_a"]["candidates"][0]["us"] = 2.0
    collect(newer, cache)
    assert cache.lookup("sm_90a", "conv_a").device == "NVIDIA H200"
    assert cache.lookup("sm_90a", "conv_a", "NVIDIA H100").knobs[0] == "sm90_ws_pingpong"
    assert cache.lookup("sm_90a", "conv_a", "NVIDIA A100") is None
    assert cache.lookup("gfx942", "conv_a") is None


def test_no_correct_candidate_leaves_cache_unchanged(tmp_path):
    r = _results()
    for c in r["problems"]["conv_a"]["candidates"]:
        c["ok"] = False
    cache = TuningCache({}, str(tmp_path / "t.json"))
    assert "no correct candidate" in collect(r, cache)[0]
    assert cache.entries == {}


def test_corrupt_cache_is_a_clean_error(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TuningCacheError):
        TuningCache.read(str(bad))
    L = Layer("t", 1, 8, 8, 64, 64, 3, 3, pad=(1, 1, 1, 1))
    src = tmp_path / "m.mlir"
    src.write_text(layer_mlir(L))
    rc = convc_main(convc_args([str(src), "-o", str(tmp_path / "o.vmfb"), "--tuning-cache", str(bad)]))
    assert rc == 1 and "tuning cache" in capsys.readouterr().err


def test_collect_cli_writes_the_cache(tmp_path, capsys):
    res = tmp_path / "tune.json"
    res.write_text(json.dumps(_results()))
    cache = tmp_path / "cache.json"
    assert tune_main(tune_args(["collect", str(res), "--cache", str(cache)])) == 0
    assert load_cache(str(cache)).lookup("sm_90a", "conv_a").us == 8.0


def test_signature_reads_inputs_and_output_buffers():
    L = Layer("t", 2, 8, 8, 64, 128, 3, 3, pad=(1, 1, 1, 1), epilogue="bias_residual_relu")
    sig = signature(layer_mlir(L, output_arg=True))
    assert sig["function"] == "main"
    assert [a["output"] for a in sig["args"]] == [False, False, False, False, True]
    assert sig["args"][0] == {"shape": [2, 8, 8, 64], "dtype": "f16", "output": False}
    assert sig["results"] == ["f16"]


def test_tune_without_models_is_an_error(capsys):
    assert tune_main(tune_args(["prepare", "--out", "x"])) == 1
    assert "nothing to tune" in capsys.readouterr().err
    assert tune_main(tune_args(["prepare", "--suite-file", "tools/data/depthwise_shapes.json", "--out", "x"])) == 1
    assert "--suite-file needs --suite" in capsys.readouterr().err


def test_prepare_reads_a_suite_file(tmp_path):
    """--suite-file: the models to tune are that suite's layers (here one of the depthwise rule
    shapes), written out as MLIR."""
    from convc.tools.tune import _models
    data = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "data", "depthwise_shapes.json")
    args = tune_args(["prepare", "--suite", "--suite-file", data, "--only", "mb_14_b1", "--out", str(tmp_path / "b")])
    (model,) = _models(args, str(tmp_path))
    assert os.path.basename(model).startswith("mb_14_b1") and "tensor<1x14x14x576xf16>" in open(model).read()


def test_a_winner_must_beat_a_measured_default(tmp_path):
    r = _results()
    r["problems"]["conv_a"]["candidates"][0]["us"] = None      # the profiler missed the default
    cache = TuningCache({}, str(tmp_path / "t.json"))
    assert "default schedule was not timed" in collect(r, cache)[0]
    assert cache.entries == {}


def test_fp32_precision_is_not_overridden_by_tuning(tmp_path):
    """A tuning entry for an f32 conv was timed on its TF32 kernel; --precision fp32 asks for
    exact f32 math, so neither the cache nor a forced tuning candidate may bring TF32 back."""
    p = Layer("t", 4, 28, 28, 128, 128, 3, 3, pad=(1, 1, 1, 1), dtype="f32").expected_problem()
    tf32 = plan_schedule_for(p, SM90)
    cache = TuningCache({}, str(tmp_path / "t.json"))
    collect({**_results(p.name), "problems": {p.name: {"candidates": [
        {"knobs": list(knobs_of(tf32)), "schedule": "a", "us": 5.0, "ok": True}]}}}, cache)
    path = cache.write()
    assert choose_schedule(p, SM90, PassOptions(tuning_cache=path)).kernel == tf32.kernel
    for opts in (PassOptions(tuning_cache=path, precision="fp32"), PassOptions(candidate=0, precision="fp32")):
        s = choose_schedule(p, SM90, opts)
        assert s.kernel == "portable_igemm" and "--precision fp32" in s.reason, s.reason
