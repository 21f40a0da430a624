"""Machine: the target hooks every kernel emitter goes through.

Thread index, workgroup barrier and workgroup memory come from the Machine of the schedule's
target (nvidia/, amd/, cpu/ each provide one subclass), so the shared emitters are written once
and the target-specific ones name their target in one place; function attributes (clusters,
occupancy bounds) are the Machine's too.
"""

from __future__ import annotations

from ...ir import ir, arith_d, gpu_d, memref_d, parse_attr
from ...schedule import Schedule
from .emit import float_type


class Machine:
    """Base hooks. `threads_are_parallel` says whether per-thread code runs concurrently."""

    backend = "abstract"
    threads_are_parallel = True
    # 16-byte global -> workgroup-memory copies that complete asynchronously (per thread, in
    # committed groups), with zero fill for invalid sources; emitters fall back to plain loads
    # where a target has none
    async_copies = False

    def translation_info(self, s: Schedule) -> ir.Attribute:
        return parse_attr(
            "#iree_codegen.translation_info<pipeline = #iree_codegen.no_pipeline "
            f"workgroup_size = [{s.threads}, 1, 1] subgroup_size = {s.subgroup_size}>")

    def thread_id(self, e) -> ir.Value:
        raise NotImplementedError

    def exp2_approx(self, x: ir.Value) -> ir.Value | None:
        """2^x of an f32 vector by the target's approximate instruction (a few f32 ulp), or
        None where it has none exposed here (program_math then uses math.exp2, which IREE
        expands into a polynomial)."""
        return None

    def recip_approx(self, x: ir.Value) -> ir.Value | None:
        """1/x of an f32 vector by the target's approximate reciprocal (one instruction, a few
        f32 ulp; denormal inputs flushed), or None (program_math then divides with `afn`)."""
        return None

    def copysign(self, magnitude: ir.Value, sign: ir.Value) -> ir.Value | None:
        """|magnitude| with the sign of `sign` (f32 vectors) by target instructions, or None
        (program_math then uses math.copysign)."""
        return None

    def round_even(self, x: ir.Value) -> ir.Value | None:
        """x (an f32 vector) rounded to the nearest integer, halves to even, by one target
        instruction, or None (program_math then keeps math.roundeven, which IREE expands)."""
        return None

    def barrier(self) -> None:
        raise NotImplementedError

    def subgroup_reduce(self, x: ir.Value, lanes: int, subgroup: int, combine: str = "sum") -> ir.Value:
        """The f32 scalar x summed ("sum") or maximised ("max") over `lanes` consecutive lanes
        (a power of two, aligned), in every one of them; one lane: x. The shuffles span the
        whole subgroup (gpu.shuffle's width is the count of lanes that get a defined result,
        not a segment size); xor offsets below `lanes` stay within each aligned group."""
        if lanes == 1:
            return x
        i32 = ir.IntegerType.get_signless(32)
        width = arith_d.constant(i32, subgroup)
        xor = ir.Attribute.parse("#gpu<shuffle_mode<xor>>")
        step = 1
        while step < lanes:
            other = gpu_d.ShuffleOp(x, arith_d.constant(i32, step), width, xor).results[0]
            x = arith_d.addf(x, other) if combine == "sum" else arith_d.maximumf(x, other)
            step *= 2
        return x

    def alloc_workgroup(self, shape: list[int], dtype: str, alignment: int = 16) -> ir.Value:
        raise NotImplementedError

    def alloc_shared_bytes(self, total: int, alignment: int) -> ir.Value:
        """One workgroup allocation of `total` bytes that a kernel carves up itself."""
        raise NotImplementedError

    def func_attributes(self, s: Schedule) -> dict[str, ir.Attribute]:
        return {}

    def async_copy_16(self, dst, dst_index, src, src_index, valid) -> None:
        """16 bytes from memref src at element src_index to workgroup memref dst at element
        dst_index; zeros where valid is false (src is not read)."""
        raise NotImplementedError

    def async_commit(self) -> None:
        """Closes this thread's current group of async copies."""
        raise NotImplementedError

    def async_wait(self, pending: int) -> None:
        """Waits until at most `pending` of this thread's groups are in flight; the landed
        bytes are then visible to this thread."""
        raise NotImplementedError


class GpuMachine(Machine):
    """SIMT GPUs: threads are hardware lanes, workgroup memory is on-chip shared memory."""

    def thread_id(self, e) -> ir.Value:
        return gpu_d.thread_id(gpu_d.Dimension.x)

    def barrier(self) -> None:
        gpu_d.barrier()

    def alloc_workgroup(self, shape, dtype, alignment=16):
        space = parse_attr("#gpu.address_space<workgroup>")
        t = ir.MemRefType.get(shape, float_type(dtype), memory_space=space)
        return memref_d.alloc(t, [], [], alignment=alignment)

    def alloc_shared_bytes(self, total, alignment):
        space = parse_attr("#gpu.address_space<workgroup>")
        t = ir.MemRefType.get([total], ir.IntegerType.get_signless(8), memory_space=space)
        return memref_d.alloc(t, [], [], alignment=alignment)
