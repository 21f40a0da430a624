// On sm_90a the planner picks the warp-specialized persistent kernel when its 128x128 tiles
// fill the SMs, the non-persistent TMA kernel (split-K / 64-row tiles) for small grids, the
// gathered-im2col kernel when TMA cannot read the input, and says why.

// A grid that fills the 132 SMs: persistent cooperative kernel, one CTA per SM, 384 threads.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=WS
// WS: convc.schedule = {block_k = 64 : i64, block_m = 128 : i64, block_n = 128 : i64, cluster_m = 1 : i64, grid = [132, 1, 1]
// WS-SAME: kernel = "sm90_ws_cooperative", raster = 1 : i64
// WS-SAME: reason = "warp-specialized persistent TMA + wgmma (cooperative), TMA-store epilogue"
// WS-SAME: scratch_bytes = 67584 : i64, smem_bytes = 229520 : i64, split_k = 1 : i64, stages = 6 : i64
// WS-SAME: threads = 384 : i64

// Too few 128-row tiles to fill the SMs: 64-row tiles, the warpgroups split the channels.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=SMALL
// SMALL: convc.schedule = {block_k = 64 : i64, block_m = 64 : i64, block_n = 128 : i64, cluster_m = 1 : i64, grid = [2, 1, 1]
// SMALL-SAME: kernel = "sm90_tma_wgmma"
// SMALL-SAME: reason = "im2col TMA + wgmma, mbarrier ring (1 128-row tiles: too few for a persistent grid)"
// SMALL-SAME: stages = 4 : i64
// SMALL-SAME: thread_n = 64 : i64

// Tuning rounds force a candidate by index (here the 5th: ping-pong 64x64).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a --candidate 4 %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=CAND
// CAND: block_m = 64 : i64, block_n = 64 : i64
// CAND-SAME: kernel = "sm90_ws_pingpong"
// CAND-SAME: reason = "tuning candidate 5/11: warp-specialized persistent TMA + wgmma (ping-pong)

// A tuning cache entry for this problem selects its winner (the most recent device's entry).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a --tuning-cache %inputs/tuning_cache.json %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=TUNED
// TUNED: block_m = 64 : i64, block_n = 128 : i64
// TUNED-SAME: kernel = "sm90_ws_pingpong"
// TUNED-SAME: reason = "tuned on NVIDIA H200 (9.5 us, best of 9): warp-specialized
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a --tuning-cache %inputs/tuning_cache.json %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=TUNED2
// TUNED2: kernel = "sm90_ws_cooperative"
// TUNED2-SAME: reason = "tuned on NVIDIA H200 (4.0 us, best of 8)

// C = 16 is not a multiple of 64: wgmma with a gathered im2col tile, and the report says why.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s --check-prefix=NARROW
// NARROW: kernel = "sm90_gather_wgmma"
// NARROW-SAME: reason = "gathered im2col + wgmma (TMA declined: C=16 is not a multiple of 64

// sm_100a has TMA but no wgmma: portable.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_100a %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=SM100
// SM100: kernel = "portable_igemm"
