"""Running a vmfb as the README documents: the module's own entry function (not an assumed
`main`), inputs from .npy / ONNX .pb files, results printed and saved, and one-line errors for
a wrong function, a wrong argument count or a driver the machine lacks."""

import os
import sys

import numpy as np
import pytest

from conftest import REPO, assert_one_line_error, has_cuda_device, run_cli
from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule, ModuleError

SHAPES = [(2, 14, 14, 256), (64, 1, 1, 256), (64,), (64, 3, 3, 64), (64,), (256, 1, 1, 64), (256,)]


@pytest.fixture(scope="module")
def block(tmp_path_factory):
    out = tmp_path_factory.mktemp("block") / "block.vmfb"
    compile_file(os.path.join(REPO, "examples", "resnet_bottleneck.mlir"), str(out), CompileOptions(target="llvm-cpu"))
    return out


def _args(tmp_path, fmt="npy"):
    rng = np.random.default_rng(3)
    arrays = [(rng.standard_normal(s) * 0.3).astype(np.float16) for s in SHAPES]
    paths = []
    for i, a in enumerate(arrays):
        if fmt == "pb" and i == 0:
            onnx = pytest.importorskip("onnx")
            from onnx import numpy_helper
            path = tmp_path / f"a{i}.pb"
            path.write_bytes(numpy_helper.from_array(a).SerializeToString())
            assert isinstance(onnx.TensorProto.FromString(path.read_bytes()), onnx.TensorProto)
        else:
            path = tmp_path / f"a{i}.npy"
            np.save(path, a)
        paths.append(str(path))
    return arrays, paths


def _invoke(*args):
    return run_cli(sys.executable, "-m", "convc.runtime.invoke", *map(str, args))


def test_entry_function_is_the_modules_own(block):
    m = LoadedModule(str(block))
    assert m.entry == "bottleneck"
    with pytest.raises(ModuleError, match="no function 'main'.*exports: bottleneck"):
        m.function("main")


@pytest.mark.parametrize("fmt", ["npy", "pb"])
def test_invoke_reads_files_and_saves_results(block, tmp_path, fmt):
    arrays, paths = _args(tmp_path, fmt)
    out = tmp_path / "y.npy"
    proc = _invoke(block, "--driver", "local-task", *sum((["--input", p] for p in paths), []), "--output", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("bottleneck(2x14x14x256xf16, 64x1x1x256xf16")
    assert "result 0: 2x14x14x256 float16 nan=False" in proc.stdout
    expected = LoadedModule(str(block)).call(None, [(a, "f16") for a in arrays])
    np.testing.assert_array_equal(np.load(out), expected)


def test_invoke_errors_are_one_line(block, tmp_path):
    _, paths = _args(tmp_path)
    cases = [(["--input", paths[0]], "expected 7 arguments but passed 1"),
             (["--input", paths[0], "--function", "main"], "no function 'main'"),
             (["--input", "2x14xf64"], "bad --input"),
             (["--input", str(tmp_path / "missing.npy")], "missing.npy")]
    for extra, message in cases:
        assert_one_line_error(_invoke(block, "--driver", "local-task", *extra), "invoke: error:", message)


def test_invoke_without_the_driver_is_one_line(block, tmp_path):
    """CUDA on a machine without a GPU (CI): a clear line, not a traceback."""
    if has_cuda_device():
        pytest.skip("this machine has a CUDA device")
    _, paths = _args(tmp_path)
    proc = _invoke(block, "--driver", "cuda", *sum((["--input", p] for p in paths), []))
    assert proc.returncode == 1
    assert_one_line_error(proc, "invoke: error:")
