"""The problems convc-fuzz found wrong on a GPU (tools/data/fuzz_regressions.json) stay right:
llvm-cpu numerics against the numpy fp32 reference with NaN-poisoned outputs, and an sm_90a
build of each (the GPU check runs them on the device: results/gpu_check/)."""

import os

import pytest

from conftest import REPO, assert_right_on_cpu, compile_layer
from convc.tools.layers import load_suite

LAYERS = load_suite(os.path.join(REPO, "tools", "data", "fuzz_regressions.json"))


def test_the_regressions_are_there():
    assert len(LAYERS) >= 37 and all(L.group == "fuzz_regression" for L in LAYERS)


@pytest.mark.parametrize("layer", LAYERS, ids=lambda L: L.name)
def test_regression_on_cpu(tmp_path, layer):
    assert_right_on_cpu(tmp_path, layer)


@pytest.mark.parametrize("layer", LAYERS, ids=lambda L: L.name)
def test_regression_builds_for_sm90a(tmp_path, layer):
    _, res = compile_layer(tmp_path, layer, target="sm_90a")
    assert res.reports, "no dispatch report"
