// convc-record-once, on IREE's hal-phase program: the memoized command buffer is recorded
// against buffers of its own (allocated once at load) with no binding table, so IREE's CUDA HAL
// replays it as one CUDA graph (--cuda_use_streams=false); each call copies its input in and
// its output out with two small memoized command buffers and keeps no transient allocation.

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel,convc-splice-dispatch,convc-drop-barriers --target sm_90a %inputs/grouped_f32.flow.mlir | iree-compile - --compile-from=flow --compile-to=hal -o %t.hal.mlir
// RUN: convc-opt --pass=convc-record-once --target sm_90a %t.hal.mlir | FileCheck %s
// RUN: convc-opt --pass=convc-record-once --target llvm-cpu %t.hal.mlir | FileCheck %s --check-prefix=CHAINED
// RUN: convc-opt --pass=convc-record-once --target sm_90a %t.hal.mlir | iree-compile - --compile-from=hal -o %t.vmfb

// The recording: slot buffers loaded from globals, a reusable command buffer without a table.
// CHECK-LABEL: util.func private @__main$async_memoize_apply
// CHECK: util.global.load immutable @__convc_main_async_slot0 : !hal.buffer
// CHECK: hal.command_buffer.create device({{.*}}) mode("None") categories("Transfer|Dispatch") affinity({{.*}}) : !hal.command_buffer
// CHECK-NOT: bindings(%
// CHECK: (%__convc_main_async_slot0 : !hal.buffer)
// CHECK-NOT: (%c{{[0-9]+}} : index)
// CHECK: hal.command_buffer.finalize

// Allocated once, before the memoized command buffer is recorded; the copies recorded with it.
// CHECK: util.global private @__convc_main_async_slot0 : !hal.buffer
// CHECK: util.global private mutable @__convc_main_async_last_call : !hal.fence
// CHECK: util.initializer
// CHECK: hal.allocator.allocate
// CHECK: hal.command_buffer.copy_buffer<{{.*}}> source(%{{.*}} : index)[%{{.*}}] target(%{{.*}} : !hal.buffer)
// CHECK: hal.command_buffer.copy_buffer<{{.*}}> source(%{{.*}} : !hal.buffer)[%{{.*}}] target(%{{.*}} : index)
// CHECK: util.global private @__main$async_memoize_result_0_device_0

// The call: copy in, execute the fixed command buffer, copy out into the buffer it returns,
// all waiting on the caller's fence and the previous call (CUDA runs ready work in order on one
// stream); no transient allocation besides the result, which waits on nothing (the CUDA HAL
// would block the caller on it), and no deallocation; the reflection says the function takes
// fences, for IREE's tools.
// CHECK-LABEL: util.func public @main$async(
// CHECK-SAME: %[[ARG:.+]]: !hal.buffer_view, %[[WAIT:.+]]: !hal.fence, %[[SIGNAL:.+]]: !hal.fence)
// CHECK-SAME: iree.reflection = {convc.command_buffer = "fixed-buffers", iree.abi.model = "coarse-fences"}
// CHECK: %[[NONE:.+]] = util.null : !hal.fence
// CHECK-NEXT: %[[OUT:.+]] = hal.device.queue.alloca<{{.*}} wait(%[[NONE]])
// CHECK: %[[LAST:.+]] = util.global.load @__convc_main_async_last_call
// CHECK: %[[READY:.+]] = hal.fence.join at([%[[WAIT]], %[[LAST]]])
// CHECK: hal.device.queue.execute.indirect<{{.*}} wait(%[[READY]]) {{.*}} commands(%__convc_main_async_copy_in)
// CHECK: hal.device.queue.execute<{{.*}} wait(%[[READY]]) {{.*}} commands(%__main$async_memoize_result_0_device_0)
// CHECK: hal.device.queue.execute.indirect<{{.*}} signal(%[[SIGNAL]]) commands(%__convc_main_async_copy_out) bindings([
// CHECK-NEXT: (%[[OUT]] : !hal.buffer)
// CHECK: util.global.store %[[SIGNAL]], @__convc_main_async_last_call
// CHECK-NOT: hal.device.queue.dealloca
// CHECK: util.return

// Elsewhere each submission waits on the one before it.
// CHAINED-LABEL: util.func public @main$async(
// CHAINED: hal.device.queue.execute.indirect<{{.*}} signal(%[[IN:.+]]) commands(%__convc_main_async_copy_in)
// CHAINED: hal.device.queue.execute<{{.*}} wait(%[[IN]]) signal(%[[DONE:.+]]) commands(
// CHAINED: %[[AFTER:.+]] = hal.fence.join at([%[[DONE]],
// CHAINED: hal.device.queue.execute.indirect<{{.*}} wait(%[[AFTER]]) {{.*}} commands(%__convc_main_async_copy_out)

// A dynamic batch: the sizes are the call's (IREE records its one-shot command buffer per
// call), so IREE's program stays as it is.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel,convc-splice-dispatch,convc-drop-barriers --target sm_90a %inputs/dynamic_batch_f16.flow.mlir | iree-compile - --compile-from=flow --compile-to=hal -o - | convc-opt --pass=convc-record-once --target sm_90a - | FileCheck %s --check-prefix=DYN
// DYN-NOT: __convc_main_async_slot
// DYN-LABEL: util.func public @main$async(
// DYN: hal.command_buffer.create
// DYN: hal.device.queue.execute<
// DYN: hal.device.queue.dealloca

// A synchronous function (a linalg model's): no caller's fences; its one host wait now waits
// for the copy out, the fence the last submission signals.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel,convc-splice-dispatch,convc-drop-barriers --target llvm-cpu %inputs/f32_conv.flow.mlir | iree-compile - --compile-from=flow --compile-to=hal -o - | convc-opt --pass=convc-record-once --target llvm-cpu - | FileCheck %s --check-prefix=SYNC
// SYNC: util.global private mutable @__convc_{{.+}}_last_call : !hal.fence
// SYNC: hal.device.queue.execute.indirect<{{.*}} commands(%__convc_{{.+}}_copy_in)
// SYNC: hal.device.queue.execute<
// SYNC: hal.device.queue.execute.indirect<{{.*}} signal(%[[DONE:.+]]) commands(%__convc_{{.+}}_copy_out)
// SYNC-NOT: hal.device.queue.dealloca
// SYNC: hal.fence.await until([%[[DONE]]])
