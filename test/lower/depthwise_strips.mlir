// convc-lower-kernel: the strip tensor-core depthwise kernel (passes/lower/nvidia/depthwise_strips.py),
// forced on an f16 7x7 depthwise conv at batch 20 (12 x 12 px, 32 channels, bias + relu; its
// 12 output rows are under the rule's 2R, so the planner alone keeps the direct kernel).

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --candidate kernel=depthwise_strips %inputs/depthwise_7x7_f16.flow.mlir | FileCheck %s

// Prologue: thread 0 writes the input's tensor map and inits 5 full (1 arrival) and 5 empty
// (8 warps) mbarriers; after a CTA barrier it loads the first 3 input rows, each ONE 4-D box
// (32 channels x 17 columns x 1 row x 16 images x 2 B = 17408 B), after waiting on the slot's
// empty barrier.
// CHECK-LABEL: hal.executable.source private @conv_n20h12w12c32_f32r7s7_g32hwf_st1x1_dl1x1_p3x3x3x3_f16_add_bias_relu_f16
// CHECK: nvvm.fence.proxy.release
// CHECK-COUNT-5: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}}
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c17408_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// The item walk; per item the band's B registers from the filter (4 taps per channel and filter
// row), then the input rows R at a time (the ring's slots are registers).
// CHECK: scf.for
// CHECK: memref.load %{{.*}} : memref<1568xf16>
// CHECK: scf.for {{.*}} iter_args(
// A step: thread 0 refills the slot 3 rows ahead; wait for this row's box, 8 gathers of 4 channels,
// neighbouring columns of a channel paired into A registers, the slot released (one arrival per
// warp), then 7 filter rows x 4 channels of mma.sync into the ring.
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-8: vector.load %{{.*}} : memref<{{[0-9]+}}xf16, #gpu.address_space<workgroup>>, vector<4xf16>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 4] : vector<4xf16>, vector<4xf16>
// CHECK: nvvm.bar.warp.sync
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.mma.sync {{.*}} shape = <m = 16, n = 8, k = 16>, layout_a = row, layout_b = col
// CHECK-COUNT-27: nvvm.mma.sync
// The finished output row: the lane's 4 pixels x 4 channels into the f32 stage, a CTA barrier,
// 8-channel vectors read back per pixel, bias, relu, f16.
// CHECK: vector.store %{{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: gpu.barrier
// CHECK: vector.load %{{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xf16>
// CHECK: kernel = "depthwise_strips"
