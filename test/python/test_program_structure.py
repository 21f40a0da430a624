"""What the IREE runtime executes per inference of a convc build (counted in the vmfb's VM
bytecode, so no GPU is needed): the program stock IREE builds for the same model, with one
command buffer recorded once at load. Nothing convc adds may split the host program: no host
wait, transient allocations at most stock IREE's + 1 (stock IREE's program read at its stream
phase from the same input, without convc's passes), at most 2 queue submissions, or 3 where
convc-record-once recorded the command buffer against fixed buffers (the input copied in, the
fixed command buffer, the output copied out: one round trip, `passes/splice/record_once.py`)."""

import os

import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.compiler.structure import program_structure, stream_structure


def _check(result, stock, recorded_once=True):
    assert result.structure, "no exported async function found in the vmfb"
    by_name = {s.function: s for s in stock}
    for s in result.structure:
        assert s.submissions <= (3 if s.fixed_buffers else 2), s.line()
        assert s.host_waits == 0, s.line()
        assert s.allocations <= by_name[s.function].allocations + 1, (s.line(), by_name[s.function])
        assert s.uploads == 0, s.line()         # constants live in globals, uploaded at load
        if recorded_once:       # memoized: recorded at load (a dynamic batch is a per-call push constant)
            assert s.dispatches_recorded_per_call == 0, s.line()
    # the report shows the same counts the vmfb holds
    assert program_structure(result.output) == result.structure
    assert any(line.startswith("program ") for line in result.summary_lines())


def test_onnx_light_resnet50(tmp_path):
    pytest.importorskip("onnx")
    from convc.tools.models import light_dir
    model = os.path.join(light_dir(), "light_resnet50.onnx")
    res = compile_file(model, str(tmp_path / "r50.vmfb"),
                       CompileOptions(target="sm_90a", tuning_cache="none", dump_dir=str(tmp_path / "dump")))
    assert sum(r.path == "convc" for r in res.reports if r.is_conv) == 32
    # its max-pool on convc's direct kernel, and the global pool with the last block's bias,
    # residual add and ReLU, which IREE fuses into it, as its prologue (the Gemm's weight is a
    # splat here: IREE keeps it)
    pools = [r for r in res.reports if r.is_pool]
    assert [r.path for r in pools] == ["convc", "convc"]
    (head,) = [r for r in pools if r.problem.is_global_pool]
    assert {ld.broadcast for st in head.problem.prologue for ld in st.loads} == {"channel", "full"}
    stock = stream_structure(str(tmp_path / "dump" / "light_resnet50.input.mlir"))
    _check(res, stock)
    (line,) = [x for x in res.summary_lines() if x.startswith("program ")]
    assert line == ("program resnet50$async: 3 queue submissions, 0 host waits, 1 transient allocation per "
                    "inference; command buffer recorded once against fixed buffers (a CUDA graph with "
                    "--cuda_use_streams=false)")
    # the counts a user checks: executables, dispatches per inference, the model's conv ops (53
    # Conv nodes); the compile-time split names the ONNX import
    assert res.summary_lines()[0] == ("32 of 32 conv executables on convc, running 53 of 53 conv dispatches per "
                                      "inference (the model has 53 conv ops)")
    assert "onnx import" in res.timing_line()


def test_record_once_off_keeps_iree_program(tmp_path):
    """--record-once off: the program IREE builds (one submission with a binding table)."""
    pytest.importorskip("onnx")
    from convc.tools.models import light_dir
    res = compile_file(os.path.join(light_dir(), "light_resnet50.onnx"), str(tmp_path / "r50.vmfb"),
                       CompileOptions(target="sm_90a", tuning_cache="none", record_once="off"))
    (line,) = [x for x in res.summary_lines() if x.startswith("program ")]
    assert line == ("program resnet50$async: 1 queue submission, 0 host waits, 2 transient allocations per "
                    "inference; command buffer recorded once")


def test_repeated_transposes_are_listed_once_with_a_count():
    from convc.compiler.driver import CompileResult
    r = CompileResult("x.vmfb", transposes=[("init_transpose_64x9", "module initialization"),
                                             ("init_transpose_64x9", "module initialization"),
                                             ("main_transpose_3x50176", "model input")])
    lines = r.summary_lines()
    assert "3 transpose dispatches left:" in lines
    assert "  init_transpose_64x9 (x2): module initialization" in lines
    assert "  main_transpose_3x50176: model input" in lines


def _torch_block(torch):
    """Conv-BN-ReLU, a strided 1x1 shortcut, a grouped conv, max-pool, global pool and a
    classifier: the ops around convs that convc-channels-last puts barriers beside."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 32, 3, stride=2, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(32)
            self.pool = nn.MaxPool2d(3, 2, 1)
            self.c2 = nn.Conv2d(32, 64, 3, padding=1, groups=4, bias=False)
            self.bn2 = nn.BatchNorm2d(64)
            self.short = nn.Conv2d(32, 64, 1, bias=False)
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            y = self.pool(torch.relu(self.bn1(self.c1(x))))
            y = torch.relu(self.bn2(self.c2(y)) + self.short(y))
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))

    torch.manual_seed(0)
    return Block().eval()


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic_batch"])
def test_pytorch_block(tmp_path, dynamic):
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import compile_module
    res = compile_module(_torch_block(torch).half(), (torch.randn(2, 3, 32, 32).half(),),
                         str(tmp_path / "block.vmfb"), dynamic_batch=dynamic, target="sm_90a",
                         tuning_cache="none", dump_dir=str(tmp_path / "dump"))
    assert sum(r.path == "convc" for r in res.reports if r.is_conv) == 3
    # the max-pool, the global pool (with the bias IREE fuses into it) and the classifier on
    # convc's kernels too
    assert [r.path for r in res.reports if r.is_pool] == ["convc", "convc"]
    assert [r.path for r in res.reports if r.gemm] == ["convc"]
    (src,) = [f for f in os.listdir(tmp_path / "dump") if f.endswith(".input.mlir")]
    _check(res, stream_structure(str(tmp_path / "dump" / src)), recorded_once=not dynamic)
    # a static build's command buffer has fixed buffers; a dynamic batch's stays IREE's, and says why
    assert all(s.fixed_buffers != dynamic for s in res.structure), [s.line() for s in res.structure]
    assert any("command buffer on every call (a dynamic shape)" in n for n in res.notes) == dynamic, res.notes


def test_a_declined_map_keeps_pad_fusion(tmp_path):
    """A dynamic-batch conv -> GroupNorm -> SiLU -> conv block: GroupNorm's per-group
    elementwise dispatch is declined as a map (its operand's broadcast), which must not turn
    IREE's pad fusion off the way a declined dynamic conv does: the convs keep their fused
    padding (with it off, the dynamic VAE decoder's pads became copies: 1.17 -> 2.48 ms)."""
    torch = pytest.importorskip("torch")
    from torch import nn
    from convc.compiler.pytorch import compile_module

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.gn, self.c2 = nn.Conv2d(16, 32, 3, padding=1), nn.GroupNorm(8, 32), nn.Conv2d(32, 16, 3, padding=1)

        def forward(self, x):
            return self.c2(nn.functional.silu(self.gn(self.c1(x))))

    torch.manual_seed(0)
    res = compile_module(Block().eval().half(), (torch.randn(2, 16, 16, 16).half(),), str(tmp_path / "b.vmfb"),
                         dynamic_batch=True, target="sm_90a", tuning_cache="none")
    assert any(r.reason.startswith("map not taken:") for r in res.reports), [r.line() for r in res.reports]
    convs = [r for r in res.reports if r.is_conv]
    assert len(convs) == 2 and all(r.path == "convc" and r.problem.pad == (1, 1, 1, 1) for r in convs)
    assert not any("pad fusion" in n for n in res.notes), res.notes
