
"""A tuning-cache winner applies only when the current default was among the candidates it
beat: an entry measured before a new kernel family became the default is ignored."""

import json

from convc.passes.plan.plan_schedule import choose_schedule, knobs_of, plan_schedule_for
from convc.passes.problem import ConvProblem
from convc.passes.target import get_target


class _Opts:
    def __init__(self, cache):
        self.tuning_cache = cache
        self.tuning_device = None
        self.candidate = None


def _cache(tmp_path, p, knobs, measured):
    path = tmp_path / "cache.json"
    entry = {"knobs": knobs, "us": 1.0, "tried": len(measured), "default_us": 2.0, "date": "2026-11-22",
             "commit": "x", "candidates": [{"knobs": k, "us": 1.0, "ok": True} for k in measured]}
    path.write_text(json.dumps({"format": "convc-tuning-1", "entries": {f"sm_90a|NVIDIA H200|{p.name}": entry}}))
    return str(path)


STEM = ConvProblem(N=32, H=224, W=224, C=3, F=64, R=7, S=7, stride=(2, 2), pad=(3, 3, 3, 3),
                   out_dtype="f16")


def test_entry_that_never_met_the_default_is_ignored(tmp_path):
    t = get_target("sm_90a")
    default = plan_schedule_for(STEM, t)
    assert default.kernel == "sm90_rows_wgmma"
    gather = ["sm90_gather_wgmma", 128, 64, 1, 1, 1]
    s = choose_schedule(STEM, t, _Opts(_cache(tmp_path, STEM, gather, [gather])))
    assert s.kernel == "sm90_rows_wgmma" and "predates this default" in s.reason


def test_entry_that_beat_the_default_is_used(tmp_path):
    t = get_target("sm_90a")
    default = list(knobs_of(plan_schedule_for(STEM, t)))
    gather = ["sm90_gather_wgmma", 128, 64, 1, 1, 1]
    s = choose_schedule(STEM, t, _Opts(_cache(tmp_path, STEM, gather, [default, gather])))
    assert s.kernel == "sm90_gather_wgmma" and s.reason.startswith("tuned on NVIDIA H200")
