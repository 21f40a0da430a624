"""The reliability checks the device scripts run (tools/gpu/stress.py, tools/gpu/wrong_use.py),
exercised on llvm-cpu: determinism, concurrent invocation and a short soak; every misuse of
a compiled layer raises IREE's error and leaves the module right."""

import json

import pytest

from convc.tools.gpu import stress, wrong_use
from convc.tools.suite import main as suite_main, parse_arguments


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rel")
    suite = tmp / "suite.json"
    layers = [dict(name="res", N=1, H=6, W=5, C=8, F=16, R=3, S=3, pad=[1, 1, 1, 1], dtype="f16",
                   epilogue="bias_residual_relu"),
              dict(name="f32", N=2, H=5, W=5, C=4, F=8, R=1, S=1, dtype="f32", epilogue="bias")]
    suite.write_text(json.dumps({"layers": layers}))
    assert suite_main(parse_arguments(["compile", "--suite", str(suite), "--target", "llvm-cpu",
                                       "--out", str(tmp / "b")])) == 0
    return str(tmp / "b")


def test_stress_determinism_concurrency_soak(bundle, tmp_path):
    out = tmp_path / "stress.json"
    assert stress.main(["--bundle", bundle, "--driver", "local-task", "--runs", "5", "--threads", "4",
                               "--soak", "40", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert [d["differing"] for d in r["determinism"]] == [0, 0]
    assert r["concurrency"]["invocations"] == 4 * 20 and r["concurrency"]["mismatched"] == 0
    assert r["soak"]["invocations"] == 40 and len(r["soak"]["samples"]) == 10


def test_every_misuse_raises_and_leaves_the_module_right(bundle, tmp_path):
    out = tmp_path / "wrong.json"
    assert wrong_use.main(["--bundle", bundle, "--only", "res", "--driver", "local-task", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert {r["misuse"] for r in rows} == set(wrong_use.MISUSES)
    assert all(r["ok"] for r in rows)
    assert all("mismatch" in r["raised"] or "less than expected" in r["raised"]
               for r in rows if r["misuse"] not in wrong_use.ACCEPTED)
