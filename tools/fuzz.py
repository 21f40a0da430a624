"""convc-fuzz: randomized conv problems x every schedule the planner would accept, as a bundle
the GPU check runs (`tools/device/gpu_check.sh BUNDLE`: NaN-poisoned outputs against PyTorch
fp32).

  convc-fuzz prepare --seed 1 --count 100 --out BUNDLE [--target sm_90a] [--max-candidates 6] [--jobs J]
                     [--kernel FAMILY]
  convc-fuzz shrink --results CHECK.json --bundle BUNDLE --out NEXT [--regressions FILE.json]
  convc-fuzz shrink --local --bundle BUNDLE --case NAME [--regressions FILE.json]
  convc-fuzz summarize --results CHECK.json|ROWS.jsonl --bundle BUNDLE [...] --out FILE.json

Problems (`draw`): N, H, W, C, F, R, S, strides 1-3, dilations 1-3, asymmetric pads (some
larger than the filter's reach), outputs of a single pixel and huge outputs (5%: 48-112 px, N 8-32), C and F around the alignment
boundaries the planner uses (8, 32, 64, 128 +- 1..8), f16/bf16/f32, every epilogue,
grouped/depthwise layers (tools.layers.random_grouped_layers), and with `--int8-share` dense
int8 layers (i32 accumulators out, or requantized to i8; checked exactly). Each problem is compiled with
its default schedule and with every other tuning candidate (`CompileOptions.candidate`, the
knob convc-tune uses), so that the kernels the planner only picks for other shapes run on
these. `--kernel FAMILY` aims the run at one kernel family: draws go on until `count` problems
have candidates of that family, and only those candidates are compiled. The bundle's manifest
records the seed and the distribution of what was drawn.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import dataclasses
import json
import os
import random
import sys
import time
from itertools import repeat

from ..passes.plan.plan_schedule import candidate_schedules
from ..passes.problem import FP8_INPUT_DTYPES as FP8
from ..passes.target import get_target
from ..passes.schedule import Schedule
from .bundle import compile_entry, git_commit
from .gpu.check import check_layer
from .layers import EPILOGUES, Layer, has_output, random_grouped_layers
from .shrink import cost, reductions, same_kind, shrink

BOUNDARIES = (8, 16, 32, 64, 128, 256)


def _channels(rng: random.Random) -> int:
    x = rng.random()
    if x < 0.35:                      # on an alignment boundary (the fast kernels' shapes)
        return rng.choice(BOUNDARIES)
    if x < 0.7:                       # next to one
        return max(1, rng.choice(BOUNDARIES) + rng.choice([-8, -4, -2, -1, 1, 2, 4, 8]))
    return rng.choice([1, 2, 3, 4, 6, 12, 24, 40, 96, 160, 320, 512])


def draw_dense(rng: random.Random, name: str) -> Layer:
    """One dense layer; retried by the caller while its output is empty."""
    R, S = rng.choice([1, 1, 3, 3, 3, 5, 7]), rng.choice([1, 1, 3, 3, 3, 5, 7])
    stride = (rng.choice([1, 1, 2, 3]), rng.choice([1, 1, 2, 3]))
    dilation = (rng.choice([1, 1, 1, 2, 3]), rng.choice([1, 1, 1, 2, 3]))
    big = rng.random() < 0.15         # pads past the filter's reach
    pad = tuple(rng.randint(0, (R if i % 2 == 0 else S) + (3 if big else 0)) for i in range(4))
    if rng.random() < 0.1:            # a single output pixel
        H = dilation[0] * (R - 1) + 1 - pad[0] - pad[2]
        W = dilation[1] * (S - 1) + 1 - pad[1] - pad[3]
    elif rng.random() < 0.05:         # huge M (up to ~400k output rows): many tiles, many waves
        H, W = rng.randint(48, 112), rng.randint(48, 112)
    else:
        H, W = rng.randint(1, 40), rng.randint(1, 40)
    N = rng.choice([1, 1, 2, 3, 8, 32]) if H * W < 400 else rng.choice([1, 2, 4]) if H * W < 2304 else rng.choice([8, 16, 32])
    return Layer(name=name, N=N, H=max(H, 1), W=max(W, 1), C=_channels(rng), F=_channels(rng), R=R, S=S,
                 stride=stride, dilation=dilation, pad=pad, dtype=rng.choice(["f16", "f16", "f16", "bf16", "f32"]),
                 epilogue=rng.choice(EPILOGUES), group="fuzz")


def draw_int8(rng: random.Random, name: str) -> Layer:
    """A dense int8 layer (s8 x s8 summed in i32; groups = 1, as convc takes int8): the dense
    draw's windows, strides, dilations, pads and channel counts, i8 operands, an i32 output
    (no epilogue) or a requantized i8 one."""
    return dataclasses.replace(draw_dense(rng, name), dtype="i8")


def draw_fp8(rng: random.Random, name: str) -> Layer:
    """A dense OCP fp8 layer (e4m3 or e5m2 operands, their f32 sums as the output): the dense
    draw's windows, strides, dilations and pads, with the channel counts convc's fp8 kernels
    read (CUDA has no fallback for fp8: elsewhere the conv is an error naming it, checked by
    the tests, not drawn here): C a multiple of 64 (of 16 with a 1x1 filter), and with a 1x1
    filter F a multiple of 8 (wider filters pad F)."""
    L = draw_dense(rng, name)
    one_tap = L.R * L.S == 1
    C = 16 * rng.randint(1, 24) if one_tap else 64 * rng.randint(1, 4)
    F = -(-L.F // 8) * 8 if one_tap else L.F
    return dataclasses.replace(L, C=C, F=F, dtype=rng.choice(["f8E4M3FN", "f8E5M2"]), epilogue="none")


def _own_draws(rng: random.Random, n: int, fn) -> list[Layer]:
    """n layers of fn(rng, name) with an output (a generator of their own, so that a seed's
    other draws stay as they were)."""
    out: list[Layer] = []
    while len(out) < n:
        L = fn(rng, "")
        if has_output(L):
            out.append(L)
    return out


def draw(seed: int, count: int, grouped_share: float = 0.25, wide_share: float = 0.0,
         int8_share: float = 0.0, fp8_share: float = 0.0) -> list[Layer]:
    """`count` problems: grouped/depthwise ones (grouped_share), depthwise ones with 7-9 column
    windows (wide_share), dense int8 ones (int8_share) and fp8 ones (fp8_share; all 0 keep the
    draws of seeds from before they existed: the 8-bit draws come from generators of their
    own), dense ones."""
    rng = random.Random(seed)
    n_grouped, n_wide = int(count * grouped_share), int(count * wide_share)
    grouped, wide = random_grouped_layers(seed, n_grouped), random_grouped_layers(seed, n_wide, wide=True)
    # interleaved in proportion (a prefix of the draw, as --kernel takes, holds both kinds)
    order = sorted([(i / len(grouped), 0, i) for i in range(len(grouped))] + [(j / len(wide), 1, j) for j in range(len(wide))])
    drawn = [(grouped, wide)[k][i] for _, k, i in order]
    out = [dataclasses.replace(L, name=f"fz{i:04d}_{L.name.split('_', 1)[1]}"
                               + ("_wide" if L.group == "depthwise_wide_random" else ""), group="fuzz")
           for i, L in enumerate(drawn[:count])]
    for kind, share, fn in (("int8", int8_share, draw_int8), ("fp8", fp8_share, draw_fp8)):
        got = _own_draws(random.Random(f"{kind}/{seed}"), int(count * share), fn)
        out += [dataclasses.replace(L, name=f"fz{len(out) + i:04d}_{kind}") for i, L in enumerate(got[:count - len(out)])]
    while len(out) < count:
        L = draw_dense(rng, f"fz{len(out):04d}_dense")
        if has_output(L):
            out.append(L)
    return out


def distribution(layers: list[Layer]) -> dict:
    def hist(key):
        return dict(sorted(collections.Counter(str(key(L)) for L in layers).items()))
    return {"dtype": hist(lambda L: L.dtype), "epilogue": hist(lambda L: L.epilogue),
            "kind": hist(lambda L: "dense" if L.groups == 1 else "depthwise" if L.depthwise else "grouped"),
            "filter": hist(lambda L: f"{L.R}x{L.S}"), "stride": hist(lambda L: L.stride),
            "dilation": hist(lambda L: L.dilation), "one_pixel_output": hist(lambda L: L.Ho * L.Wo == 1),
            "pad_past_reach": hist(lambda L: max(L.pad) > max(L.R, L.S) - 1)}


def _candidates(L: Layer, target: str) -> list[Schedule]:
    try:
        return candidate_schedules(L.expected_problem(), get_target(target))
    except ValueError:                    # the planner declines (PlanError): the default path only
        return []


def _problem_pairs(L: Layer, out: str, target: str, max_candidates: int, kernel: str | None = None) -> list[dict]:
    """Compiles one problem with its default schedule and every other tuning candidate (with a
    kernel: its candidates only)."""
    cands = _candidates(L, target)
    if kernel:
        picks = [i for i, s in enumerate(cands) if s.kernel == kernel][:max_candidates]
    else:
        picks = list(range(min(len(cands), max_candidates))) if len(cands) > 1 else [None]
    entries = [compile_entry(dataclasses.replace(L, name=f"{L.name}_c{i or 0}"), out, target, i) for i in picks]
    for e in entries:
        e["declined"] = not e["ok"] and fp8_declined(L, e.get("error", ""))
    return entries


def fp8_declined(L: Layer, error: str) -> bool:
    """An fp8 draw convc declines with its one-line error (a conv form its matcher does not
    read, on a target where IREE cannot compile fp8: no fallback there), not a failure."""
    return L.dtype in FP8 and ("fp8 conv not supported" in error or "fp8 values left to IREE" in error)


def draw_for_kernel(seed: int, count: int, kernel: str, target: str, wide_share: float = 0.0) -> list[Layer]:
    """`count` problems of the seed's draws (grouped ones in half of them) that have candidates
    of `kernel`."""
    out, n = [], 0
    while len(out) < count:
        n = max(2 * n, 4 * count)
        out = [L for L in draw(seed, n, grouped_share=0.5, wide_share=wide_share)
               if any(s.kernel == kernel for s in _candidates(L, target))][:count]
        if n > 1000 * count:
            raise ValueError(f"the draws of seed {seed} have no candidates of {kernel!r}")
    return out


def prepare(layers: list[Layer], out: str, target: str, max_candidates: int, seed: int, jobs: int = 1,
            kernel: str | None = None, wide_share: float = 0.0, int8_share: float = 0.0,
            fp8_share: float = 0.0) -> dict:
    """Compiles every problem's pairs into `out` (`jobs` compiles at once). The manifest is
    rewritten every 50 problems ("complete": false until the end), so that a long run can be
    checked before it finishes."""
    os.makedirs(out, exist_ok=True)
    entries: list[dict] = []
    done: list[Layer] = []
    t0 = time.perf_counter()
    commit = git_commit()          # the code that compiles: the tree may move on during a long run

    def manifest(complete: bool) -> dict:
        m = {"target": target, "commit": commit, "seed": seed, "kernel": kernel, "wide_share": wide_share,
             "int8_share": int8_share, "fp8_share": fp8_share,
             "problems": len(done),
             "problems_drawn": len(layers), "complete": complete,
             "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "pairs": len(entries), "distribution": distribution(done), "layers": entries}
        with open(os.path.join(out, "manifest.json.tmp"), "w") as f:
            json.dump(m, f, indent=1)
        os.replace(os.path.join(out, "manifest.json.tmp"), os.path.join(out, "manifest.json"))
        return m

    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else _Inline() as pool:
        for L, pairs in zip(layers, pool.map(_problem_pairs, layers, repeat(out), repeat(target), repeat(max_candidates),
                                                   repeat(kernel))):
            entries += pairs
            done.append(L)
            print(f"{L.name:24s} {len(pairs)} schedule(s) {sum(e['ok'] for e in entries)}/{len(entries)} "
                  f"compiled, {time.perf_counter() - t0:.0f} s", flush=True)
            if len(done) % 50 == 0:
                manifest(False)
    return manifest(True)


class _Inline:
    """A stand-in for a process pool when compiling in this process."""
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def map(self, fn, *iterables):
        return map(fn, *iterables)


def _write_manifest(out: str, target: str, entries: list, **extra) -> dict:
    m = {"target": target, "commit": git_commit(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
         "pairs": len(entries), "layers": entries, **extra}
    with open(os.path.join(out, "manifest.json"), "w") as fh:
        json.dump(m, fh, indent=1)
    return m


def _add_regressions(path: str | None, layers: list[Layer]) -> None:
    """Appends minimal failing layers to a suite JSON ({"layers": [...]}) the GPU check and the
    CPU regression tests read."""
    if not path or not layers:
        return
    data = {"layers": []}
    if os.path.exists(path):
        with open(path) as fh:
            data = json.load(fh)
    names = {d["name"] for d in data["layers"]}
    data["layers"] += [dict(dataclasses.asdict(dataclasses.replace(L, group="fuzz_regression")))
                       for L in layers if L.name not in names]
    with open(path, "w") as fh:
        fh.write('{"description": ' + json.dumps(data.get("description", "")) + ',\n "layers": [\n'
                 + ",\n".join(json.dumps(d) for d in data["layers"]) + "\n]}\n")


def shrink_round(results: dict, bundle: str, out: str, target: str) -> tuple[dict, list[Layer]]:
    """One GPU shrinking round (see tools/shrink.py): from a GPU check of `bundle`, the next
    bundle of reductions, and the cases found minimal."""
    with open(os.path.join(bundle, "manifest.json")) as fh:
        manifest = json.load(fh)
    t = get_target(target)
    by_origin: dict[str, dict] = {}
    for row in results["layers"]:
        entry = manifest["layers"][row["index"]]
        origin = entry.get("shrink_of", entry["layer"]["name"])
        o = by_origin.setdefault(origin, {"failing": [], "parent": entry.get("shrink_parent"), "kind": None})
        if not row["correct"] and entry.get("ok") and entry.get("path") == "convc":
            o["failing"].append((Layer(**entry["layer"]), entry["schedule"]))
    os.makedirs(out, exist_ok=True)
    entries, minimal = [], []
    for origin, o in by_origin.items():
        if not o["failing"]:
            if o["parent"]:                    # no reduction of the parent fails: it is minimal
                minimal.append(Layer(**o["parent"]["layer"]))
            continue
        cur, sched = min(o["failing"], key=lambda x: cost(x[0]))
        kind = Schedule.from_dict(sched)
        for k, r in enumerate(reductions(cur)):
            i = same_kind(r, t, kind)
            if i is None:
                continue
            r = dataclasses.replace(r, name=f"{origin}_s{len(entries):03d}")
            e = compile_entry(r, out, target, i)
            e.update(shrink_of=origin, shrink_parent={"layer": dataclasses.asdict(cur), "schedule": sched})
            entries.append(e)
        if not any(e["shrink_of"] == origin for e in entries):
            minimal.append(cur)                # nothing smaller keeps the schedule's kind
    return _write_manifest(out, target, entries, purpose="convc-fuzz shrink round"), minimal


def shrink_local(bundle: str, case: str) -> tuple[Layer, int]:
    """Shrinks a case whose failure shows on the CPU: each reduction compiled for llvm-cpu and
    checked against the reference here."""
    with open(os.path.join(bundle, "manifest.json")) as fh:
        manifest = json.load(fh)
    entry = next(e for e in manifest["layers"] if e["layer"]["name"] == case)
    work = os.path.join(bundle, "shrink_" + case)
    os.makedirs(work, exist_ok=True)

    def fails(L: Layer) -> bool:
        e = compile_entry(dataclasses.replace(L, name="try"), work, "llvm-cpu", None)
        return not check_layer(work, e, "local-task", "numpy", seed=0)["correct"]
    return shrink(Layer(**entry["layer"]), fails)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="convc-fuzz", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["prepare", "shrink", "summarize"],
                   help="prepare: compile a fuzz bundle for the GPU check; shrink: reduce failing cases; "
                        "summarize: the record of GPU runs (--results and --bundle, repeated, pairwise; --out)")
    p.add_argument("--out", help="bundle directory to write (prepare; shrink: the next round's bundle)")
    p.add_argument("--seed", type=int, default=0, help="random seed (the same seed draws the same problems)")
    p.add_argument("--count", type=int, default=100, help="problems to draw")
    p.add_argument("--target", default="sm_90a", help="convc target (default sm_90a)")
    p.add_argument("--max-candidates", type=int, default=6, help="schedules per problem at most (default first)")
    p.add_argument("--jobs", type=int, default=1, help="prepare: compiles at once (default 1)")
    p.add_argument("--kernel", help="prepare: only problems with candidates of this kernel family, only those")
    p.add_argument("--int8-share", type=float, default=0.0,
                   help="prepare: share of dense int8 problems (default 0: the draws seeds made before int8)")
    p.add_argument("--fp8-share", type=float, default=0.0,
                   help="prepare: share of dense fp8 (e4m3/e5m2) problems with the channels the fp8 kernels read "
                        "(default 0: the draws seeds made before fp8)")
    p.add_argument("--wide-share", type=float, default=0.0,
                   help="prepare: share of depthwise problems with 7-9 column windows (default 0: the draws of "
                        "earlier seeds)")
    p.add_argument("--results", action="append",
                   help="shrink: the GPU check JSON of --bundle; summarize: a GPU check JSON or its --rows JSONL (repeatable)")
    p.add_argument("--bundle", action="append", help="shrink/summarize: the bundle those results are of (repeatable)")
    p.add_argument("--local", action="store_true", help="shrink: on the CPU (llvm-cpu numerics), --case of --bundle")
    p.add_argument("--case", help="shrink --local: the layer name to shrink")
    p.add_argument("--regressions", help="shrink: suite JSON to append minimal failing layers to")
    args = p.parse_args(argv)
    try:
        if args.action == "shrink":
            args.results = args.results[0] if args.results else None
            args.bundle = args.bundle[0] if args.bundle else None
            return _shrink_main(p, args)
        if args.action == "summarize":
            if not (args.results and args.bundle and args.out) or len(args.results) != len(args.bundle):
                p.error("summarize needs --results and --bundle pairs and --out")
            runs = []
            for r, b in zip(args.results, args.bundle):
                with open(os.path.join(b, "manifest.json")) as fh:
                    runs.append((_read_rows(r), json.load(fh)))
            with open(args.out, "w") as fh:
                json.dump(summarize(runs), fh, indent=1)
            return 0
        if not args.out:
            p.error("--out is required")
        layers = (draw_for_kernel(args.seed, args.count, args.kernel, args.target, args.wide_share) if args.kernel
                  else draw(args.seed, args.count, wide_share=args.wide_share, int8_share=args.int8_share,
                            fp8_share=args.fp8_share))
        m = prepare(layers, args.out, args.target, args.max_candidates, args.seed, args.jobs, args.kernel,
                    args.wide_share, args.int8_share, args.fp8_share)
    except (OSError, ValueError, KeyError, StopIteration) as e:
        print(f"convc-fuzz: error: {e}", file=sys.stderr)
        return 1
    bad = [e for e in m["layers"] if not e["ok"] and not e.get("declined")]
    declined = sum(bool(e.get("declined")) for e in m["layers"])
    print(f"{m['pairs']} (problem, schedule) pairs from {m['problems']} problems; {len(bad)} failed to compile"
          + (f"; {declined} fp8 draws declined with a named error" if declined else ""))
    return 1 if bad else 0


def _shrink_main(p, args) -> int:
    if args.local:
        if not (args.bundle and args.case):
            p.error("shrink --local needs --bundle and --case")
        L, tries = shrink_local(args.bundle, args.case)
        print(f"minimal: {L} ({tries} reductions tried)")
        _add_regressions(args.regressions, [dataclasses.replace(L, name=f"{args.case}_min")])
        return 0
    if not (args.results and args.bundle and args.out):
        p.error("shrink needs --results, --bundle and --out (or --local)")
    with open(args.results) as fh:
        results = json.load(fh)
    m, minimal = shrink_round(results, args.bundle, args.out, args.target)
    for L in minimal:
        print(f"minimal: {L}")
    _add_regressions(args.regressions, [dataclasses.replace(L, name=f"{L.name}_min") for L in minimal])
    print(f"{m['pairs']} reductions in {args.out} for the next round; {len(minimal)} cases minimal")
    return 0


def outcome(row: dict, entry: dict) -> str:
    """One pair's outcome class for the summary."""
    if not entry.get("ok"):
        return "compile failure"
    where = "convc" if entry.get("path") == "convc" else "IREE"
    err = str(row.get("error", ""))
    if err.startswith("runtime:"):
        return f"runtime failure on {where}"
    return f"{'correct' if row.get('correct') else 'wrong'} on {where}"


def summarize(runs: list[tuple[list[dict], dict]]) -> dict:
    """The committed record of GPU fuzz runs: per run (rows of a GPU check, the bundle's manifest)
    the seed, commit, distribution and outcome counts; every pair not correct, with its layer,
    kernel and error."""
    out = {"runs": [], "pairs": 0, "summary": collections.Counter(), "not_correct": []}
    for rows, manifest in runs:
        counts = collections.Counter()
        kernels = collections.Counter()
        for r in rows:
            entry = manifest["layers"][r["index"]]
            o = outcome(r, entry)
            counts[o] += 1
            if o == "correct on convc":
                k = next((d["kernel"] for d in entry.get("dispatches", []) if d["path"] == "convc"), "")
                kernels[k.split(" ")[0]] += 1
            if not o.startswith("correct"):
                out["not_correct"].append({"name": r["name"], "outcome": o, "rel_l2": r.get("rel_l2"),
                                           "error": str(r.get("error", entry.get("error", "")))[:300],
                                           "kernels": [d["kernel"] for d in entry.get("dispatches", []) if d["kernel"]],
                                           "layer": entry["layer"], "commit": manifest["commit"]})
        out["runs"].append({"seed": manifest.get("seed"), "commit": manifest["commit"], "compiled": manifest["date"],
                            "problems": manifest.get("problems"), "pairs_in_bundle": manifest.get("pairs"),
                            "pairs_checked": len(rows), "outcomes": dict(counts),
                            "correct_on_convc_by_kernel": dict(kernels), "distribution": manifest.get("distribution")})
        out["pairs"] += len(rows)
        out["summary"].update(counts)
    out["summary"] = dict(out["summary"])
    return out


def _read_rows(path: str) -> list[dict]:
    if path.endswith(".jsonl"):
        with open(path) as fh:
            return [json.loads(line) for line in fh if line.strip()]
    with open(path) as fh:
        return json.load(fh)["layers"]


def _cli_main():
    sys.exit(main())
if __name__ == "__main__":
    _cli_main()
