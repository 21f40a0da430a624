module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x8x8x128x3x3x64_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x8x8x128x3x3x64_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x8x8x64xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x3x3x64xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128xf16>>, %arg3: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x8x8x128xf16>>, %arg4: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x8x8x128xf16>>) {
        %cst = arith.constant 0.000000e+00 : f16
        %cst_0 = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 8, 8, 64], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x8x8x64xf16>> -> tensor<2x8x8x64xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [128, 3, 3, 64], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x3x3x64xf16>> -> tensor<128x3x3x64xf16>
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [128], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128xf16>> -> tensor<128xf16>
        %3 = iree_tensor_ext.dispatch.tensor.load %arg3, offsets = [0, 0, 0, 0], sizes = [2, 8, 8, 128], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x8x8x128xf16>> -> tensor<2x8x8x128xf16>
        %4 = tensor.empty() : tensor<2x8x8x128xf16>
        %5 = tensor.empty() : tensor<2x8x8x128xf32>
        %6 = linalg.fill ins(%cst_0 : f32) outs(%5 : tensor<2x8x8x128xf32>) -> tensor<2x8x8x128xf32>
        %padded = tensor.pad %0 low[0, 1, 1, 0] high[0, 1, 1, 0] {
        ^bb0(%arg5: index, %arg6: index, %arg7: index, %arg8: index):
          tensor.yield %cst : f16
        } : tensor<2x8x8x64xf16> to tensor<2x10x10x64xf16>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded, %1 : tensor<2x10x10x64xf16>, tensor<128x3x3x64xf16>) outs(%6 : tensor<2x8x8x128xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_1: f16, %out: f32):
          %9 = arith.extf %in : f16 to f32
          %10 = arith.extf %in_1 : f16 to f32
          %11 = arith.mulf %9, %10 : f32
          %12 = arith.addf %out, %11 : f32
          linalg.yield %12 : f32
        } -> tensor<2x8x8x128xf32>
        %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7, %2, %3 : tensor<2x8x8x128xf32>, tensor<128xf16>, tensor<2x8x8x128xf16>) outs(%4 : tensor<2x8x8x128xf16>) {
        ^bb0(%in: f32, %in_1: f16, %in_2: f16, %out: f16):
          %9 = arith.extf %in_1 : f16 to f32
          %10 = arith.addf %in, %9 : f32
          %11 = arith.extf %in_2 : f16 to f32
          %12 = arith.addf %10, %11 : f32
          %13 = arith.maximumf %12, %cst_0 : f32
          %14 = arith.truncf %13 : f32 to f16
          linalg.yield %14 : f16
        } -> tensor<2x8x8x128xf16>
        iree_tensor_ext.dispatch.tensor.store %8, %arg4, offsets = [0, 0, 0, 0], sizes = [2, 8, 8, 128], strides = [1, 1, 1, 1] : tensor<2x8x8x128xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x8x8x128xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view, %arg3: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x8x8x64xf16>, %input1: tensor<128x3x3x64xf16>, %input2: tensor<128xf16>, %input3: tensor<2x8x8x128xf16>) -> (%output0: tensor<2x8x8x128xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x8x8x64xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<128x3x3x64xf16>
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<128xf16>
    %3 = hal.tensor.import %arg3 "input3" : !hal.buffer_view -> tensor<2x8x8x128xf16>
    %4 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x8x8x128x3x3x64_f16xf16xf32(%0, %1, %2, %3) : (tensor<2x8x8x64xf16>, tensor<128x3x3x64xf16>, tensor<128xf16>, tensor<2x8x8x128xf16>) -> tensor<2x8x8x128xf16>
    %5 = hal.tensor.export %4 "output0" : tensor<2x8x8x128xf16> -> !hal.buffer_view
    util.return %5 : !hal.buffer_view
  }
}