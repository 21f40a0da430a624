// convc-lower-kernel emits the portable implicit GEMM into a hal.executable.source.

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_100a %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s --check-prefix=SM100
// Every binding is Indirect (IREE records the dispatch with binding-table slots, so the
// inference's command buffer is recorded once).
// SM100: #[[LAYOUT:.+]] = #hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>, #hal.pipeline.binding<storage_buffer, Indirect>]>
// SM100: #[[TI:.+]] = #iree_codegen.translation_info<pipeline = #iree_codegen.no_pipeline workgroup_size = [256, 1, 1] subgroup_size = 32>
// SM100-LABEL: hal.executable.source private @conv_n2h9w7c16_f24r3s3_st1x1_dl1x1_p1x1x1x1_f16_add_bias_relu_f16
// SM100: hal.executable.export public @conv_n2h9w7c16_f24r3s3_st1x1_dl1x1_p1x1x1x1_f16_add_bias_relu_f16 ordinal(0) layout(#[[LAYOUT]])
// SM100: %[[G:.+]] = arith.constant 2 : index
// SM100: hal.return %[[G]]
// SM100: func.func @conv_n2h9w7c16_f24r3s3_st1x1_dl1x1_p1x1x1x1_f16_add_bias_relu_f16() attributes {translation_info = #[[TI]]}
// SM100: hal.interface.binding.subspan layout(#[[LAYOUT]]) binding(0) alignment(64) offset(%{{.+}}) flags("ReadOnly|Indirect") : memref<2016xf16>
// SM100: hal.interface.binding.subspan layout(#[[LAYOUT]]) binding(4) alignment(64) offset(%{{.+}}) flags(Indirect) : memref<128xi8>
// SM100: gpu.thread_id x
// SM100: memref.alloc() alignment = 16 : memref<32x64xf16, #gpu.address_space<workgroup>>
// Activation loads: 8 channels (16 B) per thread, zero outside the image via select.
// SM100: scf.for
// SM100: vector.load %{{.+}}[%{{.+}}] alignment = 16 : memref<2016xf16>, vector<8xf16>
// SM100: arith.select %{{.+}}, %{{.+}}, %{{.+}} : vector<8xf16>
// SM100: gpu.barrier
// SM100: vector.outerproduct {{.+}} : vector<4xf32>, vector<2xf32>
// SM100: gpu.barrier
// Epilogue: bias (f16 -> f32), relu, truncf, vector store.
// SM100: arith.extf %{{.+}} : vector<2xf16> to vector<2xf32>
// SM100: arith.addf
// SM100: arith.maximumf
// SM100: arith.truncf %{{.+}} : vector<2xf32> to vector<2xf16>
// SM100: vector.store

// gfx942: the portable fallback (C = 3 is too narrow for the LDS-direct MFMA kernel).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target gfx942 %inputs/odd_c3_stem.flow.mlir | FileCheck %s --check-prefix=GFX
// GFX: translation_info<pipeline = #iree_codegen.no_pipeline workgroup_size = [256, 1, 1] subgroup_size = 64>
// GFX: gpu.thread_id x
// GFX: #gpu.address_space<workgroup>

// The CPU machine runs the workgroup as one thread: no thread ids, no barriers, stack tiles.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target llvm-cpu %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s --check-prefix=CPU
// CPU: func.func @conv_n2h9w7c16
// CPU-NOT: gpu.thread_id
// CPU-NOT: gpu.barrier
// CPU: memref.alloca() alignment = 16 : memref<16x8xf16>
// CPU: vector.outerproduct {{.+}} : vector<8xf32>, vector<16xf32>
