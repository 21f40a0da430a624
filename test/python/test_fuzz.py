"""convc-fuzz on the CPU: seeded random problems (dense and grouped, every dtype and epilogue,
strides/dilations 1-3, pads past the filter's reach, one-pixel outputs) compiled for llvm-cpu
and run with NaN-poisoned outputs against the numpy fp32 reference, whether they land on convc
or on IREE's fallback. The GPU side runs the same draws with every tuning candidate
(`convc-fuzz prepare`, results/fuzz/)."""

import dataclasses
import json

import pytest

from conftest import assert_right_on_cpu
from convc.tools.fuzz import draw, main as fuzz_main

@pytest.mark.parametrize("layer", draw(7, 40), ids=lambda L: L.name)
def test_fuzzed_problem_on_cpu(tmp_path, layer):
    assert_right_on_cpu(tmp_path, layer)


def test_fuzz_bundle_records_seed_and_distribution(tmp_path):
    out = tmp_path / "bundle"
    assert fuzz_main(["prepare", "--seed", "3", "--count", "4", "--out", str(out), "--target", "llvm-cpu"]) in (0, 1)
    m = json.loads((out / "manifest.json").read_text())
    assert m["seed"] == 3 and m["problems"] == 4 and m["pairs"] >= 4
    assert set(m["distribution"]) >= {"dtype", "epilogue", "kind", "stride", "dilation", "one_pixel_output"}
    assert all("layer" in e and "vmfb" in e for e in m["layers"])
    assert [L.name for L in draw(3, 4)] == [L.name for L in draw(3, 4)]       # seeded


def test_kernel_aimed_draws_compile_only_that_kernel(tmp_path):
    """--kernel: every drawn problem has candidates of the family, and only those are compiled
    (their indices into the planner's candidate list, as convc-tune numbers them)."""
    from convc.passes.plan.plan_schedule import candidate_schedules
    from convc.passes.target import get_target
    from convc.tools.fuzz import draw_for_kernel
    layers = draw_for_kernel(5, 3, "depthwise_mma", "sm_90a")
    assert len(layers) == 3
    for L in layers:
        assert any(s.kernel == "depthwise_mma" for s in candidate_schedules(L.expected_problem(), get_target("sm_90a")))
    out = tmp_path / "bundle"
    assert fuzz_main(["prepare", "--seed", "5", "--count", "1", "--kernel", "depthwise_mma", "--max-candidates", "2",
                      "--out", str(out)]) == 0
    m = json.loads((out / "manifest.json").read_text())
    assert m["kernel"] == "depthwise_mma" and m["problems"] == 1 and 1 <= m["pairs"] <= 2
    assert all(e["schedule"]["kernel"] == "depthwise_mma" for e in m["layers"])


def test_wide_share_adds_wide_depthwise_draws_and_keeps_old_seeds():
    """--wide-share: a share of depthwise problems with 7-9 column windows, interleaved with the
    grouped ones; at 0 (the default) a seed draws what it drew before the option existed."""
    from convc.tools.layers import random_grouped_layers
    plain, wide = draw(11, 20), draw(11, 20, wide_share=0.25)
    mixed = wide[:10]
    unnamed = lambda layers: [dataclasses.replace(L, name="") for L in layers]
    assert unnamed(L for L in mixed if not L.name.endswith("_wide")) == unnamed(plain[:5])
    got = [L for L in mixed if L.name.endswith("_wide")]
    assert [L.S for L in got] == [L.S for L in random_grouped_layers(11, 5, wide=True)]
    assert all(L.S >= 7 and L.groups == L.C == L.F for L in got)
    assert [L.name.endswith("_wide") for L in mixed[:4]] == [False, True, False, True]
    assert all(L.groups == 1 for L in wide[10:])


INT8 = [L for L in draw(17, 16, int8_share=0.75) if L.dtype == "i8"]


@pytest.mark.parametrize("layer", INT8, ids=lambda L: L.name)
def test_fuzzed_int8_problem_on_cpu(tmp_path, layer):
    """--int8-share: dense int8 draws, exact against the integer reference (the i32 sums; a
    requantized i8 output at most one step off where f32 rounding meets a half), whether they
    land on convc or on IREE's fallback."""
    import numpy as np
    from conftest import compile_layer, run_layer_cpu
    vmfb, res = compile_layer(tmp_path, layer)
    got, ref = run_layer_cpu(vmfb, layer, 0)
    diff = np.abs(got - ref)
    context = [r.line() for r in res.reports]
    if layer.epilogue == "none":
        assert diff.max() == 0, context
    else:
        assert diff.max() <= 1 and np.count_nonzero(diff) <= max(1, diff.size // 500), (diff.max(), context)


FP8 = [L for L in draw(23, 12, fp8_share=0.5) if L.dtype.startswith("f8")]


def test_fp8_draws_are_what_the_fp8_kernels_read():
    """--fp8-share: dense e4m3 / e5m2 draws with the channel counts convc's fp8 kernels read
    (on CUDA a conv they decline is an error, not a fallback), their f32 sums as the output; the
    other draws of the seed stay as they were."""
    from convc.passes.plan.plan_schedule import plan_schedule_for
    from convc.passes.target import get_target
    assert len(FP8) == 6 and {L.dtype for L in FP8} <= {"f8E4M3FN", "f8E5M2"}
    for L in FP8:
        assert L.epilogue == "none" and L.groups == 1 and L.out_dtype == "f32"
        p = dataclasses.replace(L.expected_problem(), F=-(-L.F // 8) * 8)      # as convc-pad-channels pads F
        for arch in ("sm_90a", "sm_100a"):
            s = plan_schedule_for(p, get_target(arch))
            assert s.kernel != "portable_igemm", (arch, L, s.reason)
    strip = lambda layers: [dataclasses.replace(L, name="") for L in layers if not L.dtype.startswith("f8")]
    plain = draw(23, 12)
    assert strip(draw(23, 12, fp8_share=0.5)) == strip(plain)[:6]


@pytest.mark.parametrize("layer", FP8[:3], ids=lambda L: L.name)
def test_fuzzed_fp8_problem_on_cpu(tmp_path, layer):
    """The fp8 draws on the portable kernel (llvm-cpu) against f32 sums of the decoded
    operands (exact products; f32 summation order only)."""
    import numpy as np
    from conftest import compile_layer, run_layer_cpu
    vmfb, res = compile_layer(tmp_path, layer)
    got, ref = run_layer_cpu(vmfb, layer, 0)
    assert np.abs(got - ref).max() <= 1e-4 * max(1.0, np.abs(ref).max()), [r.line() for r in res.reports]


def test_int8_share_keeps_the_other_draws():
    """The int8 draws come from a generator of their own: a seed's other problems are those it
    drew before (the dense ones shifted behind the int8 ones)."""
    plain, mixed = draw(19, 12), draw(19, 12, int8_share=0.25)
    assert sum(L.dtype == "i8" for L in mixed) == 3 and all(L.groups == 1 for L in mixed if L.dtype == "i8")
    strip = lambda layers: [dataclasses.replace(L, name="") for L in layers if L.dtype != "i8"]
    assert strip(mixed) == strip(plain)[:len(strip(mixed))]
