"""The grouped tensor-core kernel (passes/lower/nvidia/grouped_mma.py) without a GPU.

- A numpy model of the kernel's index math: every patch copy, filter row, ldmatrix lane
  address and accumulator register is evaluated through the geometry code the kernel emits
  (grouped_mma_geometry.py with NumpyOps), ldmatrix and mma.sync m16n8k16 as the PTX ISA lays
  out their fragments, on random grouped convs (both filter layouts, strides, dilations,
  asymmetric pads, edge tiles) against a reference conv, outputs poisoned.
- The planner's choices and declines; both grouped kernels as tuning candidates.
- ptxas for sm_90a and sm_100a on every grouped layer it plans: no spills, mma.sync and
  ldmatrix in the PTX.
"""

import dataclasses
import glob
import os
import random
import re
import subprocess

import numpy as np
import pytest

from conftest import grouped_conv_reference
from convc.passes.plan.kernels.grouped_mma import plan_grouped_mma
from convc.passes.lower.common.int_ops import NumpyOps
from convc.passes.lower.nvidia.grouped_mma import geometry_of
from convc.passes.lower.nvidia.grouped_mma_geometry import BLOCK_BYTES, WARPS, GroupedMmaUnsupported
from convc.passes.plan.plan_schedule import candidate_schedules, plan_schedule_for
from convc.passes.problem import ConvProblem
from convc.passes.target import get_target
from convc.compiler.driver import CompileOptions, compile_file
from convc.tools.layers import layer_mlir, load_suite
from convc.tools.sm100_table import find_cuda_tool

SM90 = get_target("sm_90a")
OPS = NumpyOps()
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "tools", "data")


def _model(p: ConvProblem, s, x, w):
    """The kernel's computation, addressed exactly as it is emitted (see module doc)."""
    g = geometry_of(p, s)
    xf, wf = x.reshape(-1), w.reshape(-1)
    out = np.full(p.N * p.Ho * p.Wo * p.F, np.nan)
    written = np.zeros(out.shape, int)
    lanes = np.arange(32)
    shift = g.uniform_shift
    for cb in range(g.channel_blocks):
        filt = np.full(g.filter_bytes // 2, np.nan)
        rows = np.arange(g.filter_rows)
        for k, (ok, src) in enumerate(g.filter_row(OPS, rows, cb)):
            filt[rows * 8 + k] = np.where(ok, wf[src], 0.0)
        assert not np.isnan(filt).any()
        if g.vector_filter:          # the one-load form reads the same elements
            base, oks = g.filter_row_vector(OPS, rows, cb)
            assert (base % 8 == 0).all()
            for k, (ok, src) in enumerate(g.filter_row(OPS, rows, cb)):
                ok_v = np.broadcast_to(oks[k], rows.shape)
                assert (ok_v == ok).all() and (np.where(ok, base + k, 0) == src).all()
        for tile in range(p.N * g.tiles_per_image):
            n, oh0, ow0 = g.tile_origin(OPS, tile)
            accs = {}
            for sl in range(g.slices):
                patch = np.full(g.patch_bytes // 2, np.nan)
                if g.zero_start is not None:
                    end = -(-g.zero_start // 16) * 16
                    for r in range(g.ph * g.pw):
                        patch[r * g.row_bytes // 2 + g.zero_start:r * g.row_bytes // 2 + end] = 0.0
                idx = np.arange(g.stage_items)
                ok, src, dst = g.stage_item(OPS, idx, n, oh0, ow0, cb, sl=sl)
                assert (dst % (2 * g.stage_vector) == 0).all() and len(set(dst.tolist())) == len(dst)
                assert dst.max() + 2 * g.stage_vector <= g.patch_bytes
                loaded = p.C if g.narrow else 8             # a narrow input: its C channels, then zeros
                for k in range(g.stage_vector):
                    patch[dst // 2 + k] = np.where(ok, xf[src + k], 0.0) if k < loaded else 0.0
                for warp in range(WARPS):
                    wm, wn = warp // g.wn, warp % g.wn
                    cols = list(g.warp_columns(wn))
                    if shift is not None:        # the one code path shifts warp column 0's addresses
                        for jj, j in enumerate(cols):
                            j0 = list(g.warp_columns(0))[jj]
                            for c in g.chunks(j0):
                                assert c + wn * shift in g.chunks(j)
                                assert g.b_block(OPS, 0, j, c + wn * shift) == g.b_block(OPS, 0, j0, c) + wn * g.ntw * g.nc * 256
                    acc = accs.setdefault(warp, np.zeros((g.mt, len(cols), 16, 8)))
                    for ry in range(p.R):
                        for sx in range(p.S):
                            tap = ry * p.S + sx
                            for c in g.slice_chunks(g.warp_chunks(wn), sl):
                                for i in range(g.mt):
                                    a_addr = (g.a_lane_offset(OPS, lanes, wm, i) + g.tap_offset(OPS, ry, sx)
                                              + (c - sl * g.k16s) * 32)
                                    A = np.empty((16, 16))
                                    for row in range(16):
                                        for k in range(16):
                                            lane = (row // 8 + 2 * (k // 8)) * 8 + row % 8
                                            A[row, k] = patch[(a_addr[lane] + (k % 8) * 2) // 2]
                                    for jj, j in enumerate(cols):
                                        if c not in g.chunks(j):
                                            continue
                                        b_addr = g.b_lane_offset(OPS, lanes, False) + g.b_block(OPS, tap, j, c)
                                        B = np.empty((16, 8))
                                        for k in range(16):
                                            for col in range(8):
                                                if g.k_rows:    # ldmatrix .trans: memory rows are k
                                                    B[k, col] = filt[(b_addr[k] + col * 2) // 2]
                                                else:
                                                    B[k, col] = filt[(b_addr[(k // 8) * 8 + col] + (k % 8) * 2) // 2]
                                        acc[i, jj] += A @ B
            for warp in range(WARPS):
                wm, wn = warp // g.wn, warp % g.wn
                cols = list(g.warp_columns(wn))
                acc = accs[warp]
                for i in range(g.mt):
                    for half in range(2):
                        m, fq = g.out_pixel(OPS, lanes, wm, i, half)
                        oh, ow = oh0 + m // g.bw, ow0 + m % g.bw
                        keep = (m < g.pixels) & (oh < p.Ho) & (ow < p.Wo)
                        for jj, j in enumerate(cols):
                            for e_ in range(2):
                                f = cb * g.bn + j * 8 + fq + e_
                                v = acc[i, jj, lanes // 4 + 8 * half, 2 * (lanes % 4) + e_]
                                o = ((n * p.Ho + oh) * p.Wo + ow) * p.F + f
                                out[o[keep]] = v[keep]
                                written[o[keep]] += 1
    assert (written == 1).all(), "every output written exactly once"
    return out.reshape(p.N, p.Ho, p.Wo, p.F)


def _random_problems(count, seed):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        cg, fg = rng.choice([4, 8, 12, 16, 24, 48]), rng.choice([4, 8, 16, 24])
        groups = rng.choice([2, 3, 4, 8])
        R, S = rng.choice([1, 3, 5]), rng.choice([1, 3])
        try:
            p = ConvProblem(N=rng.randint(1, 2), H=rng.randint(5, 13), W=rng.randint(5, 13), C=cg * groups,
                            F=fg * groups, R=R, S=S, stride=(rng.randint(1, 2), rng.randint(1, 2)),
                            dilation=(rng.randint(1, 2), rng.randint(1, 2)),
                            pad=tuple(rng.randint(0, 2) for _ in range(4)), dtype=rng.choice(["f16", "bf16"]),
                            out_dtype="f16", groups=groups, filter_layout=rng.choice(["fhwc", "hwcf"]))
            s = plan_grouped_mma(p, SM90)
        except (ValueError, GroupedMmaUnsupported):
            continue
        # any tile shape (the planner's choice for these small images is often one tile)
        g = geometry_of(p, s)
        bh, bw = rng.randint(1, p.Ho), rng.randint(1, p.Wo)
        while geometry_of(p, s.with_config(rows=bh)).mt * g.ntw * 4 > 48 or bh * bw > 128:
            bh, bw = max(1, bh // 2), max(1, bw - 1)
        out.append((p, s.with_config(rows=bh, cols=bw)))
    return out


@pytest.mark.parametrize("case", range(16))
def test_index_model_matches_reference(case):
    p, s = _random_problems(16, 2026)[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal((p.N, p.H, p.W, p.C))
    w = rng.standard_normal(p.R * p.S * p.C // p.groups * p.F)
    np.testing.assert_allclose(_model(p, s, x, w), grouped_conv_reference(p, x, w), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("case", range(8))
def test_index_model_narrow_input(case):
    """Dense convs with C < 8 (an RGB stem; geometry.narrow_input): pixels staged element by
    element as vectors of 4 or 8 with zeros, the rest of the chunk zeroed once; random C 1-7,
    F 8-32, windows, strides, dilations, pads and tile shapes."""
    rng = random.Random(700 + case)
    while True:
        try:
            p = ConvProblem(N=rng.randint(1, 2), H=rng.randint(5, 15), W=rng.randint(5, 15), C=rng.randint(1, 7),
                            F=rng.choice([8, 16, 24, 32]), R=rng.choice([1, 3, 5, 7]), S=rng.choice([1, 3, 7]),
                            stride=(rng.randint(1, 2), rng.randint(1, 2)), dilation=(1, rng.randint(1, 2)),
                            pad=tuple(rng.randint(0, 3) for _ in range(4)), dtype=rng.choice(["f16", "bf16"]),
                            out_dtype="f16")
            s = plan_grouped_mma(p, SM90)
            break
        except (ValueError, GroupedMmaUnsupported):
            continue
    g = geometry_of(p, s)
    assert g.narrow and g.stage_items == g.ph * g.pw
    bh, bw = rng.randint(1, p.Ho), rng.randint(1, p.Wo)
    while geometry_of(p, s.with_config(rows=bh)).mt * g.ntw * 4 > 48 or bh * bw > 128:
        bh, bw = max(1, bh // 2), max(1, bw - 1)
    s = s.with_config(rows=bh, cols=bw)
    nr = np.random.default_rng(case)
    x = nr.standard_normal((p.N, p.H, p.W, p.C))
    w = nr.standard_normal(p.R * p.S * p.C * p.F)
    np.testing.assert_allclose(_model(p, s, x, w), grouped_conv_reference(p, x, w), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("case", range(8))
def test_index_model_channel_slices(case):
    """Dense convs staged in channel slices (Geometry.slices): each slice's copies and
    fragment addresses, the accumulators carried over the slices; random C (multiples of 32),
    F 8-32, windows, strides, dilations, pads, tile shapes, 2-8 slices in 2 or 4 buffers."""
    rng = random.Random(900 + case)
    while True:
        slices = rng.choice([2, 4, 8])
        try:
            p = ConvProblem(N=rng.randint(1, 2), H=rng.randint(5, 12), W=rng.randint(5, 12),
                            C=32 * slices * rng.randint(1, 2), F=rng.choice([8, 16, 24, 32]), R=rng.choice([1, 3, 5]),
                            S=rng.choice([1, 3]), stride=(rng.randint(1, 2), rng.randint(1, 2)),
                            dilation=(rng.randint(1, 2), 1), pad=tuple(rng.randint(0, 2) for _ in range(4)),
                            dtype=rng.choice(["f16", "bf16"]), out_dtype="f16", filter_layout=rng.choice(["fhwc", "hwcf"]))
            s = plan_grouped_mma(p, SM90)
            break
        except (ValueError, GroupedMmaUnsupported):
            continue
    bh, bw = rng.randint(1, p.Ho), rng.randint(1, p.Wo)
    while geometry_of(p, s.with_config(rows=bh)).mt * geometry_of(p, s).ntw * 4 > 48 or bh * bw > 128:
        bh, bw = max(1, bh // 2), max(1, bw - 1)
    s = dataclasses.replace(s, stages=rng.choice([st for st in (2, 4) if slices % st == 0]),
                            config=dataclasses.replace(s.config, rows=bh, cols=bw, slices=slices))
    g = geometry_of(p, s)
    assert g.ks * slices == p.C and g.stage_items == g.ph * g.pw * g.ks // 8 and g.zero_start is None
    nr = np.random.default_rng(case)
    x = nr.standard_normal((p.N, p.H, p.W, p.C))
    w = nr.standard_normal(p.R * p.S * p.C * p.F)
    np.testing.assert_allclose(_model(p, s, x, w), grouped_conv_reference(p, x, w), rtol=1e-9, atol=1e-9)


def test_channel_slices_are_tuning_candidates_for_the_vae_output_conv():
    from convc.tools.layers import Layer
    p = Layer("vae_out", 1, 256, 256, 256, 8, 3, 3, pad=(1, 1, 1, 1), epilogue="none").expected_problem()
    sliced = [c for c in candidate_schedules(p, SM90) if c.kernel == "grouped_mma" and c.config.slices > 1]
    assert len(sliced) >= 4
    for c in sliced:
        g = geometry_of(p, c)
        assert c.stages >= 2 and g.slices % c.stages == 0
        assert c.smem_bytes == g.filter_bytes + c.stages * g.patch_bytes <= SM90.smem_bytes
    with pytest.raises(GroupedMmaUnsupported):
        from convc.passes.lower.nvidia.grouped_mma_geometry import Geometry
        Geometry(dataclasses.replace(p, C=40), 8, 32, 2)       # 20-channel slices: not whole chunks


@pytest.mark.parametrize("name", ["resnext_g3x3_s3", "shufflenet_g1x1_g3", "shufflenet_g1x1_g8"])
def test_index_model_on_benchmark_layers(name):
    """The benchmark layers' own geometry (batch cut to 1: the tiles are per image)."""
    L = next(L for L in load_suite(os.path.join(DATA, "depthwise_grouped.json")) if L.name == name)
    p = dataclasses.replace(L.expected_problem(), N=1)
    s = plan_grouped_mma(p, SM90)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((p.N, p.H, p.W, p.C))
    w = rng.standard_normal(p.R * p.S * p.C // p.groups * p.F)
    np.testing.assert_allclose(_model(p, s, x, w), grouped_conv_reference(p, x, w), rtol=1e-9, atol=1e-9)


def test_planner_takes_tensor_cores_for_grouped_16bit():
    layers = {L.name: L for L in load_suite(os.path.join(DATA, "depthwise_grouped.json"))}
    for name in ("resnext_g3x3_s1", "resnext_g3x3_s3", "shufflenet_g1x1_g8", "shufflenet_g1x1_g3"):
        p = layers[name].expected_problem()
        for arch in ("sm_90a", "sm_100a"):
            s = plan_schedule_for(p, get_target(arch))
            assert s.kernel == "grouped_mma" and "tensor cores" in s.reason, (name, arch, s.reason)
            assert s.smem_bytes <= get_target(arch).smem_bytes
            kinds = [c.kernel for c in candidate_schedules(p, get_target(arch))]
            assert kinds[:2] == ["grouped_mma", "direct_grouped"] and set(kinds[2:]) == {"grouped_mma"}
        assert plan_schedule_for(p, get_target("llvm-cpu")).kernel == "direct_grouped"
    dw = layers["mbv2_dw3x3_56"].expected_problem()
    assert plan_schedule_for(dw, SM90).kernel == "direct_grouped"
    f32 = dataclasses.replace(layers["resnext_g3x3_s3"].expected_problem(), dtype="f32", out_dtype="f32", epilogue=())
    s = plan_schedule_for(f32, SM90)
    assert s.kernel == "direct_grouped" and "tensor-core kernel declined: f32" in s.reason
    narrow = ConvProblem(N=1, H=8, W=8, C=16, F=16, R=3, S=3, groups=8, filter_layout="hwcf")
    assert "C/G=2 < 4" in plan_schedule_for(narrow, SM90).reason
    # a dynamic batch: the grid fills the SMs whatever the planned N (2 CTAs per SM here)
    dyn = dataclasses.replace(layers["resnext_g3x3_s3"].expected_problem(), N=1, batch_constant=0, num_constants=1)
    s = plan_schedule_for(dyn, SM90)
    assert s.kernel == "grouped_mma" and s.grid == (66, 4, 1) and "batch read at run time" in s.reason
    rows = ConvProblem(N=8192, H=1, W=1, C=64, F=64, R=1, S=1, groups=4, filter_layout="hwcf", gemm_form=True,
                       batch_constant=0, num_constants=1)
    assert "GEMM-form rows" in plan_schedule_for(rows, SM90).reason


PTXAS = find_cuda_tool("ptxas")


def _grouped_layers():
    out = []
    for f in ("depthwise_grouped.json", "grouped_random.json", "rgb_stems.json"):
        for L in load_suite(os.path.join(DATA, f)):
            p = L.expected_problem()
            try:
                plan_grouped_mma(p, SM90)
            except GroupedMmaUnsupported:
                continue
            if f == "rgb_stems.json" and plan_schedule_for(p, SM90).kernel != "grouped_mma":
                continue            # a stem the planner gives the row-slab kernel (F a multiple of 32)
            out.append(L)
    return out


def _ptx(layer, arch, work):
    src = os.path.join(work, f"{layer.name}.mlir")
    with open(src, "w") as f:
        f.write(layer_mlir(layer, output_arg=True))
    dump = os.path.join(work, f"dump_{layer.name}_{arch}")
    res = compile_file(src, os.path.join(work, f"{layer.name}.vmfb"), CompileOptions(target=arch, dump_dir=dump))
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.schedule.kernel == "grouped_mma", conv.reason
    (path,) = glob.glob(os.path.join(dump, "binaries", "*.ptx"))
    return path


@pytest.mark.skipif(PTXAS is None, reason="no ptxas (pip install nvidia-cuda-nvcc)")
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_ptxas_clean_without_spills(tmp_path, arch):
    layers = _grouped_layers()
    assert len(layers) >= 6
    for L in layers:
        path = _ptx(L, arch, str(tmp_path))
        text = open(path).read()
        assert "mma.sync.aligned.m16n8k16.row.col.f32" in text and "ldmatrix.sync.aligned.m8n8.x4" in text, L.name
        if L.C >= 8:                    # a narrow input (an RGB stem) is staged by plain loads
            assert "cp.async.cg.shared.global" in text, L.name
        else:
            assert "cp.async.cg.shared.global" not in text, L.name
        r = subprocess.run([PTXAS, f"-arch={arch}", "-v", path, "-o", os.devnull], capture_output=True, text=True)
        assert r.returncode == 0, (L.name, r.stderr)
        assert re.search(r"0 bytes spill stores, 0 bytes spill loads", r.stderr), (L.name, r.stderr)
