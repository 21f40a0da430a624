// convc-pad-copy: a dispatch that only pads (IREE's pad fusion left the pad alone: its consumer,
// a strided 1x1 conv IREE turned into an elementwise op, takes no fused pad) becomes a zero
// splat and a dispatch copying the source into it at the low offsets, tied to the splat;
// IREE 3.13's GPU codegen drops the low padding of a stored tensor.pad. Other dispatches stay.

// RUN: convc-opt --pass=convc-pad-copy %inputs/pad_dispatch_fz0107.flow.mlir | FileCheck %s
// CHECK: func.func @main_dispatch_0(%[[SRC:.+]]: !iree_tensor_ext.dispatch.tensor<readonly:tensor<20x26xf32>>, %[[DST:.+]]: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<21x27xf32>>)
// CHECK-NEXT: %[[X:.+]] = iree_tensor_ext.dispatch.tensor.load %[[SRC]]
// CHECK-NEXT: iree_tensor_ext.dispatch.tensor.store %[[X]], %[[DST]], offsets = [0, 1], sizes = [20, 26], strides = [1, 1]
// CHECK-NEXT: return
// CHECK: func.func @main_dispatch_1_generic_21x14x16_f32
// CHECK: util.func public @main
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[F:.+]] = flow.tensor.splat %[[Z]] : tensor<21x27xf32>
// CHECK-NEXT: %[[P:.+]] = flow.dispatch @main_dispatch_0::@main_dispatch_0(%{{.+}}, %[[F]]) : (tensor<20x26xf32>, tensor<21x27xf32>) -> %[[F]]
// CHECK: flow.dispatch @main_dispatch_1::@main_dispatch_1_generic_21x14x16_f32(%[[P]],
// CHECK-NOT: tensor.pad
