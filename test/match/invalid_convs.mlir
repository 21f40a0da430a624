// Convs convc declines stay with IREE; the reason is recorded as convc.decline.

// RUN: convc-opt --pass=convc-match-conv %inputs/inv_nchw.flow.mlir | FileCheck %s --check-prefix=NCHW
// NCHW: flow.executable private @main_dispatch_0 attributes {convc.decline = "output layout is not NHWF (channels last)"}

// RUN: convc-opt --pass=convc-match-conv %inputs/inv_hwcf.flow.mlir | FileCheck %s --check-prefix=HWCF
// HWCF: convc.decline = "filter layout is not FHWC (only linalg.conv_2d_nhwc_fhwc is taken)"


// RUN: convc-opt --pass=convc-match-conv %inputs/inv_padval.flow.mlir | FileCheck %s --check-prefix=PADVAL
// PADVAL: convc.decline = "padding value is not zero"
