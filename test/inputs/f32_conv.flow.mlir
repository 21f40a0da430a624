module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x7x7x24x3x3x16_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x7x7x24x3x3x16_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 9, 9, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf32>> -> tensor<2x9x9x16xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [24, 3, 3, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf32>> -> tensor<24x3x3x16xf32>
        %2 = tensor.empty() : tensor<2x7x7x24xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<2x7x7x24xf32>) -> tensor<2x7x7x24xf32>
        %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%0, %1 : tensor<2x9x9x16xf32>, tensor<24x3x3x16xf32>) outs(%3 : tensor<2x7x7x24xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f32, %in_0: f32, %out: f32):
          %5 = arith.mulf %in, %in_0 : f32
          %6 = arith.addf %out, %5 : f32
          linalg.yield %6 : f32
        } -> tensor<2x7x7x24xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0, 0, 0], sizes = [2, 7, 7, 24], strides = [1, 1, 1, 1] : tensor<2x7x7x24xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf32>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x9x9x16xf32>, %input1: tensor<24x3x3x16xf32>) -> (%output0: tensor<2x7x7x24xf32>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x9x9x16xf32>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<24x3x3x16xf32>
    %2 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x7x7x24x3x3x16_f32(%0, %1) : (tensor<2x9x9x16xf32>, tensor<24x3x3x16xf32>) -> tensor<2x7x7x24xf32>
    %3 = hal.tensor.export %2 "output0" : tensor<2x7x7x24xf32> -> !hal.buffer_view
    util.return %3 : !hal.buffer_view
  }
}