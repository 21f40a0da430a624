"""convc-sm100-table: compile every suite layer (and seeded random shapes) for sm_100a, assemble
each kernel's PTX with ptxas -arch=sm_100a and tabulate what the assembler reports, next to a
B200 roofline estimate.

  python3 -m convc.tools.sm100_table --out results/sm100 [--only LAYER,...] [--random N]

Writes OUT/ptxas_table.json and OUT/ptxas_table.md: per layer, the kernel and tile convc chose,
ptxas's registers, spill bytes, stack, named barriers, the kernel's shared memory (dynamic, from
the schedule), mbarriers, tensor-memory columns allocated, the tcgen05 SASS instructions
(nvdisasm: UTC*) and a roofline on a B200 (dense f16 2.25 PFLOP/s, 8 TB/s HBM, 148 SMs) with
the tile and wave counts. Compile-only (no B200 exists here): nothing in it was run. Exit
status 1 if a layer fails to compile or assemble, or spills.

ptxas and nvdisasm come from the PyPI wheels `nvidia-cuda-nvcc` / `nvidia-cuda-nvdisasm` (the
`test` extra) or from PATH.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

from ..compiler.driver import CompileOptions, compile_file
from ..compiler.errors import ConvcError
from ..passes.plan.kernels.sm100_ws import sm100_candidates
from ..passes.lower.nvidia.sm100_ws import sm100_layout, tmem_columns
from ..passes.target import get_target
from .layers import Layer, layer_mlir, load_suite
from .suite import git_commit, select

B200_FLOPS = 2.25e15          # dense f16/bf16 tensor-core FLOP/s
B200_BYTES = 8e12             # HBM3e bytes/s
B200_SMS = 148


def find_cuda_tool(name: str) -> str | None:
    """A CUDA binary from the nvidia-cuda-* wheels (nvidia/cu*/bin), else from PATH."""
    try:
        import nvidia
        for root in nvidia.__path__:
            for hit in sorted(glob.glob(os.path.join(root, "cu*", "bin", name)), reverse=True):
                if os.access(hit, os.X_OK):
                    return hit
    except ImportError:
        pass
    return shutil.which(name)


def ptxas_supports_sm100a(ptxas: str) -> bool:
    out = subprocess.run([ptxas, "--help"], capture_output=True, text=True).stdout
    return "sm_100a" in out


def assemble(ptx_path: str, ptxas: str, nvdisasm: str | None, work: str) -> dict:
    """ptxas -arch=sm_100a -v on one PTX file: {kernel symbol: resources} (+ SASS counts)."""
    cubin = os.path.join(work, os.path.basename(ptx_path) + ".cubin")
    r = subprocess.run([ptxas, "-arch=sm_100a", "-v", ptx_path, "-o", cubin], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"ptxas failed: {r.stderr.strip()[:500]}")
    out = parse_ptxas_info(r.stderr)
    if nvdisasm:
        sass = subprocess.run([nvdisasm, cubin], capture_output=True, text=True, check=True).stdout
        for k in out.values():
            k["sass_tcgen05"] = sass_tcgen05_counts(sass)
    return out


def parse_ptxas_info(text: str) -> dict:
    """Per entry function: registers, spill stores/loads, stack frame, named barriers."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            cur = out.setdefault(m.group(1), {})
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            cur.update(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            cur["registers"] = int(m.group(1))
            b = re.search(r"used (\d+) barriers", line)
            cur["named_barriers"] = int(b.group(1)) if b else 0
            s = re.search(r"(\d+) bytes smem", line)
            cur["static_smem"] = int(s.group(1)) if s else 0
    return out


def sass_tcgen05_counts(sass: str) -> dict:
    """Counts of the tcgen05 SASS opcodes (UTC*: UTCHMMA MMAs, UTCBAR commits, UTCATOMSWS
    tensor-memory allocation) and the tensor-memory loads (LDTM)."""
    counts: dict[str, int] = {}
    for op in re.findall(r"\b(UTC[A-Z0-9]+|LDTM)\b", sass):
        counts[op] = counts.get(op, 0) + 1
    return dict(sorted(counts.items()))


def tmem_loads_read_early(ptx: str) -> int:
    """tcgen05.ld destination registers read before the tcgen05.wait::ld that follows the load
    (the registers are written asynchronously: such a read sees whatever they held)."""
    lines, bad = ptx.splitlines(), 0
    for i, line in enumerate(lines):
        m = re.search(r"tcgen05\.ld\.\S+\s+\{([^}]*)\}", line)
        if not m:
            continue
        regs = [r.strip() for r in m.group(1).split(",")]
        pat = re.compile("|".join(re.escape(r) + r"(?![0-9])" for r in regs))
        for later in lines[i + 1:]:
            if "tcgen05.wait::ld" in later:
                break
            if pat.search(later):
                bad += 1
                break
    return bad


def roofline(layer: Layer) -> dict:
    """B200 lower bound: FLOPs at the dense tensor-core rate, or the ideal bytes (every
    operand read once, the output written once) at HBM bandwidth, whichever is slower."""
    p = layer.expected_problem()
    b = {"f16": 2, "bf16": 2, "f32": 4}
    moved = (p.N * p.H * p.W * p.C + p.F * p.gemm_k) * b[p.dtype] + p.gemm_m * p.F * b[p.out_dtype]
    moved += sum((p.F if ld.broadcast == "channel" else p.gemm_m * p.F) * b[ld.dtype] for ld in p.operand_loads)
    t_c, t_m = p.flops / B200_FLOPS, moved / B200_BYTES
    return {"flops": p.flops, "bytes": moved, "compute_us": round(t_c * 1e6, 3), "memory_us": round(t_m * 1e6, 3),
            "roofline_us": round(max(t_c, t_m) * 1e6, 3), "bound": "compute" if t_c >= t_m else "memory"}


def random_layers(n: int, seed: int = 100) -> list[Layer]:
    """n seeded conv shapes the tcgen05 kernel is meant to take: f16/bf16, C a multiple of 32
    (or any multiple of 8 with a 1x1 filter), F a multiple of 8, filters 1..5, strides 1..2,
    dilation 1..2, every epilogue kind."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        r = rng.choice([1, 3, 5])
        one = r == 1 and rng.random() < 0.5
        c = rng.choice([8, 24, 40]) if one else 32 * rng.randint(1, 12)
        f = 8 * rng.randint(1, 64)
        st = rng.choice([1, 2])
        dl = 1 if r == 1 else rng.choice([1, 1, 2])
        pad = [rng.randint(0, (r // 2) * dl) for _ in range(4)]
        h, w = rng.randint(r * dl, 40), rng.randint(r * dl, 40)
        epi = rng.choice(["none", "bias", "bias_relu", "bias_residual_relu"])
        L = Layer(name=f"rand{len(out):02d}", N=rng.randint(1, 8), H=h, W=w, C=c, F=f, R=r, S=r,
                  stride=(st, st), dilation=(dl, dl), pad=tuple(pad), dtype=rng.choice(["f16", "bf16"]),
                  epilogue=epi, group="random")
        try:
            L.expected_problem()
        except ValueError:
            continue
        out.append(L)
    return out


def layer_entry(layer: Layer, work: str, ptxas: str, nvdisasm: str | None, candidate: int | None = None) -> dict:
    """candidate: a tuning candidate instead of the default schedule (1: the other tcgen05
    variant, 1-SM or CTA pair)."""
    src = os.path.join(work, f"{layer.name}.mlir")
    with open(src, "w") as f:
        f.write(layer_mlir(layer, output_arg=True))
    tag = "" if candidate is None else f"_cand{candidate}"
    dump = os.path.join(work, f"dump_{layer.name}{tag}")
    entry = {"layer": layer.name, "group": layer.group, "shape": dataclasses.asdict(layer)}
    if candidate is not None:
        entry["candidate"] = candidate
    try:
        res = compile_file(src, os.path.join(work, f"{layer.name}{tag}.vmfb"),
                           CompileOptions(target="sm_100a", dump_dir=dump, candidate=candidate))
    except ConvcError as e:
        entry["error"] = str(e)
        return entry
    r = res.reports[0]
    entry.update(path=r.path, reason=r.reason)
    if r.schedule is None:
        return entry
    s, p = r.schedule, r.problem
    entry.update(kernel=s.kernel, tile=f"{s.block_m}x{s.block_n}x{s.block_k}", stages=s.stages, threads=s.threads,
                 smem_bytes=s.smem_bytes, grid=s.grid[0])
    cluster = s.config.cluster_size           # CTA pairs of sm100_ws; 1 for the portable fallback
    m_tiles, n_tiles = -(-p.gemm_m // (s.block_m * cluster)), -(-p.F // s.block_n)
    entry.update(tiles=m_tiles * n_tiles, waves=round(m_tiles * n_tiles / (B200_SMS // cluster), 2),
                 tile_utilization=round(p.gemm_m * p.F / (m_tiles * s.block_m * cluster * n_tiles * s.block_n), 3))
    entry["cluster"] = cluster
    if s.kernel == "sm100_ws":
        lay = sm100_layout(p, s.block_n, s.block_k, s.stages, cluster)
        entry.update(tmem_columns=tmem_columns(s.block_n), mbarriers=lay.barriers)
    entry.update(roofline(layer))
    ptx = glob.glob(os.path.join(dump, "binaries", "*.ptx"))
    if len(ptx) != 1:
        entry["error"] = f"{len(ptx)} PTX files dumped"
        return entry
    text = open(ptx[0]).read()
    entry["tcgen05_ptx"] = sorted(set(re.findall(r"\b(tcgen05\.[a-z_]+)", text)))
    entry["tmem_loads_read_early"] = tmem_loads_read_early(text)
    try:
        info = assemble(ptx[0], ptxas, nvdisasm, work)
    except RuntimeError as e:
        entry["error"] = str(e)
        return entry
    k = info.get(p.name) or next(iter(info.values()))
    entry.update(k)
    return entry


def _plans_both(layer: Layer) -> bool:
    """Whether the other tcgen05 variant (1-SM or CTA pair) is tuning candidate 1."""
    cands = sm100_candidates(layer.expected_problem(), get_target("sm_100a"))
    return len(cands) > 1 and {c.config.cluster_size for c in cands[:2]} == {1, 2}


def markdown(entries: list[dict], meta: dict) -> str:
    lines = ["# sm_100a (B200) kernel resources per layer: ptxas, no hardware", "",
             f"Compiled {meta['date']} from commit {meta['commit']} with IREE {meta['iree']} and assembled with "
             f"{meta['ptxas']} (`-arch=sm_100a -v`). Nothing here ran on a GPU. `smem` is the kernel's dynamic shared "
             "memory (its one allocation), `mbar` its mbarriers, `bar` ptxas's named-barrier count, `TMEM` the "
             "tensor-memory columns allocated (two f32 accumulator stages), `UTC` the tcgen05 SASS instructions "
             "nvdisasm finds (UTCHMMA: MMAs, UTCBAR: commits, UTCATOMSWS: alloc/dealloc) and LDTM the tensor-memory "
             "loads. Roofline: max(FLOPs / 2.25 PFLOP/s, ideal bytes / 8 TB/s), a lower bound, not a prediction; "
             "`waves` = tiles / 148 SMs (pair tiles / 74 pairs), `util` the share of the tiles' MMA work inside the output. Written by "
             "`python3 -m convc.tools.sm100_table`.", "",
             "| layer | kernel | tile | stages | regs | spill B | stack B | smem B | mbar | bar | TMEM cols | UTC / LDTM "
             "| tiles | waves | util | roofline us | bound |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in entries:
        if "error" in e:
            lines.append(f"| {e['layer']} | ERROR: {e['error'][:100]} |" + " |" * 15)
            continue
        sass = e.get("sass_tcgen05") or {}
        utc = ", ".join(f"{k} {v}" for k, v in sass.items()) or "-"
        kernel = e.get("kernel", e["path"]) + (" (2x1 pair)" if e.get("cluster") == 2 else "")
        lines.append(f"| {e['layer']} | {kernel} | {e.get('tile', '-')} | {e.get('stages', '-')} | "
                     f"{e.get('registers', '-')} | {e.get('spill_stores', 0) + e.get('spill_loads', 0)} | "
                     f"{e.get('stack', '-')} | {e.get('smem_bytes', '-')} | {e.get('mbarriers', '-')} | "
                     f"{e.get('named_barriers', '-')} | {e.get('tmem_columns', '-')} | {utc} | {e.get('tiles', '-')} | "
                     f"{e.get('waves', '-')} | {e.get('tile_utilization', '-')} | {e.get('roofline_us', '-')} | "
                     f"{e.get('bound', '-')} |")
    ok = [e for e in entries if "error" not in e]
    defaults = [e for e in entries if "candidate" not in e]
    mine = [e for e in ok if e.get("kernel") == "sm100_ws" and "candidate" not in e]
    pair_default = [e for e in mine if e.get("cluster") == 2]
    pairs = [e for e in ok if e.get("cluster") == 2]
    others = [f"{e['layer']} ({e.get('kernel', e['path'])}: {e['reason']})" for e in ok if e.get("kernel") != "sm100_ws"]
    lines += ["", "Summary:", "",
              f"- default schedules: {len(mine)}/{len(defaults)} layers on `sm100_ws`, {len(pair_default)} of them on "
              f"CTA pairs (`cta_group::2`, tile = 256 rows over two CTAs; `tile` shows each CTA's 128 rows: chosen "
              f"where the B200 model gives the pair >= 15% and two waves of pair tiles), the rest 1-SM; the "
              f"other variant is tuning candidate 1; {len(pairs)} pair kernels assembled in all; registers "
              f"{min((e['registers'] for e in mine), default=0)}-{max((e['registers'] for e in mine), default=0)}, "
              f"spill bytes {max((e['spill_stores'] + e['spill_loads'] for e in ok), default=0)} (every kernel), "
              f"stack {max((e['stack'] for e in ok), default=0)} B."]
    lines += [f"- not on `sm100_ws`: {o}" for o in others]
    return "\n".join(lines) + "\n"


def parse_arguments(argv=None):
    p = argparse.ArgumentParser(prog="convc-sm100-table", description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True,
                   help="directory for ptxas_table.json and ptxas_table.md (the committed table: results/sm100)")
    p.add_argument("--only", default=None, help="comma-separated suite layer names")
    p.add_argument("--random", type=int, default=8, help="seeded random shapes after the suite (default 8)")
    return p.parse_args(argv)


def main(args) -> int:
    import iree.compiler.version as v
    ptxas, nvdisasm = find_cuda_tool("ptxas"), find_cuda_tool("nvdisasm")
    if ptxas is None or not ptxas_supports_sm100a(ptxas):
        print("convc-sm100-table: error: no ptxas that knows sm_100a (pip install nvidia-cuda-nvcc)", file=sys.stderr)
        return 1
    layers = select(load_suite(), args.only) + random_layers(args.random)
    version = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": git_commit(), "iree": v.VERSION, "ptxas": f"ptxas {version}",
            "nvdisasm": bool(nvdisasm), "b200": {"flops": B200_FLOPS, "bytes_per_s": B200_BYTES, "sms": B200_SMS}}
    entries = []
    with tempfile.TemporaryDirectory(prefix="convc_sm100_") as work:
        for L in layers:
            # the default schedule, then the other variant (tuning candidate 1) where it plans
            for cand in (None, 1):
                if cand is not None and not _plans_both(L):
                    continue
                e = layer_entry(L, work, ptxas, nvdisasm, cand)
                entries.append(e)
                print(f"{L.name:28s} {e.get('kernel', e.get('path', 'ERROR'))}{'x2' if cand else '':14s} "
                      f"regs={e.get('registers', '-')} spills={e.get('spill_stores', '-')}/{e.get('spill_loads', '-')}"
                      + (f"  {e['error']}" if "error" in e else ""), flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "ptxas_table.json"), "w") as f:
        json.dump({"meta": meta, "layers": entries}, f, indent=1)
    with open(os.path.join(args.out, "ptxas_table.md"), "w") as f:
        f.write(markdown(entries, meta))
    bad = [e for e in entries if "error" in e or e.get("spill_stores", 0) + e.get("spill_loads", 0)
           or e.get("tmem_loads_read_early")]
    return 1 if bad else 0


def _cli_main():
    sys.exit(main(parse_arguments()))


if __name__ == "__main__":
    _cli_main()
