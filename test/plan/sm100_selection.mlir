// convc-plan-schedule on sm_100a (passes/plan/kernels/sm100_ws.py): the warp-specialized tcgen05 kernel for
// f16/bf16 convs the im2col TMA reads, the portable kernel with the reason otherwise.

// 2x92x92x64 -> 128, 3x3: 128x128 tiles (133 of them: 133 persistent CTAs of 148 SMs), 6
// stages of 32 KB, 192 threads, one CTA per SM, 4 descriptor slots per CTA.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_100a %inputs/tma_large.flow.mlir | FileCheck %s
// CHECK: convc.schedule = {block_k = 64 : i64, block_m = 128 : i64, block_n = 128 : i64, config = {cluster_m = 1 : i64, raster = 1 : i64}
// CHECK-SAME: grid = [133, 1, 1]
// CHECK-SAME: kernel = "sm100_ws"
// CHECK-SAME: reason = "warp-specialized persistent tcgen05 (1-SM kind::f16, f32 accumulators in tensor memory, 2 accumulator stages), im2col TMA ring, TMA-store epilogue"
// CHECK-SAME: scratch_bytes = 68096 : i64, smem_bytes = 229528 : i64
// CHECK-SAME: stages = 6 : i64
// CHECK-SAME: target = "sm_100a"
// CHECK-SAME: threads = 192 : i64

// A strided 1x1 conv with C = 32 (mod 64): 64-byte K rows (block_k = 32, 64B swizzle).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_100a %inputs/strided_1x1.flow.mlir | FileCheck %s --check-prefix=NARROW
// NARROW: convc.schedule = {block_k = 32 : i64, block_m = 128 : i64
// NARROW-SAME: kernel = "sm100_ws"

// C = 16 over a 3x3 filter: no TMA K row; portable, and the report says why.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_100a %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s --check-prefix=C16
// C16: kernel = "portable_igemm"
// C16-SAME: reason = "portable implicit GEMM: tcgen05 kernel declined (C=16 does not tile into 64- or 128-byte K rows of the im2col TMA

// f32 convs (C = 16: 64-byte K rows of f32): the tcgen05 kernel with kind::tf32 MMAs by default;
// exact f32 math on the portable kernel with --precision fp32.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_100a %inputs/f32_conv.flow.mlir | FileCheck %s --check-prefix=F32
// F32: convc.schedule = {{.*}}block_k = 16 : i64
// F32-SAME: kernel = "sm100_ws"
// F32-SAME: reason = "warp-specialized persistent tcgen05 (1-SM kind::tf32, f32 accumulators in tensor memory, 2 accumulator stages), im2col TMA ring, TMA-store epilogue"
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_100a --precision fp32 %inputs/f32_conv.flow.mlir | FileCheck %s --check-prefix=FP32
// FP32: kernel = "portable_igemm"
// FP32-SAME: reason = "portable implicit GEMM (f32 inputs, --precision fp32: exact f32 math)"
