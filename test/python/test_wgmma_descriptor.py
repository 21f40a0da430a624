"""The wgmma shared-memory descriptors the kernels emit equal the PTX bit layout, for every
stage base and k16 offset the kernels can address.

sm90_ws builds one low word per stage (smem_descriptor_lo) and adds each operand's byte
offset >> 4 to it (smem_descriptor_at); the other kernels take smem_matrix_descriptor of the
full address. Both are emitted with constant addresses, folded by MLIR's canonicalizer, and
compared bit for bit with the layout written out here: start address >> 4 in bits 0..13,
leading byte offset >> 4 in 16..29, stride byte offset >> 4 in 32..45, layout in 62..63.
"""

from __future__ import annotations

import random

from iree.compiler.passmanager import PassManager

from convc.passes.ir import ir, arith_d, func_d
from convc.passes.lower.nvidia.primitives import (I64, SWIZZLE_128B_LAYOUT, SWIZZLE_64B_LAYOUT, i64, smem_descriptor_at,
                                                  smem_descriptor_lo, smem_matrix_descriptor)

SMEM_LIMIT = 232448 + 1024          # the opt-in maximum plus the dynamic window's 0x400 base


def _reference(addr: int, sbo: int, layout: int, lbo: int = 16) -> int:
    return (((addr >> 4) & 0x3FFF) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (layout << 62))


def _folded(cases):
    """[(address, byte offset, stride byte offset, layout)] -> [(per-stage word + offset,
    full-address encoder)] as ints."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            f = func_d.FuncOp("f", ir.FunctionType.get([], [I64()] * (2 * len(cases))))
            with ir.InsertionPoint(f.add_entry_block()):
                outs = []
                for addr, off, sbo, layout in cases:
                    lo = smem_descriptor_lo(i64(addr))
                    outs.append(smem_descriptor_at(lo, off, sbo, layout=layout))
                    outs.append(smem_matrix_descriptor(arith_d.addi(i64(addr), i64(off)), sbo, layout=layout))
                func_d.ReturnOp(outs)
        PassManager.parse("builtin.module(canonicalize)").run(module.operation)
        ret = [op for op in f.entry_block.operations][-1]
        vals = []
        for v in ret.operands:
            c = v.owner
            assert c.name == "arith.constant", f"not folded: {c}"
            vals.append(ir.IntegerAttr(c.attributes["value"]).value & ((1 << 64) - 1))
    return [(vals[2 * i], vals[2 * i + 1]) for i in range(len(cases))]


def test_descriptor_words_match_reference():
    rng = random.Random(7)
    cases = []
    for row, layout in ((128, SWIZZLE_128B_LAYOUT), (64, SWIZZLE_64B_LAYOUT)):
        for _ in range(200):
            base = 0x400 + rng.randrange(0, SMEM_LIMIT - 0x400 - 32 * 1024, 1024)   # stage bases
            off = 64 * rng.randrange(0, 2) * row + 32 * rng.randrange(0, 4)          # sub-block, k16
            cases.append((base, off, 8 * row, layout))
        cases.append((SMEM_LIMIT - 1024, 3 * 32, 8 * row, layout))                   # highest stage
    for (staged, full), (addr, off, sbo, layout) in zip(_folded(cases), cases):
        ref = _reference(addr + off, sbo, layout)
        assert staged == ref, ((addr, off, sbo, layout), hex(staged), hex(ref))
        assert full == ref, ((addr, off, sbo, layout), hex(full), hex(ref))
