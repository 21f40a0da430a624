#executable_target_embedded_elf_x86_64 = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "emeraldrapids", cpu_features = "+adx,+aes,+amx-bf16,+amx-int8,+amx-tile,+avx,+avx2,+avx512bf16,+avx512bitalg,+avx512bw,+avx512cd,+avx512dq,+avx512f,+avx512fp16,+avx512ifma,+avx512vbmi,+avx512vbmi2,+avx512vl,+avx512vnni,+avx512vpopcntdq,+avxvnni,+bmi,+bmi2,+cldemote,+clflushopt,+clwb,+cmov,+crc32,+cx16,+cx8,+enqcmd,+f16c,+fma,+fsgsbase,+fxsr,+gfni,+invpcid,+lzcnt,+mmx,+movbe,+movdir64b,+movdiri,+pclmul,+pconfig,+pku,+popcnt,+prfchw,+ptwrite,+rdpid,+rdrnd,+rdseed,+sahf,+serialize,+sgx,+sha,+shstk,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+tsxldtrk,+uintr,+vaes,+vpclmulqdq,+waitpkg,+wbnoinvd,+x87,+xsave,+xsavec,+xsaveopt,+xsaves,+64bit,+adx,+aes,-amx-avx512,-amx-bf16,-amx-complex,-amx-fp16,-amx-fp8,-amx-int8,-amx-movrs,-amx-tile,+avx,-avx10.1,-avx10.2,-avx10v2aux,+avx2,+avx512bf16,+avx512bitalg,-avx512bmm,+avx512bw,+avx512cd,+avx512dq,+avx512f,+avx512fp16,+avx512ifma,+avx512vbmi,+avx512vbmi2,+avx512vl,+avx512vnni,-avx512vp2intersect,+avx512vpopcntdq,-avxifma,-avxneconvert,+avxvnni,-avxvnniint16,-avxvnniint8,+bmi,+bmi2,-ccmp,-cf,+cldemote,+clflushopt,+clwb,-clzero,+cmov,-cmpccxadd,+crc32,+cx16,+cx8,-egpr,-enqcmd,+f16c,+fma,-fma4,+fsgsbase,+fxsr,+gfni,-hreset,+invpcid,-jmpabs,-kl,-lwp,+lzcnt,+mmx,+movbe,+movdir64b,+movdiri,-movrs,-mwaitx,-ndd,-nf,+pclmul,-pconfig,-pku,+popcnt,-ppx,-prefetchi,+prfchw,-ptwrite,-push2pop2,-raoint,+rdpid,-rdpru,+rdrnd,+rdseed,+rtm,+sahf,+serialize,-sgx,+sha,-sha512,-shstk,-sm3,-sm4,+sse,+sse2,+sse3,+sse4.1,+sse4.2,-sse4a,+ssse3,-tbm,+tsxldtrk,-uintr,-usermsr,+vaes,+vpclmulqdq,-waitpkg,-wbnoinvd,-widekl,-xop,+xsave,+xsavec,+xsaveopt,+xsaves,-zu", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 64 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1, d0)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map5 = affine_map<(d0) -> (d0)>
#device_target_local = #hal.device.target<"local", [#executable_target_embedded_elf_x86_64]> : !hal.device
module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #device_target_local
  util.global private @__hoisted_tensor_4x8xf32 {stream.affinity.default = #hal.device.affinity<@__device_0>} = dense<[[-0.315367311, -0.108596228, 0.243487775, -0.375369251, -0.382769138, 0.322133839, 0.354049683, 0.523033559], [-0.053061612, 0.284326404, 0.160688728, 0.0713412836, 0.243385836, 0.0906560793, 0.539415598, 0.211706877], [-1.447420e-01, 0.24572514, 0.281284153, -0.542764544, 0.0996190533, -0.00444333861, 0.00119048439, -0.336347759], [-0.37613228, 0.39333728, 0.428564489, 0.462989062, -0.222630873, -0.288422704, -0.0702845305, 0.164086744]]> : tensor<4x8xf32>
  util.global private @__hoisted_tensor_4x12xf32 {stream.affinity.default = #hal.device.affinity<@__device_0>} = dense<[[0.285930544, 0.15830195, 0.113224901, -0.00223915861, -0.146046966, 0.248257354, -0.407853484, 0.508247316, -0.142970845, -0.585723102, 0.128604591, 0.0845777392], [0.31144169, 0.257892162, -0.0796462371, 0.280856401, -0.184666798, 0.0784006938, -0.43055287, -0.206566572, -0.0483551323, -0.311739266, 0.342385799, 0.781486273], [-0.0887503847, -0.145715296, -5.035380e-01, 0.0306860339, -0.0964679047, 0.0102645839, -0.383399397, -0.164354205, -0.0924703478, 0.455679446, -0.31726253, 0.138302788], [0.08875674, -0.111806065, -0.278198034, 0.212736458, -0.107843481, 0.373845607, 0.537804782, -0.414196104, 0.0472220592, -0.145942897, -0.469672203, -0.336648017]]> : tensor<4x12xf32>
  flow.executable private @dense$async_dispatch_0 {
    flow.executable.export public @dense$async_dispatch_0_elementwise_transpose_8x9_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dense$async_dispatch_0_elementwise_transpose_8x9_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x9xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<9x8xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [8, 9], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x9xf32>> -> tensor<8x9xf32>
        %1 = tensor.empty() : tensor<9x8xf32>
        %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<8x9xf32>) outs(%1 : tensor<9x8xf32>) {
        ^bb0(%in: f32, %out: f32):
          %3 = arith.cmpf ugt, %in, %cst : f32
          %4 = arith.select %3, %in, %cst : f32
          linalg.yield %4 : f32
        } -> tensor<9x8xf32>
        iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0, 0], sizes = [9, 8], strides = [1, 1] : tensor<9x8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<9x8xf32>>
        return
      }
    }
  }
  flow.executable private @dense$async_dispatch_1 attributes {convc.problem = {C = 8 : i64, F = 4 : i64, H = 9 : i64, N = 1 : i64, R = 1 : i64, S = 1 : i64, W = 1 : i64, acc_dtype = "f32", batch_constant = -1 : i64, dilation = [1, 1], dtype = "f32", epilogue = [], filter = 1 : i64, gemm_form = true, input = 0 : i64, num_constants = 0 : i64, num_operands = 2 : i64, out_dtype = "f32", pad = [0, 0, 0, 0], stride = [1, 1]}} {
    flow.executable.export public @dense$async_dispatch_1_matmul_like_9x4x8_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dense$async_dispatch_1_matmul_like_9x4x8_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<9x8xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<9x4xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [9, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<9x8xf32>> -> tensor<9x8xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [4, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>> -> tensor<4x8xf32>
        %2 = tensor.empty() : tensor<9x4xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<9x4xf32>) -> tensor<9x4xf32>
        %4 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0, %1 : tensor<9x8xf32>, tensor<4x8xf32>) outs(%3 : tensor<9x4xf32>) {
        ^bb0(%in: f32, %in_0: f32, %out: f32):
          %5 = arith.mulf %in, %in_0 : f32
          %6 = arith.addf %out, %5 : f32
          linalg.yield %6 : f32
        } -> tensor<9x4xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0], sizes = [9, 4], strides = [1, 1] : tensor<9x4xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<9x4xf32>>
        return
      }
    }
  }
  flow.executable private @dense$async_dispatch_2 {
    flow.executable.export public @dense$async_dispatch_2_transpose_8x9_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dense$async_dispatch_2_transpose_8x9_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x9xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<9x8xf32>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [8, 9], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x9xf32>> -> tensor<8x9xf32>
        %1 = tensor.empty() : tensor<9x8xf32>
        %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<8x9xf32>) outs(%1 : tensor<9x8xf32>) {
        ^bb0(%in: f32, %out: f32):
          linalg.yield %in : f32
        } -> tensor<9x8xf32>
        iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0, 0], sizes = [9, 8], strides = [1, 1] : tensor<9x8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<9x8xf32>>
        return
      }
    }
  }
  flow.executable private @dense$async_dispatch_3 {
    flow.executable.export public @dense$async_dispatch_3_slow_memcpy workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dense$async_dispatch_3_slow_memcpy(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x8xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<1x3x3x12xf32>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [3, 3, 8], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x8xf32>> -> tensor<3x3x8xf32>
        iree_tensor_ext.dispatch.tensor.store %0, %arg1, offsets = [0, 0, 0, 0], sizes = [1, 3, 3, 8], strides = [1, 1, 1, 1] : tensor<3x3x8xf32> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<1x3x3x12xf32>>
        return
      }
    }
  }
  flow.executable private @dense$async_dispatch_4 {
    flow.executable.export public @dense$async_dispatch_4_slow_memcpy workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dense$async_dispatch_4_slow_memcpy(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x4xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<1x3x3x12xf32>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [3, 3, 4], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x4xf32>> -> tensor<3x3x4xf32>
        iree_tensor_ext.dispatch.tensor.store %0, %arg1, offsets = [0, 0, 0, 8], sizes = [1, 3, 3, 4], strides = [1, 1, 1, 1] : tensor<3x3x4xf32> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<1x3x3x12xf32>>
        return
      }
    }
  }
  flow.executable private @dense$async_dispatch_5 {
    flow.executable.export public @dense$async_dispatch_5_elementwise_108_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dense$async_dispatch_5_elementwise_108_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<108xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<108xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0], sizes = [108], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<108xf32>> -> tensor<108xf32>
        %1 = tensor.empty() : tensor<108xf32>
        %2 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel"]} ins(%0 : tensor<108xf32>) outs(%1 : tensor<108xf32>) {
        ^bb0(%in: f32, %out: f32):
          %3 = arith.cmpf ugt, %in, %cst : f32
          %4 = arith.select %3, %in, %cst : f32
          linalg.yield %4 : f32
        } -> tensor<108xf32>
        iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0], sizes = [108], strides = [1] : tensor<108xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<108xf32>>
        return
      }
    }
  }
  flow.executable private @dense$async_dispatch_6 attributes {convc.problem = {C = 12 : i64, F = 4 : i64, H = 9 : i64, N = 1 : i64, R = 1 : i64, S = 1 : i64, W = 1 : i64, acc_dtype = "f32", batch_constant = -1 : i64, dilation = [1, 1], dtype = "f32", epilogue = [], filter = 1 : i64, gemm_form = true, input = 0 : i64, num_constants = 0 : i64, num_operands = 2 : i64, out_dtype = "f32", pad = [0, 0, 0, 0], stride = [1, 1]}} {
    flow.executable.export public @dense$async_dispatch_6_matmul_like_9x4x12_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dense$async_dispatch_6_matmul_like_9x4x12_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<9x12xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x12xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<9x4xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [9, 12], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<9x12xf32>> -> tensor<9x12xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [4, 12], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x12xf32>> -> tensor<4x12xf32>
        %2 = tensor.empty() : tensor<9x4xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<9x4xf32>) -> tensor<9x4xf32>
        %4 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0, %1 : tensor<9x12xf32>, tensor<4x12xf32>) outs(%3 : tensor<9x4xf32>) {
        ^bb0(%in: f32, %in_0: f32, %out: f32):
          %5 = arith.mulf %in, %in_0 : f32
          %6 = arith.addf %out, %5 : f32
          linalg.yield %6 : f32
        } -> tensor<9x4xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0], sizes = [9, 4], strides = [1, 1] : tensor<9x4xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<9x4xf32>>
        return
      }
    }
  }
  flow.executable private @dense$async_dispatch_7 {
    flow.executable.export public @dense$async_dispatch_7_slow_memcpy workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dense$async_dispatch_7_slow_memcpy(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x8xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<1x3x3x16xf32>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [3, 3, 8], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x8xf32>> -> tensor<3x3x8xf32>
        iree_tensor_ext.dispatch.tensor.store %0, %arg1, offsets = [0, 0, 0, 0], sizes = [1, 3, 3, 8], strides = [1, 1, 1, 1] : tensor<3x3x8xf32> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<1x3x3x16xf32>>
        return
      }
    }
  }
  flow.executable private @dense$async_dispatch_8 {
    flow.executable.export public @dense$async_dispatch_8_slow_memcpy workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dense$async_dispatch_8_slow_memcpy(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x4xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<1x3x3x16xf32>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [3, 3, 4], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x4xf32>> -> tensor<3x3x4xf32>
        iree_tensor_ext.dispatch.tensor.store %0, %arg1, offsets = [0, 0, 0, 8], sizes = [1, 3, 3, 4], strides = [1, 1, 1, 1] : tensor<3x3x4xf32> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<1x3x3x16xf32>>
        return
      }
    }
  }
  flow.executable private @dense$async_dispatch_9 {
    flow.executable.export public @dense$async_dispatch_9_slow_memcpy workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dense$async_dispatch_9_slow_memcpy(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x4xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<1x3x3x16xf32>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [3, 3, 4], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x4xf32>> -> tensor<3x3x4xf32>
        iree_tensor_ext.dispatch.tensor.store %0, %arg1, offsets = [0, 0, 0, 12], sizes = [1, 3, 3, 4], strides = [1, 1, 1, 1] : tensor<3x3x4xf32> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<1x3x3x16xf32>>
        return
      }
    }
  }
  flow.executable private @dense$async_dispatch_10 {
    flow.executable.export public @dense$async_dispatch_10_transpose_9x16_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @dense$async_dispatch_10_transpose_9x16_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<9x16xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x9xf32>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [9, 16], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<9x16xf32>> -> tensor<9x16xf32>
        %1 = tensor.empty() : tensor<16x9xf32>
        %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<9x16xf32>) outs(%1 : tensor<16x9xf32>) {
        ^bb0(%in: f32, %out: f32):
          linalg.yield %in : f32
        } -> tensor<16x9xf32>
        iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0, 0], sizes = [16, 9], strides = [1, 1] : tensor<16x9xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x9xf32>>
        return
      }
    }
  }
  util.func public @dense$async(%arg0: !hal.buffer_view, %arg1: !hal.fence, %arg2: !hal.fence) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never, iree.abi.model = "coarse-fences", iree.abi.stub} {
    %__hoisted_tensor_4x8xf32 = util.global.load immutable @__hoisted_tensor_4x8xf32 : tensor<4x8xf32>
    %__hoisted_tensor_4x12xf32 = util.global.load immutable @__hoisted_tensor_4x12xf32 : tensor<4x12xf32>
    %0 = hal.tensor.import wait(%arg1) => %arg0 : !hal.buffer_view -> tensor<1x8x3x3xf32>
    %1 = flow.tensor.reshape %0 : tensor<1x8x3x3xf32> -> tensor<8x9xf32>
    %2 = flow.dispatch @dense$async_dispatch_0::@dense$async_dispatch_0_elementwise_transpose_8x9_f32(%1) : (tensor<8x9xf32>) -> tensor<9x8xf32>
    %3 = flow.tensor.reshape %2 : tensor<9x8xf32> -> tensor<1x3x3x8xf32>
    %4 = flow.tensor.reshape %__hoisted_tensor_4x8xf32 : tensor<4x8xf32> -> tensor<4x1x1x8xf32>
    %5 = util.optimization_barrier %4 : tensor<4x1x1x8xf32>
    %6 = util.optimization_barrier %3 : tensor<1x3x3x8xf32>
    %7 = flow.tensor.reshape %5 : tensor<4x1x1x8xf32> -> tensor<4x8xf32>
    %8 = flow.tensor.reshape %6 : tensor<1x3x3x8xf32> -> tensor<9x8xf32>
    %9 = flow.dispatch @dense$async_dispatch_1::@dense$async_dispatch_1_matmul_like_9x4x8_f32(%8, %7) : (tensor<9x8xf32>, tensor<4x8xf32>) -> tensor<9x4xf32>
    %10 = flow.tensor.reshape %9 : tensor<9x4xf32> -> tensor<3x3x4xf32>
    %11 = flow.dispatch @dense$async_dispatch_2::@dense$async_dispatch_2_transpose_8x9_f32(%1) : (tensor<8x9xf32>) -> tensor<9x8xf32>
    %12 = flow.tensor.reshape %11 : tensor<9x8xf32> -> tensor<3x3x8xf32>
    %13 = flow.tensor.empty : tensor<1x3x3x12xf32>
    %14 = flow.dispatch @dense$async_dispatch_3::@dense$async_dispatch_3_slow_memcpy(%12, %13) : (tensor<3x3x8xf32>, tensor<1x3x3x12xf32>) -> %13
    %15 = flow.dispatch @dense$async_dispatch_4::@dense$async_dispatch_4_slow_memcpy(%10, %14) : (tensor<3x3x4xf32>, tensor<1x3x3x12xf32>) -> %14
    %16 = flow.tensor.reshape %15 : tensor<1x3x3x12xf32> -> tensor<108xf32>
    %17 = flow.dispatch @dense$async_dispatch_5::@dense$async_dispatch_5_elementwise_108_f32(%16) : (tensor<108xf32>) -> tensor<108xf32>
    %18 = flow.tensor.reshape %__hoisted_tensor_4x12xf32 : tensor<4x12xf32> -> tensor<4x1x1x12xf32>
    %19 = util.optimization_barrier %18 : tensor<4x1x1x12xf32>
    %20 = flow.tensor.reshape %19 : tensor<4x1x1x12xf32> -> tensor<4x12xf32>
    %21 = flow.tensor.reshape %17 : tensor<108xf32> -> tensor<9x12xf32>
    %22 = flow.dispatch @dense$async_dispatch_6::@dense$async_dispatch_6_matmul_like_9x4x12_f32(%21, %20) : (tensor<9x12xf32>, tensor<4x12xf32>) -> tensor<9x4xf32>
    %23 = flow.tensor.reshape %22 : tensor<9x4xf32> -> tensor<3x3x4xf32>
    %24 = flow.tensor.empty : tensor<1x3x3x16xf32>
    %25 = flow.dispatch @dense$async_dispatch_7::@dense$async_dispatch_7_slow_memcpy(%12, %24) : (tensor<3x3x8xf32>, tensor<1x3x3x16xf32>) -> %24
    %26 = flow.dispatch @dense$async_dispatch_8::@dense$async_dispatch_8_slow_memcpy(%10, %25) : (tensor<3x3x4xf32>, tensor<1x3x3x16xf32>) -> %25
    %27 = flow.dispatch @dense$async_dispatch_9::@dense$async_dispatch_9_slow_memcpy(%23, %26) : (tensor<3x3x4xf32>, tensor<1x3x3x16xf32>) -> %26
    %28 = flow.tensor.reshape %27 : tensor<1x3x3x16xf32> -> tensor<9x16xf32>
    %29 = flow.dispatch @dense$async_dispatch_10::@dense$async_dispatch_10_transpose_9x16_f32(%28) : (tensor<9x16xf32>) -> tensor<16x9xf32>
    %30 = flow.tensor.reshape %29 : tensor<16x9xf32> -> tensor<1x16x3x3xf32>
    %31 = hal.tensor.barrier join(%30 : tensor<1x16x3x3xf32>) => %arg2 : !hal.fence
    %32 = hal.tensor.export %31 : tensor<1x16x3x3xf32> -> !hal.buffer_view
    util.return %32 : !hal.buffer_view
  }
  util.func public @dense(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub} {
    %0 = util.null : !hal.fence
    %c-1_i32 = arith.constant -1 : i32
    %c0 = arith.constant 0 : index
    %device_0 = hal.devices.get %c0 : !hal.device
    %fence = hal.fence.create device(%device_0 : !hal.device) flags("None") : !hal.fence
    %1 = util.call @dense$async(%arg0, %0, %fence) : (!hal.buffer_view, !hal.fence, !hal.fence) -> !hal.buffer_view
    %status = hal.fence.await until([%fence]) timeout_millis(%c-1_i32) flags("None") : i32
    util.return %1 : !hal.buffer_view
  }
}
