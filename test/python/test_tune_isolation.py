"""The tuner's device side runs each model in child processes (tools/gpu/tune.py): a
candidate that hangs or kills its process is recorded as failed and tuning resumes at the next
round. Checked here with stand-in children (plain Python, no GPU)."""

import json
import subprocess
import sys

from convc.tools.gpu.tune import tune_model_isolated

CHILD = r"""
import json, sys, time
start, path, hang, crash, late = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
with open(path, "a") as out:
    for r in range(start, 5):
        if r == hang:
            time.sleep(60)
        if r == crash:
            sys.exit(3)
        us = None if (late and r == 1) else 10.0 + r
        out.write(json.dumps({"round": r, "rows": {"p": {"knobs": [r], "schedule": f"s{r}", "us": us, "ok": True,
                                                          "round": r, "round_candidate": r}}}) + "\n")
        out.flush()
    out.write(json.dumps({"late": {"p|1": [42.0, 3]} if late else {}}) + "\n")
"""


def _model():
    return {"name": "m", "rounds": [{"candidate": r, "kernels": {"p": {"knobs": [r], "schedule": f"s{r}"}}}
                                    for r in range(5)]}


def _spawn(hang=-1, crash=-1, late=False):
    starts = []

    def spawn(start, path):
        starts.append(start)
        return subprocess.Popen([sys.executable, "-c", CHILD, str(start), path, str(hang), str(crash),
                                 "1" if late else "0"])
    return spawn, starts


def test_all_rounds_in_one_child():
    spawn, starts = _spawn()
    rows = tune_model_isolated(_model(), spawn, round_timeout=20, poll=0.05)["p"]
    assert [c["us"] for c in rows] == [10.0, 11.0, 12.0, 13.0, 14.0] and starts == [0]
    assert all("problem" not in c for c in rows)


def test_hung_round_is_failed_and_skipped():
    spawn, starts = _spawn(hang=2)
    logs = []
    rows = tune_model_isolated(_model(), spawn, round_timeout=1.5, log=logs.append, poll=0.05)["p"]
    assert [c["round"] for c in rows] == [0, 1, 2, 3, 4]
    assert rows[2]["ok"] is False and rows[2]["us"] is None and "hung" in rows[2]["error"]
    assert [c["us"] for c in rows[3:]] == [13.0, 14.0] and starts == [0, 3]
    assert any("FAILED" in line for line in logs)


def test_crashed_round_is_failed_and_skipped():
    spawn, starts = _spawn(crash=0)
    rows = tune_model_isolated(_model(), spawn, round_timeout=20, poll=0.05)["p"]
    assert rows[0]["ok"] is False and "exited with 3" in rows[0]["error"]
    assert [c["us"] for c in rows[1:]] == [11.0, 12.0, 13.0, 14.0] and starts == [0, 1]


def test_late_profiler_records_fill_missing_times():
    spawn, _ = _spawn(late=True)
    rows = tune_model_isolated(_model(), spawn, round_timeout=20, poll=0.05)["p"]
    assert rows[1]["us"] == 42.0 and rows[1]["late_records"] == 3
