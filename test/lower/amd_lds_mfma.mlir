// convc-lower-kernel for gfx942 / gfx950: the amd_lds_mfma kernel (LDS-direct im2col loader,
// LDS ring with explicit vmcnt waits, MFMA waves, fused epilogue).

// Per-lane sub-path (C = 16 < block_k), gfx942: 4-byte direct-to-LDS loads (2 f16 per lane),
// 16 loads per loading lane per K tile, 3 stages => steady wait vmcnt(16), tail 16 then 0.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target gfx942 %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s --check-prefix=GFX942
// GFX942: #iree_codegen.translation_info<pipeline = #iree_codegen.no_pipeline workgroup_size = [384, 1, 1] subgroup_size = 64>
// GFX942-LABEL: func.func @conv_n2h9w7c16_f24r3s3
// GFX942: rocdl.readfirstlane
// GFX942: memref.alloc() alignment = 16 : memref<12288xf16, #gpu.address_space<workgroup>>
// GFX942: scf.if
// GFX942: amdgpu.fat_raw_buffer_cast %{{.*}} resetOffset : memref<2016xf16> to memref<2016xf16, #amdgpu.address_space<fat_raw_buffer>>
// GFX942: arith.xori
// GFX942: arith.constant 1073741824 : index
// GFX942: amdgpu.gather_to_lds %{{.*}}[%{{.*}}], %alloc[%{{.*}}] : vector<2xf16>, memref<2016xf16, #amdgpu.address_space<fat_raw_buffer>>, memref<12288xf16, #gpu.address_space<workgroup>>
// GFX942: amdgpu.gather_to_lds %{{.*}} : vector<2xf16>, memref<3456xf16, #amdgpu.address_space<fat_raw_buffer>>
// GFX942: scf.for
// GFX942-NEXT: amdgpu.memory_counter_wait load(16)
// GFX942-NEXT: rocdl.s.barrier
// GFX942: amdgpu.gather_to_lds
// GFX942: amdgpu.memory_counter_wait load(16)
// GFX942-NEXT: rocdl.s.barrier
// GFX942-NEXT: amdgpu.memory_counter_wait load(0)
// GFX942-NEXT: rocdl.s.barrier
// GFX942: } else {
// GFX942: scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// GFX942-NEXT: gpu.barrier memfence [#gpu.address_space<workgroup>]
// GFX942: vector.load %alloc[%{{.*}}] alignment = 8 : memref<12288xf16, #gpu.address_space<workgroup>>, vector<4xf16>
// GFX942: amdgpu.mfma 16x16x16 %{{.*}} * %{{.*}} + %{{.*}} : vector<4xf16>, vector<4xf16>, vector<4xf32>
// GFX942: arith.maximumf
// GFX942: vector.store %{{.*}} : memref<{{[0-9]+}}xf16>, vector<4xf16>

// gfx950: 16-byte loads (8 channels per lane), 16x16x32 MFMA on 8-element operands.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target gfx950 %inputs/tma_3x3_residual.flow.mlir | FileCheck %s --check-prefix=GFX950
// GFX950-LABEL: func.func @conv_n2h8w8c64_f128r3s3
// GFX950: memref.alloc() alignment = 16 : memref<24576xf16, #gpu.address_space<workgroup>>
// GFX950: amdgpu.gather_to_lds {{.*}} : vector<8xf16>, memref<8192xf16, #amdgpu.address_space<fat_raw_buffer>>
// GFX950: amdgpu.memory_counter_wait load(8)
// GFX950: vector.load %alloc[%{{.*}}] alignment = 16 : memref<24576xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// GFX950: amdgpu.mfma 16x16x32 {{.*}} : vector<8xf16>, vector<8xf16>, vector<4xf32>

// bf16 operands: bf16 MFMA.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target gfx942 %inputs/asym_pad_residual_bf16.flow.mlir | FileCheck %s --check-prefix=BF16
// BF16: amdgpu.gather_to_lds {{.*}} : vector<2xbf16>
// BF16: amdgpu.mfma 16x16x16 {{.*}} : vector<4xbf16>, vector<4xbf16>, vector<4xf32>
