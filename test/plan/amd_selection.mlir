// On gfx942 / gfx950 the planner picks amd_lds_mfma (LDS-direct im2col loader + MFMA) and
// names the loader sub-path; a conv the loader cannot serve gets the portable kernel with the
// reason. Small grids (fewer 128x128 tiles than CUs) take 64x64 tiles; block_k is two MFMA K
// steps; the ring has as many stages (2..3) as K tiles, vmcnt (63 in flight) and LDS allow.

// Pointwise (1x1, stride 1, no pad: address = m*C + k), K = 32 is one tile: 2 stages.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target gfx942 %inputs/gemm_form_1x1.flow.mlir | FileCheck %s --check-prefix=POINT
// POINT-LABEL: flow.executable private @main_dispatch_0
// POINT-SAME: convc.schedule = {block_k = 32 : i64, block_m = 64 : i64, block_n = 64 : i64, config = {lane_elems = 2 : i64}
// POINT-SAME: grid = [2, 1, 1]
// POINT-SAME: kernel = "amd_lds_mfma"
// POINT-SAME: reason = "LDS-direct im2col (pointwise, 4 B/lane) + MFMA 16x16x16, 2 loading + 4 MFMA waves"
// POINT-SAME: smem_bytes = 16384 : i64
// POINT-SAME: stages = 2 : i64, target = "gfx942"
// POINT-SAME: threads = 384 : i64

// Uniform substrip (C = 64 is a multiple of block_k: one (r, s) per K tile), padded 3x3.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target gfx942 %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=SUB942
// SUB942: kernel = "amd_lds_mfma"
// SUB942-SAME: reason = "LDS-direct im2col (substrip, 4 B/lane)
// SUB942-SAME: smem_bytes = 24576 : i64
// SUB942-SAME: stages = 3 : i64
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target gfx950 %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=SUB950
// SUB950: block_k = 64 : i64
// SUB950-SAME: config = {lane_elems = 8 : i64}
// SUB950-SAME: reason = "LDS-direct im2col (substrip, 16 B/lane) + MFMA 16x16x32
// SUB950-SAME: smem_bytes = 49152 : i64
// SUB950-SAME: stages = 3 : i64

// Per-lane decomposition: C = 16 < block_k (padded 3x3).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target gfx942 %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s --check-prefix=LANE
// LANE: reason = "LDS-direct im2col (per_lane, 4 B/lane)

// Strided 1x1: substrip on gfx942 (C = 32 = block_k), per-lane on gfx950 (32 < 64).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target gfx942 %inputs/strided_1x1.flow.mlir | FileCheck %s --check-prefix=STR942
// STR942: reason = "LDS-direct im2col (substrip, 4 B/lane)
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target gfx950 %inputs/strided_1x1.flow.mlir | FileCheck %s --check-prefix=STR950
// STR950: reason = "LDS-direct im2col (per_lane, 16 B/lane)

// Strided + dilated valid conv with an f32 result (C = 8): per-lane, 3 K tiles on gfx942.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target gfx942 %inputs/valid_strided_dilated_f32.flow.mlir | FileCheck %s --check-prefix=DIL
// DIL: reason = "LDS-direct im2col (per_lane, 4 B/lane)
// DIL-SAME: stages = 3 : i64

// C = 3 is not a multiple of the per-lane load width: portable kernel, with the reason.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target gfx942 %inputs/odd_c3_stem.flow.mlir | FileCheck %s --check-prefix=DECLINE942
// DECLINE942: kernel = "portable_igemm"
// DECLINE942-SAME: reason = "portable implicit GEMM: LDS-direct MFMA path declined (LDS-direct loader: C=3 is not a multiple of the 2-element (4 B) lane load)"
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target gfx950 %inputs/odd_c3_stem.flow.mlir | FileCheck %s --check-prefix=DECLINE950
// DECLINE950: kernel = "portable_igemm"
// DECLINE950-SAME: C=3 is not a multiple of the 8-element (16 B) lane load
