// convc-plan-schedule for grouped (not depthwise) f16/bf16 convs on sm_90a and sm_100a: the
// tensor-core kernel (passes/grouped_mma_plan.py) with its tile, channel block and ring in the
// schedule and the report; the direct kernel on other targets.

// 64 -> 64 channels in 8 groups of 8, 3x3 pad 1, 10x12 images: one CTA owns all 8 groups (64
// output channels, block-diagonal filter), tiles of one output row (12 pixels in two m16
// fragments), one patch buffer (each CTA has one tile), two CTAs per SM.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/grouped_mma_3x3_f16.flow.mlir | FileCheck %s
// CHECK: convc.schedule = {block_k = 16 : i64, block_m = 32 : i64, block_n = 64 : i64, config = {cols = 12 : i64, ctas_per_sm = 2 : i64, rows = 1 : i64, slices = 1 : i64}
// CHECK-SAME: grid = [20, 1, 1]
// CHECK-SAME: kernel = "grouped_mma"
// CHECK-SAME: reason = "grouped implicit GEMM on tensor cores (mma.sync m16n8k16, f32 accumulation): 8 groups (64 channels) per CTA, 1x12-pixel tiles, 1 patch buffer, 2 CTAs per SM, block-diagonal filter staged once"
// CHECK-SAME: stages = 1 : i64
// CHECK-SAME: threads = 256 : i64

// The same on sm_100a (mma.sync runs there too).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_100a %inputs/grouped_mma_3x3_f16.flow.mlir | FileCheck %s --check-prefix=SM100
// SM100: kernel = "grouped_mma"
// SM100-SAME: target = "sm_100a"

// bf16, 96 -> 48 in 6 groups (16 input, 8 output channels each), stride 2, dilation 1x2,
// asymmetric pads, residual: 6 groups per CTA, output rows of 4 pixels.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/grouped_mma_strided_bf16.flow.mlir | FileCheck %s --check-prefix=STRIDED
// STRIDED: block_n = 48 : i64
// STRIDED-SAME: kernel = "grouped_mma"
// STRIDED-SAME: 6 groups (48 channels) per CTA, 1x4-pixel tiles

// A 1x1 conv with 3 groups of 80 channels (IREE's GEMM form: pixels as rows): one group per
// CTA (80 output channels), three channel blocks on the grid's y.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/grouped_mma_1x1_f16.flow.mlir | FileCheck %s --check-prefix=ONE
// ONE: block_n = 80 : i64
// ONE-SAME: grid = [64, 3, 1]
// ONE-SAME: kernel = "grouped_mma"

// llvm-cpu keeps the direct kernel.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target llvm-cpu %inputs/grouped_mma_3x3_f16.flow.mlir | FileCheck %s --check-prefix=CPU
// CPU: kernel = "direct_grouped"
// CPU-SAME: reason = "direct grouped conv: 8 groups of 8 channels, 4 pixels x 8 channels per thread, f32 accumulation"

// f32 grouped convs stay on the direct kernel, and the report says why.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/grouped_hwcf_f32.flow.mlir | FileCheck %s --check-prefix=F32
// F32: kernel = "direct_grouped",{{.*}} reason = "direct grouped conv: 4 groups of 8 channels, {{.*}} (tensor-core kernel declined: f32 inputs (mma.sync m16n8k16 takes f16/bf16))"
