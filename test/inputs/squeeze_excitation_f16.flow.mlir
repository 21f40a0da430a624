module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_90a", features = "+ptx86", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 64], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 232448, max_workgroup_counts = [2147483647, 65535, 65535]>>}>]> : !hal.device
  util.global private @__hoisted_tensor_16x3x3x8xf16 {stream.affinity.default = #hal.device.affinity<@__device_0>} = dense<"0xA32EA62D82B30EB0EFB05527383451B5E3335E20F0AC1A2CE9B7772125B5AA2B582E403101192C2C6E2ADCB064347BB041B612B34BAD15393028B3312A9E862C593441AA363656B5E4B54734FEB54B334930A1B0D53440AF8FB2292E07AEEAB728B1C03182BAE73888A5DBB32824E22C94311A2289B8353289B406333D2DE135002F9DADB6AA5E328CA7D0B0B7B4B6ADC9B36F2B3534642E3538823001B60EB43933D4B7ED2C41B246A8F6B4A73124AEDE2CBDB548A724349CB2643209B490B44D343E34F8ACD3A88A295137DCB00118A1AE873211356D325AAB52B7AFAE65B51DB725B267B9DA351734EBB91B313FB539A8288D53A95A2F3621EC31C8AFFE3648B04730122134B4391C1D3A562D16A471337F30D7B645B7DCB2CEB4C7AA24A4E93053B40BB22D28BC307A2A44317B380AB080AF722C9DA0302A68B01DB5A7B463ACD037B932AE2A7AB4E3356338AFAD1530A4B55F3203B8E43A9E34D938D0306C2D262ABC38F7333A3482BA1CB537B291B521B9042C84B178B56822282F98AC0034B48FB0B1A2B57CB3C4B777B269B1ABB15134D6A81F32AE2654353E9F20A912B58BAC91A5533676B7752A13B69EB534B00EB10930B5B7B82CF33102B20532F2AB12B6FC2C59382BB33AB8662E1B3468AEFB30C8B6C9B18432F3B4E6B952B05B247CB5653364B783B01222713B68ADA1AD29B3BBB2F1312DB488B6B5B2AA303B33E62E68B5D0AEEB254D2002B35DB435AEBB2F5A273D2E463037A4223435303FA9AFAFDAAA85AE66AC50341EA2A72B62B2D9B8C82B97A424B464B445B87BB2AFB66A32E83668A848AC69B64EB60BB855AC4938F703BAB603B51F32C1B00D3434B4F2AD382E64A16AB4B3A0C92BFE2FCF34B1B1923401B830ABA730E4313134882910AAC6ADAF3600B1AF37BF2577AE82339FB0E53638A6823479B99CB3F3332B29BCB213B22AB27635032D50B118B50C2D4E29C3B35CB4EC1C47B53F34793184B396AD08AF62AF8C30AF31C296B5B0793227336BB278353F2B6731A9B5E731D43419392F319031812C86340D35F52D11B308B87E2838B328B4412F2734B6AEDEA326B14A378C322133AC35EAB2D434FC216636778F663397B6D0B45634DFB1B63581B6C1344AA84CB179B9A828822DD232C2B556B4F2AC90B05D335AA90D30DAB5F73019AB71ABC538BDB5692419376530E3346DA711B8ADB744AEC9ABDAB02F387DB262348436A2AB7D2DCC3448AFC42A3C3562AD3E388A29AA311536633173AB9A36D7210D262B3063B223A920B975B22B34A2B0B8373FB497ACE0B3762CA131DF2E83B3DD32C599E830ADB5522084231CB013AB02B04FB7CF343B2A94B64CB52F24832B172D022D952F543539396AB53F346838071FFD31203A372DA9B655B11D39FE2376AC4C2A04A7A32A2CB5C4B532B6A7B772B1331ED935FEA34B385435FCB364378EB1B9346CB5992CE62A43B43BAA8039D531A3B45EB106B384B86B32C43361B3282D363361B34A34A72FA431D52C4624FBB5B3A62EB705358438FC2C2033B53672316E359D347A34943247B61FB51CB77F3879304B3619B13934E0B18934C7B8BF353BB5AE3305268A21043876313AB6C234EA28A82C5EAABBB858B816341EB76C2FE01A7A3352AE4829FBB564B471B0F72DC3B6DBAD0E38B82FDFA88DBA41B17738EF2889B285B8B731F42D16B50C36F79E43340FB456B099209E323B27332FEFADAEAC91309034553589AE64BB97B7C9B6033337AE61B4FFB29834DBAE1AB4EDB0EC328D3A94B0E5B65FAD60AEC5323B394B306C38BEAE44B8C3B2D9B68D38D3B61E381EAC5832C8B749B191B05D38822DE22CB33442BC0A38F234E2342E280BB1E136F3ADCCB87E37B02A38B994352B34E5B36A311DB1422DBFB19FAC7EA530B492B004B3832D7FB123B517B92EB92D32083496B68EB1142914B1072BB53084B496BA11B836B489B5C0AF2DB304B020311FB54CB18AB9022D6DB101B905B749B5F63445B1DA384113E0B6BC278933263777300BB249B51B3190346E349F310329502B4C338BA50F3329381B362EB83BB602B7CF2B44B880B275AFC69FE0AA47AF2B29F63716AF75B40235452D0DB2B8B50C2BD7B44EB95EB79AB38EB115B14A3061B153B825ADD0344BB486B533B5C1352BB069342AB973A7EFB14B309234122EE8297C3429AD9837B7B4272D6F31E1B106B451B32037DBB5B53450B5AE355CAF09B42AB7C6AD17AD8F21CAA722B6B2AB322C93B487357E2D913643BADDA183A8B82140AD43B7E424443844B8B0B0C331622A7226E915EC35ABB23E34E82D1CB235B6F0B537B97737AAB59B2E0EA23FAFD62F3436A5B084AF48B88827B4ABE3341D364AA88332813C30360FB57EB43BAD16313433373489A139A9243158A511AEB6B7B3310536A9AFB2B224386AB2C733842C4236E8AF7431FB32EBB46F2CB1B17CB55134ACB66C36F3305C2CA6A9C4AEC1319CB6B335C02A86B2EF201CACD7B035B44B384B29E9B2EE36C12C35380E39E6333CAE40B01DADEF1FFEB31536572B5335C0B5E2345F244037D12F0034932353B85AA946B621B08F36A63676B333B9BAA97533E8AF0EB43CB67FB65739F3329EB7B0B66338B4B3D2B41BACA42E25B5C1A5629C7EA939B7D826CE3061321AB212B6DBB49234472D252FC03275330734CCB43B348B317B2BFB326F343420B2B53034342DCEAE073463B832347638CA1C9534403519AC3FA086336AA4C7B424B43C329634E5AE833302A20DB96034E3AC2F2EA4AC81AE2EBAF7B680B3BBB084AF6D3903B4CEB95BB5D3256D2EAFB383B5E4B5D7B4DAA51C389C33B6B076311C324EB34539A0AFECB5A2AD60AE8425F832832D472A88B7E50FA632092E5834C3360F31D5334C2BE4A84EB40AB542328BB6A43110B98936C5B6CD32123A7434B9B0D5B546B18338C829ECB636A88CB146B089344B34E9303332A0B89AA491B303AE32B4892B3B34A0B373B63D30C738D1B9F0B5D130D2B1DEB001B8F2ACD6AC22A8C0B439B79FB09637E5A032B27830F9BA1DB48E349D35D82A8AAD0D340F331EB44F3057342034132D75B59DAC75B143AA41274529022E4630F3B1F8B300AFFD2E9434C4308C3662AECDAC10A9C821EE3847B1BCAE4CAB912B92364F30FF324D34532FFF1BDEB7E22CDCB11EB83FACCBAF1732FBB4273042384E38C6AC48373C36572D912658AA91B275B433A85BB41AAC74A05933ADB4739ADEAEC1AF2D3699B3B2B224274132FC2E"> : tensor<16x3x3x8xf16>
  util.global private @__hoisted_tensor_6x16xf16 {stream.affinity.default = #hal.device.affinity<@__device_0>} = dense<[[-5.175780e-01, -4.809570e-01, 6.499020e-01, -5.302730e-01, 1.724850e-01, -2.543950e-01, -2.290040e-01, -5.947270e-01, -2.702640e-01, 2.353520e-01, -4.165040e-01, 1.785890e-01, 9.399410e-02, 6.054690e-01, -1.423340e-01, 3.789060e-01], [2.666020e-01, -8.599850e-02, -4.987790e-01, 4.528810e-01, -4.094240e-01, -1.419680e-01, 2.648930e-01, 3.347170e-01, -2.536620e-01, -9.597770e-03, -7.757570e-02, 3.544920e-01, 7.514640e-01, -5.488280e-01, 2.749020e-01, -8.574210e-01], [4.219060e-03, -3.325200e-01, 5.976560e-01, 4.989620e-02, -2.210690e-01, -1.497800e-01, -1.726070e-01, 5.648800e-02, -4.745480e-02, 1.967770e-01, 4.621580e-01, 2.104490e-01, -3.679200e-01, -4.870610e-01, -2.266850e-01, 3.159180e-01], [-1.005250e-01, -2.003170e-01, 4.147340e-02, -4.245610e-01, -3.417970e-01, 1.530760e-01, -9.094230e-02, -1.359860e-01, 9.527580e-02, -1.754150e-01, -2.059330e-01, -1.379390e-01, 1.807860e-01, 1.794430e-02, -3.583980e-01, -9.094230e-02], [1.944580e-01, 5.610350e-01, -3.427730e-01, 1.015630e-01, -7.763670e-02, 2.476810e-01, 1.348880e-01, 4.416500e-01, 1.558840e-01, -1.635740e-01, -1.616210e-01, 1.216430e-01, 1.184690e-01, 7.192380e-01, 5.029300e-01, -3.520510e-01], [1.050420e-01, -3.994140e-01, -4.965820e-01, 2.230220e-01, 1.655270e-01, -3.115230e-01, 4.931640e-01, -2.932130e-01, -3.503420e-01, 1.958010e-01, 6.628410e-02, -4.815670e-02, -2.012630e-02, 6.713870e-02, -4.187010e-02, -5.175780e-02]]> : tensor<6x16xf16>
  util.global private @__hoisted_tensor_16x6xf16 {stream.affinity.default = #hal.device.affinity<@__device_0>} = dense<[[-1.065060e-01, 8.489990e-02, 6.230460e-01, 2.084960e-01, 5.527340e-01, 4.599610e-01], [2.259520e-01, -3.356930e-02, -2.526860e-01, -3.334960e-01, 1.458740e-01, 1.405030e-01], [-5.239870e-02, 2.546390e-01, -1.813960e-01, 3.330080e-01, 1.200100e-02, -1.089480e-02], [-8.201590e-05, -2.957150e-02, 7.465820e-01, -4.833980e-01, 5.316160e-02, 3.732910e-01], [2.152100e-01, -9.063720e-02, 5.219730e-01, -3.205570e-01, -3.918460e-01, 1.704100e-01], [-4.362790e-01, -7.133780e-01, 2.648930e-01, 2.283940e-01, 2.197270e-01, -1.462400e-01], [5.487060e-02, -2.895510e-01, 5.205080e-01, 2.373050e-01, 2.226560e-01, -5.849610e-01], [2.421880e-01, 4.482420e-01, 3.649900e-01, 2.366940e-01, -2.870560e-04, -1.025390e-01], [1.805420e-01, 1.148070e-01, 7.092280e-02, -9.277340e-02, 5.043950e-01, -3.503420e-01], [-6.790160e-03, -1.740720e-01, 3.095700e-01, 4.291990e-01, 3.732910e-01, 2.265630e-01], [-4.208980e-01, 6.245120e-01, 1.550290e-01, -3.253170e-02, 6.450650e-03, -1.018680e-01], [1.271970e-01, 9.307860e-02, -1.080320e-01, -7.709960e-01, -1.053620e-02, 1.430660e-01], [1.578370e-01, -4.605100e-02, 1.359860e-01, 3.085940e-01, -1.411130e-01, 4.399410e-01], [-5.864260e-01, -3.784180e-01, -2.714840e-01, -7.333980e-01, -3.000490e-01, 3.745120e-01], [3.725590e-01, 2.920530e-02, 5.161130e-01, 7.183840e-02, -1.492920e-01, 7.250970e-02], [-4.113770e-02, 2.208250e-01, -4.509280e-01, 2.998050e-01, -1.378170e-01, 2.565920e-01]]> : tensor<16x6xf16>
  util.global private @__hoisted_tensor_16x16xf16 {stream.affinity.default = #hal.device.affinity<@__device_0>} = dense<"0x872DFFB36AB26432A23950BAF3320DAC7B332A340F24E0B4B5B67FB8DE3507AC30B155AD6EB6D92D5436773584B78B3656B397B8E7B5A4B44598F4B440B714AD9E38BEB275302426613A8EB8423527B6B0B16DA7A63B53B389B83A3607B4AAAC639F732789AA242D702F19341AB030B31BB5B1311DA350312B310C38F82B3933C6B52FB5FCADD7B59F3266B64025E6B94EB582AEF9AC4DB82C28AE34393253B2A3B1B2B50C32EC360DB113B8AE2BCB3288BA50293239E1334931B92F193585B40FB4D32F94B2F82C97B847331134B522502AC73733B562B440B514B0DBB4B1213FB2F5B671B7D1354AA55DAC152053A642336631A9B1E8B337B501B6BB3666B4D9B80CB491B3552E41B42231762F15363339D63A7C3691B5C3AFC12CF7387F32C735AEAAAB31E53261B07633243515AAE334E93718255606F2ADF2B1FF29E8AFFDAD6DB35FB780B4512EAEB538B2E2376835A8B2CB313EB2D0379FB14726A636F3B34336D9B3932CADADCCA6262AB6A5E2B42934EB323136A63673B62C363B361CB1FB340C372CB19EB6E7AEB43A892CD4B5DBACC5B4ABAF4F2726BAEB2ECA3694AB59AF403514B6FBB5ADB60BAA912FF5A64731FA33C430C3B326ADFE3506B5DEAC01B0EAAA2AB57AB6223A8A34D7B287A47F3299AEEB31E8B1E2AE83A664B0E3B97F1E062D9230C5B49C2E242C3FB849B9933095B4D034233998B19EB2309B"> : tensor<16x16xf16>
  flow.executable private @se$async_dispatch_0 {
    flow.executable.export public @se$async_dispatch_0_transpose_2x8x143_f16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @se$async_dispatch_0_transpose_2x8x143_f16(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x8x143xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x143x8xf16>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [2, 8, 143], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x8x143xf16>> -> tensor<2x8x143xf16>
        %1 = tensor.empty() : tensor<2x143x8xf16>
        %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%0 : tensor<2x8x143xf16>) outs(%1 : tensor<2x143x8xf16>) {
        ^bb0(%in: f16, %out: f16):
          linalg.yield %in : f16
        } -> tensor<2x143x8xf16>
        iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0, 0, 0], sizes = [2, 143, 8], strides = [1, 1, 1] : tensor<2x143x8xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x143x8xf16>>
        return
      }
    }
  }
  flow.executable private @se$async_dispatch_1 {
    flow.executable.export public @se$async_dispatch_1_conv_2x13x11x16x3x3x8_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @se$async_dispatch_1_conv_2x13x11x16x3x3x8_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x13x11x8xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x3x3x8xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x13x11x16xf16>>) {
        %cst = arith.constant 0.000000e+00 : f16
        %cst_0 = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 13, 11, 8], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x13x11x8xf16>> -> tensor<2x13x11x8xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [16, 3, 3, 8], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x3x3x8xf16>> -> tensor<16x3x3x8xf16>
        %2 = tensor.empty() : tensor<2x13x11x16xf16>
        %3 = tensor.empty() : tensor<2x13x11x16xf32>
        %4 = linalg.fill ins(%cst_0 : f32) outs(%3 : tensor<2x13x11x16xf32>) -> tensor<2x13x11x16xf32>
        %padded = tensor.pad %0 low[0, 1, 1, 0] high[0, 1, 1, 0] {
        ^bb0(%arg3: index, %arg4: index, %arg5: index, %arg6: index):
          tensor.yield %cst : f16
        } : tensor<2x13x11x8xf16> to tensor<2x15x13x8xf16>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded, %1 : tensor<2x15x13x8xf16>, tensor<16x3x3x8xf16>) outs(%4 : tensor<2x13x11x16xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_1: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_1 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<2x13x11x16xf32>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<2x13x11x16xf32>) outs(%2 : tensor<2x13x11x16xf16>) {
        ^bb0(%in: f32, %out: f16):
          %7 = arith.truncf %in : f32 to f16
          linalg.yield %7 : f16
        } -> tensor<2x13x11x16xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0, 0, 0], sizes = [2, 13, 11, 16], strides = [1, 1, 1, 1] : tensor<2x13x11x16xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x13x11x16xf16>>
        return
      }
    }
  }
  flow.executable private @se$async_dispatch_2 {
    flow.executable.export public @se$async_dispatch_2_reduction_2x16x143_f16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @se$async_dispatch_2_reduction_2x16x143_f16(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x143x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x16xf16>>) {
        %cst = arith.constant 0.000000e+00 : f16
        %cst_0 = arith.constant 1.430000e+02 : f16
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [2, 143, 16], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x143x16xf16>> -> tensor<2x143x16xf16>
        %1 = tensor.empty() : tensor<2x16xf16>
        %2 = linalg.fill ins(%cst : f16) outs(%1 : tensor<2x16xf16>) -> tensor<2x16xf16>
        %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0 : tensor<2x143x16xf16>) outs(%2 : tensor<2x16xf16>) {
        ^bb0(%in: f16, %out: f16):
          %5 = arith.addf %out, %in : f16
          linalg.yield %5 : f16
        } -> tensor<2x16xf16>
        %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<2x16xf16>) outs(%1 : tensor<2x16xf16>) {
        ^bb0(%in: f16, %out: f16):
          %5 = arith.divf %in, %cst_0 : f16
          linalg.yield %5 : f16
        } -> tensor<2x16xf16>
        iree_tensor_ext.dispatch.tensor.store %4, %arg1, offsets = [0, 0], sizes = [2, 16], strides = [1, 1] : tensor<2x16xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x16xf16>>
        return
      }
    }
  }
  flow.executable private @se$async_dispatch_3 {
    flow.executable.export public @se$async_dispatch_3_matmul_like_2x6x16_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @se$async_dispatch_3_matmul_like_2x6x16_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<6x16xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x6xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %cst_0 = arith.constant 0.000000e+00 : f16
        %cst_1 = arith.constant dense<[-5.688480e-01, -4.025880e-01, 1.832280e-01, -2.113040e-01, 1.635740e-01, 3.706050e-01]> : tensor<6xf16>
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [2, 16], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x16xf16>> -> tensor<2x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [6, 16], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<6x16xf16>> -> tensor<6x16xf16>
        %2 = tensor.empty() : tensor<2x6xf16>
        %3 = tensor.empty() : tensor<2x6xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x6xf32>) -> tensor<2x6xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0, %1 : tensor<2x16xf16>, tensor<6x16xf16>) outs(%4 : tensor<2x6xf32>) {
        ^bb0(%in: f16, %in_2: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_2 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<2x6xf32>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%5, %cst_1 : tensor<2x6xf32>, tensor<6xf16>) outs(%2 : tensor<2x6xf16>) {
        ^bb0(%in: f32, %in_2: f16, %out: f16):
          %7 = arith.extf %in_2 : f16 to f32
          %8 = arith.addf %in, %7 : f32
          %9 = arith.truncf %8 : f32 to f16
          %10 = arith.cmpf ugt, %9, %cst_0 : f16
          %11 = arith.select %10, %9, %cst_0 : f16
          linalg.yield %11 : f16
        } -> tensor<2x6xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0], sizes = [2, 6], strides = [1, 1] : tensor<2x6xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x6xf16>>
        return
      }
    }
  }
  flow.executable private @se$async_dispatch_4 {
    flow.executable.export public @se$async_dispatch_4_matmul_like_2x16x6_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @se$async_dispatch_4_matmul_like_2x16x6_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x6xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x6xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x16xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [2, 6], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x6xf16>> -> tensor<2x6xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [16, 6], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x6xf16>> -> tensor<16x6xf16>
        %2 = tensor.empty() : tensor<2x16xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<2x16xf32>) -> tensor<2x16xf32>
        %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0, %1 : tensor<2x6xf16>, tensor<16x6xf16>) outs(%3 : tensor<2x16xf32>) {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %5 = arith.extf %in : f16 to f32
          %6 = arith.extf %in_0 : f16 to f32
          %7 = arith.mulf %5, %6 : f32
          %8 = arith.addf %out, %7 : f32
          linalg.yield %8 : f32
        } -> tensor<2x16xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0], sizes = [2, 16], strides = [1, 1] : tensor<2x16xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x16xf32>>
        return
      }
    }
  }
  flow.executable private @se$async_dispatch_5 {
    flow.executable.export public @se$async_dispatch_5_elementwise_2x143x16_f16xf32xf16xf16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @se$async_dispatch_5_elementwise_2x143x16_f16xf32xf16xf16(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x143x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x16xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x143x16xf16>>) {
        %cst = arith.constant 1.000000e+00 : f16
        %cst_0 = arith.constant dense<[-4.624020e-01, -1.257320e-01, 2.342220e-02, 2.705080e-01, -3.652340e-01, 5.000000e-01, 1.447750e-01, -1.577150e-01, 3.652340e-01, 3.080750e-02, 3.474120e-01, 6.967770e-01, 2.305910e-01, -1.579590e-01, -1.276860e-01, 1.748050e-01]> : tensor<16xf16>
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [2, 143, 16], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x143x16xf16>> -> tensor<2x143x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [2, 16], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x16xf32>> -> tensor<2x16xf32>
        %2 = tensor.empty() : tensor<2x143x16xf16>
        %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%0, %1, %cst_0 : tensor<2x143x16xf16>, tensor<2x16xf32>, tensor<16xf16>) outs(%2 : tensor<2x143x16xf16>) {
        ^bb0(%in: f16, %in_1: f32, %in_2: f16, %out: f16):
          %4 = arith.extf %in_2 : f16 to f32
          %5 = arith.addf %in_1, %4 : f32
          %6 = arith.truncf %5 : f32 to f16
          %7 = arith.negf %6 : f16
          %8 = math.exp %7 : f16
          %9 = arith.addf %8, %cst : f16
          %10 = arith.divf %cst, %9 : f16
          %11 = arith.mulf %in, %10 : f16
          linalg.yield %11 : f16
        } -> tensor<2x143x16xf16>
        iree_tensor_ext.dispatch.tensor.store %3, %arg2, offsets = [0, 0, 0], sizes = [2, 143, 16], strides = [1, 1, 1] : tensor<2x143x16xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x143x16xf16>>
        return
      }
    }
  }
  flow.executable private @se$async_dispatch_6 {
    flow.executable.export public @se$async_dispatch_6_matmul_like_286x16x16_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @se$async_dispatch_6_matmul_like_286x16x16_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<286x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x16xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<286x16xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [286, 16], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<286x16xf16>> -> tensor<286x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [16, 16], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x16xf16>> -> tensor<16x16xf16>
        %2 = tensor.empty() : tensor<286x16xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<286x16xf32>) -> tensor<286x16xf32>
        %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0, %1 : tensor<286x16xf16>, tensor<16x16xf16>) outs(%3 : tensor<286x16xf32>) {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_0 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<286x16xf32>
        %5 = tensor.empty() : tensor<286x16xf16>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<286x16xf32>) outs(%5 : tensor<286x16xf16>) {
        ^bb0(%in: f32, %out: f16):
          %7 = arith.truncf %in : f32 to f16
          linalg.yield %7 : f16
        } -> tensor<286x16xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0], sizes = [286, 16], strides = [1, 1] : tensor<286x16xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<286x16xf16>>
        return
      }
    }
  }
  flow.executable private @se$async_dispatch_7 {
    flow.executable.export public @se$async_dispatch_7_transpose_2x143x16_f16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @se$async_dispatch_7_transpose_2x143x16_f16(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x143x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x16x143xf16>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [2, 143, 16], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x143x16xf16>> -> tensor<2x143x16xf16>
        %1 = tensor.empty() : tensor<2x16x143xf16>
        %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%0 : tensor<2x143x16xf16>) outs(%1 : tensor<2x16x143xf16>) {
        ^bb0(%in: f16, %out: f16):
          linalg.yield %in : f16
        } -> tensor<2x16x143xf16>
        iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0, 0, 0], sizes = [2, 16, 143], strides = [1, 1, 1] : tensor<2x16x143xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x16x143xf16>>
        return
      }
    }
  }
  util.func public @se$async(%arg0: !hal.buffer_view, %arg1: !hal.fence, %arg2: !hal.fence) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never, iree.abi.model = "coarse-fences", iree.abi.stub} {
    %__hoisted_tensor_16x3x3x8xf16 = util.global.load immutable @__hoisted_tensor_16x3x3x8xf16 : tensor<16x3x3x8xf16>
    %__hoisted_tensor_6x16xf16 = util.global.load immutable @__hoisted_tensor_6x16xf16 : tensor<6x16xf16>
    %__hoisted_tensor_16x6xf16 = util.global.load immutable @__hoisted_tensor_16x6xf16 : tensor<16x6xf16>
    %__hoisted_tensor_16x16xf16 = util.global.load immutable @__hoisted_tensor_16x16xf16 : tensor<16x16xf16>
    %0 = hal.tensor.import wait(%arg1) => %arg0 : !hal.buffer_view -> tensor<2x8x13x11xf16>
    %1 = flow.tensor.reshape %0 : tensor<2x8x13x11xf16> -> tensor<2x8x143xf16>
    %2 = flow.dispatch @se$async_dispatch_0::@se$async_dispatch_0_transpose_2x8x143_f16(%1) : (tensor<2x8x143xf16>) -> tensor<2x143x8xf16>
    %3 = flow.tensor.reshape %2 : tensor<2x143x8xf16> -> tensor<2x13x11x8xf16>
    %4 = util.optimization_barrier %3 : tensor<2x13x11x8xf16>
    %5 = util.optimization_barrier %__hoisted_tensor_16x3x3x8xf16 : tensor<16x3x3x8xf16>
    %6 = flow.dispatch @se$async_dispatch_1::@se$async_dispatch_1_conv_2x13x11x16x3x3x8_f16xf16xf32(%4, %5) : (tensor<2x13x11x8xf16>, tensor<16x3x3x8xf16>) -> tensor<2x13x11x16xf16>
    %7 = flow.tensor.reshape %6 : tensor<2x13x11x16xf16> -> tensor<2x143x16xf16>
    %8 = flow.dispatch @se$async_dispatch_2::@se$async_dispatch_2_reduction_2x16x143_f16(%7) : (tensor<2x143x16xf16>) -> tensor<2x16xf16>
    %9 = flow.tensor.reshape %__hoisted_tensor_6x16xf16 : tensor<6x16xf16> -> tensor<6x1x1x16xf16>
    %10 = util.optimization_barrier %9 : tensor<6x1x1x16xf16>
    %11 = flow.tensor.reshape %10 : tensor<6x1x1x16xf16> -> tensor<6x16xf16>
    %12 = flow.dispatch @se$async_dispatch_3::@se$async_dispatch_3_matmul_like_2x6x16_f16xf16xf32(%8, %11) : (tensor<2x16xf16>, tensor<6x16xf16>) -> tensor<2x6xf16>
    %13 = flow.tensor.reshape %__hoisted_tensor_16x6xf16 : tensor<16x6xf16> -> tensor<16x1x1x6xf16>
    %14 = util.optimization_barrier %13 : tensor<16x1x1x6xf16>
    %15 = flow.tensor.reshape %14 : tensor<16x1x1x6xf16> -> tensor<16x6xf16>
    %16 = flow.dispatch @se$async_dispatch_4::@se$async_dispatch_4_matmul_like_2x16x6_f16xf16xf32(%12, %15) : (tensor<2x6xf16>, tensor<16x6xf16>) -> tensor<2x16xf32>
    %17 = flow.dispatch @se$async_dispatch_5::@se$async_dispatch_5_elementwise_2x143x16_f16xf32xf16xf16(%7, %16) : (tensor<2x143x16xf16>, tensor<2x16xf32>) -> tensor<2x143x16xf16>
    %18 = flow.tensor.reshape %__hoisted_tensor_16x16xf16 : tensor<16x16xf16> -> tensor<16x1x1x16xf16>
    %19 = util.optimization_barrier %18 : tensor<16x1x1x16xf16>
    %20 = flow.tensor.reshape %19 : tensor<16x1x1x16xf16> -> tensor<16x16xf16>
    %21 = flow.tensor.reshape %17 : tensor<2x143x16xf16> -> tensor<286x16xf16>
    %22 = flow.dispatch @se$async_dispatch_6::@se$async_dispatch_6_matmul_like_286x16x16_f16xf16xf32(%21, %20) : (tensor<286x16xf16>, tensor<16x16xf16>) -> tensor<286x16xf16>
    %23 = flow.tensor.reshape %22 : tensor<286x16xf16> -> tensor<2x13x11x16xf16>
    %24 = util.optimization_barrier %23 : tensor<2x13x11x16xf16>
    %25 = flow.tensor.reshape %24 : tensor<2x13x11x16xf16> -> tensor<2x143x16xf16>
    %26 = flow.dispatch @se$async_dispatch_7::@se$async_dispatch_7_transpose_2x143x16_f16(%25) : (tensor<2x143x16xf16>) -> tensor<2x16x143xf16>
    %27 = flow.tensor.reshape %26 : tensor<2x16x143xf16> -> tensor<2x16x13x11xf16>
    %28 = hal.tensor.barrier join(%27 : tensor<2x16x13x11xf16>) => %arg2 : !hal.fence
    %29 = hal.tensor.export %28 : tensor<2x16x13x11xf16> -> !hal.buffer_view
    util.return %29 : !hal.buffer_view
  }
  util.func public @se(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub} {
    %0 = util.null : !hal.fence
    %c-1_i32 = arith.constant -1 : i32
    %c0 = arith.constant 0 : index
    %device_0 = hal.devices.get %c0 : !hal.device
    %fence = hal.fence.create device(%device_0 : !hal.device) flags("None") : !hal.fence
    %1 = util.call @se$async(%arg0, %0, %fence) : (!hal.buffer_view, !hal.fence, !hal.fence) -> !hal.buffer_view
    %status = hal.fence.await until([%fence]) timeout_millis(%c-1_i32) flags("None") : i32
    util.return %1 : !hal.buffer_view
  }
}