"""convc-record-once: an inference's command buffer recorded once against fixed buffers.

IREE 3.13 records a static program's command buffer once (memoized at module load) but with a
binding table: every call binds its own input, output and transient buffers. Its CUDA HAL
replays such a command buffer launch by launch on a stream, from a worker thread, in either
runtime mode (`iree_hal_cuda_device_create_command_buffer`: a binding table means a deferred
command buffer); a stream launch costs the host 5.5-6 us (bench/experiments/launch_gaps.cu),
so a batch-1 CNN of ~55 kernels of a few microseconds each waits on the launch rate, and a
batch-32 one whose squeeze-excitation kernels take 2-4 us idles between them. A command
buffer without a binding table is, with `--cuda_use_streams=false`, a CUDA graph instantiated
once and relaunched with one `cuGraphLaunch` per call (`graph_command_buffer.c`). IREE's
compiler never emits one: a region with only direct bindings is made one-shot
(`StreamToHAL/Patterns.cpp`, "no indirect bindings then mark the command buffer one-shot").

This pass, on IREE's `hal`-phase program, gives every binding-table slot of the memoized
command buffer a buffer of its own, allocated once at load (`util.global`s), records the
command buffer against them with no binding table, and makes each call:

  1. copy its inputs into their fixed buffers (a small memoized command buffer whose binding
     table holds the caller's buffers; replayed as one copy per input; output storage the
     caller hands in, `iree.abi.output`, is copied in and out),
  2. execute the fixed command buffer (one graph launch in graph mode),
  3. copy the outputs from their fixed buffers into the buffers it returns (allocated per
     call as before, so a result stays valid after later calls),

ordered after the previous call's completion (a module fence) because every call now shares
the fixed buffers. Within a call, the three submissions are ordered by fences on every target
but CUDA: there each one IREE's CUDA HAL finds waiting on a submission not yet issued stays
pending until that one *completes* (`iree_hal_deferred_work_queue_issue` re-examines pending
work only on a new submission or a semaphore signal), so a chained copy-in, graph and copy-out
make three round trips through its worker and completion threads (measured: a 32-dispatch
program 137 -> 215 us per call). On CUDA all three wait on the same condition (the caller's
fence and the previous call's) and run in submission order: the HAL issues ready work in
order from one worker thread onto one stream (`deferred_work_queue.c`, `cuda_device.c`'s
`dispatch_cu_stream`). Transient allocations and their deallocations are gone, and the
result's allocation waits on nothing: a call never blocks its caller (the CUDA HAL waits on
the host for a `queue.alloca`'s or `queue.dealloca`'s fences), so calls chained by their
fences overlap their host work with the device's.

Applies to a public function whose only queue work is transient/output allocations, one
indirect execution of a memoized command buffer and deallocations, with static sizes: the
coarse-fences functions of an ONNX/PyTorch import (`NAME$async`) and synchronous ones (a
linalg model's), whose one host wait then waits for the copy out; anything else (dynamic shapes, several executions, collectives or indirect
dispatches inside the recorded buffer) is left as IREE built it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...runtime.module import FIXED_BUFFERS, FIXED_BUFFERS_KEY
from ..ir import ir, owner_op, walk_ops

_USAGE = ('hal.buffer_usage<"TransferSource|TransferTarget|Transfer|DispatchStorageRead|'
          'DispatchStorageWrite|DispatchStorage"> : i32')
_MEMORY = 'hal.memory_type<"DeviceVisible|DeviceLocal"> : i32'
# recorded commands and the operands that may name a binding-table slot (an index) or a buffer
_BUFFER_OPERANDS = {"hal.command_buffer.fill_buffer": (1,), "hal.command_buffer.copy_buffer": (1, 3),
                    "hal.command_buffer.update_buffer": (3,)}
_RECORDED_OPS = ("hal.command_buffer.create", "hal.command_buffer.dispatch", "hal.command_buffer.execution_barrier",
                 "hal.command_buffer.finalize", *_BUFFER_OPERANDS)


class NotRecordable(Exception):
    """Why a function keeps IREE's program (one line)."""


@dataclass
class Slot:
    """One binding-table slot of the memoized command buffer."""
    index: int
    buffer: ir.Value            # the per-call buffer the call binds there (at offset 0)
    length: int
    role: str                   # "input" (a caller's buffer), "inout" (a caller's buffer the call
                                # returns: output storage it was handed), "output" (allocated by
                                # the call and returned), "scratch"

    @property
    def copied_in(self) -> bool:
        return self.role in ("input", "inout")

    @property
    def copied_out(self) -> bool:
        return self.role in ("output", "inout")
    alloca: ir.Operation | None = None


@dataclass
class Plan:
    function: ir.Operation
    execute: ir.Operation       # hal.device.queue.execute.indirect
    apply: ir.Operation         # the util.func that records the memoized command buffer
    result_global: str          # the global holding it
    device_global: str
    slots: list[Slot] = field(default_factory=list)
    deallocas: list[ir.Operation] = field(default_factory=list)
    await_op: ir.Operation | None = None    # a synchronous function's host wait for its work


def _const(v: ir.Value) -> int:
    op = owner_op(v)
    if op is None or op.name != "arith.constant":
        raise NotRecordable("a size or offset is computed at run time")
    return ir.IntegerAttr(op.attributes["value"]).value


def _sym(op: ir.Operation) -> str:
    """The global a util.global.load/store names."""
    return ir.FlatSymbolRefAttr(op.attributes["global"]).value


def _name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _segments(op: ir.Operation) -> list[int]:
    return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))


def _funcs(module: ir.Module) -> dict:
    return {_name(op): op for op in walk_ops(module.operation, "util.func")}


def _plan(module: ir.Module, fn: ir.Operation) -> Plan:
    body = fn.regions[0].blocks
    if len(body) != 1:
        raise NotRecordable("control flow in the function")
    block = body[0]
    ops = [o.operation for o in block.operations]
    queue = [o for o in ops if o.name.startswith("hal.device.queue.")]
    executes = [o for o in queue if o.name == "hal.device.queue.execute.indirect"]
    if any(o.name == "hal.command_buffer.create" for o in ops):
        raise NotRecordable("IREE records its command buffer on every call (a dynamic shape)")
    if len(executes) != 1:
        raise NotRecordable(f"{len(executes)} indirect executions (one expected)")
    other = [o.name for o in queue if o.name not in ("hal.device.queue.alloca", "hal.device.queue.dealloca",
                                                     "hal.device.queue.execute.indirect")]
    if other:
        raise NotRecordable(f"queue work besides the execution: {other[0]}")
    if any(o.name in ("util.call", "scf.if") for o in ops):
        raise NotRecordable("a call in the function")
    awaits = [o for o in ops if o.name == "hal.fence.await"]
    if awaits and (_coarse_fences(fn) or len(awaits) > 1 or ops.index(awaits[0]) < ops.index(executes[0])):
        raise NotRecordable("a host wait besides a synchronous function's one for its work")
    ex = executes[0]
    # operands: device, affinity, wait, signal, commands, buffers..., offsets..., lengths...
    rest = list(ex.operands)[5:]
    n = len(rest) // 3
    cmd_load = owner_op(ex.operands[4])
    if cmd_load is None or cmd_load.name != "util.global.load":
        raise NotRecordable("the executed command buffer is not a memoized global")
    result_global = _sym(cmd_load)
    apply = None
    for init in walk_ops(module.operation, "util.initializer"):
        for op in walk_ops(init):
            if op.name == "util.global.store" and _sym(op) == result_global:
                call = owner_op(op.operands[0])
                if call is not None and call.name == "util.call":
                    apply = _funcs(module).get(ir.FlatSymbolRefAttr(call.attributes["callee"]).value)
    if apply is None:
        raise NotRecordable("no memoized recording of the command buffer")
    for op in walk_ops(apply):
        if op.name.startswith("hal.command_buffer.") and op.name not in _RECORDED_OPS:
            raise NotRecordable(f"{op.name} in the recorded command buffer")
    creates = list(walk_ops(apply, "hal.command_buffer.create"))
    if len(creates) != 1 or len(creates[0].operands) != 3:
        raise NotRecordable("the recording does not create one command buffer with a binding table")
    dev_load = owner_op(creates[0].operands[0])
    if dev_load is None or dev_load.name != "util.global.load":
        raise NotRecordable("the command buffer's device is not a global")
    returned = set()
    for op in ops:
        if op.name == "hal.buffer_view.create":
            returned.add(op.operands[0])
    plan = Plan(fn, ex, apply, result_global, _sym(dev_load))
    args = list(block.arguments)
    for i in range(n):
        buf, off, length = rest[i], _const(rest[n + i]), _const(rest[2 * n + i])
        if off != 0:
            raise NotRecordable("a binding at a nonzero offset")
        d = owner_op(buf)
        if d is not None and d.name == "hal.device.queue.alloca":
            size = _const(d.operands[-1])
            role = "output" if buf in returned else "scratch"
            plan.slots.append(Slot(i, buf, max(length, size), role, d))
        elif d is not None and d.name == "hal.buffer_view.buffer" and d.operands[0] in args:
            plan.slots.append(Slot(i, buf, length, "inout" if buf in returned else "input"))
        else:
            raise NotRecordable(f"binding {i} is neither a caller's buffer nor an allocation of the call")
    for op in ops:
        if op.name == "hal.device.queue.dealloca":
            if not any(op.operands[4] == s.buffer for s in plan.slots if s.role == "scratch"):
                raise NotRecordable("a deallocation of a buffer the command buffer does not bind")
            plan.deallocas.append(op)
    if awaits:      # it waits for the last submission (the execution, or the deallocation after it)
        last = plan.deallocas[-1].operands[3] if plan.deallocas else ex.operands[3]
        if list(awaits[0].operands)[1:] != [last]:          # operands: timeout, fences...
            raise NotRecordable("the host wait is not for the function's work")
        plan.await_op = awaits[0]
    elif not _coarse_fences(fn):
        raise NotRecordable("a synchronous function without a host wait")
    bound = {s.buffer for s in plan.slots}
    for op in ops:
        if op.name == "hal.device.queue.alloca" and op.result not in bound:
            raise NotRecordable("an allocation the command buffer does not bind")
    return plan


def _names(plan: Plan) -> tuple[str, str, str, str]:
    base = "__convc_" + _name(plan.function).replace("$", "_")
    return base + "_slot", base + "_copy_in", base + "_copy_out", base + "_last_call"


def _module_text(plan: Plan) -> str:
    """The globals and the initializer that allocates the slot buffers and records the copies."""
    slot, copy_in, copy_out, last = _names(plan)
    dev = plan.device_global
    lines = [f"util.global private @{slot}{s.index} : !hal.buffer" for s in plan.slots]
    ins = [s for s in plan.slots if s.copied_in]
    outs = [s for s in plan.slots if s.copied_out]
    if ins:
        lines.append(f"util.global private @{copy_in} : !hal.command_buffer")
    if outs:
        lines.append(f"util.global private @{copy_out} : !hal.command_buffer")
    lines.append(f"util.global private mutable @{last} : !hal.fence")
    lines += ["util.initializer {",
              f"  %dev = util.global.load immutable @{dev} : !hal.device",
              "  %allocator = hal.device.allocator<%dev : !hal.device> : !hal.allocator",
              "  %aff = arith.constant -1 : i64",
              "  %c0 = arith.constant 0 : index",
              f"  %type = {_MEMORY}",
              f"  %usage = {_USAGE}"]
    for s in plan.slots:
        lines += [f"  %size{s.index} = arith.constant {s.length} : index",
                  f"  %b{s.index} = hal.allocator.allocate<%allocator : !hal.allocator> affinity(%aff) "
                  f"type(%type) usage(%usage) : !hal.buffer{{%size{s.index}}}",
                  f"  util.global.store %b{s.index}, @{slot}{s.index} : !hal.buffer"]
    for name, group, inward in ((copy_in, ins, True), (copy_out, outs, False)):
        if not group:
            continue
        lines += [f"  %n_{name} = arith.constant {len(group)} : index",
                  f"  %cmd_{name} = hal.command_buffer.create device(%dev : !hal.device) mode(\"None\") "
                  f"categories(\"Transfer\") affinity(%aff) bindings(%n_{name}) : !hal.command_buffer"]
        for k, s in enumerate(group):
            lines.append(f"  %k_{name}_{k} = arith.constant {k} : index")
            ends = (f"source(%k_{name}_{k} : index)[%c0] target(%b{s.index} : !hal.buffer)[%c0]" if inward else
                    f"source(%b{s.index} : !hal.buffer)[%c0] target(%k_{name}_{k} : index)[%c0]")
            lines.append(f"  hal.command_buffer.copy_buffer<%cmd_{name} : !hal.command_buffer> {ends} "
                         f"length(%size{s.index}) flags(\"None\")")
        lines += [f"  hal.command_buffer.finalize<%cmd_{name} : !hal.command_buffer>",
                  f"  util.global.store %cmd_{name}, @{name} : !hal.command_buffer"]
    lines += ["  util.return", "}"]
    return "\n".join(lines)


def _create(name: str, operands: list, results: list, attrs: dict | None = None) -> ir.Operation:
    return ir.Operation.create(name, results=results, operands=operands, attributes=attrs or {}).operation


def _i64(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)


def _index_const(v: int) -> ir.Operation:
    return _create("arith.constant", [], [ir.IndexType.get()], {"value": ir.IntegerAttr.get(ir.IndexType.get(), v)})


def _segments_attr(sizes: list[int]) -> ir.Attribute:
    return ir.DenseI32ArrayAttr.get(sizes)


def _rewrite(module: ir.Module, plan: Plan, stream_ordered: bool) -> None:
    slot, copy_in, copy_out, last = _names(plan)
    # 1. the globals and their initializer, before the memoized command buffer's own
    decl = "\n".join(f"util.global private @{s} : !hal.device" for s in [plan.device_global])
    scratch = ir.Module.parse(decl + "\n" + _module_text(plan), module.context)
    anchor = next(op for op in walk_ops(module.operation, "util.global") if _name(op) == plan.result_global)
    for op in list(scratch.body.operations)[1:]:
        op.operation.move_before(anchor)
    # 2. the recording: direct references to the slot buffers, no binding table
    create = next(iter(walk_ops(plan.apply, "hal.command_buffer.create")))
    entry = plan.apply.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(entry), ir.Location.unknown():
        loads = {s.index: _create("util.global.load", [], [ir.Type.parse("!hal.buffer")],
                                  {"global": ir.FlatSymbolRefAttr.get(f"{slot}{s.index}"),
                                   "is_immutable": ir.UnitAttr.get()}).result
                 for s in plan.slots}
    with ir.InsertionPoint(create), ir.Location.unknown():
        fresh = _create("hal.command_buffer.create", list(create.operands)[:2], [create.result.type],
                        {k: create.attributes[k] for k in create.attributes})
    create.result.replace_all_uses_with(fresh.result)
    create.erase()
    index = ir.IndexType.get()
    for op in walk_ops(plan.apply):
        if op.name == "hal.command_buffer.dispatch":
            seg = _segments(op)
            positions = range(sum(seg[:7]), sum(seg[:8]))
        else:
            positions = _BUFFER_OPERANDS.get(op.name, ())
        for j in positions:
            v = op.operands[j]
            if v.type == index:
                op.operands[j] = loads[_const(v)]
    # 3. the call: copy in, execute the fixed command buffer, copy out
    ex = plan.execute
    dev, aff = list(ex.operands)[:2]
    fn_args = list(plan.function.regions[0].blocks[0].arguments)
    fence_t = ir.Type.parse("!hal.fence")
    cb_t = ir.Type.parse("!hal.command_buffer")
    flags0 = {"flags": _i64(0)}
    if plan.await_op is None:
        caller_wait, caller_signal = _caller_fences(fn_args)
    else:       # synchronous: no caller's fences; the host waits on the last copy's
        with ir.InsertionPoint(ex), ir.Location.unknown():
            caller_wait = _create("util.null", [], [ir.Type.parse("!hal.fence")]).result
            caller_signal = _create("hal.fence.create", [dev], [ir.Type.parse("!hal.fence")],
                                    {"flags": _i64(0)}).result
        plan.await_op.operands[1] = caller_signal
    outs = [s for s in plan.slots if s.copied_out]
    ins = [s for s in plan.slots if s.copied_in]
    with ir.InsertionPoint(ex), ir.Location.unknown():
        prev = _create("util.global.load", [], [fence_t], {"global": ir.FlatSymbolRefAttr.get(last)}).result
        ready = _create("hal.fence.join", [caller_wait, prev], [fence_t], flags0).result
        start = ready
        if ins:
            f_in = _create("hal.fence.create", [dev], [fence_t], flags0).result
            cmd = _create("util.global.load", [], [cb_t], {"global": ir.FlatSymbolRefAttr.get(copy_in),
                                                            "is_immutable": ir.UnitAttr.get()}).result
            _indirect(dev, aff, ready, f_in, cmd, [(s.buffer, s.length) for s in ins])
            ready = start if stream_ordered else f_in
        done = _create("hal.fence.create", [dev], [fence_t], flags0).result if outs else caller_signal
        _create("hal.device.queue.execute", [dev, aff, ready, done, ex.operands[4]], [], flags0)
        if outs:
            allocated = [_alloca_signal(s) for s in outs if s.alloca is not None]
            after = _create("hal.fence.join", [start if stream_ordered else done, *allocated], [fence_t],
                            flags0).result
            cmd = _create("util.global.load", [], [cb_t], {"global": ir.FlatSymbolRefAttr.get(copy_out),
                                                            "is_immutable": ir.UnitAttr.get()}).result
            _indirect(dev, aff, after, caller_signal, cmd, [(s.buffer, s.length) for s in outs])
        _create("util.global.store", [caller_signal], [], {"global": ir.FlatSymbolRefAttr.get(last)})
    # a result's allocation needs no input: it waits on nothing, so a call never blocks the
    # caller's thread (the CUDA HAL waits on the host for an allocation's fences), and calls
    # chained by their fences overlap their host work with the device's
    for s in (s for s in outs if s.alloca is not None):
        with ir.InsertionPoint(s.alloca):
            s.alloca.operands[2] = _create("util.null", [], [fence_t]).result
    _reflect(plan.function)
    for op in plan.deallocas:
        op.erase()
    ex.erase()
    for s in plan.slots:
        if s.role == "scratch":
            s.alloca.erase()
    _dead_code(plan.function)


def _reflect(fn: ir.Operation) -> None:
    old = fn.attributes["iree.reflection"] if "iree.reflection" in fn.attributes else None
    entries = {k.name: k.attr for k in ir.DictAttr(old)} if old is not None else {}
    entries[FIXED_BUFFERS_KEY] = ir.StringAttr.get(FIXED_BUFFERS)   # runtimes pick CUDA graph mode by it
    if _coarse_fences(fn):
        # IREE's tools run a function with this model as one taking (wait, signal) fences: e.g.
        # iree-benchmark-module --batch_size=N chains N calls by their fences, one host wait
        entries["iree.abi.model"] = ir.StringAttr.get("coarse-fences")
    fn.attributes["iree.reflection"] = ir.DictAttr.get(entries)


def _indirect(dev, aff, wait, signal, cmd, bindings) -> None:
    """Executes command buffer `cmd` with a binding table of (buffer, length) at offset 0."""
    offs = [_index_const(0).result for _ in bindings]
    lens = [_index_const(length).result for _, length in bindings]
    _create("hal.device.queue.execute.indirect",
            [dev, aff, wait, signal, cmd, *[b for b, _ in bindings], *offs, *lens], [],
            {"flags": _i64(0)})


def _alloca_signal(s: Slot) -> ir.Value:
    # alloca operands: device, affinity, wait fence, signal fence, pool, type, usage, size
    return s.alloca.operands[3]


def _caller_fences(fn_args) -> tuple[ir.Value, ir.Value]:
    """A coarse-fences function's wait and signal fences: its last two arguments."""
    fences = [a for a in fn_args if str(a.type) == "!hal.fence"]
    if len(fences) != 2:
        raise NotRecordable("not a coarse-fences function")
    return fences[0], fences[1]


_PURE = ("arith.constant", "hal.fence.create", "hal.fence.join", "util.global.load", "util.null",
         "hal.memory_type", "hal.buffer_usage")


def _dead_code(fn: ir.Operation) -> None:
    changed = True
    while changed:
        changed = False
        for op in reversed(list(fn.regions[0].blocks[0].operations)):
            op = op.operation
            if op.name in _PURE and all(len(list(r.uses)) == 0 for r in op.results):
                op.erase()
                changed = True


def _coarse_fences(fn: ir.Operation) -> bool:
    return "iree.abi.model" in fn.attributes and \
        ir.StringAttr(fn.attributes["iree.abi.model"]).value == "coarse-fences"


def _submitting_functions(module: ir.Module) -> dict:
    """Public functions that submit work themselves: the coarse-fences ones of an import's ABI
    and plain synchronous ones (a linalg model's); not the wrappers that call them."""
    out = {}
    for name, fn in _funcs(module).items():
        if "sym_visibility" in fn.attributes and ir.StringAttr(fn.attributes["sym_visibility"]).value != "public":
            continue
        if any(op.name.startswith("hal.device.queue.execute") or op.name == "hal.command_buffer.create"
               for op in walk_ops(fn)):
            out[name] = fn
    return out


def recordable_functions(module: ir.Module) -> dict[str, str]:
    """Public function that submits work -> "" if the pass records it once, else the reason not."""
    out = {}
    for name, fn in _submitting_functions(module).items():
        try:
            _plan(module, fn)
            out[name] = ""
        except NotRecordable as e:
            out[name] = str(e)
    return out


def record_once(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-record-once (on IREE's `hal`-phase program): every recordable public function
    executes its command buffer against fixed buffers, recorded once with no binding table."""
    for name, fn in _submitting_functions(module).items():
        try:
            plan = _plan(module, fn)
        except NotRecordable:
            continue
        with module.context, ir.Location.unknown():
            _rewrite(module, plan, stream_ordered=options is not None and options.target.startswith("sm_"))
    module.operation.verify()
    return module
