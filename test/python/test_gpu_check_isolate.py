"""The GPU check's --isolate mode (how the fuzz bundles run): a layer whose invocation fails
poisons nothing else. Each child process stops at its first runtime error and a fresh child
checks the next layer (also with the layers sharded over parallel workers); run here on
llvm-cpu, with a corrupt vmfb standing in for a fault."""

import json

import pytest

from convc.tools.gpu.check import run_check
from convc.tools.suite import main as suite_main, parse_arguments


@pytest.mark.parametrize("workers", [1, 2])
def test_isolate_restarts_after_a_runtime_error(tmp_path, workers):
    suite = tmp_path / "suite.json"
    layer = dict(N=1, H=6, W=5, C=8, F=8, R=3, S=3, pad=[1, 1, 1, 1], dtype="f16", epilogue="bias_relu")
    suite.write_text(json.dumps({"layers": [dict(layer, name=f"l{i}") for i in range(3)]}))
    bundle = tmp_path / "b"
    assert suite_main(parse_arguments(["compile", "--suite", str(suite), "--target", "llvm-cpu",
                                       "--out", str(bundle)])) == 0
    (bundle / "l1.vmfb").write_bytes(b"not a vmfb")              # the 'fault': its call raises
    result = run_check(str(bundle), "local-task", "numpy", isolate=True, workers=workers)
    rows = {r["name"]: r for r in result["layers"]}
    assert [r["name"] for r in result["layers"]] == ["l0", "l1", "l2"]
    assert rows["l0"]["correct"] and rows["l2"]["correct"]              # checked by a fresh child
    assert not rows["l1"]["correct"] and rows["l1"]["error"].startswith("runtime:")
    assert result["isolated"] and result["passed"] == 2

