// The warp-specialized persistent kernel: one CTA per SM (384 threads), producer and consumer
// roles in one if/else with setmaxnreg, the full/empty ring, wgmma, and an epilogue that
// stages the tile in shared memory and writes it with TMA stores.

// Cooperative (a tuning candidate: both consumer warpgroups on each 128x128 tile; 133 tiles
// on 132 SMs, so its first k-tiles come by TMA).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --candidate kernel=sm90_ws_cooperative,block_m=128,block_n=128 %inputs/tma_large.flow.mlir | FileCheck %s
// CHECK: workgroup_size = [384, 1, 1]
// CHECK-LABEL: hal.executable.source private @conv_n2h92w92c64_f128r3s3
// CHECK: memref.alloc() alignment = 1024 : memref<229520xi8, #gpu.address_space<workgroup>>
// CHECK: nvvm.fence.proxy.release gpu
// Ring barriers: full (1 arrival + TMA bytes), empty (8 consumer warps), then per consumer
// warpgroup residual full/empty and ping-pong turns.
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c8_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK-NOT: cp.async.cg.shared.global
// Producer: every TMA load, waiting on `empty`.
// CHECK: scf.if
// CHECK-NEXT: nvvm.setmaxregister decrease 40
// CHECK: scf.for
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c32768_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} im2col[{{.+}}] mode = im2col
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} box[{{.+}}, {{.+}}] :
// Consumers: wgmma main loop over the persistent tile loop, then the TMA-store epilogue.
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister increase 232
// The first k-tile is peeled: its first wgmma has scale-d 0 (no zero-filled accumulator).
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 128, k = 16>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 128, k = 16>, D[<f32>, <one>]
// CHECK: scf.for {{.+}} iter_args
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 128, k = 16>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.cp.async.bulk.wait_group 0 read
// CHECK: nvvm.barrier id = %{{.+}} number_of_threads = %c128_i32
// CHECK: llvm.inline_asm has_side_effects {{.*}}"stmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: nvvm.fence.proxy <async.shared>, space = <cta>
// CHECK: nvvm.barrier id
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group

// Ping-pong (a tuning candidate: 64x64 tiles): each consumer warpgroup takes every other
// tile (loop from its index, step 2) and waits for its turn before its main loop.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --candidate kernel=sm90_ws_pingpong,block_m=64,block_n=64 %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=PP
// PP: nvvm.mbarrier.init %{{.+}}, %c4_i32
// PP: nvvm.setmaxregister increase 232
// PP: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c2
// PP: nvvm.mbarrier.try_wait.parity
// PP: scf.for {{.+}} iter_args
// PP-COUNT-4: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 64, k = 16>
// PP: nvvm.mbarrier.arrive
// PP: nvvm.cp.async.bulk.tensor.global.shared.cta

// Residual epilogue: the producer TMA-loads the residual tile (res_empty -> res_full) into the
// consumer's staging slot (same dtype as the output: in place); the elected consumer thread
// hands the slot back (res_empty, one arrival) in the next tile's first k-step, once the
// previous TMA store has read it; the epilogue reads the residual (ldmatrix) and overwrites it
// in place (stmatrix).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --tuning-cache %inputs/tuning_cache.json %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=RES
// RES: nvvm.mbarrier.init %{{.+}}, %c1_i32
// RES: nvvm.setmaxregister decrease 40
// RES: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c16384_i32
// RES-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} box[{{.+}}, {{.+}}] :
// RES: nvvm.setmaxregister increase 232
// RES: nvvm.wgmma.mma_async
// RES: nvvm.cp.async.bulk.wait_group 0 read
// RES: nvvm.mbarrier.arrive
// RES: llvm.inline_asm has_side_effects {{.*}}"ldmatrix.sync.aligned.m8n8.x4.shared.b16
// RES: llvm.inline_asm has_side_effects {{.*}}"stmatrix.sync.aligned.m8n8.x4.shared.b16
// RES-NOT: nvvm.mbarrier.arrive
// RES: nvvm.cp.async.bulk.tensor.global.shared.cta

// 2x1 cluster (a tuning candidate): the kernel traps unless launched as a 2-CTA cluster, each
// CTA multicasts half the filter tile, consumers release stages in both CTAs.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --candidate kernel=sm90_ws_cooperative,cluster_m=2 %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=CL
// CL: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CL: nvvm.mbarrier.init %{{.+}}, %c16_i32
// CL: nvvm.read.ptx.sreg.cluster.nctarank
// CL: llvm.intr.trap
// CL: nvvm.cluster.arrive aligned
// CL: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} box[{{.+}}, {{.+}}] multicast_mask = %c3_i16
// CL: nvvm.mapa
// CL: nvvm.mbarrier.arrive {{.+}} : !llvm.ptr<7>
// CL: nvvm.cluster.arrive aligned

// Stream-K in k-lockstep (the default for a handful of tiles: one 7x7 image, 4 tiles of
// 64x128 on 8 CTAs): each consumer warpgroup runs one segment (step 2 over the CTA's 1-2
// segments); a tail spins on the previous CTA's flag (ld.acquire.gpu), meets its warpgroup and
// adds that CTA's f32 partial (16 coalesced 16-byte loads per thread); a head stores its
// partial, meets its warpgroup and publishes the flag (st.release.gpu); the epilogue follows.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a %inputs/small_grid_3x3.flow.mlir | FileCheck %s --check-prefix=SK
// SK: workgroup_size = [384, 1, 1]
// SK: nvvm.setmaxregister decrease 40
// SK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} im2col
// SK: nvvm.setmaxregister increase 232
// SK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c2
// SK: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 128, k = 16>, D[<f32>, <zero>]
// SK: nvvm.wgmma.wait.group.sync.aligned 0
// SK: scf.for {{.+}} iter_args
// SK: ld.acquire.gpu.global.u64
// SK: nvvm.barrier id = %{{.+}} number_of_threads = %c128_i32
// SK-COUNT-16: ld.global.cg.v4.f32
// SK: scf.if
// SK-COUNT-16: st.global.v4.f32
// SK: nvvm.barrier id = %{{.+}} number_of_threads = %c128_i32
// SK: st.release.gpu.global.u64
// SK: } else {
// SK: stmatrix.sync.aligned.m8n8.x4.shared.b16
// SK: nvvm.cp.async.bulk.tensor.global.shared.cta

// Two epilogue slots per consumer warpgroup (a tuning candidate: cooperative 128x128): the
// epilogue reuses a slot two tiles later, so it waits only for the store before last
// (wait_group 1), and the ring loses a stage to the second slot.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --candidate kernel=sm90_ws_cooperative,block_n=128,epilogue_slots=2 %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=SL
// SL: memref.alloc() alignment = 1024 : memref<229536xi8, #gpu.address_space<workgroup>>
// SL: nvvm.setmaxregister increase 232
// SL: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 128, k = 16>
// SL: nvvm.cp.async.bulk.wait_group 1 read
// SL: stmatrix.sync.aligned.m8n8.x4.shared.b16
// SL: nvvm.cp.async.bulk.tensor.global.shared.cta

// Swapped tiles (a tuning-cache winner: cooperative 144 pixels x 128 channels): the filter
// stage is the wgmma's A (64 channels per consumer warpgroup), the 144 activation rows its N;
// each warpgroup stages its 64 channels transposed (stmatrix.trans) and stores one panel.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --tuning-cache %inputs/swapped_cache.json %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=SW
// SW: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c34816_i32
// SW: nvvm.setmaxregister increase 232
// SW: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 144, k = 16>, D[<f32>, <zero>]
// SW-NOT: stmatrix.sync.aligned.m8n8.x4.shared.b16
// SW: stmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// SW: nvvm.fence.proxy <async.shared>, space = <cta>
// SW-COUNT-1: nvvm.cp.async.bulk.tensor.global.shared.cta
// SW-NEXT: nvvm.cp.async.bulk.commit.group

// Swapped tiles with a residual: the residual is read back transposed (ldmatrix.trans) from
// the staging slot it was loaded into.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --tuning-cache %inputs/swapped_cache.json %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=SWR
// SWR: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 32, k = 16>
// SWR: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// SWR: stmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// SWR: nvvm.cp.async.bulk.tensor.global.shared.cta

// Epilogue staged in the ring (a tuning-cache winner: cooperative 128x128, epilogue_slots = 0):
// no staging slots, so 7 stages of 32 KB fill the allocation; after each tile's k-tiles the
// producer lends one stage per consumer warpgroup and loads that warpgroup's 64x128 residual
// slice into it; a warpgroup stages its output there in place, then waits on the other
// warpgroup's lent stage too, and hands both back (4 arrivals each, for its four warps) once
// its store has read its own, after the next tile's first k-step.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --tuning-cache %inputs/ring_cache.json %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=RING
// RING: memref.alloc() alignment = 1024 : memref<229504xi8, #gpu.address_space<workgroup>>
// RING: nvvm.setmaxregister decrease 40
// RING: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c32768_i32
// RING: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c16384_i32
// RING: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c16384_i32
// RING: nvvm.setmaxregister increase 232
// RING: nvvm.cp.async.bulk.wait_group 0 read
// RING-NEXT: arith.constant
// RING-COUNT-2: nvvm.mbarrier.arrive %{{.+}}, %c4_i32
// RING: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// RING: stmatrix.sync.aligned.m8n8.x4.shared.b16
// RING: nvvm.cp.async.bulk.tensor.global.shared.cta
// RING: nvvm.cp.async.bulk.commit.group
// RING-NEXT: }
// RING: nvvm.mbarrier.try_wait.parity
// RING: epilogue_slots = 0 : i64
// RING-SAME: stages = 7 : i64

// The default for the same problem makes one tile per CTA (144x128, 118 CTAs), so its consumers
// load the first two k-tiles directly (direct_loads.py): thread 0 initialises the barriers and
// stores the descriptors, then the consumer threads copy k-tiles 0 and 1 (a cp.async group each)
// while thread 0 fences the maps; before the wgmmas of each, every consumer thread waits for its
// group, fences it to the async proxy and joins named barrier 3 (256 threads); the producer only
// completes those stages' `full` phases.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=DIRECT
// DIRECT: nvvm.mbarrier.init %{{.+}}, %c1_i32
// DIRECT: nvvm.fence.mbarrier.init
// DIRECT: llvm.store
// DIRECT: gpu.barrier
// DIRECT: cp.async.cg.shared.global
// DIRECT: nvvm.cp.async.commit.group
// DIRECT: cp.async.cg.shared.global
// DIRECT: nvvm.cp.async.commit.group
// DIRECT: nvvm.fence.proxy.release gpu
// DIRECT: gpu.barrier
// DIRECT: nvvm.setmaxregister decrease 40
// DIRECT: nvvm.mbarrier.try_wait.parity
// DIRECT: nvvm.mbarrier.arrive %{{.+}} : !llvm.ptr<3> -> i64
// DIRECT-NEXT: } else {
// DIRECT-NOT: nvvm.mbarrier.arrive %
// DIRECT: nvvm.mbarrier.arrive.expect_tx
// DIRECT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// DIRECT: nvvm.setmaxregister increase 232
// DIRECT: nvvm.cp.async.wait.group 1
// DIRECT-NEXT: nvvm.fence.proxy <async.shared>
// DIRECT: nvvm.barrier id = %{{.+}} number_of_threads = %{{.+}}
// DIRECT: nvvm.mbarrier.try_wait.parity
// DIRECT: nvvm.wgmma.mma_async
// DIRECT: scf.for {{.+}} iter_args
// DIRECT: nvvm.cp.async.wait.group 0
