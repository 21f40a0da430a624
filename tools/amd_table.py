"""convc-amd-table: compile every suite layer for gfx942 and gfx950 and tabulate the AMD kernel's
resources, read from the assembly IREE writes (`*.rocmasm`, AMDHSA kernel metadata).

  python3 -m convc.tools.amd_table --out results/amd [--only LAYER,...] [--targets gfx942,gfx950]

Writes OUT/gfx942_gfx950_resources.json and .md: per layer and target, the path and kernel
convc took (with the loader sub-path), VGPRs / AGPRs / SGPRs, LDS bytes, scratch bytes and
spills, and what the instruction stream contains (direct-to-LDS loads, MFMAs, vmcnt waits).
Compile-only; no AMD GPU is needed. Exit status 1 if a layer fails to compile, spills, or
uses scratch.
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import re
import sys
import tempfile

from ..compiler.driver import CompileOptions, compile_file
from ..compiler.errors import ConvcError
from .layers import layer_mlir, load_suite
from .suite import git_commit, select

FIELDS = ("vgpr_count", "agpr_count", "sgpr_count", "group_segment_fixed_size",
          "private_segment_fixed_size", "vgpr_spill_count", "sgpr_spill_count")


def rocmasm_resources(text: str, symbol: str | None = None) -> dict:
    """Resource metadata and instruction counts of one kernel in an AMDGPU assembly file.

    Reads the `amdhsa.kernels` YAML block (`.name`, `.vgpr_count`, ...). symbol: the kernel's
    name (default: the first kernel)."""
    meta = text[text.find("amdhsa.kernels:"):]
    blocks = re.split(r"\n  - ", meta)[1:]
    for b in blocks:
        name = re.search(r"\.name:\s+(\S+)", b)
        if name is None or (symbol and name.group(1) != symbol):
            continue
        out = {"symbol": name.group(1)}
        for f in FIELDS:
            m = re.search(rf"\.{f}:\s+(\d+)", b)
            out[f] = int(m.group(1)) if m else 0
        break
    else:
        raise ValueError(f"kernel {symbol or '(any)'} not found in the assembly metadata")
    body = text[:text.find("amdhsa.kernels:")]
    out["lds_dma_loads"] = len(re.findall(r"^\s*(?:buffer_load_\w+|global_load_lds_\w+)\s.*\blds\b", body, re.M))
    out["mfma"] = len(re.findall(r"^\s*v_mfma_\w+", body, re.M))
    out["mfma_ops"] = sorted(set(re.findall(r"^\s*(v_mfma_\w+)", body, re.M)))
    out["vmcnt_waits"] = sorted({int(x) for x in re.findall(r"s_waitcnt\s+vmcnt\((\d+)\)", body)})
    out["scratch_instructions"] = len(re.findall(r"^\s*scratch_\w+|buffer_store\w*.*\bs\[0:3\].*offen", body, re.M))
    return out


def compile_layer_resources(layer, target: str, work: str) -> dict:
    src = os.path.join(work, f"{layer.name}.mlir")
    with open(src, "w") as f:
        f.write(layer_mlir(layer, output_arg=True))
    dump = os.path.join(work, f"dump_{layer.name}_{target}")
    entry = {"layer": layer.name, "target": target}
    try:
        res = compile_file(src, os.path.join(work, f"{layer.name}.{target}.vmfb"),
                           CompileOptions(target=target, dump_dir=dump))
    except ConvcError as e:
        entry["error"] = str(e)
        return entry
    r = res.reports[0]
    entry.update(path=r.path, reason=r.reason, compile_s=round(res.timings["total"], 2))
    if r.schedule is not None:
        s = r.schedule
        entry.update(kernel=s.kernel, tile=f"{s.block_m}x{s.block_n}x{s.block_k}", stages=s.stages,
                     threads=s.threads)
    sym = r.problem.name if r.problem else None
    asm = "".join(open(p).read() for p in glob.glob(os.path.join(dump, "intermediates", "*.rocmasm")))
    entry.update(rocmasm_resources(asm, None if sym is None else _find_symbol(asm, sym)))
    return entry


def _find_symbol(asm: str, prefix: str) -> str | None:
    names = re.findall(r"\.name:\s+(\S+)", asm[asm.find("amdhsa.kernels:"):])
    hits = [n for n in names if n.startswith(prefix)]
    return hits[0] if hits else None


def _subpath(reason: str) -> str:
    m = re.search(r"LDS-direct im2col \((\w+),", reason or "")
    return m.group(1) if m else "-"


def markdown(entries: list[dict], meta: dict) -> str:
    lines = [f"# AMD kernel resources per suite layer ({', '.join(meta['targets'])})", "",
             f"Compiled {meta['date']} from commit {meta['commit']} with IREE {meta['iree']}, compile only "
             "(no AMD GPU). Read from the `.rocmasm` AMDHSA metadata IREE dumps. `LDS` is "
             "`.group_segment_fixed_size`, `scratch` `.private_segment_fixed_size`; `dma` counts "
             "`buffer_load_* ... lds` instructions, `mfma` `v_mfma_*` instructions in the kernel; "
             "`vmcnt` lists the `s_waitcnt vmcnt(n)` values. Written by `python3 -m convc.tools.amd_table`.", "",
             "| layer | target | kernel | sub-path | tile | stages | VGPR | AGPR | SGPR | LDS B | scratch B | spills | dma | mfma | vmcnt |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in entries:
        if "error" in e:
            lines.append(f"| {e['layer']} | {e['target']} | ERROR: {e['error'][:80]} |" + " |" * 12)
            continue
        lines.append("| {layer} | {target} | {k} | {sp} | {tile} | {stages} | {vgpr_count} | {agpr_count} | "
                     "{sgpr_count} | {group_segment_fixed_size} | {private_segment_fixed_size} | {sp_n} | "
                     "{lds_dma_loads} | {mfma} | {vm} |".format(
                         k=e.get("kernel", e.get("path")), sp=_subpath(e.get("reason")),
                         sp_n=e["vgpr_spill_count"] + e["sgpr_spill_count"],
                         vm=",".join(map(str, e["vmcnt_waits"])) or "-", **{**e, "tile": e.get("tile", "-"),
                                                                              "stages": e.get("stages", "-")}))
    ok = [e for e in entries if "error" not in e]
    lines += ["", "Summary:", ""]
    for t in meta["targets"]:
        mine = [e for e in ok if e["target"] == t and e.get("kernel") == "amd_lds_mfma"]
        other = [e["layer"] for e in ok if e["target"] == t and e.get("kernel") != "amd_lds_mfma"]
        if mine:
            lines.append(f"- {t}: {len(mine)} layers on `amd_lds_mfma`: VGPR "
                         f"{min(e['vgpr_count'] for e in mine)}–{max(e['vgpr_count'] for e in mine)}, LDS "
                         f"{min(e['group_segment_fixed_size'] for e in mine)}–"
                         f"{max(e['group_segment_fixed_size'] for e in mine)} B, scratch "
                         f"{max(e['private_segment_fixed_size'] for e in mine)} B, spills "
                         f"{max(e['vgpr_spill_count'] + e['sgpr_spill_count'] for e in mine)}"
                         + (f"; portable fallback: {', '.join(other)}" if other else ""))
    return "\n".join(lines) + "\n"


def parse_arguments(argv=None):
    p = argparse.ArgumentParser(prog="convc-amd-table", description=__doc__.splitlines()[0])
    p.add_argument("--out", default="results/amd", help="directory for the table (default results/amd)")
    p.add_argument("--only", default=None, help="comma-separated layer names")
    p.add_argument("--targets", default="gfx942,gfx950", help="comma-separated AMD targets (default gfx942,gfx950)")
    return p.parse_args(argv)


def main(args) -> int:
    import iree.compiler.version as v
    layers = select(load_suite(), args.only)
    targets = [t for t in args.targets.split(",") if t]
    entries = []
    with tempfile.TemporaryDirectory(prefix="convc-amd-") as work:
        for L in layers:
            for t in targets:
                e = compile_layer_resources(L, t, work)
                entries.append(e)
                print(f"{L.name} {t}: " + (e.get("error") or
                      f"{e.get('kernel')} vgpr={e['vgpr_count']} lds={e['group_segment_fixed_size']} "
                      f"scratch={e['private_segment_fixed_size']} dma={e['lds_dma_loads']} mfma={e['mfma']}"),
                      flush=True)
    meta = {"targets": targets, "date": datetime.date.today().isoformat(), "commit": git_commit(),
            "iree": getattr(v, "VERSION", "?")}
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, "_".join(targets) + "_resources")
    with open(stem + ".json", "w") as f:
        json.dump({"meta": meta, "layers": entries}, f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write(markdown(entries, meta))
    bad = [e for e in entries if "error" in e or e["private_segment_fixed_size"] or e["vgpr_spill_count"]
           or e["sgpr_spill_count"]]
    for e in bad:
        print(f"FAIL {e['layer']} {e['target']}: {e.get('error') or 'scratch/spills'}", file=sys.stderr)
    return 1 if bad else 0


def _cli_main():
    sys.exit(main(parse_arguments()))


if __name__ == "__main__":
    _cli_main()
