// The PTX convc's sm_90a kernel becomes (IREE's NVPTX backend, compile only).

// RUN: rm -rf %t.d && convc %inputs/tma_3x3_residual.model.mlir -o %t.vmfb --target sm_90a --dump-dir %t.d --report | FileCheck %s --check-prefix=REPORT
// REPORT: convc [sm90_tma_wgmma 64x128x64 threads=256 stages=4 smem=98368B]: im2col TMA + wgmma
// RUN: cat %t.d/binaries/*.ptx | FileCheck %s
// CHECK: .target sm_90a
// CHECK: .entry conv_n2h8w8c64_f128r3s3
// CHECK: fence.proxy.tensormap::generic.release.gpu
// CHECK: fence.proxy.tensormap::generic.acquire.gpu
// CHECK: prefetch.tensormap
// CHECK: mbarrier.init.shared.b64
// CHECK: cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK: wgmma.wait_group.sync.aligned
