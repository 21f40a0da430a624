"""GPU tools on a machine without a GPU (CI): one clear line and a nonzero exit, before any
work (convc-tune used to compile for a minute, print tracebacks and write an empty cache)."""

import os
import time

import pytest

from conftest import REPO, assert_one_line_error, has_cuda_device, run_cli


@pytest.fixture(autouse=True)
def _no_cuda():
    if has_cuda_device():
        pytest.skip("this machine has a CUDA device")


def test_gpu_check(tmp_path):
    proc = run_cli("convc-gpu-check", "--bundle", str(tmp_path))
    assert proc.returncode == 2
    assert_one_line_error(proc, "convc-gpu-check: error: no cuda device on this machine")
    assert proc.stderr.startswith("convc-gpu-check: error:")


def test_tune_run(tmp_path):
    cache = tmp_path / "cache.json"
    t0 = time.perf_counter()
    proc = run_cli("convc-tune", "run", "--suite", os.path.join(REPO, "tools", "data", "narrow_f.json"),
                   "--cache", str(cache))
    assert proc.returncode == 1
    assert_one_line_error(proc, "convc-tune: error: no cuda device on this machine")
    assert proc.stderr.startswith("convc-tune: error:")
    assert not cache.exists()
    assert time.perf_counter() - t0 < 30          # nothing was compiled
