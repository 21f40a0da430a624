// On sm_90a the planner picks the TMA + wgmma kernel whenever TMA constraints hold, and
// otherwise the portable kernel with the reason.

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=TMA
// TMA: convc.schedule = {block_k = 64 : i64, block_m = 128 : i64, block_n = 128 : i64
// TMA-SAME: kernel = "sm90_tma_wgmma"
// TMA-SAME: scratch_bytes = 256 : i64
// TMA-SAME: stages = 3 : i64
// TMA-SAME: threads = 256 : i64

// C = 16 is not a multiple of 64: portable, and the report says why.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s --check-prefix=NARROW
// NARROW: kernel = "portable_igemm"
// NARROW-SAME: reason = "portable implicit GEMM: TMA path declined (C=16 is not a multiple of 64

// sm_100a has TMA but no wgmma: portable.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_100a %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=SM100
// SM100: kernel = "portable_igemm"
