// convc-lower-kernel: the TMA depthwise tile kernel (passes/lower/nvidia/depthwise_tma.py),
// forced on the f32 depthwise conv of grouped_f32 (the planner keeps the direct kernel there).

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --candidate kernel=depthwise_tma %inputs/grouped_f32.flow.mlir | FileCheck %s

// Thread 0 writes the input's and the filter's tensor maps and inits one mbarrier per ring slot,
// then fills both slots: arm the slot's barrier with the window (32 ch x 18 x 14 px x 4 B) and
// the taps (9 x 32 ch x 4 B), one 4-D box of the input and one 2-D box of the filter.
// CHECK-LABEL: hal.executable.source private @conv_n2h16w16c32_f32r3s3_g32hwf_st1x1_dl1x1_p1x1x1x1_f32_add_bias_relu
// CHECK: nvvm.fence.proxy.release
// CHECK-COUNT-2: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c33408_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-NEXT: arith.constant 32256 : i64
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] :
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// The tile walk: wait for the slot's phase, per filter row 6 input columns and 3 taps from
// shared memory (none from the filter in global memory), 12 fmas; the epilogue; a CTA barrier;
// the refill.
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK-COUNT-9: vector.load %view{{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: memref<288xf32>, vector<4xf32>
// CHECK-COUNT-12: math.fma {{.*}} : vector<4xf32>
// CHECK: arith.maximumf
// CHECK: gpu.barrier
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: kernel = "depthwise_tma"
