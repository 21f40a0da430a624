// A dynamic batch: the matcher takes the dispatch's runtime leading size (workload ordinal 0),
// the planner picks kernels that read it at run time, the kernel loads it as push constant 0
// (batch-sized bindings are memref<?xT>), writes it into the TMA descriptors' global sizes
// (images of the activation map, rows of the output map), and the splice passes it as an i32
// with the dispatch's workload.

// RUN: convc-opt --pass=convc-match-conv %inputs/dynamic_batch_f16.flow.mlir | FileCheck %s --check-prefix=MATCH
// MATCH: convc.problem = {C = 32 : i64, F = 32 : i64, H = 8 : i64, N = 8 : i64, R = 3 : i64, S = 3 : i64, W = 8 : i64, acc_dtype = "f32", batch_constant = 0 : i64
// MATCH-SAME: num_constants = 1 : i64
// MATCH: convc.problem = {C = 32 : i64, F = 16 : i64, H = 1 : i64, N = 8192 : i64, R = 1 : i64, S = 1 : i64, W = 1 : i64, acc_dtype = "f32", batch_constant = 0 : i64
// MATCH-SAME: gemm_form = true

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel,convc-splice-dispatch --target sm_90a %inputs/dynamic_batch_f16.flow.mlir | FileCheck %s
// CHECK: #[[L:.+]] = #hal.pipeline.layout<constants = 1, bindings =
// CHECK: hal.executable.source private @[[K:conv_nDh8w8c32_f32r3s3_st1x1_dl1x1_p1x1x1x1_f16_[a-z0-9_]+]]
// CHECK: count(%{{.+}}: !hal.device, %{{.+}}: index)
// persistent: one CTA per SM, whatever the batch
// CHECK: %[[SMS:.+]] = arith.constant 132 : index
// CHECK: hal.return %[[SMS]]
// CHECK: %[[W:.+]] = hal.interface.constant.load layout(#[[L]]) ordinal(0) : i32
// CHECK: %[[N:.+]] = arith.index_castui %[[W]] : i32 to index
// CHECK: hal.interface.binding.subspan layout(#[[L]]) binding(0) {{.*}} : memref<?xf16>
// the activation map's image count (qword 5, high word; the low word is H - 1 = 7)
// CHECK: %[[N64:.+]] = arith.index_cast %[[N]] : index to i64
// CHECK: %[[NM1:.+]] = arith.subi %[[N64]]
// CHECK: %[[HI:.+]] = arith.shli %[[NM1]], %{{.+}} : i64
// CHECK: arith.ori %c7_i64{{.*}}, %[[HI]] : i64
// CHECK: hal.executable.source private @[[G:conv_nDh1w1c32_f16r1s1_st1x1_dl1x1_p0x0x0x0_f16_[a-z0-9_]+]]
// CHECK: util.func public @main
// one descriptor slot set per SM (132 x 4 x 128 B) in the scratch result
// CHECK: %[[B:.+]] = arith.index_castui %[[D:.+]] : index to i32
// CHECK: flow.dispatch @[[K]]::@[[K]][%[[D]]](%{{.+}}, %{{.+}}, %[[B]]) : (tensor<?x8x8x32xf16>{%[[D]]}, tensor<32x3x3x32xf16>, i32) -> (tensor<?x8x8x32xf16>{%[[D]]}, tensor<67584xi8>)

// On sm_100a the tcgen05 kernel's 1-SM tiles take it alike: one CTA per SM (148), the batch a
// push constant written into the activation map's image count, kind::f16 MMAs.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel,convc-splice-dispatch --target sm_100a %inputs/dynamic_batch_f16.flow.mlir | FileCheck %s --check-prefix=B200
// B200: hal.executable.source private @[[K:conv_nDh8w8c32_f32r3s3_st1x1_dl1x1_p1x1x1x1_f16_[a-z0-9_]+]]
// B200: count(%{{.+}}: !hal.device, %{{.+}}: index)
// B200: %[[SMS:.+]] = arith.constant 148 : index
// B200: hal.return %[[SMS]]
// B200: hal.interface.constant.load layout({{.+}}) ordinal(0) : i32
// B200: arith.ori %c7_i64{{.*}}, %{{.+}} : i64
// B200: nvvm.tcgen05.mma {{.+}} kind = f16
// B200: util.func public @main
// B200: flow.dispatch @[[K]]::@[[K]][%{{.+}}]({{.+}}) : (tensor<?x8x8x32xf16>{%{{.+}}}, tensor<32x3x3x32xf16>, i32) -> (tensor<?x8x8x32xf16>{%{{.+}}}, tensor<{{[0-9]+}}xi8>)

// On llvm-cpu the portable kernel takes the batch too, its grid computed from the workload.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target llvm-cpu %inputs/dynamic_batch_f16.flow.mlir | FileCheck %s --check-prefix=CPU
// CPU: count(%{{.+}}: !hal.device, %[[WL:.+]]: index)
// CPU: arith.muli %[[WL]], %{{.+}} : index
// CPU: hal.interface.constant.load
