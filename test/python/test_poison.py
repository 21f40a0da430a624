"""The checks catch a kernel that leaves outputs unwritten: a sabotaged schedule (half the
workgroups) must show NaN where the poisoned output buffer was not overwritten."""

import dataclasses

import numpy as np

import convc.passes.plan.plan_schedule as plan
from conftest import compile_layer, run_layer_cpu
from convc.tools.layers import Layer


def test_unwritten_outputs_stay_poisoned(tmp_path, monkeypatch):
    layer = Layer("sabotaged", 2, 8, 8, 16, 32, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f16", "bias_relu")
    real = plan.plan_schedule_for

    def half_grid(p, t, *rest):
        s = real(p, t, *rest)
        return dataclasses.replace(s, grid=(s.grid[0] // 2, 1, 1))

    monkeypatch.setattr(plan, "plan_schedule_for", half_grid)
    vmfb, res = compile_layer(tmp_path, layer)
    assert res.reports[0].path == "convc"
    got, ref = run_layer_cpu(vmfb, layer, seed=3)
    nan_rows = np.isnan(got).reshape(-1, layer.F).all(axis=1)
    assert 0 < nan_rows.sum() < nan_rows.size      # the rows of the missing workgroups
    assert np.allclose(got[~np.isnan(got)], ref[~np.isnan(got)], atol=5e-2, rtol=1e-2)
