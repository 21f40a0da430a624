// convc-match-conv reads pooling windows (a max or sum of an NHWC window, no filter) into
// ConvProblems with `pool` set; convc-plan-schedule gives them the direct kernel's depthwise
// item, rows unrolled, padding taps loaded as the combine's identity.

// A 3x3 stride-2 max-pool padded with -inf (ResNet-50's): no filter operand (filter = -1),
// the -inf pad read as padding, the f16 result a cast of the (exact) max.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule %inputs/maxpool_nhwc_f16.flow.mlir | FileCheck %s --check-prefix=MAX
// MAX-LABEL: flow.executable private @p$async_dispatch_2
// MAX-SAME: C = 16 : i64, F = 16 : i64, H = 13 : i64, N = 2 : i64, R = 3 : i64, S = 3 : i64, W = 11 : i64
// MAX-SAME: epilogue = [{broadcast = "", dtype = "f16", op = "cast", operand = -1 : i64}]
// MAX-SAME: filter = -1 : i64, filter_layout = "hwf"
// MAX-SAME: groups = 16 : i64
// MAX-SAME: pad = [1, 1, 1, 1], pool = "max", stride = [2, 2]
// MAX-SAME: convc.schedule = {
// MAX-SAME: padding = "select"
// MAX-SAME: unrolled = true
// MAX-SAME: kernel = "direct_grouped"
// MAX-SAME: pooling window on the direct kernel: max-pool

// A 2x2 average pool: a sum-pool, its division by the window an epilogue program.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule %inputs/avgpool_nhwc_f16.flow.mlir | FileCheck %s --check-prefix=AVG
// AVG-LABEL: flow.executable private @p$async_dispatch_2
// AVG-SAME: R = 2 : i64, S = 2 : i64
// AVG-SAME: op = "arith.divf"
// AVG-SAME: pool = "sum", stride = [2, 2]
// AVG-SAME: kernel = "direct_grouped"
// AVG-SAME: sum-pool

// A max-pool over a zero-padded input (the zeros can win the max): not the pool's identity,
// so IREE keeps it, with the reason.
// RUN: convc-opt --pass=convc-match-conv %inputs/maxpool_zero_pad_f16.flow.mlir | FileCheck %s --check-prefix=ZERO
// ZERO-LABEL: flow.executable private @p$async_dispatch_2
// ZERO-SAME: convc.decline = "pooling window: padding value is not the pool's identity"
// ZERO-NOT: convc.problem
