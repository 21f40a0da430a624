// Grouped and depthwise convs (IREE's generic forms of a PyTorch model's groups=): the matcher
// reads the group count and filter layout, the planner gives them the direct kernel.
// Dispatch 1: depthwise 3x3 (32 channels), dispatch 2: 4 groups of 8 -> 16 channels (5-D
// [.., G, C/G] views, the bias read as [G, F/G]), dispatch 4: depthwise with a channel
// multiplier of 2, stride 2 (filter [R, S, C, M]).

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/grouped_f32.flow.mlir | FileCheck %s
// CHECK-LABEL: flow.executable private @main$async_dispatch_1
// CHECK-SAME: convc.problem = {C = 32 : i64, F = 32 : i64, H = 16 : i64, N = 2 : i64, R = 3 : i64, S = 3 : i64, W = 16 : i64
// CHECK-SAME: epilogue = [{broadcast = "channel", dtype = "f32", op = "add", operand = 2 : i64}, {broadcast = "", dtype = "f32", op = "max0", operand = -1 : i64}]
// CHECK-SAME: filter_layout = "hwf", gemm_form = false, groups = 32 : i64
// CHECK-SAME: pad = [1, 1, 1, 1], stride = [1, 1]
// CHECK-SAME: convc.schedule = {block_k = 1 : i64, block_m = 128 : i64, block_n = 4 : i64, config = {accumulate = "f32", ctas_per_sm = 1 : i64, padding = "select", pixels = 2 : i64, row_groups = 1 : i64, rows = 2 : i64, unrolled = true}
// CHECK-SAME: grid = [8, 1, 1], kernel = "direct_grouped"
// CHECK-SAME: reason = "direct grouped conv: depthwise, 2 rows x 2 pixels x 4 channels per thread, f32 accumulation, filter rows unrolled, padding rows loaded and zero-selected"
// CHECK-LABEL: flow.executable private @main$async_dispatch_2
// CHECK-SAME: convc.problem = {C = 32 : i64, F = 64 : i64, H = 16 : i64, N = 2 : i64, R = 3 : i64, S = 3 : i64, W = 16 : i64
// CHECK-SAME: epilogue = [{broadcast = "channel", dtype = "f32", op = "add", operand = 2 : i64}]
// CHECK-SAME: gemm_form = false, groups = 4 : i64
// CHECK-SAME: pad = [1, 1, 1, 1], stride = [1, 1]
// CHECK-SAME: convc.schedule = {block_k = 4 : i64, block_m = 256 : i64, block_n = 4 : i64
// CHECK-SAME: kernel = "direct_grouped"
// CHECK-SAME: reason = "direct grouped conv: 4 groups of 8 channels, 4 pixels x 4 channels per thread, f32 accumulation (tensor-core kernel declined: f32 inputs (mma.sync m16n8k16 takes f16/bf16))"
// CHECK-LABEL: flow.executable private @main$async_dispatch_4
// CHECK-SAME: convc.problem = {C = 64 : i64, F = 128 : i64, H = 16 : i64, N = 2 : i64, R = 3 : i64, S = 3 : i64, W = 16 : i64
// CHECK-SAME: filter_layout = "hwf", gemm_form = false, groups = 64 : i64
// CHECK-SAME: pad = [1, 1, 1, 1], stride = [2, 2]
// CHECK-SAME: reason = "direct grouped conv: depthwise (multiplier 2), 4 output channels per thread, f32 accumulation"
