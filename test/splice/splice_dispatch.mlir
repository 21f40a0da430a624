// convc-splice-dispatch re-points the conv dispatch at the convc kernel, adds the scratch
// result and drops the replaced flow.executable; other dispatches are untouched.

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel,convc-splice-dispatch --target sm_90a %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s
// CHECK-NOT: flow.executable private @main_dispatch_0
// CHECK: hal.executable.source private @[[K:conv_n2h9w7c16_f24r3s3_st1x1_dl1x1_p1x1x1x1_f16_add_bias_relu_f16]]
// CHECK: util.func public @main
// CHECK: %[[R:.+]]:2 = flow.dispatch @[[K]]::@[[K]](%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<2x9x7x16xf16>, tensor<24x3x3x16xf16>, tensor<24xf16>) -> (tensor<2x9x7x24xf16>, tensor<128xi8>)
// CHECK: hal.tensor.export %[[R]]#0

// A declined conv keeps its flow.executable and dispatch.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel,convc-splice-dispatch %inputs/inv_padval.flow.mlir | FileCheck %s --check-prefix=KEEP
// KEEP: flow.executable private @main_dispatch_0 attributes {convc.decline
// KEEP-NOT: hal.executable.source
// KEEP: flow.dispatch @main_dispatch_0::
