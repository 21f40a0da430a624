// The sm_100a warp-specialized tcgen05 kernel (lower/nvidia/sm100_ws.py): 192 threads (TMA
// warp, MMA warp, four epilogue warps), one CTA per SM, tensor memory allocated by the MMA
// warp before the CTA barrier and freed by it after named barrier 2, the im2col TMA ring, one
// thread issuing kind::f16 MMAs (first K step of a tile with enable_input_d = k-tile != 0),
// tcgen05.commit to `empty` per k-tile and to `acc_full` per tile, epilogue warps reading the
// accumulator with tcgen05.ld 32x32b.x32 and handing the stage back (`acc_empty`, 128
// arrivals) after fence::before_thread_sync.

// A residual layer (2x8x8x64 -> 128 channels, 3x3): 128x64 tiles, two accumulator stages of 64
// columns (128 allocated), the residual TMA-loaded into the staging slot by the epilogue's
// elected thread once the previous store has read it.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_100a %inputs/tma_3x3_residual.flow.mlir | FileCheck %s
// CHECK: workgroup_size = [192, 1, 1]
// CHECK-LABEL: hal.executable.source private @conv_n2h8w8c64_f128r3s3
// CHECK: func.func @conv_n2h8w8c64_f128r3s3{{.+}} attributes {nvvm.minctasm = 1 : i32
// CHECK: memref.alloc() alignment = 1024 : memref<213176xi8, #gpu.address_space<workgroup>>
// CHECK: nvvm.fence.proxy.release gpu
// Barriers: full (1) and empty (1: one tcgen05.commit) per stage, acc_full (1) / acc_empty
// (128 epilogue threads) per accumulator stage, res_full.
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c128_i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c128_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.tcgen05.alloc %{{.+}}, %c128_i32 : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// TMA warp: wait `empty`, arm `full` for 128x64 + 64x64 f16, im2col activation + tiled filter.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c24576_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} im2col[{{.+}}] mode = im2col
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} box[{{.+}}, {{.+}}] :
// MMA warp: acc_empty, then per k-tile full -> 4 MMAs (K = 64 in steps of 16) -> commit(empty);
// idesc 0x8100010 = f32 D, f16 A/B, K-major, N = 64, M = 128; the smem descriptors' constant
// part 0x4000404000010000 = 128B swizzle, version 1, SBO 1024, LBO 16.
// CHECK: } else {
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: arith.constant 4611756662049538048 : i64
// CHECK: nvvm.tcgen05.mma %{{.+}}, %{{.+}}, %{{.+}}, %c135266320_i32, %{{.+}}, kind = f16, cta_group = <cta_1>
// CHECK-COUNT-3: nvvm.tcgen05.mma %{{.+}}, %{{.+}}, %{{.+}}, %c135266320_i32{{.*}}, %true{{.*}}, kind = f16, cta_group = <cta_1>
// CHECK: nvvm.tcgen05.commit
// CHECK: }
// CHECK: nvvm.tcgen05.commit
// CHECK: nvvm.barrier id = %c2_i32 number_of_threads = %c160_i32
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: nvvm.tcgen05.dealloc %{{.+}}, %c128_i32 : !llvm.ptr<6>, i32
// Epilogue warps: residual into the slot after the previous store read it, acc_full, res_full,
// tcgen05.ld (the wait carries the registers), acc_empty after fence::before_thread_sync,
// TMA store; at the end fence::before_thread_sync and named barrier 2.
// CHECK: } else {
// CHECK: scf.for
// CHECK: nvvm.cp.async.bulk.wait_group 0 read
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c16384_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} box[{{.+}}, {{.+}}] :
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.tcgen05.ld %{{.+}} shape = shape_32x32b : vector<32xi32>
// CHECK: llvm.inline_asm has_side_effects "tcgen05.wait::ld.sync.aligned;"
// CHECK: nvvm.tcgen05.ld %{{.+}} shape = shape_32x32b : vector<32xi32>
// CHECK: llvm.inline_asm has_side_effects "tcgen05.wait::ld.sync.aligned;"
// CHECK: nvvm.tcgen05.fence <before>
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.fence.proxy <async.shared>, space = <cta>
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c128_i32
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 0 read
// CHECK: nvvm.tcgen05.fence <before>
// CHECK: nvvm.barrier id = %c2_i32{{.*}} number_of_threads = %c160_i32

// Without a residual (2x92x92x64 -> 128, 3x3): 128x128 tiles, 256 tensor-memory columns, the
// epilogue waits at named barrier 1 for the previous store's read before staging.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_100a %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=LARGE
// LARGE: nvvm.tcgen05.alloc %{{.+}}, %c256_i32
// LARGE: nvvm.tcgen05.mma %{{.+}}, %c136314896_i32
// LARGE: nvvm.tcgen05.dealloc %{{.+}}, %c256_i32
// LARGE: nvvm.cp.async.bulk.wait_group 0 read
// LARGE-NEXT: }
// LARGE-NEXT: %c1_i32 = arith.constant 1 : i32
// LARGE-NEXT: %c128_i32 = arith.constant 128 : i32
// LARGE-NEXT: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// LARGE: nvvm.tcgen05.ld
// LARGE-COUNT-2: nvvm.cp.async.bulk.tensor.global.shared.cta

// The CTA-pair candidate (a tuning candidate on sm_100a; not a default): 2x1 clusters, the
// pair's tensor memory allocated and freed collectively (cta_group::2) between cluster
// barriers, each CTA's TMA counting on the leader's `full` (mapa to rank 0; the leader arms it
// for both CTAs' 2 x (16 KB + 8 KB)), the leader's M = 256 MMAs (idesc 0x10200010) and
// multicast commits (mask 0b11), epilogue arrivals on the leader's `acc_empty`.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_100a --candidate cluster_m=2 %inputs/tma_large.flow.mlir | FileCheck %s --check-prefix=PAIR
// PAIR: attributes {nvvm.cluster_dim = array<i32: 2, 1, 1>, nvvm.minctasm = 1 : i32
// PAIR: nvvm.mbarrier.init %{{.+}}, %c256_i32
// PAIR: llvm.intr.trap
// PAIR: nvvm.cluster.arrive aligned
// PAIR-NEXT: nvvm.cluster.wait aligned
// PAIR: nvvm.tcgen05.alloc %{{.+}}, %c256_i32, group = <cta_2>
// PAIR-NEXT: nvvm.tcgen05.relinquish_alloc_permit group = <cta_2>
// PAIR: nvvm.tcgen05.fence <before>
// PAIR-NEXT: nvvm.cluster.arrive aligned
// PAIR-NEXT: nvvm.cluster.wait aligned
// PAIR-NEXT: nvvm.tcgen05.fence <after>
// PAIR: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c49152_i32
// PAIR: nvvm.mapa %{{.+}}, %c0_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
// PAIR: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} mode = im2col group = cta_2
// PAIR: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} box[{{.+}}, {{.+}}] group = cta_2
// PAIR: nvvm.tcgen05.mma %{{.+}}, %c270532624_i32, %{{.+}}, kind = f16, cta_group = <cta_2>
// PAIR: nvvm.tcgen05.commit %{{.+}}, multicast_mask = %c3_i16{{.*}} group = <cta_2>
// PAIR: nvvm.tcgen05.commit %{{.+}}, multicast_mask = %c3_i16{{.*}} group = <cta_2>
// PAIR: nvvm.tcgen05.ld
// PAIR: nvvm.mapa %{{.+}}, %c0_i32
// PAIR-NEXT: nvvm.mbarrier.arrive %{{.+}} scope = cluster : !llvm.ptr<7>
// PAIR: nvvm.tcgen05.fence <before>
// PAIR-NEXT: nvvm.cluster.arrive aligned
// PAIR-NEXT: nvvm.cluster.wait aligned
// PAIR-NEXT: nvvm.tcgen05.fence <after>
// PAIR: nvvm.tcgen05.dealloc %{{.+}}, %c256_i32, group = <cta_2>
