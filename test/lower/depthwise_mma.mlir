// convc-lower-kernel: the tensor-core depthwise kernel (passes/lower/nvidia/depthwise_mma.py),
// forced on an f16 5x5 depthwise conv with stride 2 and asymmetric pads (bias + relu).

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --candidate kernel=depthwise_mma %inputs/depthwise_f16.flow.mlir | FileCheck %s

// Prologue: thread 0 writes the input's tensor map and inits the raw buffer's mbarrier; the
// block's filter is loaded and the bands zeroed; after a CTA barrier thread 0 loads the first
// tile's window as ONE 4-D box (35 rows x 40 columns x 8 channels x 2 B), the bands are built.
// CHECK-LABEL: hal.executable.source private @conv_n2h13w15c24_f24r5s5_g24hwf_st2x2_dl1x1_p2x1x2x1_f16_add_bias_relu_f16
// CHECK: nvvm.fence.proxy.release
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c22400_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: gpu.barrier
// The tile walk: wait for the box, transpose it into channel planes (ldmatrix.trans), a CTA
// barrier, thread 0 loads the next tile's box.
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.ldmatrix %{{.*}}, num = 4, layout = <col>
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// Each warp's channels: the B pairs of 5 filter rows x 2 band shifts, then per filter row two
// 16-column chunks (stride 2: an 8-output block spans 19 columns), one ldmatrix.x4 and one
// mma.sync each; the accumulators into the channel's slot after a warp sync.
// CHECK: scf.for
// CHECK-COUNT-20: memref.load %{{.*}} : memref<{{[0-9]+}}xi32, #gpu.address_space<workgroup>>
// CHECK: nvvm.ldmatrix %{{.*}}, num = 4, layout = <row>
// CHECK: nvvm.mma.sync {{.*}} shape = <m = 16, n = 8, k = 16>, layout_a = row, layout_b = col
// CHECK-COUNT-9: nvvm.mma.sync
// CHECK: nvvm.bar.warp.sync
// CHECK: vector.store %{{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// The epilogue: a CTA barrier, 8-channel f32 vectors read back per pixel, bias, relu, f16.
// CHECK: gpu.barrier
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xf16>
// CHECK: gpu.barrier
// CHECK: kernel = "depthwise_mma"
