// convc-copy-chains: the copy dispatches IREE makes of a channel concatenation (one
// `slow_memcpy` per piece, chained through a flow.tensor.empty) become one dispatch reading
// every piece, its executable tagged with the CopyProblem; the piece executables go away.
// Input: a two-layer dense block (test/python/test_copy_chains.py's _dense_block), flow phase.

// RUN: convc-opt --pass=convc-copy-chains %inputs/dense_concat.flow.mlir | FileCheck %s
// CHECK: flow.executable private @[[A:dense\$async_dispatch_3_copies]] attributes {convc.copy = {dtype = "f32", pieces = [{offsets = [0, 0, 0, 0], operand = 0 : i64, sizes = [1, 3, 3, 8], strides = [1, 1, 1, 1]}, {offsets = [0, 0, 0, 8], operand = 1 : i64, sizes = [1, 3, 3, 4], strides = [1, 1, 1, 1]}], shape = [1, 3, 3, 12]}}
// CHECK: func.func @[[A]](%{{.+}}: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x8xf32>>, %{{.+}}: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x4xf32>>, %{{.+}}: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1x3x3x12xf32>>)
// CHECK: flow.executable private @[[B:dense\$async_dispatch_7_copies]] attributes {convc.copy = {{.*}}offsets = [0, 0, 0, 12], operand = 2 : i64, sizes = [1, 3, 3, 4]{{.*}}shape = [1, 3, 3, 16]}}
// CHECK-NOT: slow_memcpy
// CHECK: util.func public @dense
// CHECK-NOT: flow.tensor.empty
// CHECK: flow.dispatch @[[A]]::@[[A]](%{{.+}}, %{{.+}}) : (tensor<3x3x8xf32>, tensor<3x3x4xf32>) -> tensor<1x3x3x12xf32>
// CHECK: flow.dispatch @[[B]]::@[[B]](%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<3x3x8xf32>, tensor<3x3x4xf32>, tensor<3x3x4xf32>) -> tensor<1x3x3x16xf32>
// CHECK-NOT: slow_memcpy

// Chains into a zero fill and strided copies (a 3-D conv's frames, convc-conv3d; input: a 3x3x3
// conv with depth padding then a 1x1x1 stride-2 conv, ONNX, flow phase): the depth im2col's three
// copies into a flow.tensor.splat become one dispatch writing in place into the splat (the
// first and last taps leave the padding frames zero); the channel padding of the f32 im2col for
// TF32 (24 -> 32 channels) is a one-piece chain into a splat; every second frame of the volume
// (the stride-2 conv's input) is a strided copy on its own, with source strides.
// RUN: convc-opt --pass=convc-copy-chains %inputs/conv3d_frames.flow.mlir | FileCheck %s --check-prefix=SPLAT
// SPLAT: flow.executable private @[[I:frames\$async_dispatch_0_copies]] attributes {convc.copy = {dtype = "f32", into = true, pieces = [{offsets = [0, 1, 0, 0, 0], operand = 0 : i64, sizes = [1, 3, 6, 6, 8], source = [1, 4, 6, 6, 8], source_offsets = [0, 0, 0, 0, 0], source_sizes = [1, 3, 6, 6, 8]
// SPLAT: flow.executable private @[[P:frames\$async_dispatch_3_copies]] attributes {convc.copy = {dtype = "f32", into = true, pieces = [{offsets = [0, 0, 0, 0], operand = 0 : i64, sizes = [4, 6, 6, 24], strides = [1, 1, 1, 1]}], shape = [4, 6, 6, 32]}}
// SPLAT: flow.executable private @[[S:frames\$async_dispatch_5_copies]] attributes {convc.copy = {dtype = "f32", pieces = [{offsets = [0, 0, 0, 0], operand = 0 : i64, sizes = [2, 6, 6, 8], source = [1, 4, 6, 6, 8], source_offsets = [0, 0, 0, 0, 0], source_sizes = [1, 2, 6, 6, 8], source_strides = [1, 2, 1, 1, 1], strides = [1, 1, 1, 1]}], shape = [2, 6, 6, 8]}}
// SPLAT: %[[Z:.+]] = flow.tensor.splat %{{.+}} : tensor<1x4x6x6x24xf32>
// SPLAT: flow.dispatch @[[I]]::@[[I]](%{{.+}}, %{{.+}}, %{{.+}}, %[[Z]]) : (tensor<1x4x6x6x8xf32>, tensor<4x6x6x8xf32>, tensor<1x4x6x6x8xf32>, tensor<1x4x6x6x24xf32>) -> %[[Z]]
// SPLAT: flow.dispatch @[[S]]::@[[S]](%{{.+}}) : (tensor<1x4x6x6x8xf32>) -> tensor<2x6x6x8xf32>
// SPLAT-NOT: slow_memcpy

// Runtime image sizes (input: concat_runtime_hw.flow.mlir, a C2f concatenation of dynamic-H/W
// maps): the three copies, each taking the runtime axes whole, become one dispatch whose
// CopyProblem names the words of H and W (dynamic = [-1, 0, 1, -1]); the dispatch passes them as
// its workload and as index operands, every tensor's dims tied to them. Lowered, the copy kernel
// reads them as push constants and sizes its bindings and its grid (the count region's
// arguments) with them.
// RUN: convc-opt --pass=convc-copy-chains %inputs/concat_runtime_hw.flow.mlir | FileCheck %s --check-prefix=DYN
// DYN: flow.executable private @[[D:main\$async_dispatch_6_copies]] attributes {convc.copy = {dtype = "f16", dynamic = [-1, 0, 1, -1]
// DYN-SAME: offsets = [0, 0, 0, 64], operand = 2 : i64, sizes = [2, 64, 64, 32]
// DYN: iree_tensor_ext.dispatch.workload.ordinal %{{.+}}, 1 : index
// DYN: flow.dispatch.tie_shape %{{.+}} : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x?x?x96xf16>>{%{{.+}}, %{{.+}}}
// DYN-NOT: slow_memcpy
// DYN: flow.dispatch @[[D]]::@[[D]][%[[H:.+]], %[[W:.+]]](%{{.+}}, %{{.+}}, %{{.+}}, %[[H]], %[[W]]) : (tensor<2x?x?x64xf16>{%[[H]], %[[W]]}, tensor<2x?x?x64xf16>{%[[H]], %[[W]]}, tensor<2x?x?x32xf16>{%[[H]], %[[W]]}, index, index) -> tensor<2x?x?x96xf16>{%[[H]], %[[W]]}
// RUN: convc-opt --pass=convc-copy-chains,convc-plan-schedule,convc-lower-kernel --target sm_90a %inputs/concat_runtime_hw.flow.mlir | FileCheck %s --check-prefix=DYNK
// DYNK: hal.executable.export public @copy3_2xDxDx96_f16_{{.+}} count(%{{.+}}: !hal.device, %{{.+}}: index, %{{.+}}: index)
// DYNK: hal.interface.constant.load layout({{.+}}) ordinal(1) : i32
// DYNK: flags(Indirect) : memref<?xf16>
