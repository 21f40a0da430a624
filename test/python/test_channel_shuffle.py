"""ShuffleNetV2's channel shuffles and splits as interleaves of the concatenated pieces
(passes/layout/channel_shuffle.py, in convc-channels-last), run by the copy kernel.

ShuffleNetV2 units (tools/e2e_models.py, torchvision's form: a downsampling unit: both branches,
concat, shuffle; a basic unit: split in halves, one half through the branch, concat, shuffle), exported
with convc's PyTorch front end, compiled for llvm-cpu and run through the IREE runtime against
PyTorch in float64. Structure: no transpose runs between the blocks (the shuffles and splits
are copies) and every concatenation is on the copy kernel.
"""

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

torch = pytest.importorskip("torch")
nn = torch.nn


@pytest.mark.parametrize("channels", [24, 58], ids=["aligned", "odd_halves"])
def test_shufflenet_blocks_shuffle_and_split_without_transposes(tmp_path, channels):
    from convc.compiler.pytorch import export_mlir
    from convc.tools.e2e_models import ShuffleUnit
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), ShuffleUnit(16, 2 * channels, 2), ShuffleUnit(2 * channels, 2 * channels, 1),
                      ShuffleUnit(2 * channels, 2 * channels, 1), nn.Conv2d(2 * channels, 8, 1)).eval()
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2)
    x = torch.randn(2, 3, 20, 18)
    src, out = tmp_path / "shuffle.mlir", tmp_path / "shuffle.vmfb"
    src.write_text(export_mlir(m, (x,)))
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    got = LoadedModule(str(out), "local-task").call(None, [(x.numpy(), "f32")])
    with torch.no_grad():
        ref = m.double()(x.double()).numpy()
    assert got.shape == ref.shape and np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-5
    lines = [r.line() for r in res.reports]
    runtime = [(d, why) for d, why in res.transposes if "initialization" not in why]
    # the model input and output are the only layout changes at run time
    assert len(runtime) <= 2 and all("model" in why for _, why in runtime), runtime
    copies = res.by_kind()["copies"]
    assert copies and all(r.path == "convc" for r in copies), lines
    assert not [r for r in res.reports if "slow_memcpy" in r.dispatch], lines
    convs = res.by_kind()["convs"]
    assert all(r.path == "convc" for r in convs), lines
