"""Reads the Nsight Compute tables tools/device/profile.sh and profile_model.sh bring back
(BASE.details.csv: every section; BASE.source.csv: per-SASS-instruction warp-stall samples)
and prints what a kernel's time went to: the headline metrics, the stall reasons, the
instructions by opcode (executed and sampled), and which stretches of the SASS the samples
fall in (a kernel's main loop, epilogue and waits are contiguous stretches).

  python3 -m convc.tools.ncu_summary DIR_OR_TARBALL [--block 100]

Every number comes from the tables; nothing is inferred.
"""

from __future__ import annotations

import argparse
import collections
import csv
import glob
import io
import os
import re
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field

HEADLINE = ("Duration", "SM Frequency", "Elapsed Cycles", "SM Active Cycles", "Compute (SM) Throughput",
            "Memory Throughput", "DRAM Throughput", "L2 Cache Throughput", "Issue Slots Busy", "Executed Ipc Active",
            "Warp Cycles Per Issued Instruction", "Eligible Warps Per Scheduler", "Registers Per Thread",
            "Dynamic Shared Memory Per Block", "Block Size", "Grid Size", "Achieved Occupancy", "L2 Hit Rate")


@dataclass
class SassLine:
    opcode: str
    executed: int
    samples: int
    stalls: dict = field(default_factory=dict)


def read_details(text: str) -> tuple[str, dict[str, str]]:
    """(kernel name, {metric: "value unit"}) of a --page details --csv table (first value of
    each metric name)."""
    rows = list(csv.DictReader(io.StringIO(text)))
    out: dict[str, str] = {}
    for r in rows:
        name = r.get("Metric Name") or ""
        if name and name not in out:
            out[name] = f"{r.get('Metric Value', '')} {r.get('Metric Unit', '')}".strip()
    return (rows[0].get("Kernel Name", "") if rows else ""), out


def _int(s: str | None) -> int:
    s = (s or "").replace(",", "").strip()
    return int(float(s)) if s else 0


def opcode(source: str) -> str:
    """The opcode of a SASS line, its predicate dropped (`@!P0 BRA ...` -> BRA)."""
    words = source.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def read_source(text: str) -> list[SassLine]:
    """The SASS lines of a --page source --print-source sass --csv table (its first line names
    the kernel)."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.lstrip('"').startswith("Address")), None)
    if start is None:
        return []
    rows = list(csv.DictReader(lines[start:]))
    stall_cols = [k for k in (rows[0] if rows else {}) if k.startswith("stall_") and "Not Issued" not in k]
    return [SassLine(opcode(r.get("Source", "")), _int(r.get("Instructions Executed")),
                     _int(r.get("Warp Stall Sampling (All Samples)")),
                     {k[len("stall_"):]: _int(r.get(k)) for k in stall_cols})
            for r in rows]


def summarize_source(sass: list[SassLine], block: int = 100, top: int = 8) -> list[str]:
    total = sum(s.samples for s in sass) or 1
    stalls = collections.Counter()
    by_op, executed = collections.Counter(), collections.Counter()
    for s in sass:
        stalls.update(s.stalls)
        by_op[s.opcode] += s.samples
        executed[s.opcode] += s.executed
    n_stall = sum(stalls.values()) or 1
    out = [f"  samples {total}, instructions executed {sum(executed.values())}",
           "  stalls: " + ", ".join(f"{k} {v / n_stall:.0%}" for k, v in stalls.most_common(top)),
           "  sampled: " + ", ".join(f"{k} {v / total:.0%}" for k, v in by_op.most_common(top)),
           "  executed: " + ", ".join(f"{k} {v}" for k, v in executed.most_common(top)),
           f"  stretches of {block} SASS lines with 1%+ of the samples:"]
    for b in range(0, len(sass), block):
        part = sass[b:b + block]
        share = sum(s.samples for s in part) / total
        if share < 0.01:
            continue
        ops = collections.Counter()
        st = collections.Counter()
        for s in part:
            ops[s.opcode] += s.samples
            st.update(s.stalls)
        out.append(f"    {b:5d}-{b + len(part) - 1:<5d} {share:5.1%}  runs x{max(s.executed for s in part)}  "
                   + ", ".join(k for k, _ in ops.most_common(4)) + "  | "
                   + ", ".join(f"{k} {v / (sum(st.values()) or 1):.0%}" for k, v in st.most_common(3)))
    return out


def summarize_dir(d: str, block: int = 100) -> list[str]:
    out = []
    for details in sorted(glob.glob(os.path.join(d, "**", "*.details.csv"), recursive=True)):
        base = details[:-len(".details.csv")]
        kernel, metrics = read_details(open(details).read())
        out.append(f"== {os.path.relpath(base, d)}: {kernel}")
        out += [f"  {m:40s} {metrics[m]}" for m in HEADLINE if m in metrics]
        if os.path.exists(base + ".source.csv"):
            out += summarize_source(read_source(open(base + ".source.csv").read()), block)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="ncu_summary", description=__doc__.splitlines()[0])
    p.add_argument("path", help="a directory of BASE.details.csv / BASE.source.csv tables, or a .tar.gz of one")
    p.add_argument("--block", type=int, default=100, help="SASS lines per stretch (default 100)")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        d = a.path
        if re.search(r"\.tar(\.gz)?$", d):
            with tarfile.open(d) as t:
                t.extractall(tmp, filter="data")
            d = tmp
        lines = summarize_dir(d, a.block)
    if not lines:
        print(f"ncu_summary: no *.details.csv under {a.path}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
