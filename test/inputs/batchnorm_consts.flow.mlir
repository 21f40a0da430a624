module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "znver3", cpu_features = "+adx,+aes,+avx,+avx2,+bmi,+bmi2,+clflushopt,+clwb,+clzero,+crc32,+cx16,+cx8,+f16c,+fma,+fsgsbase,+fxsr,+invpcid,+lzcnt,+mmx,+movbe,+mwaitx,+pclmul,+pku,+popcnt,+prfchw,+rdpid,+rdpru,+rdrnd,+rdseed,+sahf,+sha,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+sse4a,+ssse3,+vaes,+vpclmulqdq,+wbnoinvd,+x87,+xsave,+xsavec,+xsaveopt,+xsaves,+64bit,+adx,+aes,-amx-avx512,-amx-bf16,-amx-complex,-amx-fp16,-amx-fp8,-amx-int8,-amx-movrs,-amx-tile,+avx,-avx10.1,-avx10.2,-avx10v2aux,+avx2,-avx512bf16,-avx512bitalg,-avx512bmm,-avx512bw,-avx512cd,-avx512dq,-avx512f,-avx512fp16,-avx512ifma,-avx512vbmi,-avx512vbmi2,-avx512vl,-avx512vnni,-avx512vp2intersect,-avx512vpopcntdq,-avxifma,-avxneconvert,-avxvnni,-avxvnniint16,-avxvnniint8,+bmi,+bmi2,-ccmp,-cf,-cldemote,+clflushopt,+clwb,+clzero,+cmov,-cmpccxadd,+crc32,+cx16,+cx8,-egpr,-enqcmd,+f16c,+fma,-fma4,+fsgsbase,+fxsr,-gfni,-hreset,+invpcid,-jmpabs,-kl,-lwp,+lzcnt,+mmx,+movbe,-movdir64b,-movdiri,-movrs,-mwaitx,-ndd,-nf,+pclmul,-pconfig,-pku,+popcnt,-ppx,-prefetchi,+prfchw,-ptwrite,-push2pop2,-raoint,+rdpid,-rdpru,+rdrnd,+rdseed,-rtm,+sahf,-serialize,-sgx,+sha,-sha512,+shstk,-sm3,-sm4,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+sse4a,+ssse3,-tbm,-tsxldtrk,-uintr,-usermsr,+vaes,+vpclmulqdq,-waitpkg,-wbnoinvd,-widekl,-xop,+xsave,+xsavec,+xsaveopt,+xsaves,-zu", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 32 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x9x7x24x3x3x16_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x9x7x24x3x3x16_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x7x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24xf32>>, %arg3: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24xf16>>, %arg4: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x9x7x24xf16>>) {
        %cst = arith.constant 0.000000e+00 : f16
        %cst_0 = arith.constant 0.000000e+00 : f32
        %cst_1 = arith.constant 0.964486896 : f32
        %cst_2 = arith.constant dense<[0.591394365, 1.03630531, 1.02897692, 1.06565619, 0.88761568, 1.2478931, 0.53738004, 0.789127469, 1.04829478, 0.911762118, 1.336560e+00, 0.705352783, 1.01782799, 1.04040551, 1.43896174, 0.663672864, 1.3725903, 1.4372344, 1.41097224, 1.24767637, 0.570873082, 1.28118455, 0.558281243, 1.16657937]> : tensor<24xf32>
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 9, 7, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x7x16xf16>> -> tensor<2x9x7x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [24, 3, 3, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>> -> tensor<24x3x3x16xf16>
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [24], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24xf32>> -> tensor<24xf32>
        %3 = iree_tensor_ext.dispatch.tensor.load %arg3, offsets = [0], sizes = [24], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24xf16>> -> tensor<24xf16>
        %4 = tensor.empty() : tensor<2x9x7x24xf16>
        %5 = tensor.empty() : tensor<2x9x7x24xf32>
        %6 = linalg.fill ins(%cst_0 : f32) outs(%5 : tensor<2x9x7x24xf32>) -> tensor<2x9x7x24xf32>
        %padded = tensor.pad %0 low[0, 1, 1, 0] high[0, 1, 1, 0] {
        ^bb0(%arg5: index, %arg6: index, %arg7: index, %arg8: index):
          tensor.yield %cst : f16
        } : tensor<2x9x7x16xf16> to tensor<2x11x9x16xf16>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded, %1 : tensor<2x11x9x16xf16>, tensor<24x3x3x16xf16>) outs(%6 : tensor<2x9x7x24xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_3: f16, %out: f32):
          %9 = arith.extf %in : f16 to f32
          %10 = arith.extf %in_3 : f16 to f32
          %11 = arith.mulf %9, %10 : f32
          %12 = arith.addf %out, %11 : f32
          linalg.yield %12 : f32
        } -> tensor<2x9x7x24xf32>
        %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7, %2, %3, %cst_2 : tensor<2x9x7x24xf32>, tensor<24xf32>, tensor<24xf16>, tensor<24xf32>) outs(%4 : tensor<2x9x7x24xf16>) {
        ^bb0(%in: f32, %in_3: f32, %in_4: f16, %in_5: f32, %out: f16):
          %9 = arith.subf %in, %in_3 : f32
          %10 = arith.mulf %9, %in_5 : f32
          %11 = arith.extf %in_4 : f16 to f32
          %12 = arith.mulf %10, %11 : f32
          %13 = arith.addf %12, %cst_1 : f32
          %14 = arith.truncf %13 : f32 to f16
          linalg.yield %14 : f16
        } -> tensor<2x9x7x24xf16>
        iree_tensor_ext.dispatch.tensor.store %8, %arg4, offsets = [0, 0, 0, 0], sizes = [2, 9, 7, 24], strides = [1, 1, 1, 1] : tensor<2x9x7x24xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x9x7x24xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view, %arg3: !hal.buffer_view, %arg4: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x9x7x16xf16>, %input1: tensor<24x3x3x16xf16>, %input2: tensor<24xf32>, %input3: tensor<24xf16>, %input4: tensor<2x9x7x24xf16> {iree.abi.output = 0 : index}) -> (%output0: tensor<2x9x7x24xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x9x7x16xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<24x3x3x16xf16>
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<24xf32>
    %3 = hal.tensor.import %arg3 "input3" : !hal.buffer_view -> tensor<24xf16>
    %4 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x9x7x24x3x3x16_f16xf16xf32(%0, %1, %2, %3) : (tensor<2x9x7x16xf16>, tensor<24x3x3x16xf16>, tensor<24xf32>, tensor<24xf16>) -> tensor<2x9x7x24xf16>
    %5 = hal.tensor.alias %4 : tensor<2x9x7x24xf16> to %arg4 : !hal.buffer_view
    %6 = hal.tensor.export %5 "output0" : tensor<2x9x7x24xf16> -> !hal.buffer_view
    util.return %6 : !hal.buffer_view
  }
}