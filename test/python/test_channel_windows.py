"""Convs whose input or residual is a window of a wider operand's channels (YOLOv8's C2f: a 1x1
conv's output split in two halves, the bottleneck reading the second half and adding it back as
its shortcut). convc takes them on its kernels (ConvProblem input_channels / residual_channels:
the operand's pixel pitch and the window's first channel), instead of leaving IREE's codegen
a sliced load: checked on llvm-cpu against PyTorch fp32, static and with runtime image sizes,
and the sm_90a plan (persistent kernel, no direct loads)."""

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

torch = pytest.importorskip("torch")


def _c2f(n: int = 2):
    from convc.tools.e2e_models import C2f, load_synthetic
    return load_synthetic(torch.nn.Sequential(C2f(32, 64, n)), seed=3).eval()


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "runtime_hw"])
def test_c2f_windows_match_pytorch(tmp_path, dynamic):
    from convc.compiler.pytorch import export_mlir
    net = _c2f()
    (tmp_path / "m.mlir").write_text(export_mlir(net, (torch.randn(2, 32, 12, 10),), dynamic_spatial=dynamic))
    res = compile_file(str(tmp_path / "m.mlir"), str(tmp_path / "m.vmfb"), CompileOptions(target="llvm-cpu"))
    convs = res.by_kind()["convs"]
    assert all(r.path == "convc" for r in convs), [r.line() for r in convs]
    windows = [r.problem for r in convs if r.problem.channel_windows]
    if not dynamic:
        assert any(p.input_channels == 64 and p.input_channel_offset == 32 for p in windows)
        assert any(p.residual_channels == 64 and p.residual_channel_offset == 32 for p in windows)
    m = LoadedModule(str(tmp_path / "m.vmfb"), "local-task")
    for h, w in ((12, 10),) + (((7, 9), (16, 5)) if dynamic else ()):
        x = torch.randn(2, 32, h, w)
        with torch.no_grad():
            ref = net(x).numpy()
        got = m.call("main", [(x.numpy(), "f32")])
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_c2f_windows_take_the_persistent_kernel_on_sm90a(tmp_path):
    from convc.compiler.pytorch import export_mlir
    net = _c2f(1).half()
    (tmp_path / "m.mlir").write_text(export_mlir(net, (torch.randn(2, 32, 12, 10, dtype=torch.half),)))
    res = compile_file(str(tmp_path / "m.mlir"), str(tmp_path / "m.vmfb"),
                       CompileOptions(target="sm_90a", input_layout="nhwc"))
    windows = [r for r in res.by_kind()["convs"] if r.problem is not None and r.problem.channel_windows]
    assert len(windows) == 2, [r.line() for r in res.by_kind()["convs"]]
    for r in windows:
        assert r.path == "convc" and r.schedule.kernel.value.startswith("sm90_ws"), r.line()
        assert r.schedule.config.direct_stages == 0 and "maps at the windows" in r.reason


def test_window_problem_fields_round_trip_and_validate():
    from convc.passes.problem import ConvProblem, EpilogueStep
    p = ConvProblem(N=2, H=8, W=8, C=32, F=32, R=3, S=3, pad=(1, 1, 1, 1), dtype="f16", out_dtype="f16",
                    input_channels=64, input_channel_offset=32, residual_channels=64, residual_channel_offset=32,
                    epilogue=(EpilogueStep("add", "f16", operand=2, broadcast="full"),), num_operands=3)
    assert ConvProblem.from_dict(p.to_dict()) == p and p.input_pitch == 64 and p.residual_pitch == 64
    assert "_cs32of64" in p.name and "_rs32of64" in p.name
    plain = ConvProblem(N=2, H=8, W=8, C=32, F=32, R=3, S=3)
    assert "input_channels" not in plain.to_dict() and "_cs" not in plain.name
    with pytest.raises(ValueError):
        ConvProblem(N=2, H=8, W=8, C=32, F=32, R=3, S=3, input_channels=48, input_channel_offset=32)
