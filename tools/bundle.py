"""What every bundle's manifest records: the compiler's commit and, per compile, its dispatches
(shared by convc-suite, convc-bench, convc-fuzz and the families bundle; the GPU check reads it)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import time

from ..compiler.driver import CompileOptions, compile_file
from ..compiler.errors import ConvcError
from .layers import Layer, layer_mlir


# Layer bundles time and check kernels: they keep IREE's host program (convc-record-once would
# add a copy of every input and of the output to each call, which kernel timings would count).
LAYER_RECORD_ONCE = "off"


def git_commit() -> str:
    """Commit of the compiler that built a bundle; "+uncommitted" if the tree had changes."""
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        out = subprocess.run(["git", "describe", "--always", "--dirty=+uncommitted", "--abbrev=7"],
                             cwd=here, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except Exception:
        return "unknown"


def record_compile(entry: dict, res) -> dict:
    """What a bundle's manifest records of a successful compile (shared by convc-suite,
    convc-bench and convc-fuzz bundles, which the GPU check reads)."""
    entry["timings"] = {k: round(v, 3) for k, v in res.timings.items()}
    entry["dispatches"] = [{"dispatch": r.dispatch, "path": r.path, "reason": r.reason,
                            "kernel": r.schedule.describe() if r.schedule else None} for r in res.reports]
    # the layer's conv decides (a copy kernel beside it, e.g. a padded filter assembled at run
    # time, does not)
    convs = [r for r in res.reports if r.problem is not None] or res.reports
    entry["path"] = "convc" if any(r.path == "convc" for r in convs) else "IREE"
    entry["ok"] = True
    entry["schedule"] = next((r.schedule.to_dict() for r in convs if r.schedule), None)
    return entry


def compile_entry(L: Layer, out: str, target: str, candidate: int | None = None) -> dict:
    """Compiles layer L's model (output storage as an argument) into out/NAME.vmfb with default
    schedules, or with the planner's candidate `candidate` (the tuner's knob); the manifest entry,
    ok False with the error if it failed."""
    src = os.path.join(out, f"{L.name}.mlir")
    with open(src, "w") as fh:
        fh.write(layer_mlir(L, output_arg=True))
    entry = {"layer": dataclasses.asdict(L), "vmfb": f"{L.name}.vmfb", "candidate": candidate or 0}
    t0 = time.perf_counter()
    try:
        record_compile(entry, compile_file(src, os.path.join(out, entry["vmfb"]), CompileOptions(
            target=target, tuning_cache="none", candidate=candidate, record_once=LAYER_RECORD_ONCE)))
    except ConvcError as e:
        entry.update(ok=False, error=str(e))
    entry["compile_s"] = round(time.perf_counter() - t0, 2)
    os.remove(src)
    return entry
