// f32 convs through the whole pipeline (compile only). The tf32 default: the ping-pong kernel
// with 32-channel K steps (128-byte rows of f32), four k8 TF32 wgmmas per stage (the same 32
// bytes of K each as a k16 one of 16-bit operands), in the peeled first k-tile and in the loop;
// two per stage with 64-byte rows. --precision fp32: exact f32 FMAs on the portable kernel, no wgmma.

// RUN: %PYTHON -c "from convc.tools.layers import Layer, layer_mlir; print(layer_mlir(Layer('t', 2, 20, 20, 32, 40, 3, 3, pad=(1, 1, 1, 1), dtype='f32')))" > %t.mlir
// RUN: rm -rf %t.d && convc %t.mlir -o %t.vmfb --target sm_90a --dump-dir %t.d --report | FileCheck %s --check-prefix=REPORT
// REPORT: f32->f32: convc [sm90_ws_pingpong 64x64x32 {{.*}}]: {{.*}}, TF32 wgmma (f32 operands, f32 accumulation)
// RUN: cat %t.d/binaries/*.ptx | FileCheck %s
// CHECK: .entry conv_n2h20w20c32_f40r3s3_st1x1_dl1x1_p1x1x1x1_f32_add_bias_relu
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK-NOT: wgmma.mma_async
// CHECK: cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes

// C = 16: 64-byte rows of 16 channels (64B swizzle), two k8 TF32 wgmmas per stage.
// RUN: %PYTHON -c "from convc.tools.layers import Layer, layer_mlir; print(layer_mlir(Layer('t', 2, 20, 20, 16, 40, 3, 3, pad=(1, 1, 1, 1), dtype='f32')))" > %t.c16.mlir
// RUN: rm -rf %t.n && convc %t.c16.mlir -o %t.c16.vmfb --target sm_90a --dump-dir %t.n --report | FileCheck %s --check-prefix=NARROW
// NARROW: convc [sm90_ws_pingpong 64x64x16 {{.*}}]: {{.*}}, TF32 wgmma (f32 operands, f32 accumulation)
// RUN: cat %t.n/binaries/*.ptx | FileCheck %s --check-prefix=NARROWPTX
// NARROWPTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// NARROWPTX-NOT: wgmma.mma_async

// RUN: rm -rf %t.e && convc %t.mlir -o %t.fp32.vmfb --target sm_90a --precision fp32 --dump-dir %t.e --report | FileCheck %s --check-prefix=FP32
// FP32: f32->f32: convc [portable_igemm {{.*}}]: portable implicit GEMM (f32 inputs, --precision fp32: exact f32 math)
// RUN: cat %t.e/binaries/*.ptx | FileCheck %s --check-prefix=FP32PTX
// FP32PTX: fma.rn.f32
// FP32PTX-NOT: wgmma
