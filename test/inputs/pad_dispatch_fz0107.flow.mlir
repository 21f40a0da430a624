module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_90a", features = "+ptx86", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 64], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 232448, max_workgroup_counts = [2147483647, 65535, 65535]>>}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<20x26xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<21x27xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [20, 26], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<20x26xf32>> -> tensor<20x26xf32>
        %padded = tensor.pad %0 low[0, 1] high[1, 0] {
        ^bb0(%arg2: index, %arg3: index):
          tensor.yield %cst : f32
        } : tensor<20x26xf32> to tensor<21x27xf32>
        iree_tensor_ext.dispatch.tensor.store %padded, %arg1, offsets = [0, 0], sizes = [21, 27], strides = [1, 1] : tensor<21x27xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<21x27xf32>>
        return
      }
    }
  }
  flow.executable private @main_dispatch_1 {
    flow.executable.export public @main_dispatch_1_generic_21x14x16_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_1_generic_21x14x16_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<21x27xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<16xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<16xf32>>, %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<21x14x16xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [21, 27], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<21x27xf32>> -> tensor<21x27xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0], sizes = [16], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16xf32>> -> tensor<16xf32>
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [16], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16xf32>> -> tensor<16xf32>
        %3 = tensor.empty() : tensor<21x14x16xf32>
        %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1 * 2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%0, %1, %2 : tensor<21x27xf32>, tensor<16xf32>, tensor<16xf32>) outs(%3 : tensor<21x14x16xf32>) {
        ^bb0(%in: f32, %in_0: f32, %in_1: f32, %out: f32):
          %5 = arith.mulf %in, %in_0 : f32
          %6 = arith.addf %5, %cst : f32
          %7 = arith.addf %6, %in_1 : f32
          linalg.yield %7 : f32
        } -> tensor<21x14x16xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg3, offsets = [0, 0, 0], sizes = [21, 14, 16], strides = [1, 1, 1] : tensor<21x14x16xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<21x14x16xf32>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view, %arg3: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<1x20x26x1xf32>, %input1: tensor<16x1x1x1xf32>, %input2: tensor<16xf32>, %input3: tensor<1x21x14x16xf32> {iree.abi.output = 0 : index}) -> (%output0: tensor<1x21x14x16xf32>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<1x20x26x1xf32>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<16x1x1x1xf32>
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<16xf32>
    %3 = flow.tensor.reshape %0 : tensor<1x20x26x1xf32> -> tensor<20x26xf32>
    %4 = flow.dispatch @main_dispatch_0::@main_dispatch_0(%3) : (tensor<20x26xf32>) -> tensor<21x27xf32>
    %5 = flow.tensor.reshape %1 : tensor<16x1x1x1xf32> -> tensor<16xf32>
    %6 = flow.dispatch @main_dispatch_1::@main_dispatch_1_generic_21x14x16_f32(%4, %5, %2) : (tensor<21x27xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<21x14x16xf32>
    %7 = flow.tensor.reshape %6 : tensor<21x14x16xf32> -> tensor<1x21x14x16xf32>
    %8 = hal.tensor.alias %7 : tensor<1x21x14x16xf32> to %arg3 : !hal.buffer_view
    %9 = hal.tensor.export %8 "output0" : tensor<1x21x14x16xf32> -> !hal.buffer_view
    util.return %9 : !hal.buffer_view
  }
}