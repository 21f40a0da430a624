// On sm_90a the planner picks the TMA + wgmma kernel whenever TMA constraints hold, and
// otherwise the portable kernel with the reason.

// A grid that fills the 132 SMs: 128x128 tiles, a 3-stage ring (two CTAs per SM).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=TMA
// TMA: convc.schedule = {block_k = 64 : i64, block_m = 128 : i64, block_n = 128 : i64, grid = [133, 1, 1]
// TMA-SAME: kernel = "sm90_tma_wgmma"
// TMA-SAME: scratch_bytes = 34048 : i64, smem_bytes = 98352 : i64, split_k = 1 : i64, stages = 3 : i64
// TMA-SAME: thread_m = 64 : i64, thread_n = 128 : i64, threads = 256 : i64

// Too few 128-row tiles to fill the SMs: 64-row tiles, the warpgroups split the channels.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=SMALL
// SMALL: convc.schedule = {block_k = 64 : i64, block_m = 64 : i64, block_n = 128 : i64, grid = [2, 1, 1]
// SMALL-SAME: kernel = "sm90_tma_wgmma"
// SMALL-SAME: stages = 4 : i64
// SMALL-SAME: thread_n = 64 : i64

// C = 16 is not a multiple of 64: wgmma with a gathered im2col tile, and the report says why.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s --check-prefix=NARROW
// NARROW: kernel = "sm90_gather_wgmma"
// NARROW-SAME: reason = "gathered im2col + wgmma (TMA declined: C=16 is not a multiple of 64

// sm_100a has TMA but no wgmma: portable.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_100a %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=SM100
// SM100: kernel = "portable_igemm"
