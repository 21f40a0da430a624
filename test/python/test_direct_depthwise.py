"""The direct kernel's depthwise shapes (passes/plan/kernels/direct_grouped.py) without a GPU.

- The rule table: 128-thread workgroups, packed-f16 filter rows for f16, pixels per item,
  output rows, register bounds, unrolled rows and padding rows (branch or select) by window,
  stride and grid size; other targets and dtypes
  keep f32 and 256 threads.
- The emitted code: packed f16 FMAs (fma.rn.f16x2, not widened to f32) for f16_rows; the
  async-copy staged candidates (cp.async with zero fill, wait_group) in their ring of shared
  memory; the rows unrolled; ptxas for sm_90a and sm_100a on every depthwise candidate of two
  layers: no spills in the default, at most 8 bytes in uncapped one-row candidates.
- Tuning knobs tell every candidate apart.
- Numbers (llvm-cpu, which runs the same emitter): the looped and the unrolled filter rows
  (one or 3 output rows per item; padding rows loaded as zeros with one or 2), f32 and
  packed-f16 accumulation, on windows whose rows and columns reach into the padding (rows
  entirely outside the image take the skip branch or load zeros), with stride and dilation,
  against the numpy fp32 reference with poisoned outputs.
"""

import dataclasses
import glob
import os
import pathlib
import re
import subprocess

import pytest

import numpy as np

from conftest import compile_layer, run_layer_cpu
from convc.passes.plan.kernels.direct_grouped import ItemShape, depthwise_shape, direct_candidates, plan_grouped
from convc.passes.plan.plan_schedule import candidate_schedules
from convc.passes.target import get_target
from convc.passes.plan.tuning import knobs_of
from convc.tools.layers import load_suite
from convc.tools.sm100_table import find_cuda_tool

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = {L.name: L for L in load_suite(os.path.join(HERE, "..", "..", "tools", "data", "depthwise_grouped.json"))}
SM90 = get_target("sm_90a")
PTXAS = find_cuda_tool("ptxas")


def _p(name, **kw):
    return dataclasses.replace(LAYERS[name], **kw).expected_problem()


def test_rule_table():
    f16, sel = "f16_rows", "select"
    # 3x3 on large grids: 4 pixels x 2 output rows, padding rows loaded, no register bound
    assert depthwise_shape(_p("mbv2_dw3x3_56"), SM90) == ItemShape(4, 128, 1, f16, 0, True, 2, sel)
    assert depthwise_shape(_p("mbv2_dw3x3_112"), SM90) == ItemShape(4, 128, 1, f16, 0, True, 2, sel)
    # medium grids: the same item, 2 workgroups per SM bound (registers to issue every row's loads)
    assert depthwise_shape(_p("mbv2_dw3x3_28"), SM90) == ItemShape(4, 128, 1, f16, 2, True, 2, sel)
    assert depthwise_shape(_p("mbv2_dw3x3_14"), SM90) == ItemShape(4, 128, 1, f16, 2, True, 2, sel)
    # small grids (batch 1, MobileNetV2 28 px at batch 8): 2 pixels, bound 1
    assert depthwise_shape(_p("mbv2_dw3x3_56_b1"), SM90) == ItemShape(2, 128, 1, f16, 1, True, 2, sel)
    assert depthwise_shape(_p("mbv2_dw3x3_28", N=8), SM90) == ItemShape(2, 128, 1, f16, 1, True, 2, sel)
    # strided or 5 columns: 2 pixels x 2 rows, bound 1
    assert depthwise_shape(_p("mbv2_dw3x3_s2_112"), SM90) == ItemShape(2, 128, 1, f16, 1, True, 2, sel)
    assert depthwise_shape(_p("effnet_dw5x5_s2"), SM90) == ItemShape(2, 128, 1, f16, 1, True, 2, sel)
    assert depthwise_shape(_p("effnet_dw5x5_s2", stride=(1, 1)), SM90) == ItemShape(2, 128, 1, f16, 1, True, 2, sel)
    # 7x7, padding rows skipped by a branch: f16 on grids of 4-pixel 8-byte items under 25
    # workgroups per SM takes them (bound 2); above, 8 pixels as a loop (16-byte vectors)
    wide = ItemShape(4, 128, 1, f16, 2, True, 1, "branch", 8)
    assert depthwise_shape(_p("convnext_dw7x7_56"), SM90) == ItemShape(8, 128, 1, f16)
    assert depthwise_shape(_p("convnext_dw7x7_7"), SM90) == wide
    # small grids (under 2 workgroups per SM of those items): the rows split over 7 threads per
    # item, 32 items of 4 pixels a workgroup, or 16 of all Wo pixels where Wo < 8
    split = ItemShape(4, 256, 1, f16, 0, False, 1, "branch", 8, 8)
    assert depthwise_shape(_p("convnext_dw7x7_56_b1"), SM90) == split
    assert depthwise_shape(_p("convnext_dw7x7_56", N=1, H=14, W=14, C=384, F=384, groups=384), SM90) == split
    assert depthwise_shape(_p("convnext_dw7x7_7", N=4), SM90) == ItemShape(8, 128, 1, f16, 0, False, 1, "branch", 8, 8)
    s = plan_grouped(_p("convnext_dw7x7_7", N=4), SM90)
    assert (s.threads, s.block_m, s.config.pixels, s.config.row_groups) == (112, 16, 7, 7)
    assert depthwise_shape(_p("convnext_dw7x7_56", N=4, H=28, W=28, C=192, F=192, groups=192), SM90) == wide
    # bf16 and f32 split too (f32: 16 items of 8 pixels), with f32 accumulation
    assert depthwise_shape(_p("convnext_dw7x7_56_b1", dtype="bf16"), SM90) == \
        ItemShape(4, 256, 1, "f32", 0, False, 1, "branch", 8, 8)
    assert depthwise_shape(_p("convnext_dw7x7_56_b1", dtype="f32"), SM90) == \
        ItemShape(8, 128, 1, "f32", 0, False, 1, "branch", 8, 8)
    assert depthwise_shape(dataclasses.replace(_p("convnext_dw7x7_56_b1"), batch_constant=0), SM90) == \
        ItemShape(8, 128, 1, f16)
    assert depthwise_shape(_p("convnext_dw7x7_56", N=16), SM90) == wide
    assert depthwise_shape(_p("convnext_dw7x7_56", H=28, W=28, C=192, F=192, groups=192), SM90) == wide
    assert depthwise_shape(_p("convnext_dw7x7_56", H=14, W=14, C=384, F=384, groups=384), SM90) == wide
    # other types keep 16-byte vectors: 8 pixels as a loop, 4 unrolled below 8 output columns
    assert depthwise_shape(_p("convnext_dw7x7_56", N=8, dtype="bf16"), SM90) == ItemShape(8, 128, 1, "f32")
    assert depthwise_shape(_p("convnext_dw7x7_7", dtype="f32"), SM90) == ItemShape(4, 128, 1, "f32", 0, True)
    # a batch read at run time: the small grids' shape (robust from batch 1 up)
    assert depthwise_shape(dataclasses.replace(_p("mbv2_dw3x3_56_b1"), batch_constant=0), SM90) == \
        ItemShape(2, 128, 1, f16, 1, True, 2, sel)
    assert depthwise_shape(dataclasses.replace(_p("convnext_dw7x7_56"), batch_constant=0), SM90) == \
        ItemShape(8, 128, 1, f16)
    assert depthwise_shape(_p("mbv2_dw3x3_56", dtype="bf16"), SM90).accumulate == "f32"
    assert depthwise_shape(_p("mbv2_dw3x3_56"), get_target("gfx942")) == ItemShape()
    assert depthwise_shape(_p("resnext_g3x3_s1"), SM90) == ItemShape()
    s = plan_grouped(_p("convnext_dw7x7_56"), SM90)
    assert (s.config.pixels, s.threads, s.config.accumulate, s.config.unrolled) == (8, 128, f16, False)
    assert "packed f16" in s.reason and "unrolled" not in s.reason and s.config.padding == "branch"
    s = plan_grouped(_p("mbv2_dw3x3_28"), SM90)
    assert s.config.unrolled and s.config.min_ctas_per_sm == 2 and "filter rows unrolled" in s.reason
    assert s.config.padding == "select" and "zero-selected" in s.reason
    assert plan_grouped(_p("mbv2_dw3x3_28"), SM90, ItemShape(4, 128, 2, f16, 0, True)).config.unrolled is False  # staged
    # select needs unrolled rows: a looped or staged shape keeps the branch
    assert plan_grouped(_p("mbv2_dw3x3_28"), SM90, ItemShape(4, 128, 1, f16, 0, False, 1, sel)).config.padding == "branch"
    assert plan_grouped(_p("mbv2_dw3x3_28"), SM90, ItemShape(4, 128, 2, f16, 0, True, 1, sel)).config.padding == "branch"
    s = plan_grouped(_p("mbv2_dw3x3_56"), SM90)
    assert s.config.rows == 2 and s.grid == (32 * 28 * 14 * 18 // 128, 1, 1) and "2 rows x 4 pixels" in s.reason
    assert plan_grouped(_p("mbv2_dw3x3_56"), SM90, ItemShape(4, 128, 1, f16, 0, False, 2)).config.rows == 1


def test_f16_rows_only_where_the_lowering_has_it():
    """bf16 and grouped convs stay f32 whatever the shape asks."""
    shape = ItemShape(4, 128, 1, "f16_rows")
    assert plan_grouped(_p("mbv2_dw3x3_56", dtype="bf16"), SM90, shape).config.accumulate == "f32"
    assert plan_grouped(_p("resnext_g3x3_s1"), SM90, shape).config.accumulate == "f32"


def test_staging_fits_and_needs_16_byte_vectors():
    p = _p("mbv2_dw3x3_56")
    s = plan_grouped(p, SM90, ItemShape(4, 128, 3))
    assert s.stages == 3 and s.smem_bytes == 4 * 6 * 128 * 16          # ring of 3 + 1 rows, 6 columns
    assert plan_grouped(_p("mbv2_dw3x3_56", C=36, F=36, groups=36), SM90, ItemShape(4, 128, 3)).stages == 1
    assert plan_grouped(p, get_target("gfx942"), ItemShape(4, 128, 3)).stages == 1


def test_candidates_distinct_and_default_first():
    p = _p("mbv2_dw3x3_112")
    cands = candidate_schedules(p, SM90)
    assert cands[0] == plan_grouped(p, SM90)
    knobs = [knobs_of(s) for s in cands]
    assert len(set(knobs)) == len(knobs) >= 20
    assert direct_candidates(p, get_target("gfx942")) == []


def _compile(layer, arch, work, candidate=None):
    """The PTX of layer's build for arch with the planner's candidate `candidate`."""
    dump = os.path.join(work, f"dump_{layer.name}_{arch}_{candidate}")
    compile_layer(pathlib.Path(work), layer, target=arch, dump_dir=dump, tuning_cache="none", candidate=candidate)
    (path,) = glob.glob(os.path.join(dump, "binaries", "*.ptx"))
    return path


def test_packed_f16_and_staged_code(tmp_path):
    L = LAYERS["mbv2_dw3x3_28"]
    text = open(_compile(L, "sm_90a", str(tmp_path))).read()
    # P x S x 4 pairs per filter row, the 3 rows of both output rows unrolled
    assert text.count("fma.rn.f16x2") == 2 * 4 * 3 * 4 * 3 and "fma.rn.f32" not in text
    cands = candidate_schedules(L.expected_problem(), SM90)
    staged = next(i for i, s in enumerate(cands) if s.kernel == "direct_grouped" and s.stages == 3 and s.config.pixels == 4)
    text = open(_compile(L, "sm_90a", str(tmp_path), staged)).read()
    # rows 0 and 1 before the loop, row r + 2 in it: 6 columns each; row r waited for with 2 ahead
    assert text.count("cp.async.cg.shared.global") == 3 * 6 and re.search(r"cp.async.wait_group\s+2;", text)


@pytest.mark.skipif(PTXAS is None, reason="no ptxas (pip install nvidia-cuda-nvcc)")
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_ptxas_on_every_candidate(tmp_path, arch):
    for name in ("mbv2_dw3x3_56", "convnext_dw7x7_7"):
        L = LAYERS[name]
        cands = candidate_schedules(L.expected_problem(), get_target(arch))
        for i, s in enumerate(cands):
            if s.kernel != "direct_grouped":     # the TMA tile kernel's: test_depthwise_tma.py
                continue
            path = _compile(L, arch, str(tmp_path), i or None)
            r = subprocess.run([PTXAS, f"-arch={arch}", "-v", path, "-o", os.devnull], capture_output=True, text=True)
            assert r.returncode == 0, (name, i, r.stderr)
            # no spills in the default; uncapped one-row candidates at most a word or two (ptxas
            # keeps a value on the stack across a row-skip branch at some shapes, 4-8 bytes)
            spilled = int(re.search(r"(\d+) bytes spill stores", r.stderr).group(1))
            if i == 0:
                assert spilled == 0, (name, knobs_of(s), r.stderr)
            elif s.config.min_ctas_per_sm == 0 and s.config.rows == 1:
                assert spilled <= 8, (name, knobs_of(s), r.stderr)


# small depthwise layers whose windows reach rows entirely in the padding
_NUMERIC = [("mbv2_dw3x3_28", dict(N=2, H=9, W=11, C=24, F=24, groups=24)),
            ("effnet_dw5x5_s2", dict(N=1, H=13, W=14, C=16, F=16, groups=16, pad=(2, 1, 3, 2))),
            ("convnext_dw7x7_7", dict(N=1, H=6, W=9, C=16, F=16, groups=16)),
            ("mbv2_dw3x3_28", dict(N=1, H=10, W=12, C=8, F=8, groups=8, dilation=(2, 2), pad=(2, 2, 2, 2)))]


@pytest.mark.parametrize("unrolled,out_rows,padding,vector_bytes",
                         [(False, 1, "branch", 16), (True, 1, "branch", 16), (True, 3, "branch", 16),
                          (True, 1, "select", 16), (True, 2, "select", 16), (True, 2, "select", 8),
                          (True, 1, "branch", 8)],
                         ids=["loop", "unrolled", "3rows", "select", "select2rows", "select2rows8B", "unrolled8B"])
@pytest.mark.parametrize("accumulate", ["f32", "f16_rows"])
@pytest.mark.parametrize("case", range(len(_NUMERIC)))
def test_rows_on_cpu(tmp_path, monkeypatch, case, accumulate, unrolled, out_rows, padding, vector_bytes):
    """3 output rows per item: rows that divide no image height, so the last item's extra rows
    are masked. select: rows in the padding loaded (address and value zero-selected) instead
    of skipped."""
    import convc.passes.plan.kernels.direct_grouped as dg
    name, kw = _NUMERIC[case]
    layer = dataclasses.replace(LAYERS[name], **kw)
    monkeypatch.setattr(dg, "depthwise_shape", lambda p, t: ItemShape(4, 128, 1, accumulate, 0, unrolled, out_rows, padding,
                                                                     vector_bytes))
    vmfb, res = compile_layer(tmp_path, layer)
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.path == "convc" and conv.schedule.config.unrolled == unrolled, conv.line()
    assert conv.schedule.config.rows == min(out_rows, conv.problem.Ho)
    assert conv.schedule.config.accumulate == accumulate and conv.schedule.config.padding == padding
    assert conv.schedule.block_n * (4 if layer.dtype == "f32" else 2) == min(vector_bytes, 16)
    got, ref = run_layer_cpu(vmfb, layer, case)
    assert not np.isnan(got).any(), "unwritten (poisoned) or NaN outputs"
    err = np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err <= 2e-3, err


def test_split_rows_plan():
    """Filter rows split over threads: the workgroup holds threads / groups items, at most R
    groups, f32 partials in workgroup memory; loops only (unrolled or staged shapes keep one)."""
    p = _p("convnext_dw7x7_56_b1")
    s = plan_grouped(p, SM90, ItemShape(4, 224, 1, "f16_rows", 0, False, 1, "branch", 8, 7))
    assert (s.threads, s.block_m, s.block_n, s.config.row_groups) == (224, 32, 4, 7)
    assert s.smem_bytes == 7 * 32 * 4 * 4 * 4 and s.grid == (56 * 14 * 24 // 32, 1, 1)
    assert "split over 7 threads" in s.reason and "row_groups=7" in s.describe()
    s = plan_grouped(_p("mbv2_dw3x3_56_b1"), SM90, ItemShape(4, 224, 1, "f16_rows", 0, False, 1, "branch", 8, 7))
    assert (s.config.row_groups, s.threads, s.block_m) == (3, 96, 32)
    with pytest.raises(Exception, match="row groups"):
        plan_grouped(p, SM90, ItemShape(4, 100, 1, "f16_rows", 0, False, 1, "branch", 8, 7))
    with pytest.raises(Exception, match="static workgroup memory"):         # 64 items x 8 groups x 8 x 8 f32
        plan_grouped(p, SM90, ItemShape(8, 512, 1, "f16_rows", 0, False, 1, "branch", 16, 8))
    wide = _p("convnext_dw7x7_56_b1", R=11, S=11, pad=(5, 5, 5, 5))         # groups capped at 8
    assert {s.config.row_groups for s in direct_candidates(wide, SM90)} >= {4, 8}
    assert plan_grouped(p, SM90, ItemShape(4, 224, 1, "f16_rows", 0, True, 1, "branch", 8, 7)).config.row_groups == 1
    assert plan_grouped(_p("resnext_g3x3_s1"), SM90, ItemShape(4, 224, 1, "f32", 0, False, 1, "branch", 16, 7)) \
        .config.row_groups == 1
    splits = [s for s in direct_candidates(p, SM90) if s.config.row_groups > 1]
    assert {s.config.row_groups for s in splits} == {4, 7} and len(set(map(knobs_of, splits))) == len(splits) == 6


@pytest.mark.parametrize("groups,pixels,vector_bytes", [(2, 4, 16), (3, 2, 8), (7, 4, 8)])
@pytest.mark.parametrize("case", range(len(_NUMERIC)))
def test_split_rows_on_cpu(tmp_path, monkeypatch, case, groups, pixels, vector_bytes):
    """Row groups that divide R or not (the last group's missing rows masked), more groups
    than pixels (idle in the final sum), on windows reaching into the padding."""
    import convc.passes.plan.kernels.direct_grouped as dg
    name, kw = _NUMERIC[case]
    layer = dataclasses.replace(LAYERS[name], **kw)
    monkeypatch.setattr(dg, "depthwise_shape", lambda p, t: ItemShape(pixels, 32 * groups, 1, "f16_rows", 0, False, 1,
                                                                     "branch", vector_bytes, groups))
    vmfb, res = compile_layer(tmp_path, layer)
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.path == "convc" and conv.schedule.config.row_groups == min(groups, conv.problem.R), conv.line()
    got, ref = run_layer_cpu(vmfb, layer, case)
    assert not np.isnan(got).any(), "unwritten (poisoned) or NaN outputs"
    err = np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err <= 2e-3, err
