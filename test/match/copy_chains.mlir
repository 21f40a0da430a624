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
