// The row-slab kernel for convs whose pixels are too narrow for TMA (here C = 4): the producer
// TMA-loads a tile's 3 input rows as one box of the input viewed as [N, H, W*C/16, 16]
// (3 rows x 12 groups x 16 elements; the start is group -1, a negative 16-byte aligned
// coordinate for the padding), consumers build wgmma A fragments from them in registers (inline PTX:
// NVVM has no register-A op) against the filter staged once in shared memory, and write the
// tile with a 3-D TMA store that clips pixels past Wo.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a %inputs/narrow_c4_rows.flow.mlir | FileCheck %s
// CHECK: func.func @conv_n2h40w40c4_f128r3s3{{.+}} attributes {nvvm.minctasm = 1 : i32
// Ring: full (1 arrival + TMA bytes) and empty (the owning warpgroup's 4 warps), 8 slots.
// CHECK-COUNT-8: nvvm.mbarrier.init %{{.+}}, %c{{[14]}}_i32
// Filter staged by every thread, then handed to the async proxy.
// CHECK: vector.store {{.+}} : memref<{{.+}}xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: nvvm.fence.proxy <async.shared>
// CHECK: gpu.barrier
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c1152_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}} box[%c0_i32{{.*}}, %c-1_i32{{.*}}, %{{.+}}, %{{.+}}] :
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.setmaxregister increase 232
// CHECK: llvm.load {{.+}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects "{{.+}}setp.ne.b32 p, 0, 0;{{.+}}wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.+}}p, 1, 1, 0;
// CHECK-COUNT-2: llvm.inline_asm has_side_effects "{{.+}}setp.ne.b32 p, 1, 0;{{.+}}wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// One wgmma group per m64 sub-block; the slab slot is released once the wgmmas (register A)
// are issued, before the epilogue waits for them.
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.fence.proxy <async.shared>
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta {{.+}} box[%{{.+}}, %c0_i32{{.*}}, %{{.+}}]
// CHECK: nvvm.cp.async.bulk.commit.group

// Planner: the row-slab kernel where im2col TMA is declined (F = 128: too wide for the grouped
// kernel's RGB-stem rule); a 3-channel 3x3 stem with F = 16 on the grouped mma.sync kernel
// (grouped_mma.narrow_stem). The thread-gathered kernel when stride_w*C is odd and F is wider:
// test_narrow_k.py.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/narrow_c4_rows.flow.mlir | FileCheck %s --check-prefix=PLAN
// PLAN: kernel = "sm90_rows_wgmma"
// PLAN-SAME: reason = "row-slab TMA + register-A wgmma, warp-specialized persistent (im2col TMA declined: C=4
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --target sm_90a %inputs/odd_c3_stem.flow.mlir | FileCheck %s --check-prefix=ODD
// ODD: kernel = "grouped_mma"
// ODD-SAME: (F=16: a dense conv as one group
