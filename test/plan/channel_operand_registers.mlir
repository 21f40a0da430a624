// A bottleneck's last 1x1 conv with both BatchNorms left unfolded (as torch.export and IREE
// keep them): six per-channel epilogue operands and the downsample branch as the residual.
// A consumer thread holds its accumulators and, per operand, block_n / 8 f16 pairs through the
// main loop (sm90_ws_layout.consumer_registers); over CHANNEL_OPERAND_BUDGET the schedule
// loads them in the epilogue instead (ptxas spilled 460 bytes per thread on ResNet-50's 128x256
// tiles, and the conv ran at half the speed of its 3-operand twin).

// The planner's 64x128 ping-pong tile: 64 accumulators + 6 x 16 pairs fit.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/bottleneck_bn_unfolded.flow.mlir | FileCheck %s --check-prefix=FIT
// FIT: block_m = 64 : i64, block_n = 128 : i64, config = {{{.*}}late_channel_ops = false{{.*}}kernel = "sm90_ws_pingpong"

// A cooperative 128x256 tile: 128 accumulators + 6 x 32 pairs do not.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a --candidate kernel=sm90_ws_cooperative,block_m=128,block_n=256 %inputs/bottleneck_bn_unfolded.flow.mlir | FileCheck %s --check-prefix=LATE
// LATE: block_m = 128 : i64, block_n = 256 : i64, config = {{{.*}}late_channel_ops = true{{.*}}kernel = "sm90_ws_cooperative"

// Lowered: no per-channel load between the consumers' register increase and the main loop's
// last wgmma wait; the epilogue loads each operand pair where it first uses it.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --candidate kernel=sm90_ws_cooperative,block_m=128,block_n=256 %inputs/bottleneck_bn_unfolded.flow.mlir | FileCheck %s --check-prefix=LOWER
// LOWER-LABEL: hal.executable.source private @conv_n1h3136w1c16_f256r1s1_st1x1_dl1x1_p0x0x0x0_f16_fx
// LOWER: nvvm.setmaxregister increase 232
// LOWER-NOT: vector.load {{.*}} vector<2xf16>
// LOWER: nvvm.wgmma.wait.group.sync.aligned 0
// LOWER: vector.load {{.*}} vector<2xf16>
// LOWER: stmatrix.sync.aligned.m8n8.x4.shared.b16

// Early (the default where they fit): the pairs load before the tile's main loop.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a %inputs/bottleneck_bn_unfolded.flow.mlir | FileCheck %s --check-prefix=EARLY
// EARLY-LABEL: hal.executable.source private @conv_n1h3136w1c16_f256r1s1_st1x1_dl1x1_p0x0x0x0_f16_fx
// EARLY: nvvm.setmaxregister increase 232
// EARLY: vector.load {{.*}} vector<2xf16>
// EARLY: nvvm.wgmma.wait.group.sync.aligned 0
