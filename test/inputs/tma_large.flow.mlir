module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x92x92x128x3x3x64_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x92x92x128x3x3x64_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x92x92x64xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x3x3x64xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128xf16>>, %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x92x92x128xf16>>) {
        %cst = arith.constant 0.000000e+00 : f16
        %cst_0 = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 92, 92, 64], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x92x92x64xf16>> -> tensor<2x92x92x64xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [128, 3, 3, 64], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x3x3x64xf16>> -> tensor<128x3x3x64xf16>
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [128], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128xf16>> -> tensor<128xf16>
        %3 = tensor.empty() : tensor<2x92x92x128xf16>
        %4 = tensor.empty() : tensor<2x92x92x128xf32>
        %5 = linalg.fill ins(%cst_0 : f32) outs(%4 : tensor<2x92x92x128xf32>) -> tensor<2x92x92x128xf32>
        %padded = tensor.pad %0 low[0, 1, 1, 0] high[0, 1, 1, 0] {
        ^bb0(%arg4: index, %arg5: index, %arg6: index, %arg7: index):
          tensor.yield %cst : f16
        } : tensor<2x92x92x64xf16> to tensor<2x94x94x64xf16>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded, %1 : tensor<2x94x94x64xf16>, tensor<128x3x3x64xf16>) outs(%5 : tensor<2x92x92x128xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_1: f16, %out: f32):
          %8 = arith.extf %in : f16 to f32
          %9 = arith.extf %in_1 : f16 to f32
          %10 = arith.mulf %8, %9 : f32
          %11 = arith.addf %out, %10 : f32
          linalg.yield %11 : f32
        } -> tensor<2x92x92x128xf32>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6, %2 : tensor<2x92x92x128xf32>, tensor<128xf16>) outs(%3 : tensor<2x92x92x128xf16>) {
        ^bb0(%in: f32, %in_1: f16, %out: f16):
          %8 = arith.extf %in_1 : f16 to f32
          %9 = arith.addf %in, %8 : f32
          %10 = arith.maximumf %9, %cst_0 : f32
          %11 = arith.truncf %10 : f32 to f16
          linalg.yield %11 : f16
        } -> tensor<2x92x92x128xf16>
        iree_tensor_ext.dispatch.tensor.store %7, %arg3, offsets = [0, 0, 0, 0], sizes = [2, 92, 92, 128], strides = [1, 1, 1, 1] : tensor<2x92x92x128xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x92x92x128xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x92x92x64xf16>, %input1: tensor<128x3x3x64xf16>, %input2: tensor<128xf16>) -> (%output0: tensor<2x92x92x128xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x92x92x64xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<128x3x3x64xf16>
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<128xf16>
    %3 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x92x92x128x3x3x64_f16xf16xf32(%0, %1, %2) : (tensor<2x92x92x64xf16>, tensor<128x3x3x64xf16>, tensor<128xf16>) -> tensor<2x92x92x128xf16>
    %4 = hal.tensor.export %3 "output0" : tensor<2x92x92x128xf16> -> !hal.buffer_view
    util.return %4 : !hal.buffer_view
  }
}