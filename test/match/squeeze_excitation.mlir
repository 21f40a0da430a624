// convc-match-conv and convc-plan-schedule on a squeeze-excitation block at batch 2 (ONNX:
// conv -> GlobalAveragePool -> 1x1 conv + bias -> relu -> 1x1 conv + bias -> sigmoid -> Mul ->
// 1x1 conv; squeeze width 6). IREE's reduction of [2, 143, 16] over the pixels is a global
// sum-pool (the window the whole 143-pixel image) on the pixel-reduction kernel; the FCs,
// GEMMs of 2 rows, on the skinny kernel; the scale, one elementwise generic over the
// activation reading the [2, 16] excitation per image and channel, a map (a 1x1 sum window
// whose epilogue is the generic) on the direct kernel.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule %inputs/squeeze_excitation_f16.flow.mlir | FileCheck %s

// CHECK-LABEL: flow.executable private @se$async_dispatch_2
// CHECK-SAME: H = 143 : i64, N = 2 : i64, R = 143 : i64, S = 1 : i64, W = 1 : i64
// CHECK-SAME: pool = "sum"
// CHECK-SAME: kernel = "global_pool"
// CHECK-SAME: global sum-pool
// CHECK-LABEL: flow.executable private @se$async_dispatch_3
// CHECK-SAME: F = 6 : i64
// CHECK-SAME: gemm_form = true
// CHECK-SAME: kernel = "skinny_gemm"
// CHECK-LABEL: flow.executable private @se$async_dispatch_4
// CHECK-SAME: C = 6 : i64
// CHECK-SAME: kernel = "skinny_gemm"
// CHECK-LABEL: flow.executable private @se$async_dispatch_5
// CHECK-SAME: R = 1 : i64, S = 1 : i64, W = 143 : i64
// CHECK-SAME: broadcast = "image"
// CHECK-SAME: pool = "sum"
// CHECK-SAME: kernel = "direct_grouped"
// CHECK-SAME: elementwise map on the direct kernel
