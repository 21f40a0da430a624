"""Direct prologue loads (consumers' cp.async of the first k-tiles, direct_loads.py): the
address model, evaluated on numpy lanes for all 256 loading threads, must fill each stage
with exactly the bytes the TMA would write there: an independent numpy im2col of random data
(zero padding, pixels past N*Ho*Wo and channels past C zero) and the [F, K] filter, with the
hardware swizzle applied to each row's 16-byte units. Also: the planner's choice and the
kernel's hand-off in the emitted IR."""

import dataclasses

import numpy as np
import pytest

from convc.passes.lower.common.int_ops import NumpyOps
from convc.passes.lower.nvidia.direct_loads import (CHUNK, Loaders, OperandTile, activation_chunk,
                                                    chunk_position, direct_stages_for, filter_chunk,
                                                    thread_chunks)
from convc.passes.lower.nvidia.tma_loader import k_tile_channels, k_tiles
from convc.passes.plan.kernels.sm90_ws import plan_sm90_ws
from convc.passes.problem import ConvProblem
from convc.passes.target import get_target

OPS = NumpyOps()
T = get_target("sm_90a")


def _im2col(p: ConvProblem, x: np.ndarray) -> np.ndarray:
    """[N*Ho*Wo, R*S*C] with (r, s, c) ordering, zero where the window reads padding."""
    t, l = p.pad[0], p.pad[1]
    xp = np.pad(x, ((0, 0), (t, p.pad[2] + p.dilation[0] * p.R), (l, p.pad[3] + p.dilation[1] * p.S), (0, 0)))
    cols = []
    for r in range(p.R):
        for s in range(p.S):
            h0, w0 = r * p.dilation[0], s * p.dilation[1]
            win = xp[:, h0:h0 + p.stride[0] * p.Ho:p.stride[0], w0:w0 + p.stride[1] * p.Wo:p.stride[1], :]
            cols.append(win.reshape(-1, p.C))
    return np.concatenate(cols, axis=1)


def _tma_stage(matrix: np.ndarray, origin: int, rows: int, kcols: np.ndarray, span: int) -> np.ndarray:
    """What a TMA box writes: `rows` rows of `matrix` from `origin` (rows past the end zero),
    the columns kcols (-1: zero), each row's 16-byte units placed at unit ^ swizzle(row)."""
    bk = len(kcols)
    tile = np.zeros((rows, bk), matrix.dtype)
    for i in range(rows):
        if origin + i < matrix.shape[0]:
            ok = kcols >= 0
            tile[i, ok] = matrix[origin + i, kcols[ok]]
    per_unit = CHUNK // 2
    out = np.zeros_like(tile)
    for i in range(rows):
        rot = i % 8 if span == 128 else (i // 2) % 4
        for u in range(bk // per_unit):
            v = u ^ rot
            out[i, v * per_unit:(v + 1) * per_unit] = tile[i, u * per_unit:(u + 1) * per_unit]
    return out


def _direct_stage(tile: OperandTile, chunk, p, origin, kt, flat: np.ndarray, threads: int) -> np.ndarray:
    """Run every loading thread's copies of one operand tile through the address model."""
    smem = np.full(tile.rows * tile.span // 2, np.float32(np.nan), np.float32)
    written = np.zeros(smem.shape, int)
    per_unit = CHUNK // 2
    ctid = np.arange(threads)
    for first, guarded in thread_chunks(tile, threads):
        row, unit = chunk_position(OPS, tile, ctid, first)
        live = row < tile.rows if guarded else np.ones(threads, bool)
        src, valid = chunk(OPS, p, tile.block_k, origin, kt, row, unit)
        valid = np.broadcast_to(valid, ctid.shape)
        dst = np.broadcast_to(tile.offset(OPS, row, unit), ctid.shape) // 2
        src = np.broadcast_to(src, ctid.shape)
        for t in np.nonzero(live)[0]:
            d = dst[t]
            smem[d:d + per_unit] = flat[src[t]:src[t] + per_unit] if valid[t] else 0
            written[d:d + per_unit] += 1
    assert (written == 1).all(), "every byte of the stage is copied exactly once"
    return smem.reshape(tile.rows, tile.block_k)


CASES = [
    # name, problem, block_m, block_n, (m0, n0) origins to try
    ("1x1 gemm form", dict(N=1, H=1568, W=1, C=512, F=2048, R=1, S=1), 224, 128, [(0, 0), (1344, 1920)]),
    ("3x3 pad 1", dict(N=2, H=9, W=7, C=64, F=96, R=3, S=3, pad=(1, 1, 1, 1)), 128, 64, [(0, 0), (64, 64)]),
    ("3x3 stride 2 asym pad", dict(N=3, H=11, W=10, C=128, F=64, R=3, S=3, stride=(2, 2), pad=(0, 0, 1, 1)), 64, 64,
     [(0, 0), (64, 0)]),
    ("dilated", dict(N=1, H=12, W=12, C=64, F=128, R=3, S=3, dilation=(2, 2), pad=(2, 2, 2, 2)), 128, 128, [(0, 0)]),
    ("narrow K 96 channels", dict(N=2, H=6, W=6, C=96, F=64, R=3, S=3, pad=(1, 1, 1, 1)), 64, 64, [(0, 0), (64, 0)]),
    ("one tap C=24 past C", dict(N=1, H=40, W=1, C=24, F=144, R=1, S=1), 96, 160, [(0, 0), (0, 0)]),
    ("ragged M and F", dict(N=1, H=5, W=7, C=64, F=40, R=1, S=1), 64, 64, [(0, 0)]),
]


@pytest.mark.parametrize("name,dims,bm,bn,origins", CASES, ids=[c[0] for c in CASES])
def test_direct_stages_match_the_tma_layout(name, dims, bm, bn, origins):
    p = ConvProblem(**dims)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((p.N, p.H, p.W, p.C)).astype(np.float32)
    w = rng.standard_normal((p.F, p.gemm_k)).astype(np.float32)
    a = _im2col(p, x)
    bk = k_tile_channels(p.C, p.R * p.S)
    cblocks = -(-p.C // bk)
    a_tile, b_tile = OperandTile(bm, bk), OperandTile(bn, bk)
    for m0, n0 in origins:
        for kt in range(min(3, k_tiles(p, bk))):
            rs, cb = divmod(kt, cblocks)
            ch = cb * bk + np.arange(bk)
            acols = np.where(ch < p.C, rs * p.C + ch, -1)
            bcols = np.where(kt * bk + np.arange(bk) < p.gemm_k, kt * bk + np.arange(bk), -1)
            want_a = _tma_stage(a, m0, bm, acols, a_tile.span)
            want_b = _tma_stage(w, n0, bn, bcols, b_tile.span)
            for loaders in (Loaders.of(True), Loaders.of(False)):
                got_a = _direct_stage(a_tile, activation_chunk, p, m0, kt, x.reshape(-1), loaders.threads)
                got_b = _direct_stage(b_tile, filter_chunk, p, n0, kt, w.reshape(-1), loaders.threads)
                np.testing.assert_array_equal(got_a, want_a, err_msg=f"activation k-tile {kt} at m0={m0}")
                np.testing.assert_array_equal(got_b, want_b, err_msg=f"filter k-tile {kt} at n0={n0}")


def test_planner_sets_direct_stages_where_the_kernel_uses_them():
    p = ConvProblem(N=32, H=7, W=7, C=512, F=2048, R=1, S=1, dtype="f16", out_dtype="f16")
    s = plan_sm90_ws(p, T, block_m=128, block_n=256)
    assert s.config.direct_stages == 2 and "direct=2" in s.describe()
    assert direct_stages_for(p, s, k_tiles(p, 64)) == 2
    # one k-tile: only one to load
    one = ConvProblem(N=32, H=7, W=7, C=64, F=256, R=1, S=1, dtype="f16", out_dtype="f16")
    assert plan_sm90_ws(one, T).config.direct_stages == 1
    # a cluster multicasts the filter, stream-K starts mid-tile: TMA only
    assert plan_sm90_ws(p, T, cluster_m=2).config.direct_stages == 0
    assert direct_stages_for(p, dataclasses.replace(s, kernel="sm90_ws_streamk"), 8) == 0


def test_kernel_refuses_direct_stages_it_cannot_take():
    """The planner owns direct_stages; the lowering takes it as given and refuses a schedule
    asking for direct loads its kernel cannot do (here: in a cluster) instead of changing it."""
    from convc.passes.ir import ir
    from convc.passes.lower.nvidia.sm90_ws import Sm90WarpSpecialized, WsUnsupported
    p = ConvProblem(N=32, H=7, W=7, C=512, F=2048, R=1, S=1, dtype="f16", out_dtype="f16")
    s = plan_sm90_ws(p, T, block_m=128, block_n=256)
    clustered = plan_sm90_ws(p, T, block_m=128, block_n=256, cluster_m=2)
    with ir.Context():
        assert Sm90WarpSpecialized(p, s, None).mode.direct == 2
        with pytest.raises(WsUnsupported, match="direct_stages=2"):
            Sm90WarpSpecialized(p, clustered.with_config(direct_stages=2), None)


def test_direct_loads_on_one_wave_grids_and_one_tap_filters():
    """The planner's rule (measured: 5-9% faster on one-wave layers and 0.5-4% on 1x1 layers
    with several tiles per CTA, 1-10% slower on such 3x3 layers), and the opposite variant of
    the default as the last tuning candidate."""
    from convc.passes.plan.plan_schedule import candidate_schedules, knobs_of
    from convc.tools.layers import load_suite
    suite = {L.name: L.expected_problem() for L in load_suite()}
    one_wave = plan_sm90_ws(suite["r50_l3_3x3_256"], T, "sm90_ws_cooperative", 96, 128, swap=True)  # 132 tiles
    one_tap = plan_sm90_ws(suite["r50_l3_1x1_256_1024"], T, "sm90_ws_pingpong", 64, 256)           # 392 tiles
    many = plan_sm90_ws(suite["vae_3x3_512_64x64"], T, "sm90_ws_cooperative", 128, 256)            # 3x3, 512 tiles
    assert one_wave.config.direct_stages == 2 and one_tap.config.direct_stages == 2 and many.config.direct_stages == 0
    for name in ("r50_l4_1x1_512_2048", "vae_3x3_512_64x64"):
        cands = candidate_schedules(suite[name], T)
        last = cands[-1]
        assert knobs_of(last.with_config(direct_stages=0)) == \
            knobs_of(cands[0].with_config(direct_stages=0))
        assert bool(last.config.direct_stages) != bool(cands[0].config.direct_stages)


def test_cache_entries_from_before_direct_loads_name_their_tile(tmp_path):
    """A winner stored without the direct mark picks its tile (with the planner's prologue);
    an exact match (the default's no-direct variant) wins over that."""
    from convc.passes.plan.plan_schedule import candidate_schedules, choose_schedule, knobs_of
    from convc.passes.plan.tuning import TuningCache
    from convc.tools.layers import load_suite
    p = next(L for L in load_suite() if L.name == "r50_l4_1x1_2048_512").expected_problem()
    cands = candidate_schedules(p, T)
    other = next(c for c in cands[1:-1] if getattr(c.config, "direct_stages", 0))
    path = tmp_path / "cache.json"
    for want, knobs in ((other, knobs_of(other.with_config(direct_stages=0))),
                        (cands[-1], knobs_of(cands[-1]))):
        TuningCache({f"sm_90a|NVIDIA H200|{p.name}": {"knobs": list(knobs), "us": 1.0, "tried": 2,
                                                         "date": "2026-11-01", "commit": "x"}}, str(path)).write()
        got = choose_schedule(p, T, type("O", (), {"tuning_cache": str(path)})())
        assert knobs_of(got) == knobs_of(want) and got.reason.startswith("tuned on")
