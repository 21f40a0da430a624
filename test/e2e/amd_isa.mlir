// The AMD assembly convc's gfx942 / gfx950 kernel becomes (IREE's AMDGPU backend, compile only).

// RUN: rm -rf %t.942 && convc %inputs/tma_3x3_residual.model.mlir -o %t.942.vmfb --target gfx942 --dump-dir %t.942 --report | FileCheck %s --check-prefix=REPORT942
// REPORT942: convc [amd_lds_mfma 64x64x32 threads=384 stages=3 smem=24576B]: LDS-direct im2col (substrip, 4 B/lane) + MFMA 16x16x16, 2 loading + 4 MFMA waves
// RUN: cat %t.942/intermediates/*.rocmasm | FileCheck %s --check-prefix=GFX942
// RUN: cat %t.942/intermediates/*.rocmasm | FileCheck %s --check-prefix=NOSCRATCH
// GFX942: -mcpu=gfx942
// GFX942-LABEL: conv_n2h8w8c64_f128r3s3
// The wave role is a scalar branch on the readfirstlane'd wave index.
// GFX942: v_readfirstlane_b32
// GFX942: s_cbranch_scc1
// Loading waves: direct-to-LDS dword loads (M0 = LDS base), the ring's steady wait and barrier.
// GFX942: s_mov_b32 m0, s{{[0-9]+}}
// GFX942: buffer_load_dword v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen lds
// GFX942: s_waitcnt vmcnt(16)
// GFX942-NEXT: s_barrier
// GFX942: buffer_load_dword {{.*}} offen lds
// GFX942: s_waitcnt vmcnt(0)
// GFX942-NEXT: s_barrier
// MFMA waves: swizzled 8-byte operand reads and 16x16x16 MFMAs.
// GFX942: s_barrier
// GFX942: ds_read{{(2st64)?}}_b64
// GFX942: v_mfma_f32_16x16x16_f16
// GFX942: .group_segment_fixed_size: 24576
// GFX942: .private_segment_fixed_size: 0
// GFX942: .sgpr_spill_count: 0
// GFX942: .vgpr_spill_count: 0
// NOSCRATCH-NOT: scratch_store
// NOSCRATCH-NOT: scratch_load

// RUN: rm -rf %t.950 && convc %inputs/tma_3x3_residual.model.mlir -o %t.950.vmfb --target gfx950 --dump-dir %t.950 --report | FileCheck %s --check-prefix=REPORT950
// REPORT950: convc [amd_lds_mfma 64x64x64 threads=384 stages=3 smem=49152B]: LDS-direct im2col (substrip, 16 B/lane) + MFMA 16x16x32
// RUN: cat %t.950/intermediates/*.rocmasm | FileCheck %s --check-prefix=GFX950
// RUN: cat %t.950/intermediates/*.rocmasm | FileCheck %s --check-prefix=NOSCRATCH
// GFX950: -mcpu=gfx950
// GFX950: buffer_load_dwordx4 v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen lds
// GFX950: s_waitcnt vmcnt(8)
// GFX950-NEXT: s_barrier
// GFX950: ds_read{{(2st64)?}}_b128
// GFX950: v_mfma_f32_16x16x32_f16
// GFX950: .group_segment_fixed_size: 49152
// GFX950: .private_segment_fixed_size: 0
// GFX950: .vgpr_spill_count: 0
