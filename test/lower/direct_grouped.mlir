// convc-lower-kernel: the direct grouped/depthwise kernel (passes/lower/common/direct_grouped.py).

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --candidate kernel=direct_grouped %inputs/grouped_f32.flow.mlir | FileCheck %s

// Depthwise (filter [R, S, C]), the rule's shape for a small grid: an item is 2 output rows x 2
// outputs along W, the filter rows unrolled, padding rows loaded as zeros (no branch, so every
// row's loads may go out together): each of the 4 input rows loads the 4 input columns its taps
// touch once for both output rows (address and value zero-selected outside the image), then
// per output row it serves the row's 3 filter vectors and 6 fmas.
// CHECK-LABEL: hal.executable.source private @conv_n2h16w16c32_f32r3s3_g32hwf_st1x1_dl1x1_p1x1x1x1_f32_add_bias_relu
// CHECK: hal.return %c8
// CHECK-NOT: -> (vector<4xf32>
// CHECK-COUNT-4: vector.load {{.*}} : memref<16384xf32>, vector<4xf32>
// CHECK-NOT: -> (vector<4xf32>
// CHECK-COUNT-3: vector.load {{.*}} : memref<288xf32>, vector<4xf32>
// CHECK-COUNT-6: math.fma {{.*}} : vector<4xf32>
// CHECK-NOT: -> (vector<4xf32>
// CHECK-COUNT-4: vector.load {{.*}} : memref<16384xf32>, vector<4xf32>
// CHECK-NOT: -> (vector<4xf32>
// CHECK-COUNT-2: math.fma {{.*}} : vector<4xf32>
// CHECK-NOT: -> (vector<4xf32>
// CHECK: vector.load {{.*}} : memref<288xf32>, vector<4xf32>
// CHECK-COUNT-6: math.fma {{.*}} : vector<4xf32>
// CHECK-NOT: -> (vector<4xf32>
// The shared epilogue per output (bias slice, relu), each behind its row and W bounds.
// CHECK: vector.load {{.*}} : memref<32xf32>, vector<4xf32>
// CHECK: arith.maximumf

// The same item with padding rows skipped (a branch per input row: a row in the padding adds
// nothing, the accumulators pass on), as 7-column windows take it.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --candidate kernel=direct_grouped,padding=branch,unrolled=true,rows=2,pixels=2 %inputs/grouped_f32.flow.mlir | FileCheck %s --check-prefix=BRANCH
// BRANCH-LABEL: hal.executable.source private @conv_n2h16w16c32_f32r3s3_g32hwf_st1x1_dl1x1_p1x1x1x1_f32_add_bias_relu
// BRANCH: hal.return %c8
// BRANCH: scf.if {{.*}} -> (vector<4xf32>, vector<4xf32>) {
// BRANCH-COUNT-4: vector.load {{.*}} : memref<16384xf32>, vector<4xf32>
// BRANCH-COUNT-3: vector.load {{.*}} : memref<288xf32>, vector<4xf32>
// BRANCH-COUNT-6: math.fma {{.*}} : vector<4xf32>
// BRANCH: } else {
// BRANCH-NEXT: scf.yield
// BRANCH-COUNT-2: scf.if {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) {
// BRANCH: scf.if {{.*}} -> (vector<4xf32>, vector<4xf32>) {

// Grouped (filter [F, R, S, C/G]): 4 pixels x 4 output channels per item as 16 scalar
// accumulators; per filter row and 4-channel slice of the group, 6 input columns and 3 x 4
// filter vectors, then 4 x 4 x 3 x 4 = 192 outer-product fmas.
// CHECK-LABEL: hal.executable.source private @conv_n2h16w16c32_f64r3s3_g4fhwc_st1x1_dl1x1_p1x1x1x1_f32_add_bias
// CHECK: hal.return %c8
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8{{.*}} step %c4
// CHECK-COUNT-6: vector.load {{.*}} : memref<16384xf32>, vector<4xf32>
// CHECK: vector.load {{.*}} : memref<4608xf32>, vector<4xf32>
// CHECK-COUNT-192: math.fma {{.*}} : f32
// CHECK: vector.from_elements

// Depthwise with a channel multiplier (2): each output channel reads input channel f / 2.
// CHECK-LABEL: hal.executable.source private @conv_n2h16w16c64_f128r3s3_g64hwf_st2x2_dl1x1_p1x1x1x1_f32_add_bias
// CHECK-COUNT-4: vector.load {{.*}} : memref<32768xf32>, vector<1xf32>
// CHECK: vector.load {{.*}} : memref<1152xf32>, vector<4xf32>
// CHECK: math.fma

// Grouped with convc-channels-last's [R, S, C/G, F] filter (PyTorch's groups=4 through the
// PyTorch route): 4 pixels x 4 channels per item, per filter row and input channel of the group
// the 6 input values (broadcast over the 4 lanes) and 3 filter vectors, 12 vector fmas.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a %inputs/grouped_hwcf_f32.flow.mlir | FileCheck %s --check-prefix=HWCF
// HWCF-LABEL: hal.executable.source private @conv_n2h16w16c32_f64r3s3_g4hwcf_st1x1_dl1x1_p1x1x1x1_f32_add_bias
// HWCF: hal.return %c8
// HWCF: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// HWCF: scf.for %{{.*}} = %{{.*}} to %c8{{.*}} step %c1
// HWCF-COUNT-6: vector.broadcast {{.*}} : f32 to vector<4xf32>
// HWCF-COUNT-3: vector.load {{.*}} : memref<4608xf32>, vector<4xf32>
// HWCF-COUNT-12: math.fma {{.*}} : vector<4xf32>

// Filter rows split over threads (row_groups, the small grids' item for 7+ column windows): 32
// items of 4 pixels x 2 channels per workgroup of 96 threads, thread g of an item taking filter
// row g (3 rows: one each) into 4 f32 partials in workgroup memory; after the barrier thread g
// adds the 3 partials of pixels g and g + 3 and runs the epilogue for each.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a --candidate kernel=direct_grouped,row_groups=3 %inputs/grouped_f32.flow.mlir | FileCheck %s --check-prefix=SPLIT
// SPLIT: workgroup_size = [96, 1, 1]
// SPLIT-LABEL: hal.executable.source private @conv_n2h16w16c32_f32r3s3_g32hwf_st1x1_dl1x1_p1x1x1x1_f32_add_bias_relu
// SPLIT: hal.return %c64
// SPLIT: %[[TID:.*]] = gpu.thread_id x
// SPLIT: %[[PART:.*]] = memref.alloc() alignment = 16 : memref<768xf32, #gpu.address_space<workgroup>>
// SPLIT: arith.remui %[[TID]], %c32
// SPLIT: arith.divui %[[TID]], %c32
// SPLIT-COUNT-12: math.fma {{.*}} : vector<2xf32>
// SPLIT-NOT: math.fma
// SPLIT-COUNT-4: vector.store {{.*}}, %[[PART]][{{.*}}] : memref<768xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// SPLIT: gpu.barrier
// SPLIT-COUNT-3: vector.load %[[PART]]
// SPLIT: arith.maximumf
// SPLIT-COUNT-3: vector.load %[[PART]]
// SPLIT: arith.maximumf
