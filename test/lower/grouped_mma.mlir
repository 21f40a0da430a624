// convc-lower-kernel: the grouped tensor-core kernel (passes/lower/nvidia/grouped_mma.py).

// bf16, 96 -> 48 channels in 6 groups (16 in, 8 out each), 3x3, stride 2, dilation 1x2,
// asymmetric pads, bias + residual + relu. One CTA per tile walk of the 6-group channel block:
// the block-diagonal filter is staged once (per input channel, 8 output channels of the
// [R, S, C/G, F] filter: one 16-byte load, the other groups' channels masked to zero), then
// per tile the patch by cp.async with zero fill, and per filter row (scf.for over r, taps
// along s unrolled) each warp's chunks: one ldmatrix.x4 of A (pixel rows of the patch), one
// ldmatrix.x2.trans of B (k rows) and one mma.sync m16n8k16 per n8 column;
// the shared epilogue stores two channels per access.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a %inputs/grouped_mma_strided_bf16.flow.mlir | FileCheck %s
// CHECK-LABEL: hal.executable.source private @conv_n2h11w9c96_f48r3s3_g6hwcf_st2x2_dl1x2_p1x2x0x1_bf16_add_bias_add_residual_relu_bf16
// CHECK: hal.return %c10, %c1, %c1_0
// CHECK: func.func @conv_n2h11w9c96_f48r3s3_g6hwcf_st2x2_dl1x2_p1x2x0x1_bf16_add_bias_add_residual_relu_bf16() attributes {nvvm.minctasm = 2 : i32
// CHECK: memref.alloc() alignment = 128 : memref<10344xbf16, #gpu.address_space<workgroup>>
// CHECK: scf.for %{{.*}} = %thread_id_x to %c864 step %c256
// CHECK: vector.load {{.*}} alignment = 16 : memref<6912xbf16>, vector<8xbf16>
// CHECK: arith.select {{.*}} : vector<8xi1>, vector<8xbf16>
// CHECK: vector.store {{.*}} : memref<10344xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for %{{.*}} = %workgroup_id_x to %{{.*}} step %c10 iter_args
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: nvvm.ldmatrix {{.*}}, num = 4, layout = <row>, shape = <m = 8, n = 8>, element_type = <b16>
// CHECK: nvvm.ldmatrix {{.*}}, num = 2, layout = <col>, shape = <m = 8, n = 8>, element_type = <b16>
// CHECK: arith.maximumf {{.*}} : vector<2xf32>
// CHECK: vector.store {{.*}} alignment = 4 : memref<1920xbf16>, vector<2xbf16>
// CHECK: gpu.barrier
// CHECK: nvvm.cp.async.commit.group
// The MMAs themselves: bf16 operands as i32 pairs, f32 accumulators.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a %inputs/grouped_mma_strided_bf16.flow.mlir | FileCheck %s --check-prefix=MMA
// MMA-COUNT-9: nvvm.mma.sync A[{{.*}}]  B[{{.*}}]  C[{{.*}}]  shape = <m = 16, n = 8, k = 16>, layout_a = row, layout_b = col, multiplicand_a_ptx_type = bf16, multiplicand_b_ptx_type = bf16 : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// MMA-NOT: nvvm.mma.sync

// f16 (operands as vector<2xf16>), a 1x1 conv: no loop over filter rows.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a %inputs/grouped_mma_1x1_f16.flow.mlir | FileCheck %s --check-prefix=ONE
// ONE: nvvm.mma.sync A[{{.*}}]  B[{{.*}}]  C[%cst{{.*}}]  shape = <m = 16, n = 8, k = 16>, layout_a = row, layout_b = col : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
