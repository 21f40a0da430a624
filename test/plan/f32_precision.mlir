// f32 convs: TF32 wgmma on the persistent kernels by default, where their 128-byte rows of 32
// channels or 64-byte rows of 16 tile C; exact f32 math on the portable kernel otherwise, or
// with --precision fp32.

// C = 16: 64-byte rows (64B swizzle), two k8 TF32 wgmmas per stage.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule %inputs/f32_conv.flow.mlir | FileCheck %s
// CHECK: convc.problem = {{.*}}dtype = "f32"
// CHECK: convc.schedule = {{.*}}block_k = 16 : i64
// CHECK-SAME: kernel = "sm90_ws_pingpong"
// CHECK-SAME: TF32 wgmma (f32 operands, f32 accumulation)

// C = 12 with 3x3 taps: no swizzled row tiles C, and the row-slab kernel takes no F = 24; the
// portable kernel computes exactly, and says why.
// RUN: sed -e 's/16xf32/12xf32/g' -e 's/, 16\]/, 12]/g' %inputs/f32_conv.flow.mlir | convc-opt --pass=convc-match-conv,convc-plan-schedule - | FileCheck %s --check-prefix=DECLINE
// DECLINE: convc.schedule = {{.*}}kernel = "portable_igemm"
// DECLINE-SAME: reason = "portable implicit GEMM (f32 inputs, exact f32 math: TF32 wgmma kernel declined: C=12 is not a multiple of 16 (one 64-byte swizzled row of f32 per K step; a multiple of 4 with one filter tap); row-slab kernel declined: F=24 is not a multiple of 32)"

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --precision fp32 %inputs/f32_conv.flow.mlir | FileCheck %s --check-prefix=FP32
// FP32: reason = "portable implicit GEMM (f32 inputs, --precision fp32: exact f32 math)"

// C = 64: ping-pong TF32 tiles of 32-channel K steps, and k8 TF32 wgmmas in the kernel (F = 24:
// 32-channel tiles, so n = 32).
// RUN: sed -e 's/16xf32/64xf32/g' -e 's/, 16\]/, 64]/g' %inputs/f32_conv.flow.mlir | convc-opt --pass=convc-match-conv,convc-plan-schedule - | FileCheck %s --check-prefix=TF32
// TF32: block_k = 32 : i64
// TF32-SAME: kernel = "sm90_ws_pingpong"
// TF32-SAME: reason = "warp-specialized persistent TMA + wgmma (ping-pong), TMA-store epilogue, TF32 wgmma (f32 operands, f32 accumulation)"
// RUN: sed -e 's/16xf32/64xf32/g' -e 's/, 16\]/, 64]/g' %inputs/f32_conv.flow.mlir | convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel - | FileCheck %s --check-prefix=MMA
// MMA: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 8>, D[<f32>, {{.*}}], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
