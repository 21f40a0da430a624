"""Whole networks for the end-to-end benchmark, and the weights both sides use.

- `resnet50()`: torchvision's ResNet-50 architecture, written out with the same module names
  (so `torchvision.models.resnet50(weights=None).load_state_dict(...)` takes its weights
  strictly; the device script checks that), for exporting where torchvision is absent.
- `mobilenet_v2()`: torchvision's MobileNetV2 (width 1.0) written out with its module names:
  inverted residuals of 1x1 expand, 3x3 depthwise and 1x1 project convs with BatchNorm and ReLU6.
- `resnext50_32x4d()`: torchvision's ResNeXt-50 32x4d: ResNet-50 with grouped 3x3 convs (32
  groups of 4, 8, 16, 32 channels in the four stages).
- `efficientnet_b0()`: torchvision's EfficientNet-B0 written out with its module names: MBConv
  blocks of 1x1 expand, 3x3/5x5 depthwise (stride 1 and 2) and 1x1 project convs with BatchNorm
  and SiLU, squeeze-excitation (1x1 convs on the pooled pixel, a sigmoid scale).
- `mobilenet_v3_large()`: torchvision's MobileNetV3-Large: inverted residuals with 3x3/5x5
  depthwise convs, hard-swish or ReLU, squeeze-excitation with a hard-sigmoid scale.
- `convnext_tiny()`: torchvision's ConvNeXt-T written out with its module names: a 4x4 stride-4
  stem, blocks of a 7x7 depthwise conv (with bias), LayerNorm and a Linear-GELU-Linear MLP in
  channels-last, a per-channel layer scale and the residual, 2x2 stride-2 downsampling convs
  after a LayerNorm (stochastic depth is the identity in eval mode).
- `vae_decoder()`: a VAE-decoder-like stack of 3x3 convs at 512 -> 256 channels, 64 -> 256 px
  (GroupNorm-free: conv + SiLU blocks with residual adds and nearest upsampling).
- `unet()`: a U-Net (Ronneberger et al.) at widths 32-256: double 3x3 conv blocks with
  BatchNorm and ReLU, 2x2 max pools down, 2x2 stride-2 transposed convs up (nn.ConvTranspose2d)
  concatenated with the encoder's skip, a 1x1 conv to 2 classes.
- `densenet121()`: torchvision's DenseNet-121 with its module names: dense blocks whose layers
  concatenate every earlier map of the block and run pre-activation BatchNorm + ReLU before a
  1x1 and a 3x3 conv; 1x1 + 2x2 average-pool transitions.
- `shufflenet_v2_x1_0()`: torchvision's ShuffleNetV2 x1.0 with its module names: channel split,
  1x1 -> 3x3 depthwise -> 1x1 branches, concatenation and a channel shuffle per unit.
- `r2plus1d_18()`: torchvision's R(2+1)D-18 video network with its module names: 3-D convs
  split into 1x3x3 spatial and 3x1x1 temporal halves (convc-conv3d runs them as 2-D convs).
- `csp_backbone()`: a YOLOv8-s style detection backbone and neck (C2f CSP blocks, SPPF max
  pools, nearest upsampling and concatenations), which convc-e2e also compiles once with dynamic
  H and W and serves at several resolutions.
- `synthetic_weights(shapes, seed)`: deterministic weights per state_dict key (numpy, so the
  compiling machine and the GPU machine build the same ones without shipping them):
  He-scaled conv/linear weights, BatchNorm near identity.
"""

from __future__ import annotations

import zlib

import numpy as np
import torch
from torch import nn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample=None, groups: int = 1,
                 base_width: int = 64):
        super().__init__()
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.relu(self.bn3(self.conv3(out)) + identity)


class ResNet50(nn.Module):
    """ResNet-50, or with groups and base_width ResNeXt-50 (32x4d: grouped 3x3 convs of 4, 8,
    16 and 32 channels per group in the four stages)."""

    def __init__(self, num_classes: int = 1000, groups: int = 1, base_width: int = 64):
        super().__init__()
        self.inplanes, self.groups, self.base_width = 64, groups, base_width
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._layer(64, 3)
        self.layer2 = self._layer(128, 4, 2)
        self.layer3 = self._layer(256, 6, 2)
        self.layer4 = self._layer(512, 3, 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(2048, num_classes)

    def _layer(self, planes: int, blocks: int, stride: int = 1):
        down = nn.Sequential(nn.Conv2d(self.inplanes, planes * 4, 1, stride, bias=False), nn.BatchNorm2d(planes * 4))
        g, w = self.groups, self.base_width
        layers = [Bottleneck(self.inplanes, planes, stride, down, g, w)]
        self.inplanes = planes * 4
        layers += [Bottleneck(self.inplanes, planes, groups=g, base_width=w) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet50() -> nn.Module:
    return ResNet50()


def resnext50_32x4d() -> nn.Module:
    return ResNet50(groups=32, base_width=4)


class _VaeBlock(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else None

    def forward(self, x):
        h = self.conv2(nn.functional.silu(self.conv1(nn.functional.silu(x))))
        return h + (x if self.skip is None else self.skip(x))


class VaeDecoder(nn.Module):
    """512 ch at 64 px -> 512 at 128 -> 256 at 256: the shape of a Stable Diffusion VAE decoder's
    upper half, without its GroupNorms (which would stay with IREE)."""

    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(4, 512, 3, padding=1)
        self.b64 = _VaeBlock(512, 512)
        self.up128 = nn.Conv2d(512, 512, 3, padding=1)
        self.b128 = _VaeBlock(512, 256)
        self.up256 = nn.Conv2d(256, 256, 3, padding=1)
        self.b256 = _VaeBlock(256, 256)
        self.conv_out = nn.Conv2d(256, 3, 3, padding=1)

    def forward(self, z):
        h = self.b64(self.conv_in(z))
        h = self.b128(self.up128(nn.functional.interpolate(h, scale_factor=2.0, mode="nearest")))
        h = self.b256(self.up256(nn.functional.interpolate(h, scale_factor=2.0, mode="nearest")))
        return self.conv_out(nn.functional.silu(h))


def vae_decoder() -> nn.Module:
    return VaeDecoder()


def _conv_bn(inp: int, oup: int, k: int = 3, stride: int = 1, groups: int = 1, act=nn.ReLU6,
             eps: float = 1e-5) -> nn.Sequential:
    """torchvision's Conv2dNormActivation: conv (no bias), BatchNorm, the activation (none if
    act is None) as keys 0, 1, 2."""
    layers = [nn.Conv2d(inp, oup, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(oup, eps=eps)]
    return nn.Sequential(*layers, *([act(inplace=True)] if act else []))


class InvertedResidual(nn.Module):
    def __init__(self, inp: int, oup: int, stride: int, expand: int):
        super().__init__()
        hidden = inp * expand
        self.use_res = stride == 1 and inp == oup
        layers = [_conv_bn(inp, hidden, 1)] if expand != 1 else []
        layers += [_conv_bn(hidden, hidden, 3, stride, groups=hidden),
                   nn.Conv2d(hidden, oup, 1, bias=False), nn.BatchNorm2d(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2(nn.Module):
    SETTING = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        features = [_conv_bn(3, 32, 3, 2)]
        inp = 32
        for t, c, n, s in self.SETTING:
            for i in range(n):
                features.append(InvertedResidual(inp, c, s if i == 0 else 1, t))
                inp = c
        features.append(_conv_bn(inp, 1280, 1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


def mobilenet_v2() -> nn.Module:
    return MobileNetV2()


class SqueezeExcitation(nn.Module):
    """x * sigmoid(fc2(silu(fc1(mean over H, W)))): 1x1 convs on one pixel (IREE's matmuls)."""

    def __init__(self, channels: int, squeeze: int):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)
        self.activation = nn.SiLU(inplace=True)
        self.scale_activation = nn.Sigmoid()

    def forward(self, x):
        return x * self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))


class MBConv(nn.Module):
    def __init__(self, expand: int, k: int, stride: int, inp: int, oup: int):
        super().__init__()
        hidden = inp * expand
        self.use_res = stride == 1 and inp == oup
        layers = [_conv_bn(inp, hidden, 1, act=nn.SiLU)] if hidden != inp else []
        layers += [_conv_bn(hidden, hidden, k, stride, groups=hidden, act=nn.SiLU),
                   SqueezeExcitation(hidden, max(1, inp // 4)),
                   _conv_bn(hidden, oup, 1, act=None)]
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.block(x) if self.use_res else self.block(x)


class EfficientNetB0(nn.Module):
    # (expand ratio, kernel, stride, input channels, output channels, blocks) per stage
    SETTING = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
               (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1)]

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        features = [_conv_bn(3, 32, 3, 2, act=nn.SiLU)]
        for t, k, s, inp, oup, n in self.SETTING:
            features.append(nn.Sequential(*[MBConv(t, k, s if i == 0 else 1, inp if i == 0 else oup, oup)
                                            for i in range(n)]))
        features.append(_conv_bn(320, 1280, 1, act=nn.SiLU))
        self.features = nn.Sequential(*features)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def efficientnet_b0() -> nn.Module:
    return EfficientNetB0()


def _make_divisible(v: float, divisor: int = 8) -> int:
    """torchvision's channel rounding: to a multiple of divisor, never more than 10% down."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def _conv_bn_v3(inp: int, oup: int, k: int, stride: int = 1, groups: int = 1, act=None) -> nn.Sequential:
    """MobileNetV3's Conv2dNormActivation (BatchNorm eps 1e-3, no activation by default)."""
    return _conv_bn(inp, oup, k, stride, groups, act, eps=0.001)


class SqueezeExcitationV3(SqueezeExcitation):
    """torchvision's SqueezeExcitation as MobileNetV3 uses it: ReLU inside, a hard sigmoid scale."""

    def __init__(self, channels: int, squeeze: int):
        super().__init__(channels, squeeze)
        self.activation = nn.ReLU(inplace=True)
        self.scale_activation = nn.Hardsigmoid()


class InvertedResidualV3(nn.Module):
    def __init__(self, inp: int, k: int, hidden: int, oup: int, se: bool, hs: bool, stride: int):
        super().__init__()
        act = nn.Hardswish if hs else nn.ReLU
        self.use_res = stride == 1 and inp == oup
        layers = [_conv_bn_v3(inp, hidden, 1, act=act)] if hidden != inp else []
        layers.append(_conv_bn_v3(hidden, hidden, k, stride, groups=hidden, act=act))
        if se:
            layers.append(SqueezeExcitationV3(hidden, _make_divisible(hidden // 4, 8)))
        layers.append(_conv_bn_v3(hidden, oup, 1))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.block(x) if self.use_res else self.block(x)


class MobileNetV3Large(nn.Module):
    # (input channels, kernel, expanded, output channels, squeeze-excitation, hard swish, stride)
    SETTING = [(16, 3, 16, 16, False, False, 1), (16, 3, 64, 24, False, False, 2), (24, 3, 72, 24, False, False, 1),
               (24, 5, 72, 40, True, False, 2), (40, 5, 120, 40, True, False, 1), (40, 5, 120, 40, True, False, 1),
               (40, 3, 240, 80, False, True, 2), (80, 3, 200, 80, False, True, 1), (80, 3, 184, 80, False, True, 1),
               (80, 3, 184, 80, False, True, 1), (80, 3, 480, 112, True, True, 1), (112, 3, 672, 112, True, True, 1),
               (112, 5, 672, 160, True, True, 2), (160, 5, 960, 160, True, True, 1), (160, 5, 960, 160, True, True, 1)]

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        layers = [_conv_bn_v3(3, 16, 3, 2, act=nn.Hardswish)]
        layers += [InvertedResidualV3(*cfg) for cfg in self.SETTING]
        layers.append(_conv_bn_v3(160, 960, 1, act=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(960, 1280), nn.Hardswish(inplace=True), nn.Dropout(0.2),
                                        nn.Linear(1280, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def mobilenet_v3_large() -> nn.Module:
    return MobileNetV3Large()


class LayerNorm2d(nn.LayerNorm):
    """torchvision's: LayerNorm over the channels of an NCHW tensor."""

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = nn.functional.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class _Permute(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return torch.permute(x, self.dims)


class CNBlock(nn.Module):
    def __init__(self, dim: int, layer_scale: float = 1e-6):
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(dim, dim, 7, padding=3, groups=dim, bias=True), _Permute([0, 2, 3, 1]),
                                   nn.LayerNorm(dim, eps=1e-6), nn.Linear(dim, 4 * dim), nn.GELU(),
                                   nn.Linear(4 * dim, dim), _Permute([0, 3, 1, 2]))
        self.layer_scale = nn.Parameter(torch.ones(dim, 1, 1) * layer_scale)

    def forward(self, x):
        return self.layer_scale * self.block(x) + x


class ConvNeXtTiny(nn.Module):
    DEPTHS, DIMS = (3, 3, 9, 3), (96, 192, 384, 768)

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        layers = [nn.Sequential(nn.Conv2d(3, 96, 4, 4, bias=True), LayerNorm2d(96, eps=1e-6))]
        for i, (depth, dim) in enumerate(zip(self.DEPTHS, self.DIMS)):
            layers.append(nn.Sequential(*[CNBlock(dim) for _ in range(depth)]))
            if i < 3:
                layers.append(nn.Sequential(LayerNorm2d(dim, eps=1e-6), nn.Conv2d(dim, self.DIMS[i + 1], 2, 2)))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(LayerNorm2d(768, eps=1e-6), nn.Flatten(1), nn.Linear(768, num_classes))

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)))


def convnext_tiny() -> nn.Module:
    return ConvNeXtTiny()


def _double_conv(inp: int, out: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(inp, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU(inplace=True),
                         nn.Conv2d(out, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU(inplace=True))


class UNet(nn.Module):
    WIDTHS = (32, 64, 128, 256)

    def __init__(self, in_channels: int = 3, classes: int = 2):
        super().__init__()
        w = self.WIDTHS
        self.down = nn.ModuleList([_double_conv(in_channels, w[0])] + [_double_conv(a, b) for a, b in zip(w, w[1:])])
        self.pool = nn.MaxPool2d(2)
        self.up = nn.ModuleList([nn.ConvTranspose2d(b, a, 2, stride=2) for a, b in zip(w, w[1:])][::-1])
        self.merge = nn.ModuleList([_double_conv(2 * a, a) for a in w[:-1]][::-1])
        self.head = nn.Conv2d(w[0], classes, 1)

    def forward(self, x):
        skips = []
        for i, block in enumerate(self.down):
            x = block(x if i == 0 else self.pool(x))
            skips.append(x)
        x = skips.pop()
        for up, merge in zip(self.up, self.merge):
            x = merge(torch.cat([up(x), skips.pop()], dim=1))
        return self.head(x)


def unet() -> nn.Module:
    return UNet()


class _DenseLayer(nn.Module):
    """torchvision's DenseNet layer: pre-activation BatchNorm + ReLU before a 1x1 and a 3x3
    conv, over the concatenation of every earlier feature map of its block."""

    def __init__(self, inp: int, growth: int, bn_size: int):
        super().__init__()
        self.norm1, self.relu1 = nn.BatchNorm2d(inp), nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(inp, bn_size * growth, 1, bias=False)
        self.norm2, self.relu2 = nn.BatchNorm2d(bn_size * growth), nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth, growth, 3, padding=1, bias=False)

    def forward(self, features: list):
        x = self.conv1(self.relu1(self.norm1(torch.cat(features, 1))))
        return self.conv2(self.relu2(self.norm2(x)))


class _DenseBlock(nn.ModuleDict):
    def __init__(self, layers: int, inp: int, growth: int, bn_size: int = 4):
        super().__init__()
        for i in range(layers):
            self.add_module(f"denselayer{i + 1}", _DenseLayer(inp + i * growth, growth, bn_size))

    def forward(self, x):
        features = [x]
        for layer in self.values():
            features.append(layer(features))
        return torch.cat(features, 1)


class DenseNet121(nn.Module):
    """torchvision's DenseNet-121 (growth 32, blocks of 6/12/24/16 layers, 1x1 + 2x2 average-pool
    transitions halving the channels) with its module names."""

    def __init__(self, growth: int = 32, blocks=(6, 12, 24, 16), init: int = 64):
        super().__init__()
        self.features = nn.Sequential()
        self.features.add_module("conv0", nn.Conv2d(3, init, 7, 2, 3, bias=False))
        self.features.add_module("norm0", nn.BatchNorm2d(init))
        self.features.add_module("relu0", nn.ReLU(inplace=True))
        self.features.add_module("pool0", nn.MaxPool2d(3, 2, 1))
        ch = init
        for i, n in enumerate(blocks):
            self.features.add_module(f"denseblock{i + 1}", _DenseBlock(n, ch, growth))
            ch += n * growth
            if i != len(blocks) - 1:
                t = nn.Sequential()
                t.add_module("norm", nn.BatchNorm2d(ch))
                t.add_module("relu", nn.ReLU(inplace=True))
                t.add_module("conv", nn.Conv2d(ch, ch // 2, 1, bias=False))
                t.add_module("pool", nn.AvgPool2d(2, 2))
                self.features.add_module(f"transition{i + 1}", t)
                ch //= 2
        self.features.add_module("norm5", nn.BatchNorm2d(ch))
        self.classifier = nn.Linear(ch, 1000)

    def forward(self, x):
        x = nn.functional.relu(self.features(x))
        return self.classifier(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def densenet121() -> nn.Module:
    return DenseNet121()


def _channel_shuffle(x, groups: int):
    b, c, h, w = x.shape
    return x.view(b, groups, c // groups, h, w).transpose(1, 2).contiguous().view(b, c, h, w)


class ShuffleUnit(nn.Module):
    """torchvision's ShuffleNetV2 InvertedResidual: stride 1 splits the channels in two and
    runs one half through 1x1 -> 3x3 depthwise -> 1x1; stride 2 runs both branches on the whole
    input; the halves are concatenated and shuffled."""

    def __init__(self, inp: int, oup: int, stride: int):
        super().__init__()
        self.stride = stride
        bf = oup // 2
        if stride > 1:
            self.branch1 = nn.Sequential(nn.Conv2d(inp, inp, 3, stride, 1, bias=False, groups=inp), nn.BatchNorm2d(inp),
                                         nn.Conv2d(inp, bf, 1, bias=False), nn.BatchNorm2d(bf), nn.ReLU(inplace=True))
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(nn.Conv2d(inp if stride > 1 else bf, bf, 1, bias=False), nn.BatchNorm2d(bf),
                                     nn.ReLU(inplace=True), nn.Conv2d(bf, bf, 3, stride, 1, bias=False, groups=bf),
                                     nn.BatchNorm2d(bf), nn.Conv2d(bf, bf, 1, bias=False), nn.BatchNorm2d(bf),
                                     nn.ReLU(inplace=True))

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return _channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    """torchvision's ShuffleNetV2 x1.0 with its module names."""

    def __init__(self, repeats=(4, 8, 4), channels=(24, 116, 232, 464, 1024)):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, channels[0], 3, 2, 1, bias=False), nn.BatchNorm2d(channels[0]),
                                   nn.ReLU(inplace=True))
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        inp = channels[0]
        for name, n, out in zip(("stage2", "stage3", "stage4"), repeats, channels[1:]):
            setattr(self, name, nn.Sequential(ShuffleUnit(inp, out, 2), *[ShuffleUnit(out, out, 1) for _ in range(n - 1)]))
            inp = out
        self.conv5 = nn.Sequential(nn.Conv2d(inp, channels[-1], 1, bias=False), nn.BatchNorm2d(channels[-1]),
                                   nn.ReLU(inplace=True))
        self.fc = nn.Linear(channels[-1], 1000)

    def forward(self, x):
        x = self.stage4(self.stage3(self.stage2(self.maxpool(self.conv1(x)))))
        return self.fc(self.conv5(x).mean([2, 3]))


def shufflenet_v2_x1_0() -> nn.Module:
    return ShuffleNetV2()


class Conv2Plus1D(nn.Sequential):
    """torchvision's (2+1)D conv: a 1x3x3 spatial conv to `mid` channels, BatchNorm, ReLU, then a
    3x1x1 temporal conv (the stride split between them)."""

    def __init__(self, cin, cout, mid, stride=1):
        super().__init__(nn.Conv3d(cin, mid, (1, 3, 3), (1, stride, stride), (0, 1, 1), bias=False),
                         nn.BatchNorm3d(mid), nn.ReLU(inplace=True),
                         nn.Conv3d(mid, cout, (3, 1, 1), (stride, 1, 1), (1, 0, 0), bias=False))


class VideoBlock(nn.Module):
    """torchvision's video BasicBlock with Conv2Plus1D: two (2+1)D convs and the residual (a
    strided 1x1x1 conv + BatchNorm where the shape changes)."""

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        mid = cin * cout * 27 // (cin * 9 + 3 * cout)
        self.conv1 = nn.Sequential(Conv2Plus1D(cin, cout, mid, stride), nn.BatchNorm3d(cout), nn.ReLU(inplace=True))
        self.conv2 = nn.Sequential(Conv2Plus1D(cout, cout, mid), nn.BatchNorm3d(cout))
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv3d(cin, cout, 1, stride, bias=False), nn.BatchNorm3d(cout))

    def forward(self, x):
        res = x if self.downsample is None else self.downsample(x)
        return self.relu(self.conv2(self.conv1(x)) + res)


class R2Plus1D(nn.Module):
    """torchvision's r2plus1d_18 (torchvision.models.video) with its module names: the (2+1)D
    stem, four stages of two blocks, global average pool and a 400-way classifier."""

    def __init__(self, num_classes=400):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv3d(3, 45, (1, 7, 7), (1, 2, 2), (0, 3, 3), bias=False), nn.BatchNorm3d(45),
                                  nn.ReLU(inplace=True), nn.Conv3d(45, 64, (3, 1, 1), 1, (1, 0, 0), bias=False),
                                  nn.BatchNorm3d(64), nn.ReLU(inplace=True))
        cin = 64
        for i, cout in enumerate((64, 128, 256, 512)):
            stride = 1 if i == 0 else 2
            setattr(self, f"layer{i + 1}", nn.Sequential(VideoBlock(cin, cout, stride), VideoBlock(cout, cout)))
            cin = cout
        self.avgpool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.layer4(self.layer3(self.layer2(self.layer1(self.stem(x)))))
        return self.fc(self.avgpool(x).flatten(1))


def r2plus1d_18() -> nn.Module:
    return R2Plus1D()


class _BasicConv(nn.Module):
    """Inception's conv (no bias) + BatchNorm (eps 1e-3) + ReLU, keys conv/bn."""

    def __init__(self, inp: int, oup: int, k, stride: int = 1, padding=0):
        super().__init__()
        self.conv = nn.Conv2d(inp, oup, k, stride, padding, bias=False)
        self.bn = nn.BatchNorm2d(oup, eps=0.001)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def _avg3(x):
    """Inception's pooling branch: 3x3 average, stride 1, zero padding counted."""
    return nn.functional.avg_pool2d(x, 3, 1, 1)


class _InceptionA(nn.Module):
    def __init__(self, inp: int, pool: int):
        super().__init__()
        self.branch1x1 = _BasicConv(inp, 64, 1)
        self.branch5x5_1, self.branch5x5_2 = _BasicConv(inp, 48, 1), _BasicConv(48, 64, 5, padding=2)
        self.branch3x3dbl_1 = _BasicConv(inp, 64, 1)
        self.branch3x3dbl_2 = _BasicConv(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _BasicConv(96, 96, 3, padding=1)
        self.branch_pool = _BasicConv(inp, pool, 1)

    def forward(self, x):
        return torch.cat([self.branch1x1(x), self.branch5x5_2(self.branch5x5_1(x)),
                          self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x))),
                          self.branch_pool(_avg3(x))], 1)


class _InceptionB(nn.Module):
    def __init__(self, inp: int):
        super().__init__()
        self.branch3x3 = _BasicConv(inp, 384, 3, stride=2)
        self.branch3x3dbl_1 = _BasicConv(inp, 64, 1)
        self.branch3x3dbl_2 = _BasicConv(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _BasicConv(96, 96, 3, stride=2)

    def forward(self, x):
        return torch.cat([self.branch3x3(x), self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x))),
                          nn.functional.max_pool2d(x, 3, 2)], 1)


class _InceptionC(nn.Module):
    """The asymmetric-filter block: 7x7 windows factored into 1x7 and 7x1 convs."""

    def __init__(self, inp: int, c7: int):
        super().__init__()
        row, col = dict(k=(1, 7), padding=(0, 3)), dict(k=(7, 1), padding=(3, 0))
        self.branch1x1 = _BasicConv(inp, 192, 1)
        self.branch7x7_1, self.branch7x7_2 = _BasicConv(inp, c7, 1), _BasicConv(c7, c7, **row)
        self.branch7x7_3 = _BasicConv(c7, 192, **col)
        self.branch7x7dbl_1, self.branch7x7dbl_2 = _BasicConv(inp, c7, 1), _BasicConv(c7, c7, **col)
        self.branch7x7dbl_3, self.branch7x7dbl_4 = _BasicConv(c7, c7, **row), _BasicConv(c7, c7, **col)
        self.branch7x7dbl_5 = _BasicConv(c7, 192, **row)
        self.branch_pool = _BasicConv(inp, 192, 1)

    def forward(self, x):
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        d = x
        for i in range(1, 6):
            d = getattr(self, f"branch7x7dbl_{i}")(d)
        return torch.cat([self.branch1x1(x), b7, d, self.branch_pool(_avg3(x))], 1)


class _InceptionD(nn.Module):
    def __init__(self, inp: int):
        super().__init__()
        self.branch3x3_1, self.branch3x3_2 = _BasicConv(inp, 192, 1), _BasicConv(192, 320, 3, stride=2)
        self.branch7x7x3_1 = _BasicConv(inp, 192, 1)
        self.branch7x7x3_2 = _BasicConv(192, 192, (1, 7), padding=(0, 3))
        self.branch7x7x3_3 = _BasicConv(192, 192, (7, 1), padding=(3, 0))
        self.branch7x7x3_4 = _BasicConv(192, 192, 3, stride=2)

    def forward(self, x):
        b7 = x
        for i in range(1, 5):
            b7 = getattr(self, f"branch7x7x3_{i}")(b7)
        return torch.cat([self.branch3x3_2(self.branch3x3_1(x)), b7, nn.functional.max_pool2d(x, 3, 2)], 1)


class _InceptionE(nn.Module):
    def __init__(self, inp: int):
        super().__init__()
        self.branch1x1 = _BasicConv(inp, 320, 1)
        self.branch3x3_1 = _BasicConv(inp, 384, 1)
        self.branch3x3_2a = _BasicConv(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3_2b = _BasicConv(384, 384, (3, 1), padding=(1, 0))
        self.branch3x3dbl_1, self.branch3x3dbl_2 = _BasicConv(inp, 448, 1), _BasicConv(448, 384, 3, padding=1)
        self.branch3x3dbl_3a = _BasicConv(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = _BasicConv(384, 384, (3, 1), padding=(1, 0))
        self.branch_pool = _BasicConv(inp, 192, 1)

    def forward(self, x):
        a = self.branch3x3_1(x)
        d = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        return torch.cat([self.branch1x1(x), self.branch3x3_2a(a), self.branch3x3_2b(a),
                          self.branch3x3dbl_3a(d), self.branch3x3dbl_3b(d), self.branch_pool(_avg3(x))], 1)


class InceptionV3(nn.Module):
    """torchvision's Inception v3 in eval mode (no auxiliary head, no input transform): stems
    without padding, concatenations of four to six branches, factored 1x7/7x1 and 1x3/3x1 convs,
    average-pool branches. Parameter names as torchvision's."""

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        self.Conv2d_1a_3x3 = _BasicConv(3, 32, 3, stride=2)
        self.Conv2d_2a_3x3 = _BasicConv(32, 32, 3)
        self.Conv2d_2b_3x3 = _BasicConv(32, 64, 3, padding=1)
        self.Conv2d_3b_1x1 = _BasicConv(64, 80, 1)
        self.Conv2d_4a_3x3 = _BasicConv(80, 192, 3)
        self.Mixed_5b, self.Mixed_5c, self.Mixed_5d = _InceptionA(192, 32), _InceptionA(256, 64), _InceptionA(288, 64)
        self.Mixed_6a = _InceptionB(288)
        self.Mixed_6b, self.Mixed_6c = _InceptionC(768, 128), _InceptionC(768, 160)
        self.Mixed_6d, self.Mixed_6e = _InceptionC(768, 160), _InceptionC(768, 192)
        self.Mixed_7a = _InceptionD(768)
        self.Mixed_7b, self.Mixed_7c = _InceptionE(1280), _InceptionE(2048)
        self.fc = nn.Linear(2048, num_classes)

    def forward(self, x):
        x = self.Conv2d_2b_3x3(self.Conv2d_2a_3x3(self.Conv2d_1a_3x3(x)))
        x = self.Conv2d_4a_3x3(self.Conv2d_3b_1x1(nn.functional.max_pool2d(x, 3, 2)))
        x = nn.functional.max_pool2d(x, 3, 2)
        for name in ("5b", "5c", "5d", "6a", "6b", "6c", "6d", "6e", "7a", "7b", "7c"):
            x = getattr(self, f"Mixed_{name}")(x)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def inception_v3() -> nn.Module:
    return InceptionV3()


class FusedMBConv(nn.Module):
    """EfficientNetV2's fused block: a full kxk conv expands (or, at ratio 1, is the block),
    a 1x1 projects; the residual where shape allows."""

    def __init__(self, expand: int, k: int, stride: int, inp: int, oup: int):
        super().__init__()
        hidden = inp * expand
        self.use_res = stride == 1 and inp == oup
        if hidden != inp:
            layers = [_conv_bn(inp, hidden, k, stride, act=nn.SiLU, eps=1e-3), _conv_bn(hidden, oup, 1, act=None, eps=1e-3)]
        else:
            layers = [_conv_bn(inp, oup, k, stride, act=nn.SiLU, eps=1e-3)]
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.block(x) if self.use_res else self.block(x)


class _MBConvV2(MBConv):
    """MBConv with EfficientNetV2's BatchNorm eps (1e-3)."""

    def __init__(self, expand: int, k: int, stride: int, inp: int, oup: int):
        nn.Module.__init__(self)
        hidden = inp * expand
        self.use_res = stride == 1 and inp == oup
        self.block = nn.Sequential(_conv_bn(inp, hidden, 1, act=nn.SiLU, eps=1e-3),
                                   _conv_bn(hidden, hidden, k, stride, groups=hidden, act=nn.SiLU, eps=1e-3),
                                   SqueezeExcitation(hidden, max(1, inp // 4)),
                                   _conv_bn(hidden, oup, 1, act=None, eps=1e-3))


class EfficientNetV2S(nn.Module):
    # (block, expand ratio, kernel, stride, input channels, output channels, blocks) per stage
    SETTING = [(FusedMBConv, 1, 3, 1, 24, 24, 2), (FusedMBConv, 4, 3, 2, 24, 48, 4), (FusedMBConv, 4, 3, 2, 48, 64, 4),
               (_MBConvV2, 4, 3, 2, 64, 128, 6), (_MBConvV2, 6, 3, 1, 128, 160, 9), (_MBConvV2, 6, 3, 2, 160, 256, 15)]

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        features = [_conv_bn(3, 24, 3, 2, act=nn.SiLU, eps=1e-3)]
        for block, t, k, s, inp, oup, n in self.SETTING:
            features.append(nn.Sequential(*[block(t, k, s if i == 0 else 1, inp if i == 0 else oup, oup)
                                            for i in range(n)]))
        features.append(_conv_bn(256, 1280, 1, act=nn.SiLU, eps=1e-3))
        self.features = nn.Sequential(*features)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def efficientnet_v2_s() -> nn.Module:
    return EfficientNetV2S()


class _CBS(nn.Module):
    """YOLO's Conv: conv (no bias) + BatchNorm + SiLU, padding k // 2."""

    def __init__(self, inp: int, oup: int, k: int = 1, stride: int = 1):
        super().__init__()
        self.conv = nn.Conv2d(inp, oup, k, stride, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(oup, eps=1e-3)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class _CspBottleneck(nn.Module):
    def __init__(self, c: int, shortcut: bool = True):
        super().__init__()
        self.cv1, self.cv2 = _CBS(c, c, 3), _CBS(c, c, 3)
        self.add = shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C2f(nn.Module):
    """YOLOv8's CSP block: a 1x1 conv split in two halves, n bottlenecks on the second, every
    intermediate map concatenated, a 1x1 conv over the concatenation."""

    def __init__(self, inp: int, oup: int, n: int, shortcut: bool = True):
        super().__init__()
        self.c = oup // 2
        self.cv1 = _CBS(inp, 2 * self.c)
        self.cv2 = _CBS((2 + n) * self.c, oup)
        self.m = nn.ModuleList(_CspBottleneck(self.c, shortcut) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        for m in self.m:
            y.append(m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    """Spatial pyramid pooling (fast): three chained 5x5 stride-1 max pools, concatenated."""

    def __init__(self, inp: int, oup: int):
        super().__init__()
        self.cv1 = _CBS(inp, inp // 2)
        self.cv2 = _CBS(inp // 2 * 4, oup)
        self.m = nn.MaxPool2d(5, 1, 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat((x, y1, y2, self.m(y2)), 1))


class CspBackbone(nn.Module):
    """A YOLOv8-s style detection backbone and top-down neck (widths 32-512): a 3x3 stride-2 stem,
    four stages of a 3x3 stride-2 conv and a C2f block, SPPF, then nearest 2x upsampling and C2f
    fusion back to stride 16 and 8; returns the stride-8 map (128 channels). Any H and W that are
    multiples of 32 give the same shapes PyTorch's YOLO models see at that resolution."""

    def __init__(self):
        super().__init__()
        self.stem = _CBS(3, 32, 3, 2)
        self.s1 = nn.Sequential(_CBS(32, 64, 3, 2), C2f(64, 64, 1))
        self.s2 = nn.Sequential(_CBS(64, 128, 3, 2), C2f(128, 128, 2))
        self.s3 = nn.Sequential(_CBS(128, 256, 3, 2), C2f(256, 256, 2))
        self.s4 = nn.Sequential(_CBS(256, 512, 3, 2), C2f(512, 512, 1), SPPF(512, 512))
        self.up = nn.Upsample(scale_factor=2.0, mode="nearest")
        self.n4 = C2f(512 + 256, 256, 1, shortcut=False)
        self.n3 = C2f(256 + 128, 128, 1, shortcut=False)

    def forward(self, x):
        p3 = self.s2(self.s1(self.stem(x)))
        p4 = self.s3(p3)
        p5 = self.s4(p4)
        y4 = self.n4(torch.cat((self.up(p5), p4), 1))
        return self.n3(torch.cat((self.up(y4), p3), 1))


def csp_backbone() -> nn.Module:
    return CspBackbone()


MODELS = {"resnet50": resnet50, "vae_decoder": vae_decoder, "mobilenet_v2": mobilenet_v2,
          "convnext_tiny": convnext_tiny, "resnext50_32x4d": resnext50_32x4d, "efficientnet_b0": efficientnet_b0,
          "mobilenet_v3_large": mobilenet_v3_large, "unet": unet, "densenet121": densenet121,
          "shufflenet_v2_x1_0": shufflenet_v2_x1_0, "r2plus1d_18": r2plus1d_18, "inception_v3": inception_v3,
          "efficientnet_v2_s": efficientnet_v2_s, "csp_backbone": csp_backbone}


def synthetic_weights(shapes: dict, seed: int = 0) -> dict:
    """{state_dict key: float32 array}, the same on every machine for the same key and seed."""
    out = {}
    for key, shape in shapes.items():
        rng = np.random.default_rng([seed, zlib.crc32(key.encode())])
        leaf = key.rsplit(".", 1)[-1]
        if leaf == "weight" and len(shape) >= 2:
            fan_in = int(np.prod(shape[1:]))
            w = rng.standard_normal(shape) * np.sqrt(1.0 / fan_in)
        elif leaf == "layer_scale":                 # ConvNeXt's per-channel residual-branch scale
            w = rng.uniform(0.1, 0.5, shape)
        elif leaf == "running_var":
            w = rng.uniform(0.8, 1.2, shape)
        elif leaf == "weight":                      # BatchNorm scale
            w = rng.uniform(0.8, 1.2, shape)
        elif leaf == "num_batches_tracked":
            w = np.zeros(shape)
        else:                                       # biases, BatchNorm shift and mean
            w = rng.uniform(-0.1, 0.1, shape)
        out[key] = np.asarray(w, np.float32)
    return out


def load_synthetic(model: nn.Module, seed: int = 0) -> nn.Module:
    """model with its parameters and buffers replaced by synthetic_weights (strictly)."""
    sd = model.state_dict()
    w = synthetic_weights({k: tuple(v.shape) for k, v in sd.items()}, seed)
    model.load_state_dict({k: torch.from_numpy(w[k]).to(sd[k].dtype) for k in sd}, strict=True)
    return model
