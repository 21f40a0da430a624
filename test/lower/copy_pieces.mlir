// convc-lower-kernel: the copy kernel (passes/lower/common/copy_pieces.py) of an assembled
// tensor, here a concatenation of 8 + 4 + 4 f32 channels into 16 (test/match/copy_chains.mlir).

// RUN: convc-opt --pass=convc-copy-chains,convc-plan-schedule,convc-lower-kernel --target sm_90a %inputs/dense_concat.flow.mlir | FileCheck %s

// One launch for the three pieces: 36 vectors of 4 f32 (18 + 9 + 9), one per thread; a binary
// search over the pieces' first vector numbers (18, then 27) picks the piece; each vector is one
// 16-byte load of the piece, read in order, and one 16-byte store at its channel offset in the
// 16-channel pixel.
// CHECK-LABEL: hal.executable.source private @copy3_1x3x3x16_f32_
// CHECK: hal.return %c1
// CHECK: %[[T:.+]] = gpu.thread_id x
// CHECK: arith.constant 36 : index
// CHECK: arith.constant 18 : index
// CHECK: vector.load %0[%{{.+}}] alignment = 16 : memref<72xf32>, vector<4xf32>
// CHECK-NEXT: vector.store %{{.+}}, %3[%{{.+}}] alignment = 16 : memref<144xf32>, vector<4xf32>
// CHECK: arith.constant 27 : index
// CHECK: vector.load %1[%{{.+}}] alignment = 16 : memref<36xf32>, vector<4xf32>
// CHECK-NEXT: vector.store %{{.+}}, %3[%{{.+}}] alignment = 16 : memref<144xf32>, vector<4xf32>
// CHECK: vector.load %2[%{{.+}}] alignment = 16 : memref<36xf32>, vector<4xf32>
// CHECK-NEXT: vector.store %{{.+}}, %3[%{{.+}}] alignment = 16 : memref<144xf32>, vector<4xf32>
