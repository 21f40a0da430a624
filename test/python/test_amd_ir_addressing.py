"""The emitted AMD kernel's index arithmetic, interpreted, equals the numpy loader model.

The kernel's addresses are built by evaluating passes/lower/amd/im2col_addressing.py with the
IR backend; this test closes the loop from the other side: it lowers small fixtures for
gfx942 and gfx950 (each loader sub-path, padded, strided, dilated, bf16), then interprets the
`arith` graph feeding every `amdgpu.gather_to_lds` (source offset and LDS destination) and
every LDS operand read of the MFMA waves, for all 384 threads of several workgroups and
several main-loop iterations, and compares with the model evaluated with numpy lanes.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from convc.passes.ir import ir, attr_to_py, walk_ops
from convc.passes.lower.amd.im2col_addressing import lane_source, lds_read_offset, wave_lds_base
from convc.passes.lower.common.int_ops import NumpyOps
from convc.passes.lower.amd.lds_loader import MFMA_WAVES, WAVE, loader_config
from convc.passes.match.match_conv import PROBLEM_ATTR
from convc.passes.plan.plan_schedule import SCHEDULE_ATTR
from convc.passes.problem import ConvProblem
from convc.passes.registry import PassOptions, get_pass
from convc.passes.schedule import Schedule
from convc.passes.target import get_target

INPUTS = os.path.join(os.path.dirname(__file__), "..", "inputs")
OPS = NumpyOps()
_CMP = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
        5: np.greater_equal, 6: np.less, 7: np.less_equal, 8: np.greater, 9: np.greater_equal}


class IndexInterpreter:
    """Evaluates index/i32/i1 arith over all threads of one workgroup at once."""

    def __init__(self, threads: int, pid: int):
        self.tid = np.arange(threads, dtype=np.int64)
        self.pid = pid
        self.iv = None               # induction variable of the (one) enclosing scf.for
        self.memo: dict = {}

    def __call__(self, v: ir.Value):
        key = v
        if key in self.memo:
            return self.memo[key]
        out = self._eval(v)
        self.memo[key] = out
        return out

    def _eval(self, v: ir.Value):
        if isinstance(v, ir.BlockArgument):
            parent = v.owner.owner
            assert parent.name == "scf.for" and v.arg_number == 0, f"unexpected block argument of {parent.name}"
            assert self.iv is not None, "loop-dependent value evaluated without an iteration"
            return self.iv
        op = ir.OpResult(v).owner
        name = op.name
        args = [self(x) for x in op.operands] if name not in ("arith.constant",) else []
        if name == "arith.constant":
            return int(ir.IntegerAttr(op.attributes["value"]).value)
        if name == "gpu.thread_id":
            return self.tid
        if name == "hal.interface.workgroup.id":
            return self.pid
        if name in ("arith.index_cast", "arith.index_castui"):
            return args[0]
        if name == "rocdl.readfirstlane":
            x = np.broadcast_to(args[0], self.tid.shape)
            return x[(self.tid // WAVE) * WAVE]
        ops = {"arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
               "arith.divui": np.floor_divide, "arith.remui": np.remainder, "arith.xori": np.bitwise_xor,
               "arith.andi": np.logical_and}
        if name in ops:
            return ops[name](args[0], args[1])
        if name == "arith.cmpi":
            return _CMP[int(ir.IntegerAttr(op.attributes["predicate"]).value)](args[0], args[1])
        if name == "arith.select":
            return np.where(args[0], args[1], args[2])
        raise AssertionError(f"interpreter does not know {name}")


def _lower(fixture: str, arch: str) -> ir.Module:
    ctx = ir.Context()
    with open(os.path.join(INPUTS, fixture)) as f:
        module = ir.Module.parse(f.read(), ctx)
    for name in ("convc-match-conv", "convc-plan-schedule", "convc-lower-kernel"):
        module = get_pass(name)(module, PassOptions(target=arch))
    return module


def _enclosing_for(op):
    p = op.parent
    while p is not None and p.name != "func.func":
        if p.name == "scf.for":
            return p
        p = p.parent
    return None


CASES = [("padded_3x3_bias_relu.flow.mlir", "per_lane"), ("tma_3x3_residual.flow.mlir", "substrip"),
         ("gemm_form_1x1.flow.mlir", "pointwise"), ("strided_1x1.flow.mlir", None),
         ("asym_pad_residual_bf16.flow.mlir", "per_lane"), ("valid_strided_dilated_f32.flow.mlir", "per_lane"),
         ("tma_large.flow.mlir", "substrip")]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("fixture,subpath", CASES, ids=[c[0].split(".")[0] for c in CASES])
def test_emitted_addresses_equal_model(arch, fixture, subpath):
    module = _lower(fixture, arch)
    exe = next(walk_ops(module.operation, "flow.executable"))
    p = ConvProblem.from_dict(attr_to_py(exe.attributes[PROBLEM_ATTR]))
    s = Schedule.from_dict(attr_to_py(exe.attributes[SCHEDULE_ATTR]))
    assert s.kernel == "amd_lds_mfma"
    cfg = loader_config(p, s, get_target(arch))
    if subpath:
        assert cfg.subpath == subpath
    func = next(walk_ops(module.operation, "func.func"))
    gathers = list(walk_ops(func, "amdgpu.gather_to_lds"))
    reads = [op for op in walk_ops(func, "vector.load")
             if "workgroup" in str(op.operands[0].type)]
    per_tile = cfg.loads_per_tile
    assert len(gathers) == (cfg.ring.prologue + (1 if cfg.ring.steady else 0)) * per_tile
    n_tiles = -(-p.F // s.block_n)
    loads = [("act", cfg.act, j) for j in range(cfg.act.loads_per_lane)] + \
            [("filter", cfg.flt, j) for j in range(cfg.flt.loads_per_lane)]
    for pid in sorted({0, s.grid[0] // 2, s.grid[0] - 1}):
        m0, n0 = (pid // n_tiles) * s.block_m, (pid % n_tiles) * s.block_n
        tid = np.arange(s.threads)
        loader = tid >= MFMA_WAVES * WAVE
        lane = tid[loader] - MFMA_WAVES * WAVE
        lwave = lane // WAVE
        iters = sorted({0, max(0, cfg.ring.steady - 1)}) if cfg.ring.steady else [None]
        for it in iters:
            interp = IndexInterpreter(s.threads, pid)
            checked = 0
            for i, op in enumerate(gathers):
                loop = _enclosing_for(op)
                if loop is None:
                    tile = i // per_tile
                else:
                    if it is None:
                        continue
                    interp.iv = it
                    tile = it + s.stages - 1
                operand, g, j = loads[i % per_tile]
                row0, toff = (m0, 0) if operand == "act" else (n0, cfg.flt_offset)
                want_src = lane_source(OPS, cfg.conv, g, operand, cfg.subpath, row0, tile * s.block_k, j, lane)
                want_dst = (tile % s.stages) * cfg.stage_elements + toff + wave_lds_base(OPS, g, j, lwave)
                src = np.broadcast_to(interp(op.operands[1]), tid.shape)[loader]
                dst = np.broadcast_to(interp(op.operands[3]), tid.shape)[loader]
                np.testing.assert_array_equal(src, want_src, err_msg=f"{fixture} {arch} pid={pid} load {i}")
                np.testing.assert_array_equal(dst, want_dst, err_msg=f"{fixture} {arch} pid={pid} load {i} dst")
                checked += 1
            assert checked
        # MFMA waves' operand reads, iteration t: per k step, filter rows then activation rows.
        mfma = tid < MFMA_WAVES * WAVE
        wave, l = tid[mfma] // WAVE, tid[mfma] % WAVE
        wm, wn, lrow, lk = wave // 2, wave % 2, l % 16, l // 16
        frag = get_target(arch).mfma_k // 4
        wave_m, wave_n = s.block_m // 2, s.block_n // 2     # 2 x 2 MFMA waves
        tiles_m, tiles_n = wave_m // 16, wave_n // 16
        want = []
        for kk in range(s.block_k // get_target(arch).mfma_k):
            chunk = (kk * get_target(arch).mfma_k + lk * frag) // cfg.act.vec
            want += [cfg.flt_offset + lds_read_offset(OPS, cfg.flt, wn * wave_n + j * 16 + lrow, chunk)
                     for j in range(tiles_n)]
            want += [lds_read_offset(OPS, cfg.act, wm * wave_m + i * 16 + lrow, chunk) for i in range(tiles_m)]
        assert len(reads) == len(want)
        for t in sorted({0, 1, cfg.ring.ktiles - 1}):
            interp = IndexInterpreter(s.threads, pid)
            interp.iv = t
            for op, w in zip(reads, want):
                got = np.broadcast_to(interp(op.operands[1]), tid.shape)[mfma]
                np.testing.assert_array_equal(got, (t % s.stages) * cfg.stage_elements + w)
