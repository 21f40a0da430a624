// convc-match-conv and convc-plan-schedule on a classifier head at batch 3 (ONNX, f16: conv ->
// BatchNormalization -> Relu -> GlobalAveragePool). The conv's only consumer is the pool, so
// IREE fuses the BatchNorm and Relu into the reduction over the pixels, reading the BatchNorm's
// f16 constants widened to f32 by generics of their own: the pool takes them as its prologue
// (a program over each element with per-channel loads, the widenings as extf ops) and runs on
// the global-pool kernel instead of IREE's reduction codegen.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule %inputs/pool_prologue_f16.flow.mlir | FileCheck %s

// CHECK-LABEL: flow.executable private @head$async_dispatch_2
// CHECK-SAME: H = 35 : i64, N = 3 : i64, R = 35 : i64
// CHECK-SAME: pool = "sum", prologue = [{dtype = "f16", loads = [{broadcast = "channel"
// CHECK-SAME: op = "arith.extf"
// CHECK-SAME: op = "arith.cmpf"
// CHECK-SAME: op = "arith.select"
// CHECK-SAME: kernel = "global_pool"
// CHECK-SAME: global sum-pool
