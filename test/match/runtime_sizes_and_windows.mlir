// Runtime image sizes and channel windows, read by convc-match-conv and planned by
// convc-plan-schedule.

// A padded 3x3 whose H and W are workload ordinals 0 and 1: the problem records the input's
// words (h_constant, w_constant; H = W = 64 only the planning size), the pad stays fused, and
// the planner picks the persistent ping-pong kernel that reads them at run time.
// RUN: convc-opt --pass=convc-match-conv %inputs/runtime_hw_f16.flow.mlir | FileCheck %s --check-prefix=HW
// HW-LABEL: flow.executable private @main_dispatch_0
// HW-SAME: C = 64 : i64, F = 128 : i64, H = 64 : i64, N = 2 : i64, R = 3 : i64, S = 3 : i64, W = 64 : i64
// HW-SAME: batch_constant = -1 : i64
// HW-SAME: h_constant = 0 : i64
// HW-SAME: num_constants = 2 : i64
// HW-SAME: pad = [1, 1, 1, 1]
// HW-SAME: w_constant = 1 : i64
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule %inputs/runtime_hw_f16.flow.mlir | FileCheck %s --check-prefix=HWPLAN
// HWPLAN-LABEL: flow.executable private @main_dispatch_0
// HWPLAN-SAME: direct_stages = 0 : i64
// HWPLAN-SAME: kernel = "sm90_ws_pingpong"
// HWPLAN-SAME: sizes read at run time
// On sm_100a the tcgen05 kernel's 1-SM tiles, one CTA per SM (148), reading them alike.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_100a %inputs/runtime_hw_f16.flow.mlir | FileCheck %s --check-prefix=HW100
// HW100-LABEL: flow.executable private @main_dispatch_0
// HW100-SAME: cluster_m = 1 : i64
// HW100-SAME: grid = [148, 1, 1]
// HW100-SAME: kernel = "sm100_ws"
// HW100-SAME: kind::f16, f32 accumulators in tensor memory, 2 accumulator stages), im2col TMA ring, TMA-store epilogue, sizes read at run time

// A YOLOv8 C2f block: the bottleneck's first 3x3 reads channels 32..63 of the split 1x1's
// output, its second adds that window as the residual. Both are windows of the 64-channel
// operand, on the persistent kernel without direct loads.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule %inputs/c2f_channel_windows_f16.flow.mlir | FileCheck %s --check-prefix=WIN
// WIN-LABEL: flow.executable private @main$async_dispatch_1
// WIN-SAME: input_channel_offset = 32 : i64, input_channels = 64 : i64
// WIN-SAME: direct_stages = 0 : i64
// WIN-SAME: input channels 32..63 of 64 (maps at the windows, no direct loads)
// WIN-LABEL: flow.executable private @main$async_dispatch_2
// WIN-SAME: residual_channel_offset = 32 : i64, residual_channels = 64 : i64
// WIN-SAME: residual channels 32..63 of 64 (maps at the windows, no direct loads)

// A max-pool and a depthwise conv whose H and W are workload ordinals: the problems record the
// input's words and the planner puts both on the direct kernel, items and grid from the runtime
// sizes (the pool's padding taps -inf, the depthwise conv's zero).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/maxpool_runtime_hw_f16.flow.mlir | FileCheck %s --check-prefix=POOL
// POOL: h_constant = 0 : i64
// POOL-SAME: pool = "max"
// POOL-SAME: w_constant = 1 : i64
// POOL: kernel = "direct_grouped"
// POOL-SAME: max-pool, {{.+}}padding taps loaded as -inf, sizes read at run time
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/depthwise_runtime_hw_f16.flow.mlir | FileCheck %s --check-prefix=DW
// DW: groups = 32 : i64, h_constant = 0 : i64
// DW: kernel = "direct_grouped"
// DW-SAME: direct grouped conv: depthwise, {{.+}}sizes read at run time
