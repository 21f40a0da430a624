// convc-drop-barriers: the barriers convc-channels-last put around transposed filters and
// layout holders steered IREE's dispatch formation; once the dispatches exist they only split
// the host program (IREE's stream partitioning cannot cross them). After the pass no barrier
// is left in host code, and IREE's stream phase builds one execution region per inference
// (six without the pass, one per conv).

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel,convc-splice-dispatch,convc-drop-barriers --target sm_90a %inputs/grouped_f32.flow.mlir | FileCheck %s
// CHECK-LABEL: util.func public @main$async
// CHECK-NOT: util.optimization_barrier
// CHECK: flow.dispatch @main$async_dispatch_0::
// CHECK-NOT: util.optimization_barrier
// CHECK: util.return

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel,convc-splice-dispatch,convc-drop-barriers --target sm_90a %inputs/grouped_f32.flow.mlir | iree-compile - --compile-from=flow --compile-to=stream -o - | FileCheck %s --check-prefix=STREAM
// STREAM-LABEL: util.func public @main$async
// STREAM-COUNT-1: stream.cmd.execute
// STREAM-NOT: stream.cmd.execute
// STREAM-NOT: stream.timepoint.await
// STREAM: util.return

// Without the pass: one execution region per conv, a host wait among them.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel,convc-splice-dispatch --target sm_90a %inputs/grouped_f32.flow.mlir | iree-compile - --compile-from=flow --compile-to=stream -o - | FileCheck %s --check-prefix=SPLIT
// SPLIT-LABEL: util.func public @main$async
// SPLIT-COUNT-6: stream.cmd.execute

// A dynamic batch: the dispatches read the operand's own (tied) sizes.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel,convc-splice-dispatch,convc-drop-barriers --target sm_90a %inputs/dynamic_batch_f16.flow.mlir | iree-compile - --compile-from=flow --compile-to=stream -o - | FileCheck %s --check-prefix=DYN
// DYN-LABEL: util.func public @main$async
// DYN-COUNT-1: stream.cmd.execute
// DYN-NOT: stream.cmd.execute
// DYN: util.return
