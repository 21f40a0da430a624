"""Runs iree-compile in a subprocess (an LLVM fatal error must not kill our process)."""

from __future__ import annotations

import shlex
import subprocess
import time

from iree.compiler.tools.binaries import find_tool

from .errors import ConvcError


def iree_compile(args: list[str], what: str) -> float:
    """Runs `iree-compile ARGS`; returns seconds taken. Raises ConvcError with a repro."""
    exe = find_tool("iree-compile")
    cmd = [exe] + args
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()
        first = next((line for line in err if "error" in line), err[0] if err else f"exit {proc.returncode}")
        raise ConvcError(f"iree-compile failed during {what}: {first.strip()} "
                         f"(repro: {shlex.join(['iree-compile'] + args)})")
    return dt
