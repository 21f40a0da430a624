"""NVIDIA (sm_90a / sm_100a) hooks for the shared emitters: 32-lane warps, nvvm lowering."""

from ...ir import arith_d, ir, llvm_d, parse_attr, vector_d
from ...problem import DTYPE_BYTES
from ..common.machine import GpuMachine
from .primitives import I64, address_of, index_to
from .sm80_ops import cp_async_16, cp_async_commit, cp_async_wait


def _byte_address(memref, index) -> ir.Value:
    """i64 address of element `index` of a 1-D memref (global: device address; workgroup:
    shared-window offset)."""
    elem = ir.MemRefType(memref.type).element_type
    size = DTYPE_BYTES[str(elem)]
    off = arith_d.muli(index, arith_d.constant(ir.IndexType.get(), size))
    return arith_d.addi(address_of(memref), index_to(off, I64()))


def _per_lane(x, instruction: str, *more):
    """`instruction $0, $1[, $2...];` (f32 operands x, *more in, one f32 out) on every lane of
    f32 vectors of one shape."""
    out = x
    n = 1 + len(more)
    operands = ", ".join(f"${i}" for i in range(n + 1))
    constraints = ",".join(["=f"] + ["f"] * n)
    for i in range(ir.VectorType(x.type).shape[0]):
        lanes = [vector_d.extract(v, [], [i]) for v in (x, *more)]
        y = llvm_d.InlineAsmOp(ir.F32Type.get(), lanes, f"{instruction} {operands};", constraints).result
        out = vector_d.insert(y, out, [], [i])
    return out


class NvidiaMachine(GpuMachine):
    backend = "nvidia"
    async_copies = True

    def exp2_approx(self, x):
        """ex2.approx.ftz.f32 per lane (IREE's lowering refuses llvm.intr.exp2 and expands
        math.exp2 into a polynomial)."""
        return _per_lane(x, "ex2.approx.ftz.f32")

    def recip_approx(self, x):
        """rcp.approx.ftz.f32 per lane: one MUFU.RCP (LLVM's afn division gives rcp.approx.f32
        without .ftz, which ptxas guards for denormal inputs with 6 more instructions)."""
        return _per_lane(x, "rcp.approx.ftz.f32")

    def copysign(self, magnitude, sign):
        """copysign.f32 per lane (in f32: LLVM narrows a copysign that feeds an f16 truncation
        to an f16 copysign, which NVPTX expands into ~6 integer and select instructions)."""
        return _per_lane(sign, "copysign.f32", magnitude)

    def round_even(self, x):
        """cvt.rni.f32.f32 per lane: the requantize of int8 epilogues (IREE's lowering refuses
        llvm.intr.roundeven and expands math.roundeven into ~40 instructions per value)."""
        return _per_lane(x, "cvt.rni.f32.f32")

    def async_copy_16(self, dst, dst_index, src, src_index, valid):
        """cp.async.cg (16 bytes, L2 only; src-size 0 zero-fills)."""
        cp_async_16(_byte_address(dst, dst_index), _byte_address(src, src_index), valid)

    def async_commit(self):
        cp_async_commit()

    def async_wait(self, pending):
        cp_async_wait(pending)

    def func_attributes(self, s):
        """The schedule's cluster (split-K slices or M-multicast pairs) as a compile-time
        `.reqnctapercluster` (IREE launches with plain cuLaunchKernel, which honours it), and its
        co-residency bound as `.minnctapersm`."""
        attrs = {}
        size = s.config.cluster_size
        if size > 1:
            attrs["nvvm.cluster_dim"] = parse_attr(f"array<i32: {size}, 1, 1>")
        if s.config.min_ctas_per_sm:
            attrs["nvvm.minctasm"] = parse_attr(f"{s.config.min_ctas_per_sm} : i32")
        return attrs
