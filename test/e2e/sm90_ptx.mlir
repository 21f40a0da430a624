// The PTX convc's sm_90a kernel becomes (IREE's NVPTX backend, compile only).

// The non-persistent kernel, selected through a tuning cache entry for this problem.
// RUN: rm -rf %t.d && convc %inputs/tma_3x3_residual.model.mlir -o %t.vmfb --target sm_90a --tuning-cache %inputs/tuning_cache.json --tuning-device "NVIDIA H100 PCIe" --dump-dir %t.d --report | FileCheck %s --check-prefix=REPORT
// REPORT: convc [sm90_tma_wgmma 64x128x64 threads=256 stages=4 smem=98368B]: tuned on NVIDIA H100 PCIe (6.0 us, best of 8): im2col TMA + wgmma
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

// The same model with a tuning cache selecting the warp-specialized persistent kernel: the
// report names the cache entry, the PTX has the roles' register moves, named barriers, the
// TMA-loaded residual, the TMA-store epilogue, and the consumers' direct loads of the first
// two k-tiles (cp.async with zero fill, issued after the barrier inits and descriptor stores,
// one group per k-tile: each waited for, fenced to the async proxy and joined at named
// barrier 3 before that k-tile's wgmmas).
// RUN: rm -rf %t.ws && convc %inputs/tma_3x3_residual.model.mlir -o %t.ws.vmfb --target sm_90a --tuning-cache %inputs/tuning_cache.json --tuning-device "NVIDIA H200" --dump-dir %t.ws --report | FileCheck %s --check-prefix=WSREPORT
// WSREPORT: convc [sm90_ws_cooperative 128x128x64 threads=384 stages={{[0-9]+}} smem={{[0-9]+}}B direct=2]: tuned on NVIDIA H200 (4.0 us, best of 8)
// RUN: cat %t.ws/binaries/*.ptx | FileCheck %s --check-prefix=WSPTX
// WSPTX: .entry conv_n2h8w8c64_f128r3s3
// WSPTX-DAG: setmaxnreg.dec.sync.aligned.u32 40
// WSPTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes
// WSPTX-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// WSPTX-DAG: setmaxnreg.inc.sync.aligned.u32 232
// WSPTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// WSPTX-DAG: bar.sync {{.+}}, 128;
// WSPTX-DAG: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// WSPTX-DAG: cp.async.bulk.commit_group
// WSPTX-DAG: cp.async.bulk.wait_group.read 0
// RUN: cat %t.ws/binaries/*.ptx | FileCheck %s --check-prefix=WSDIRECT
// WSDIRECT: mbarrier.init.shared.b64
// WSDIRECT: st.global.b64
// WSDIRECT: bar.sync 0;
// WSDIRECT: cp.async.cg.shared.global [{{.+}}], [{{.+}}], 16, {{%r[0-9]+}};
// WSDIRECT: cp.async.commit_group;
// WSDIRECT: cp.async.cg.shared.global
// WSDIRECT: cp.async.commit_group;
// WSDIRECT: fence.proxy.tensormap::generic.release.gpu
// WSDIRECT: bar.sync 0;
// WSDIRECT: setmaxnreg.inc.sync.aligned.u32 232
// WSDIRECT: cp.async.wait_group 1;
// WSDIRECT: fence.proxy.async.shared::cta;
// WSDIRECT: bar.sync 3, 256;
// WSDIRECT: mbarrier.try_wait.parity.shared.b64
// WSDIRECT: wgmma.mma_async
// The H100 entry is older: without --tuning-device the most recent (H200) entry wins; naming
// the H100 picks its ping-pong winner.
// RUN: convc %inputs/tma_3x3_residual.model.mlir -o %t.h100.vmfb --target sm_90a --tuning-cache %inputs/tuning_cache.json --tuning-device "NVIDIA H100" --report | FileCheck %s --check-prefix=H100
// H100: convc [sm90_ws_pingpong 128x128x64 {{.+}}]: tuned on NVIDIA H100 (5.0 us, best of 8)

// Without a tuning cache the default is ping-pong 64x64 (one tile per CTA): warpgroup 0, which
// computes the CTA's tile, copies the two direct k-tiles alone and joins its own named barrier
// (1, 128 threads) before each; no 256-thread barrier that warpgroup 1 would have to join.
// RUN: rm -rf %t.pp && convc %inputs/tma_3x3_residual.model.mlir -o %t.pp.vmfb --target sm_90a --tuning-cache none --dump-dir %t.pp --report | FileCheck %s --check-prefix=PPREPORT
// PPREPORT: convc [sm90_ws_pingpong 64x64x64 threads=384 stages={{[0-9]+}} smem={{[0-9]+}}B direct=2]
// RUN: cat %t.pp/binaries/*.ptx | FileCheck %s --check-prefix=PPDIRECT
// PPDIRECT: cp.async.cg.shared.global
// PPDIRECT-NOT: bar.sync 3, 256;
// PPDIRECT: cp.async.wait_group 1;
// PPDIRECT: fence.proxy.async.shared::cta;
// PPDIRECT: bar.sync 1, 128;
// PPDIRECT: cp.async.wait_group 0;
// PPDIRECT: fence.proxy.async.shared::cta;
// PPDIRECT: bar.sync 1, 128;
