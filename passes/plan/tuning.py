"""The tuning cache: measured winners per (target, device, problem), read by the planner.

`convc-tune` times every candidate schedule of a problem on a GPU and records the winner
here; later `convc` runs read it (`--tuning-cache`, default $CONVC_TUNING_CACHE or
$XDG_CACHE_HOME/convc/tuning.json). A winner is stored as the candidate's knobs
(kernel, block_m, block_n, raster, split_k), never as a raw schedule: the planner re-derives
the schedule from its own candidate list, so a cache written by an older convc can only select
a schedule this convc would produce itself.

File format (JSON): {"format": "convc-tuning-1", "entries": {KEY: ENTRY}} with
KEY = "target|device|problem name" and ENTRY = {"knobs": [...], "us": float, "tried": int,
"date": str, "commit": str, "candidates": [{"knobs": [...], "us": float|null, "ok": bool}]}.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache

from ..kernel_configs import (DepthwiseMmaConfig, DepthwiseTmaConfig, DirectGroupedConfig, GroupedMmaConfig, PersistentConfig, Sm90WsConfig,
                             TmaWgmmaConfig)
from ..schedule import Schedule

FORMAT = "convc-tuning-1"


class TuningCacheError(ValueError):
    pass


@dataclass(frozen=True)
class Winner:
    device: str
    knobs: tuple
    us: float
    tried: int
    date: str
    measured: tuple = ()        # knobs of every candidate timed with it (older caches: empty)

    def pick(self, candidates: list[Schedule]) -> Schedule | None:
        """The candidate this winner names. An entry from before direct prologue loads names
        its tile without them: that tile, with whatever prologue the planner gives it now,
        unless the no-direct variant is itself a candidate."""
        exact = [s for s in candidates if list(knobs_of(s)) == list(self.knobs)]
        legacy = [s for s in candidates if list(knobs_of(without_direct_loads(s))) == list(self.knobs)]
        return (exact + legacy or [None])[0]

    def outdated_by(self, default_knobs) -> bool:
        """True when the current default schedule was not among the candidates this winner
        beat (a newer kernel family, e.g.): the measurement no longer says the winner is
        faster, so the default is used."""
        return bool(self.measured) and tuple(default_knobs) not in self.measured


def default_cache_path() -> str | None:
    """$CONVC_TUNING_CACHE ("" or "none" disables), else $XDG_CACHE_HOME/convc/tuning.json."""
    env = os.environ.get("CONVC_TUNING_CACHE")
    if env is not None:
        return None if env in ("", "none") else env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "convc", "tuning.json")


def key(target: str, device: str, problem: str) -> str:
    return f"{target}|{device}|{problem}"


class TuningCache:
    def __init__(self, entries: dict | None = None, path: str | None = None):
        self.entries = dict(entries or {})
        self.path = path

    @classmethod
    def read(cls, path: str) -> "TuningCache":
        if not os.path.exists(path):
            return cls({}, path)
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise TuningCacheError(f"tuning cache {path}: {e}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
            raise TuningCacheError(f"tuning cache {path}: not a {FORMAT} file")
        return cls(data["entries"], path)

    def write(self, path: str | None = None) -> str:
        path = path or self.path
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"format": FORMAT, "entries": dict(sorted(self.entries.items()))}, f, indent=1)
        os.replace(tmp, path)
        return path

    def record(self, target: str, device: str, problem: str, entry: dict) -> None:
        self.entries[key(target, device, problem)] = entry

    def lookup(self, target: str, problem: str, device: str | None = None) -> Winner | None:
        """The winner for problem on `device`, or (device None) on the most recently tuned
        device of this target."""
        best = None
        for k, v in self.entries.items():
            t, d, prob = k.split("|", 2)
            if t != target or prob != problem or (device is not None and d != device):
                continue
            measured = tuple(tuple(c["knobs"]) for c in v.get("candidates", []) if "knobs" in c)
            w = Winner(d, tuple(v["knobs"]), float(v["us"]), int(v.get("tried", 0)), str(v.get("date", "")), measured)
            if best is None or w.date > best.date:
                best = w
        return best


def knobs_of(s: Schedule) -> tuple:
    """What distinguishes one candidate from another (the tuning cache stores this): the
    kernel, tile, rasterization, split-K and cluster (1 for kernels without them: the flat
    schedule record these caches were first written from), then the family's own knobs. The
    epilogue slot count and swap join only when not at their defaults, and the direct prologue
    loads and a consumer warpgroup count other than two only when used, so caches written
    before them still match (a winner measured
    without direct loads stays without them); likewise the direct kernel's unrolled rows, output
    rows, padding select and row groups (its channel vector width is block_n)."""
    c = s.config
    persistent = c if isinstance(c, PersistentConfig) else PersistentConfig()
    split_k = c.split_k if isinstance(c, TmaWgmmaConfig) else 1
    base = (s.kernel, s.block_m, s.block_n, persistent.raster, split_k, persistent.cluster_m)
    if isinstance(c, GroupedMmaConfig):     # its tile is rows x columns, with 1 or 2 patch buffers
        return base + (c.rows, c.cols, s.stages) + ((f"slices{c.slices}",) if c.slices > 1 else ())
    if isinstance(c, DepthwiseMmaConfig):   # tile, threads, co-residency
        return base + (c.rows, c.cols, s.threads, c.ctas_per_sm)
    if isinstance(c, DepthwiseTmaConfig):   # tile, pixels per thread, ring slots, threads, co-residency
        return base + (c.rows, c.cols, c.pixels, s.stages, s.threads, c.accumulate, c.ctas_per_sm)
    if isinstance(c, DirectGroupedConfig):  # pixels per item, workgroup size, filter rows in flight
        return base + (c.pixels, s.threads, s.stages, c.accumulate, c.min_ctas_per_sm) + \
            (("unrolled",) if c.unrolled else ()) + ((f"rows{c.rows}",) if c.rows > 1 else ()) + \
            (("select",) if c.padding == "select" else ()) + \
            ((f"row_groups{c.row_groups}",) if c.row_groups > 1 else ())
    if not isinstance(c, Sm90WsConfig):
        return base
    extra = (c.epilogue_slots, c.swap_ab)
    direct = (f"direct{c.direct_stages}",) if c.direct_stages else ()
    consumers = (f"consumers{c.consumers}",) if c.consumers != 2 else ()
    return base + (extra if extra != (1, False) or direct else ()) + direct + consumers



def unique_by_knobs(scheds: list[Schedule]) -> list[Schedule]:
    """The schedules with distinct knobs (knobs_of), each the first of its kind, in order."""
    seen, out = set(), []
    for s in scheds:
        k = knobs_of(s)
        if k not in seen:
            seen.add(k)
            out.append(s)
    return out

def without_direct_loads(s: Schedule) -> Schedule:
    """s as a cache entry written before direct prologue loads names it."""
    return s.with_config(direct_stages=0) if isinstance(s.config, Sm90WsConfig) else s


@lru_cache(maxsize=8)
def _read_cached(path: str, mtime: float) -> TuningCache:
    return TuningCache.read(path)


def load_cache(path: str | None) -> TuningCache | None:
    """The cache at path (None: the default location); None when there is none."""
    if path is None:
        path = default_cache_path()
    if not path or path == "none" or not os.path.exists(path):
        return None
    return _read_cached(path, os.path.getmtime(path))
