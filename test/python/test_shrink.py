"""Shrinking failing fuzz cases (tools/shrink.py, convc-fuzz shrink): the greedy walk reaches
a minimal failing layer; a GPU shrinking round compiles reductions with a schedule of the
failing one's kind and, once none of them fails, reports the parent as minimal."""

import dataclasses
import json

from convc.passes.plan.plan_schedule import candidate_schedules
from convc.passes.schedule import Schedule
from convc.passes.target import get_target
from convc.tools.bundle import compile_entry
from convc.tools.fuzz import main as fuzz_main, shrink_local, shrink_round
from convc.tools.layers import Layer, has_output
from convc.tools.shrink import cost, reductions, same_kind, shrink


BIG = Layer(name="big", N=8, H=30, W=27, C=40, F=96, R=3, S=5, stride=(2, 1), dilation=(1, 2),
            pad=(1, 2, 0, 3), dtype="bf16", epilogue="bias_residual_relu")


def test_reductions_are_valid_and_smaller():
    rs = reductions(BIG)
    assert rs and all(has_output(r) and cost(r) < cost(BIG) or cost(r)[0] == cost(BIG)[0] for r in rs)
    assert any(r.N == 1 for r in rs) and any(r.epilogue == "none" for r in rs)


def test_greedy_shrink_reaches_the_minimal_failing_layer():
    def fails(L):           # a stand-in bug: 3-row filters, a row stride, C past 8
        return L.R == 3 and L.stride[0] == 2 and L.C > 8
    L, tries = shrink(BIG, fails)
    assert fails(L) and not any(fails(r) for r in reductions(L))
    assert (L.N, L.C, L.F, L.S, L.dilation, L.epilogue, L.dtype) == (1, 9, 1, 1, (1, 1), "none", "f16")
    assert L.H * L.W <= 3 and tries < 400


def test_grouped_reductions_keep_channels_divisible():
    G = Layer(name="g", N=2, H=9, W=9, C=48, F=96, R=3, S=3, pad=(1, 1, 1, 1), groups=12)
    for r in reductions(G):
        assert r.C % r.groups == 0 and r.F % r.groups == 0


def test_same_kind_follows_the_kernel_not_the_tile():
    t = get_target("sm_90a")
    L = Layer(name="x", N=4, H=28, W=28, C=128, F=256, R=3, S=3, pad=(1, 1, 1, 1))
    cands = candidate_schedules(L.expected_problem(), t)
    swapped = next(s for s in cands if getattr(s.config, "swap_ab", False))
    small = dataclasses.replace(L, N=1)
    i = same_kind(small, t, swapped)
    assert i is not None and candidate_schedules(small.expected_problem(), t)[i].config.swap_ab


def test_gpu_round_protocol(tmp_path):
    """Round 1: a failing convc pair -> reductions compiled with the same kind of schedule.
    Round 2: none of them fails -> the round-1 layer is reported minimal and written out."""
    L = Layer(name="case", N=2, H=9, W=9, C=64, F=128, R=3, S=3, pad=(1, 1, 1, 1), epilogue="bias")
    b0 = tmp_path / "b0"
    b0.mkdir()
    e = compile_entry(L, str(b0), "sm_90a", None)
    (b0 / "manifest.json").write_text(json.dumps({"target": "sm_90a", "layers": [e]}))
    res0 = {"layers": [{"name": "case", "index": 0, "correct": False}]}
    m1, minimal = shrink_round(res0, str(b0), str(tmp_path / "b1"), "sm_90a")
    assert not minimal and all(x["ok"] and x["shrink_of"] == "case" for x in m1["layers"])
    kind = Schedule.from_dict(e["schedule"]).kernel
    on_convc = [x for x in m1["layers"] if x["path"] == "convc"]      # IREE may fold a tiny reduction
    assert len(on_convc) >= 5 and all(x["schedule"]["kernel"] == kind for x in on_convc)
    (tmp_path / "r1.json").write_text(json.dumps(
        {"layers": [{"name": x["layer"]["name"], "index": i, "correct": True} for i, x in enumerate(m1["layers"])]}))
    reg = tmp_path / "reg.json"
    assert fuzz_main(["shrink", "--results", str(tmp_path / "r1.json"), "--bundle", str(tmp_path / "b1"),
                      "--out", str(tmp_path / "b2"), "--regressions", str(reg)]) == 0
    got = json.loads(reg.read_text())["layers"]
    assert [(d["name"], d["C"], d["N"]) for d in got] == [("case_min", 64, 2)]


def test_local_shrink_of_a_correct_case_keeps_it(tmp_path):
    """--local: every reduction is compiled for llvm-cpu and checked here; a case that does not
    fail has no failing reduction, so it comes back unchanged."""
    L = Layer(name="ok", N=1, H=4, W=3, C=8, F=8, R=3, S=1, pad=(1, 0, 1, 0), epilogue="bias")
    e = compile_entry(L, str(tmp_path), "llvm-cpu", None)
    (tmp_path / "manifest.json").write_text(json.dumps({"target": "llvm-cpu", "layers": [e]}))
    got, tries = shrink_local(str(tmp_path), "ok")
    assert got == L and tries == len(reductions(L))


def test_summarize_counts_outcomes(tmp_path):
    """convc-fuzz summarize: outcome classes per run and the pairs that were not correct."""
    from convc.tools.fuzz import summarize
    L = dict(name="a", N=1, H=4, W=4, C=8, F=8, R=3, S=3)
    manifest = {"seed": 3, "commit": "abc", "date": "d", "problems": 3, "pairs": 4, "layers": [
        {"layer": L, "ok": True, "path": "convc", "dispatches": [{"path": "convc", "kernel": "sm90_ws_pingpong 64x64"}]},
        {"layer": L, "ok": True, "path": "IREE", "dispatches": [{"path": "IREE", "kernel": None}]},
        {"layer": L, "ok": False, "error": "iree-compile failed"},
        {"layer": L, "ok": True, "path": "convc", "dispatches": [{"path": "convc", "kernel": "direct_grouped 256"}]}]}
    rows = [{"name": "a", "index": 0, "correct": True}, {"name": "b", "index": 1, "correct": False, "rel_l2": 0.5},
            {"name": "c", "index": 2, "correct": False, "error": "iree-compile failed"},
            {"name": "d", "index": 3, "correct": False, "error": "runtime: Error invoking function: ABORTED"}]
    s = summarize([(rows, manifest)])
    assert s["summary"] == {"correct on convc": 1, "wrong on IREE": 1, "compile failure": 1,
                            "runtime failure on convc": 1}
    assert s["runs"][0]["correct_on_convc_by_kernel"] == {"sm90_ws_pingpong": 1} and len(s["not_correct"]) == 3
