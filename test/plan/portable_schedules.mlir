// convc-plan-schedule: the portable schedule per target (sm_100a: C = 16 has no TMA K row, so portable).

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_100a %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s --check-prefix=SM100
// SM100-LABEL: flow.executable private @main_dispatch_0
// SM100-SAME: convc.schedule = {block_k = 32 : i64, block_m = 64 : i64, block_n = 32 : i64
// SM100-SAME: config = {thread_m = 4 : i64, thread_n = 2 : i64, vec_a = 8 : i64, vec_b = 8 : i64}
// SM100-SAME: grid = [2, 1, 1]
// SM100-SAME: kernel = "portable_igemm"
// SM100-SAME: smem_bytes = 6144 : i64, stages = 1 : i64, target = "sm_100a"
// SM100-SAME: threads = 256 : i64

// gfx942 takes amd_lds_mfma where it can (test/plan/amd_selection.mlir); C = 3 falls back here,
// and F = 16 takes 16-channel tiles.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target gfx942 %inputs/odd_c3_stem.flow.mlir | FileCheck %s --check-prefix=GFX
// GFX: convc.schedule = {block_k = 32 : i64, block_m = 64 : i64, block_n = 16 : i64
// GFX-SAME: target = "gfx942"
// GFX-SAME: threads = 256 : i64

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target llvm-cpu %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s --check-prefix=CPU
// CPU: convc.schedule = {block_k = 16 : i64, block_m = 8 : i64, block_n = 16 : i64
// CPU-SAME: config = {thread_m = 8 : i64, thread_n = 16 : i64, vec_a = 8 : i64, vec_b = 8 : i64}
// CPU-SAME: target = "llvm-cpu", threads = 1 : i64

// Declined convs get no schedule.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule %inputs/inv_padval.flow.mlir | FileCheck %s --check-prefix=NONE
// NONE-NOT: convc.schedule
