"""convc-record-once on real programs, run on the CPU (llvm-cpu, local-task): the rewritten host
program (fixed buffers, copies in and out, calls ordered by a module fence; on CPU targets each
submission waits on the one before) gives the same numbers as IREE's own program and as an
independent reference, call after call, with every result still valid after later calls."""

import os

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule, records_once


def _build(src, out, record_once, **kw):
    res = compile_file(src, out, CompileOptions(target="llvm-cpu", tuning_cache="none", record_once=record_once, **kw))
    assert all(s.fixed_buffers == (record_once == "on") for s in res.structure), [s.line() for s in res.structure]
    assert records_once(out) == (record_once == "on")
    return res


def test_onnx_light_resnet50_matches_iree_program(tmp_path):
    pytest.importorskip("onnx")
    from convc.tools.models import light_dir
    src = os.path.join(light_dir(), "light_resnet50.onnx")
    _build(src, str(tmp_path / "on.vmfb"), "on")
    _build(src, str(tmp_path / "off.vmfb"), "off")
    on, off = LoadedModule(str(tmp_path / "on.vmfb")), LoadedModule(str(tmp_path / "off.vmfb"))
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal((1, 3, 224, 224)).astype(np.float32) for _ in range(3)]
    f = on.function()
    held = [f(on.to_device(x, "f32")) for x in xs]          # every call made before any is read
    for x, r in zip(xs, held):
        want = off.function()(off.to_device(x, "f32")).to_host()
        assert np.array_equal(r.to_host(), want)


def test_pytorch_block_against_torch(tmp_path):
    torch = pytest.importorskip("torch")
    from torch import nn
    from convc.compiler.pytorch import export_mlir

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(8, 32, 3, padding=1)
            self.c2 = nn.Conv2d(32, 16, 1)
            self.fc = nn.Linear(16, 5)

        def forward(self, x):
            y = self.c2(torch.relu(self.c1(x)))
            return self.fc(y.mean((2, 3)))

    torch.manual_seed(3)
    model = Block().eval()
    src = tmp_path / "block.mlir"
    src.write_text(export_mlir(model, (torch.zeros(2, 8, 12, 12),)))
    _build(str(src), str(tmp_path / "b.vmfb"), "on")
    lm = LoadedModule(str(tmp_path / "b.vmfb"))
    f = lm.function()
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((2, 8, 12, 12)).astype(np.float32) for _ in range(4)]
    held = [f(lm.to_device(x, "f32")) for x in xs]
    with torch.no_grad():
        for x, r in zip(xs, held):
            want = model(torch.from_numpy(x)).numpy()
            got = r.to_host()
            assert np.linalg.norm(got - want) <= 1e-4 * np.linalg.norm(want), (got, want)
