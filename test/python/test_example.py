"""The bundled ResNet bottleneck block, compiled by convc for llvm-cpu, against numpy."""

import os

import numpy as np

from conftest import REPO
from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.arrays import random_input, to_f32
from convc.runtime.module import LoadedModule
from convc.tools.gpu.reference import conv_nhwc_fhwc_numpy, rel_l2


def test_bottleneck_block_numerics(tmp_path):
    out = tmp_path / "block.vmfb"
    res = compile_file(os.path.join(REPO, "examples", "resnet_bottleneck.mlir"), str(out),
                       CompileOptions(target="llvm-cpu"))
    assert [r.path for r in res.reports] == ["convc"] * 3
    rng = np.random.default_rng(7)
    shapes = [(2, 14, 14, 256), (64, 1, 1, 256), (64,), (64, 3, 3, 64), (64,), (256, 1, 1, 64), (256,)]
    args = [random_input(rng, s, "f16", 0.5) for s in shapes]
    got = LoadedModule(str(out)).call("bottleneck", [(a, "f16") for a in args]).astype(np.float32)
    x, w1, b1, w2, b2, w3, b3 = [to_f32(a, "f16") for a in args]
    f16 = lambda a: a.astype(np.float16).astype(np.float32)      # the model rounds between convs
    y1 = f16(np.maximum(conv_nhwc_fhwc_numpy(x, w1, (1, 1), (1, 1), (0, 0, 0, 0)) + b1, 0))
    y2 = f16(np.maximum(conv_nhwc_fhwc_numpy(y1, w2, (1, 1), (1, 1), (1, 1, 1, 1)) + b2, 0))
    y3 = np.maximum(conv_nhwc_fhwc_numpy(y2, w3, (1, 1), (1, 1), (0, 0, 0, 0)) + b3 + x, 0)
    assert not np.isnan(got).any()
    assert rel_l2(got, y3) < 1e-2
