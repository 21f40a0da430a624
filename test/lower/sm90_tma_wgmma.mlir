// convc-lower-kernel for sm_90a: descriptor prologue, mbarrier ring, im2col TMA, wgmma.

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --candidate kernel=sm90_tma_wgmma %inputs/tma_3x3_residual.flow.mlir | FileCheck %s
// CHECK-LABEL: hal.executable.source private @conv_n2h8w8c64_f128r3s3
// CHECK: binding(5) alignment(64) offset(%{{.+}}) : memref<512xi8>
// CHECK: memref.alloc() alignment = 1024 : memref<98368xi8, #gpu.address_space<workgroup>>
// Prologue (thread 0): descriptors as immediates with the binding address in qword 0.
// CHECK: scf.if
// CHECK: llvm.store
// CHECK: nvvm.fence.proxy.release gpu
// CHECK: nvvm.fence.proxy.acquire gpu
// CHECK: nvvm.prefetch tensormap
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// Ring fill: expect_tx, then im2col activation and tiled filter loads.
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} box[{{.+}}, {{.+}}, {{.+}}, {{.+}}] im2col[{{.+}}, {{.+}}] mode = im2col
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} box[{{.+}}, {{.+}}] :
// Main loop: wait for the stage, 4 x wgmma m64n64k16 (K = 64 per stage; 64-row tile, so each
// warpgroup takes 64 of the 128 channels), keep one group in flight.
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// Epilogue through shared memory, 8 channels per thread: bias + residual + relu + truncf.
// CHECK: memref.view
// CHECK: vector.load {{.+}} vector<8xf32>
// CHECK: vector.load {{.+}} alignment = 16 : memref<128xf16>, vector<8xf16>
// CHECK: arith.maximumf
// CHECK: vector.store {{.+}} alignment = 16 : memref<16384xf16>, vector<8xf16>
