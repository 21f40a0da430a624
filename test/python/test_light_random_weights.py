"""A light ONNX model with random weights and input, compiled by convc for llvm-cpu, against
ONNX Runtime's CPU result (the shipped light-model outputs come from near-constant weights).
The same bundle runs on the GPU through tools/device/model_check.sh."""

import json

import pytest

from convc.tools.gpu.model_check import main as model_check
from convc.tools.models import prepare


def test_squeezenet_random_weights_match_onnxruntime(tmp_path):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    manifest = prepare(str(tmp_path), "llvm-cpu", "fp32", ["squeezenet"], random_seed=3)
    (entry,) = [e for e in manifest["models"] if e["name"] == "squeezenet_random"]
    assert entry["ok"] and entry["convs_on_convc"] == entry["convs"] == 20
    assert entry["reference"].startswith("onnxruntime")
    assert model_check(["--bundle", str(tmp_path), "--driver", "local-task", "--json", str(tmp_path / "r.json")]) == 0
    rows = {r["name"]: r for r in json.loads((tmp_path / "r.json").read_text())["models"]}
    assert rows["squeezenet_random"]["correct"] and rows["squeezenet_random"]["rel_l2"] < 1e-4
