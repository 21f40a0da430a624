"""convc-fuzz: randomized conv problems x every schedule the planner would accept, as a bundle
the GPU check runs (`tools/device/gpu_check.sh BUNDLE`: NaN-poisoned outputs against PyTorch
fp32).

  convc-fuzz prepare --seed 1 --count 100 --out BUNDLE [--target sm_90a] [--max-candidates 6]

Problems (`draw`): N, H, W, C, F, R, S, strides 1-3, dilations 1-3, asymmetric pads (some
larger than the filter's reach), outputs of a single pixel and huge outputs (5%: 48-112 px, N 8-32), C and F around the alignment
boundaries the planner uses (8, 32, 64, 128 +- 1..8), f16/bf16/f32, every epilogue, and
grouped/depthwise layers (tools.layers.random_grouped_layers). Each problem is compiled with
its default schedule and with every other tuning candidate (`CompileOptions.candidate`, the
knob convc-tune uses), so that the kernels the planner only picks for other shapes run on
these. The bundle's manifest records the seed and the distribution of what was drawn.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import random
import sys
import time

from ..compiler.driver import CompileOptions, compile_file
from ..compiler.errors import ConvcError
from ..passes.plan import candidate_schedules
from ..passes.target import get_target
from .layers import EPILOGUES, Layer, has_output, layer_mlir, random_grouped_layers
from .bundle import git_commit, record_compile

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


def draw(seed: int, count: int, grouped_share: float = 0.25) -> list[Layer]:
    rng = random.Random(seed)
    n_grouped = int(count * grouped_share)
    out = [dataclasses.replace(L, name=f"fz{i:04d}_{L.name.split('_', 1)[1]}", group="fuzz")
           for i, L in enumerate(random_grouped_layers(seed, n_grouped))]
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


def prepare(layers: list[Layer], out: str, target: str, max_candidates: int, seed: int) -> dict:
    os.makedirs(out, exist_ok=True)
    t = get_target(target)
    entries = []
    t0 = time.perf_counter()
    for L in layers:
        src = os.path.join(out, f"{L.name}.mlir")
        with open(src, "w") as f:
            f.write(layer_mlir(L, output_arg=True))
        try:
            n = len(candidate_schedules(L.expected_problem(), t))
        except Exception:                 # the planner declines: the default path (IREE) only
            n = 1
        for i in range(min(n, max_candidates)):
            name = f"{L.name}_c{i}"
            vmfb = f"{name}.vmfb"
            entry = {"layer": dataclasses.asdict(dataclasses.replace(L, name=name)), "vmfb": vmfb, "candidate": i}
            try:
                record_compile(entry, compile_file(src, os.path.join(out, vmfb), CompileOptions(
                    target=target, tuning_cache="none", candidate=i if n > 1 else None)))
            except ConvcError as e:
                entry.update(ok=False, error=str(e))
            entries.append(entry)
        os.remove(src)
        print(f"{L.name:24s} {min(n, max_candidates)} schedule(s) "
              f"{sum(e['ok'] for e in entries)}/{len(entries)} compiled, {time.perf_counter() - t0:.0f} s", flush=True)
    manifest = {"target": target, "commit": git_commit(), "seed": seed, "problems": len(layers),
                "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "pairs": len(entries), "distribution": distribution(layers), "layers": entries}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="convc-fuzz", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["prepare"], help="prepare: compile a fuzz bundle for the GPU check")
    p.add_argument("--out", required=True, help="bundle directory to write")
    p.add_argument("--seed", type=int, default=0, help="random seed (the same seed draws the same problems)")
    p.add_argument("--count", type=int, default=100, help="problems to draw")
    p.add_argument("--target", default="sm_90a", help="convc target (default sm_90a)")
    p.add_argument("--max-candidates", type=int, default=6, help="schedules per problem at most (default first)")
    args = p.parse_args(argv)
    try:
        m = prepare(draw(args.seed, args.count), args.out, args.target, args.max_candidates, args.seed)
    except (OSError, ValueError) as e:
        print(f"convc-fuzz: error: {e}", file=sys.stderr)
        return 1
    bad = [e for e in m["layers"] if not e["ok"]]
    print(f"{m['pairs']} (problem, schedule) pairs from {m['problems']} problems; {len(bad)} failed to compile")
    return 1 if bad else 0


def _cli_main():
    sys.exit(main())
if __name__ == "__main__":
    _cli_main()
