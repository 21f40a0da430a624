// On sm_90a the planner picks the warp-specialized persistent kernel (cooperative 128-row
// tiles for big problems, ping-pong 64-row tiles otherwise), the gathered-im2col kernel when
// TMA cannot read the input, and says why; tuning rounds and the tuning cache override it.

// Under two waves of 128-row tiles, F = 128: swapped cooperative tiles (channels on the
// wgmma's M) of 144 pixels, so 16928 pixels make 118 even tiles; one CTA per SM, 384 threads.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=WS
// WS: convc.schedule = {block_k = 64 : i64, block_m = 144 : i64, block_n = 128 : i64, config = {cluster_m = 1 : i64, consumers = 2 : i64, direct_stages = 2 : i64, epilogue_slots = 1 : i64, late_channel_ops = false, raster = 1 : i64, swap_ab = true}, grid = [118, 1, 1]
// WS-SAME: kernel = "sm90_ws_cooperative"
// WS-SAME: reason = "warp-specialized persistent TMA + wgmma (cooperative), TMA-store epilogue, channels on the wgmma M (swapped)"
// WS-SAME: smem_bytes = 211072 : i64, stages = 5 : i64
// WS-SAME: threads = 384 : i64

// Tiny grid (8 output rows of 2 images): 64x64 tiles, a grid of 4 CTAs.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=SMALL
// SMALL: convc.schedule = {block_k = 64 : i64, block_m = 64 : i64, block_n = 64 : i64, config = {cluster_m = 1 : i64, consumers = 2 : i64, direct_stages = 2 : i64, epilogue_slots = 1 : i64, late_channel_ops = false, raster = 1 : i64, swap_ab = false}, grid = [4, 1, 1]
// SMALL-SAME: kernel = "sm90_ws_pingpong"

// Tuning rounds force a candidate by its settings (the first candidate with them all; here the
// 3rd is cooperative 128x128, the 10th a 2x1 cluster, the 12th the non-persistent kernel) or,
// as convc-tune does, by index (the 6th: ping-pong 64x64).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a --candidate kernel=sm90_ws_cooperative,block_m=128,block_n=128 %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=COOP
// COOP: block_m = 128 : i64, block_n = 128 : i64, config = {cluster_m = 1 : i64, consumers = 2 : i64, direct_stages = 0 : i64, epilogue_slots = 1 : i64, late_channel_ops = false, raster = 1 : i64, swap_ab = false}, grid = [132, 1, 1]
// COOP-SAME: kernel = "sm90_ws_cooperative"
// COOP-SAME: reason = "tuning candidate 3/{{[0-9]+}}: warp-specialized persistent TMA + wgmma (cooperative)
// COOP-SAME: smem_bytes = 229520 : i64, stages = 6 : i64
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a --candidate 5 %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=CAND
// CAND: block_m = 64 : i64, block_n = 64 : i64
// CAND-SAME: kernel = "sm90_ws_pingpong"
// CAND-SAME: reason = "tuning candidate 6/{{[0-9]+}}: warp-specialized persistent TMA + wgmma (ping-pong)
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a --candidate kernel=sm90_ws_cooperative,cluster_m=2 %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=CLUSTER
// CLUSTER: block_m = 128 : i64, block_n = 128 : i64, config = {cluster_m = 2 : i64, consumers = 2 : i64, direct_stages = 0 : i64, epilogue_slots = 1 : i64, late_channel_ops = false, raster = 1 : i64, swap_ab = false}, grid = [132, 1, 1]
// CLUSTER-SAME: 2x1 cluster with filter multicast
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a --candidate kernel=sm90_tma_wgmma %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=LEGACY
// LEGACY: block_m = 128 : i64, block_n = 128 : i64, config = {split_k = 1 : i64}, grid = [133, 1, 1]
// LEGACY-SAME: kernel = "sm90_tma_wgmma"
// LEGACY-SAME: smem_bytes = 98352 : i64, stages = 3 : i64

// A tuning cache entry for this problem selects its winner (the most recent device's entry).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a --tuning-cache %inputs/tuning_cache.json %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=TUNED
// TUNED: block_m = 64 : i64, block_n = 128 : i64
// TUNED-SAME: kernel = "sm90_ws_pingpong"
// TUNED-SAME: reason = "tuned on NVIDIA H200 (9.5 us, best of 9): warp-specialized
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a --tuning-cache %inputs/tuning_cache.json %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=TUNED2
// TUNED2: kernel = "sm90_ws_cooperative"
// TUNED2-SAME: reason = "tuned on NVIDIA H200 (4.0 us, best of 8)

// C = 16 is not a multiple of 64: wgmma with a gathered im2col tile (no knobs: an empty config),
// and the report says why.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s --check-prefix=NARROW
// NARROW: config = {}
// NARROW-SAME: kernel = "sm90_gather_wgmma"
// NARROW-SAME: reason = "gathered im2col + wgmma (TMA declined: C=16 is not a multiple of 64

// sm_100a has no wgmma: its own tcgen05 kernel (test/plan/sm100_selection.mlir).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_100a %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=SM100
// SM100: kernel = "sm100_ws"

// A handful of tiles (one 7x7 image: four 64x128 tiles): stream-K chains on 8 CTAs, with the
// flags and partial tiles after the descriptor slots in the scratch buffer.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/small_grid_3x3.flow.mlir | FileCheck %s --check-prefix=STREAMK
// STREAMK: block_m = 64 : i64, block_n = 128 : i64
// STREAMK-SAME: grid = [8, 1, 1]
// STREAMK-SAME: kernel = "sm90_ws_streamk"
// STREAMK-SAME: scratch_bytes = 266368 : i64
