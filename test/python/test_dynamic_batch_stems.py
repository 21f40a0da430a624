"""Dynamic-batch convs whose channel rows TMA cannot tile (RGB stems, a 4-channel latent) on
tensor cores: RGB stems of up to 3x3 on the grouped mma.sync kernel as one group (as static
ones), others (ResNet's 7x7/2) on the thread-gathered im2col + wgmma kernel, one CTA per
output tile with its grid computed from the run-time batch (plan/kernels/f32.py
plan_dynamic_batch, sm90_gather.gather_batch_grid). The portable kernel ResNet-50's stem fell
back to took 743 us at batch 32 on an H200 (convc-e2e record), the gathered kernel 169 us.
GPU checked through convc-e2e (resnet50_dyn_b1/b7/b32, the VAE decoder at batches 1 and 2) and
compute-sanitizer on the model below at batches 1 and 3."""

import dataclasses

import pytest

from convc.passes.plan.plan_schedule import plan_schedule_for
from convc.passes.problem import ConvProblem
from convc.passes.target import get_target

from conftest import PTXAS, assert_ptxas

SM90 = get_target("sm_90a")


def _dyn(**kw) -> ConvProblem:
    base = dict(N=8, H=224, W=224, C=3, F=64, R=7, S=7, stride=(2, 2), pad=(3, 3, 3, 3), dtype="f16",
                out_dtype="f16", batch_constant=0, num_constants=1)
    return ConvProblem(**{**base, **kw})


def test_resnet_stem_takes_the_gathered_wgmma_kernel():
    s = plan_schedule_for(_dyn(), SM90)
    assert s.kernel == "sm90_gather_wgmma" and s.reason.endswith("batch read at run time"), s.reason


def test_latent_input_takes_the_gathered_wgmma_kernel():
    s = plan_schedule_for(_dyn(H=64, W=64, C=4, F=512, R=3, S=3, stride=(1, 1), pad=(1, 1, 1, 1)), SM90)
    assert s.kernel == "sm90_gather_wgmma", s.reason


def test_small_rgb_stem_takes_the_grouped_kernel():
    s = plan_schedule_for(_dyn(F=32, R=3, S=3, pad=(1, 1, 1, 1)), SM90)
    assert s.kernel == "grouped_mma" and "batch read at run time" in s.reason, s.reason


@pytest.mark.parametrize("dtype,precision", [("f32", "tf32"), ("f32", "fp32")])
def test_f32_stems_stay_portable(dtype, precision):
    """The gathered kernel moves 16-bit tiles: f32 stems keep the portable kernel."""
    s = plan_schedule_for(_dyn(dtype=dtype, out_dtype=dtype), SM90, precision=precision)
    assert s.kernel == "portable_igemm" and "batch read at run time" in s.reason, s.reason


def test_static_stems_keep_their_kernels():
    static = dataclasses.replace(_dyn(), batch_constant=-1, num_constants=0)
    assert not static.dynamic_batch
    assert plan_schedule_for(static, SM90).kernel == "sm90_rows_wgmma"


@pytest.mark.skipif(PTXAS is None, reason="no ptxas (pip install nvidia-cuda-nvcc)")
def test_dynamic_stems_compile_and_assemble(tmp_path):
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import compile_module

    torch.manual_seed(0)

    class Stems(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(3, 64, 7, 2, 3)        # ResNet's stem
            self.b = torch.nn.Conv2d(4, 32, 3, 1, 1)        # a 4-channel latent
            self.c = torch.nn.Conv2d(3, 32, 3, 2, 1)        # MobileNet's stem

        def forward(self, x, z):
            return torch.relu(self.a(x)), self.b(z), torch.nn.functional.relu6(self.c(x))

    dump = tmp_path / "dump"
    res = compile_module(Stems().eval().half(), (torch.randn(2, 3, 38, 38).half(), torch.randn(2, 4, 19, 19).half()),
                         str(tmp_path / "m.vmfb"), dynamic_batch=True, target="sm_90a", dump_dir=str(dump))
    convs = [r for r in res.reports if r.is_conv]
    assert [r.path for r in convs] == ["convc"] * 3, [r.line() for r in res.reports]
    assert sorted(r.schedule.kernel for r in convs) == ["grouped_mma", "grouped_mma", "sm90_gather_wgmma"]
    assert all(r.problem.dynamic_batch for r in convs)
    assert_ptxas(tmp_path, sorted(dump.rglob("*.ptx")), "sm_90a")
