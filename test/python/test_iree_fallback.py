"""Convs convc leaves to IREE must come out right too (test/inputs/iree_fallback_suite.json):
llvm-cpu numerics against the numpy fp32 reference with NaN-poisoned outputs, and sm_90a
builds checked for where each dispatch goes and for the IREE codegen path they take."""

import json
import os
import subprocess

import numpy as np
import pytest

from conftest import REPO, compile_layer, run_layer_cpu
from iree.compiler.tools.binaries import find_tool

from convc.passes.ir import ir
from convc.passes.match.pad_dispatch import pad_dispatches
from convc.tools.layers import load_suite

SUITE = os.path.join(REPO, "test", "inputs", "iree_fallback_suite.json")
LAYERS = load_suite(SUITE)
EXPECT = {d["name"]: d["expect"] for d in json.load(open(SUITE))["layers"]}


def _conv_path(res) -> str:
    """Where the layer's conv went: these single-conv models have at most one convc conv
    dispatch (an elementwise dispatch beside it may be a convc map)."""
    return "convc" if any(r.path == "convc" and r.is_conv for r in res.reports) else "IREE"


@pytest.mark.parametrize("layer", LAYERS, ids=lambda L: L.name)
def test_fallback_numerics_on_cpu(tmp_path, layer):
    vmfb, res = compile_layer(tmp_path, layer)
    assert _conv_path(res) == EXPECT[layer.name]["llvm-cpu"], [r.line() for r in res.reports]
    got, ref = run_layer_cpu(vmfb, layer, 0)
    assert not np.isnan(got).any(), "unwritten (poisoned) or NaN outputs"
    err = np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)
    assert err <= (1e-2 if layer.out_dtype != "f32" else 1e-5), err


@pytest.mark.parametrize("layer", LAYERS, ids=lambda L: L.name)
def test_fallback_builds_for_sm90a_without_pad_dispatches(tmp_path, layer):
    """iree-compile builds every layer for sm_90a, and no dispatch it compiles writes a padded
    tensor (IREE's GPU codegen drops the low padding of such a pad)."""
    _, res = compile_layer(tmp_path, layer, target="sm_90a", dump_dir=str(tmp_path / "d"))
    assert _conv_path(res) == EXPECT[layer.name]["sm_90a"], [r.line() for r in res.reports]
    with open(tmp_path / "d" / f"{layer.name}.spliced.mlir") as f:
        spliced = ir.Module.parse(f.read(), ir.Context())
    assert pad_dispatches(spliced) == []


def test_driver_says_which_pads_it_copies(tmp_path):
    layer = next(L for L in LAYERS if L.name == "fz0107_dense")
    _, res = compile_layer(tmp_path, layer, target="sm_90a")
    assert any("written as a fill and a copy" in n and "drops the low padding" in n for n in res.notes), res.notes


PAD_STORE = """
func.func @pad(%src: tensor<20x26xf32>, %dst: memref<21x27xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %src low[0, 1] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<20x26xf32> to tensor<21x27xf32>
  iree_codegen.store_to_buffer %p, %dst : tensor<21x27xf32> into memref<21x27xf32>
  return
}
"""


def test_iree_gpu_codegen_still_drops_the_low_padding(tmp_path):
    """Why convc-pad-copy rewrites dispatches that store a pad: IREE 3.13's
    iree-codegen-gpu-combine-layout-transformation turns a stored pad into a map_store whose
    indices lack the low padding (element [i, j] lands on [i, j], not [i, j + 1]). When this
    fails, the IREE in use computes the shift, and convc-pad-copy can go."""
    src = tmp_path / "pad.mlir"
    src.write_text(PAD_STORE)
    out = subprocess.run([find_tool("iree-opt"), str(src), "--pass-pipeline=builtin.module(func.func("
                          "iree-codegen-gpu-combine-layout-transformation,canonicalize,cse))"],
                         capture_output=True, text=True, check=True).stdout
    body = out[out.index("iree_linalg_ext.map_store"):]
    body = body[:body.index("} :")]
    assert "affine.apply" not in body and "arith.addi" not in body, body
