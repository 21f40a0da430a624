"""GPU tools on a machine without a GPU (CI): one clear line and a nonzero exit, before any
work (convc-tune used to compile for a minute, print tracebacks and write an empty cache)."""

import os
import time

import pytest

from conftest import REPO, run_cli


@pytest.fixture(autouse=True)
def _no_cuda():
    import iree.runtime as rt
    try:
        rt.get_device("cuda", cache=False)
    except Exception:
        return
    pytest.skip("this machine has a CUDA device")


def _one_line(proc, tool):
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"{tool}: error: no cuda device on this machine"), lines[0]


def test_gpu_check(tmp_path):
    proc = run_cli("convc-gpu-check", "--bundle", str(tmp_path))
    assert proc.returncode == 2
    _one_line(proc, "convc-gpu-check")


def test_tune_run(tmp_path):
    cache = tmp_path / "cache.json"
    t0 = time.perf_counter()
    proc = run_cli("convc-tune", "run", "--suite", os.path.join(REPO, "tools", "data", "narrow_f.json"),
                   "--cache", str(cache))
    assert proc.returncode == 1
    _one_line(proc, "convc-tune")
    assert not cache.exists()
    assert time.perf_counter() - t0 < 30          # nothing was compiled
