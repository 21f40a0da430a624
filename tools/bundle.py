"""What every bundle's manifest records: the compiler's commit and, per compile, its dispatches
(shared by convc-suite, convc-bench, convc-fuzz and the families bundle; the GPU check reads it)."""

from __future__ import annotations

import os
import subprocess


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
    entry["path"] = "convc" if any(r.path == "convc" for r in res.reports) else "IREE"
    entry["ok"] = True
    entry["schedule"] = next((r.schedule.to_dict() for r in res.reports if r.schedule), None)
    return entry
