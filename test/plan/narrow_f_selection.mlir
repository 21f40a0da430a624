// Dense convs with few output channels, as convc-pad-channels leaves them (F rounded up to a
// multiple of 8): F = 8 runs on the grouped tensor-core kernel as one group (the input patch
// staged once, every tap read from it), F = 9..32 on the persistent kernels' 32-channel tiles,
// where the grouped kernel stays a tuning candidate.

// F = 3 -> 8 (C = 32, 3x3): grouped_mma, and the reason says why.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/narrow_f3_padded.flow.mlir | FileCheck %s --check-prefix=F8
// F8: convc.problem = {C = 32 : i64, F = 8 : i64
// F8: block_n = 8 : i64
// F8-SAME: kernel = "grouped_mma"
// F8-SAME: 1 group (8 channels) per CTA
// F8-SAME: (F=8: a dense conv as one group, input patch staged once instead of im2col tiles per tap)

// F = 13 -> 16 (C = 64, 3x3): ping-pong 128 x 32 tiles; grouped_mma as a tuning candidate.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/narrow_f13_padded.flow.mlir | FileCheck %s --check-prefix=F16
// F16: convc.problem = {C = 64 : i64, F = 16 : i64
// F16: block_m = 128 : i64, block_n = 32 : i64
// F16-SAME: kernel = "sm90_ws_pingpong"
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a --candidate kernel=grouped_mma %inputs/narrow_f13_padded.flow.mlir | FileCheck %s --check-prefix=CAND
// CAND: block_n = 16 : i64
// CAND-SAME: kernel = "grouped_mma"
// CAND-SAME: reason = "tuning candidate {{[0-9]+}}/{{[0-9]+}}: grouped implicit GEMM on tensor cores
