"""The transposed-conv bench layers (tools/transposed.py): each ONNX model (ConvTranspose with
its initializers, ReLU, a Transpose to NHWC) compiled with --input-layout nhwc runs its
sub-pixel convs on convc with no transpose dispatch left, and computes the transposed conv
(llvm-cpu, against the numpy scatter reference of test_transposed_conv)."""

import dataclasses

import numpy as np
import pytest

pytest.importorskip("onnx")

from convc.runtime.module import LoadedModule  # noqa: E402
from convc.tools.transposed import LAYERS, TransposedLayer, compile_layer, main, weights  # noqa: E402

from test_transposed_conv import conv_transpose_reference  # noqa: E402


@pytest.mark.parametrize("L", [TransposedLayer("t3", 2, 6, 5, 8, 16, 3, 2, 1, 1, "f32"),
                               TransposedLayer("t2", 1, 4, 4, 16, 8, 2, 2, 0, 0, "f32"),
                               TransposedLayer("t4", 2, 5, 5, 8, 8, 4, 2, 1, 0, "f32")], ids=lambda L: L.name)
def test_layer_model_computes_the_transposed_conv(tmp_path, L):
    e = compile_layer(L, str(tmp_path), target="llvm-cpu")
    assert e["on_convc"] and e["transposes"] == [], e
    w, b = weights(L)
    x = np.random.default_rng(0).standard_normal((L.N, L.C, L.H, L.W)).astype(np.float32)
    got = LoadedModule(str(tmp_path / e["vmfb"]), "local-task").call(None, [(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), "f32")])
    ref = np.maximum(conv_transpose_reference(x, w, b, (L.stride,) * 2, (L.pad,) * 2, (L.output_padding,) * 2), 0)
    ref = ref.transpose(0, 2, 3, 1)
    assert got.shape == ref.shape == (L.N, L.Ho, L.Wo, L.F)
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-5


def test_sm90_layers_are_subpixel_convs_without_transposes(tmp_path):
    """Compile-only for sm_90a: a 2x2/2 U-Net layer is one conv of 4F channels, a 3x3/2 one
    four phase convs; no transpose dispatch left around them."""
    for name, phases in (("unet_up_256_128_112", 1), ("fcn_up3_256_128_32", 4)):
        L = dataclasses.replace(next(L for L in LAYERS if L.name == name), N=1)
        e = compile_layer(L, str(tmp_path))
        assert e["phase_convs"] == phases and e["on_convc"] and e["transposes"] == [], e


def test_list_and_unknown_layer(capsys):
    assert main(["list"]) == 0 and "dcgan_512_256_8" in capsys.readouterr().out
    assert main(["prepare", "--out", "x", "--only", "nope"]) == 2
    assert "unknown layer nope" in capsys.readouterr().err
