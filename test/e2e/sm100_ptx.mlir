// The PTX convc's sm_100a tcgen05 kernel becomes (IREE 3.13's NVPTX backend, compile only: no
// B200 here; test_sm100_ptxas.py assembles it with ptxas -arch=sm_100a).

// RUN: rm -rf %t.d && convc %inputs/tma_3x3_residual.model.mlir -o %t.vmfb --target sm_100a --dump-dir %t.d --report | FileCheck %s --check-prefix=REPORT
// REPORT: convc [sm100_ws 128x64x64 threads=192 stages=8 smem=213176B]: warp-specialized persistent tcgen05 (1-SM kind::f16, f32 accumulators in tensor memory, 2 accumulator stages), im2col TMA ring, TMA-store epilogue
// RUN: cat %t.d/binaries/*.ptx | FileCheck %s
// CHECK: .version 8.6
// CHECK: .target sm_100a
// CHECK: .entry conv_n2h8w8c64_f128r3s3
// CHECK: .maxntid 192, 1, 1
// CHECK: .minnctapersm 1
// Prologue: descriptors, barriers, tensor memory (128 columns: two 64-column f32 stages).
// CHECK: fence.proxy.tensormap::generic.release.gpu
// CHECK: mbarrier.init.shared.b64
// CHECK: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [{{.+}}], {{%r[0-9]+}};
// CHECK: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
// CHECK: tcgen05.fence::before_thread_sync;
// CHECK-NEXT: bar.sync 0;
// CHECK-NEXT: tcgen05.fence::after_thread_sync;
// MMA warp (its branch comes out first here): kind::f16 MMAs, commits, then the dealloc after
// named barrier 2.
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: tcgen05.fence::after_thread_sync;
// CHECK: tcgen05.mma.cta_group::1.kind::f16{{(.collector::a::discard)?}} [{{%r[0-9]+}}], {{%rd[0-9]+}}, {{%rd[0-9]+}}, {{%r[0-9]+}}, {{%p[0-9]+}};
// CHECK: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// CHECK: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// CHECK: bar.sync 2, 160;
// CHECK-NEXT: tcgen05.fence::after_thread_sync;
// CHECK: tcgen05.dealloc.cta_group::1.sync.aligned.b32
// TMA warp: im2col activation and tiled filter loads.
// CHECK: cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// Epilogue warps: residual TMA, accumulator loads, release, TMA store, dealloc barrier.
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: tcgen05.fence::after_thread_sync;
// CHECK: tcgen05.ld.sync.aligned.32x32b.x32.b32
// CHECK: tcgen05.wait::ld.sync.aligned;
// CHECK: tcgen05.ld.sync.aligned.32x32b.x32.b32
// CHECK: tcgen05.wait::ld.sync.aligned;
// CHECK: tcgen05.fence::before_thread_sync;
// CHECK-NEXT: mbarrier.arrive.shared.b64
// CHECK: fence.proxy.async.shared::cta;
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// CHECK: cp.async.bulk.commit_group;
// CHECK: tcgen05.fence::before_thread_sync;
// CHECK: bar.sync 2, 160;
// CHECK-NOT: wgmma
