// The row-slab kernel on f32 operands (an RGB stem, C = 3, 7x7 stride 2, 112 output pixels per
// row): TF32 k8 wgmmas with A from registers, one f32 per fragment register, K padded to 168
// (7 filter rows of 24 slots). Both sub-blocks' fragments (84 registers each) would not fit
// beside the accumulators, so the consumer runs them one after the other: the first
// sub-block's wgmmas finish before the second one's fragments are loaded.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a %inputs/stem_f32_rows.flow.mlir | FileCheck %s
// CHECK: func.func @conv_n1h16w224c3_f64r7s7_st2x2_dl1x1_p3x3x3x3_f32_add_bias_relu()
// The filter staged in 16-byte units of four f32, 168 K slots in six 128-byte rows per channel.
// CHECK-COUNT-8: vector.store {{.+}} : memref<{{.+}}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: nvvm.setmaxregister decrease 40
// One box of 7 rows per tile.
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c24192_i32
// CHECK: nvvm.setmaxregister increase 232
// CHECK: llvm.load {{.+}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects "{{.+}}setp.ne.b32 p, 0, 0;{{.+}}wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {{.+}}p, 1, 1;
// CHECK-COUNT-20: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.load {{.+}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-21: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// The slab is released once both sub-blocks' wgmmas are issued.
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// Two 32-channel f32 panels per tile.
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.global.shared.cta
