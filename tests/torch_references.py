"""Plain-PyTorch re-statements of torchvision's ResNet and VGG and timm's VisionTransformer.

timm and torchvision cannot be imported in the CI environment (torchvision's C++ ops
must match the torch build), so the converters are tested against these. They keep the
real class names, module names (hence `state_dict()` names), the attributes that
`keras_paperzoo.convert` reads (`BasicBlock.conv1.stride`, `VisionTransformer.patch_embed
.patch_size`, `global_pool`, `cls_token`, `fc_norm`, `blocks[i].attn.num_heads`, ...) and
the forward passes (torchvision 0.29, timm 1.0), at any width so tests stay tiny.

Import after `pytest.importorskip("torch")`. The functions at the end (`resnet_features`,
`vgg_fc7`, `vit_pre_logits`, `randomize`) work on these and on the real models alike.
"""

import torch
from torch import nn

# --- torchvision.models.resnet -----------------------------------------------------------


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + identity)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)  # stride in the 3x3: "v1.5"
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.relu(self.bn3(self.conv3(out)) + identity)


class ResNet(nn.Module):
    """torchvision's ResNet(block, layers, num_classes), plus `widths` / `stem_width` for tiny nets."""

    def __init__(self, block, layers, num_classes=1000, widths=(64, 128, 256, 512), stem_width=64):
        super().__init__()
        self.inplanes = stem_width
        self.conv1 = nn.Conv2d(3, stem_width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(stem_width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        for i, (planes, blocks) in enumerate(zip(widths, layers), start=1):
            setattr(self, f"layer{i}", self._make_layer(block, planes, blocks, 1 if i == 1 else 2))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(self.inplanes, num_classes)

    def _make_layer(self, block, planes, blocks, stride):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        return self.fc(torch.flatten(self.avgpool(resnet_features(self, x)), 1))


# --- torchvision.models.vgg --------------------------------------------------------------


class VGG(nn.Module):
    """torchvision's VGG(features, num_classes, dropout=0.5), plus `fc_units` for tiny nets."""

    def __init__(self, features, num_classes=1000, dropout=0.5, fc_units=(4096, 4096)):
        super().__init__()
        channels = [m.out_channels for m in features if isinstance(m, nn.Conv2d)][-1]
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(channels * 7 * 7, fc_units[0]),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(fc_units[0], fc_units[1]),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(fc_units[1], num_classes),
        )

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def make_vgg_layers(convs_per_stage, filters, batch_norm=False):
    """torchvision's `make_layers`: per stage, (conv 3x3 [+ BN] + ReLU) x n, then 2x2 max pooling."""
    layers, channels = [], 3
    for count, width in zip(convs_per_stage, filters):
        for _ in range(count):
            layers.append(nn.Conv2d(channels, width, kernel_size=3, padding=1))
            if batch_norm:
                layers.append(nn.BatchNorm2d(width))
            layers.append(nn.ReLU(inplace=True))
            channels = width
        layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
    return nn.Sequential(*layers)


# --- timm.models.vision_transformer ------------------------------------------------------


class PatchEmbed(nn.Module):
    def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768):
        super().__init__()
        self.img_size = _pair(img_size)
        self.patch_size = _pair(patch_size)
        self.grid_size = (self.img_size[0] // self.patch_size[0], self.img_size[1] // self.patch_size[1])
        self.num_patches = self.grid_size[0] * self.grid_size[1]
        self.dynamic_img_pad = False
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=self.patch_size, stride=self.patch_size)
        self.norm = nn.Identity()

    def forward(self, x):
        return self.norm(self.proj(x).flatten(2).transpose(1, 2))  # (B, N, D), raster order


class Attention(nn.Module):
    def __init__(self, dim, num_heads=8, qkv_bias=True, qk_norm=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim**-0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.q_norm = nn.LayerNorm(self.head_dim, eps=1e-6) if qk_norm else nn.Identity()
        self.k_norm = nn.LayerNorm(self.head_dim, eps=1e-6) if qk_norm else nn.Identity()
        self.attn_drop = nn.Dropout(0.0)
        self.norm = nn.Identity()
        self.gate = None
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(0.0)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)  # (B, heads, N, head_dim)
        q, k = self.q_norm(q), self.k_norm(k)
        attn = ((q * self.scale) @ k.transpose(-2, -1)).softmax(dim=-1)
        x = (self.attn_drop(attn) @ v).transpose(1, 2).reshape(b, n, c)
        return self.proj_drop(self.proj(self.norm(x)))


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features, act_layer=nn.GELU):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = act_layer()
        self.drop1 = nn.Dropout(0.0)
        self.norm = nn.Identity()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop2 = nn.Dropout(0.0)

    def forward(self, x):
        return self.drop2(self.fc2(self.norm(self.drop1(self.act(self.fc1(x))))))


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x * self.gamma


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4.0, qkv_bias=True, qk_norm=False, init_values=None,
                 act_layer=nn.GELU):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, num_heads, qkv_bias=qkv_bias, qk_norm=qk_norm)
        self.ls1 = LayerScale(dim, init_values) if init_values else nn.Identity()
        self.drop_path1 = nn.Identity()
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), act_layer=act_layer)
        self.ls2 = LayerScale(dim, init_values) if init_values else nn.Identity()
        self.drop_path2 = nn.Identity()

    def forward(self, x):
        x = x + self.drop_path1(self.ls1(self.attn(self.norm1(x))))
        return x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))


class VisionTransformer(nn.Module):
    """timm's VisionTransformer with the arguments the converter distinguishes (learned 1-D positions)."""

    def __init__(self, img_size=224, patch_size=16, in_chans=3, num_classes=1000, global_pool="token",
                 embed_dim=768, depth=12, num_heads=12, mlp_ratio=4.0, qkv_bias=True, qk_norm=False,
                 init_values=None, class_token=True, reg_tokens=0, fc_norm=None, act_layer=nn.GELU):
        super().__init__()
        use_fc_norm = global_pool in ("avg", "avgmax", "max") if fc_norm is None else fc_norm
        self.num_classes = num_classes
        self.global_pool = global_pool
        self.num_features = self.embed_dim = embed_dim
        self.num_prefix_tokens = (1 if class_token else 0) + reg_tokens
        self.has_class_token = class_token
        self.no_embed_class = False
        self.pool_include_prefix = False
        self.dynamic_img_size = False
        self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, embed_dim) * 0.02) if class_token else None
        self.reg_token = nn.Parameter(torch.randn(1, reg_tokens, embed_dim) * 0.02) if reg_tokens else None
        tokens = self.patch_embed.num_patches + self.num_prefix_tokens
        self.pos_embed = nn.Parameter(torch.randn(1, tokens, embed_dim) * 0.02)
        self.pos_drop = nn.Dropout(0.0)
        self.patch_drop = nn.Identity()
        self.norm_pre = nn.Identity()
        self.blocks = nn.Sequential(*[
            Block(embed_dim, num_heads, mlp_ratio, qkv_bias, qk_norm, init_values, act_layer) for _ in range(depth)
        ])
        self.norm = nn.Identity() if use_fc_norm else nn.LayerNorm(embed_dim, eps=1e-6)
        self.attn_pool = None
        self.fc_norm = nn.LayerNorm(embed_dim, eps=1e-6) if use_fc_norm else nn.Identity()
        self.head_drop = nn.Dropout(0.0)
        self.head = nn.Linear(embed_dim, num_classes) if num_classes > 0 else nn.Identity()

    def forward_features(self, x):
        x = self.patch_embed(x)
        prefix = [t.expand(x.shape[0], -1, -1) for t in (self.cls_token, self.reg_token) if t is not None]
        x = self.pos_drop(torch.cat(prefix + [x], dim=1) + self.pos_embed)
        return self.norm(self.blocks(self.norm_pre(x)))

    def forward_head(self, x, pre_logits=False):
        x = x[:, 0] if self.global_pool == "token" else x[:, self.num_prefix_tokens:].mean(dim=1)
        x = self.head_drop(self.fc_norm(x))
        return x if pre_logits else self.head(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


# --- helpers for these and the real models -----------------------------------------------


def resnet_features(model, x):
    """A torchvision / timm ResNet's `layer4` output (everything before the pooling and `fc`)."""
    x = model.conv1(x)
    x = model.maxpool((model.relu if hasattr(model, "relu") else model.act1)(model.bn1(x)))
    stage = 1
    while hasattr(model, f"layer{stage}"):
        x = getattr(model, f"layer{stage}")(x)
        stage += 1
    return x


def vgg_fc7(model, x):
    """A torchvision VGG's fc7 feature (after ReLU and dropout): VGGBackbone's output."""
    return model.classifier[:6](torch.flatten(model.avgpool(model.features(x)), 1))


def vit_pre_logits(model, x):
    """A timm ViT's pooled feature before the head: ViTBackbone's output."""
    return model.forward_head(model.forward_features(x), pre_logits=True)


def randomize(model, seed=0):
    """Move batch / layer norms and biases away from their initial values, so a wrong mapping shows.

    Returns the model in eval mode.
    """
    generator = torch.Generator().manual_seed(seed)

    def rand(like, low, high):
        return torch.rand(like.shape, generator=generator) * (high - low) + low

    with torch.no_grad():
        for module in model.modules():
            if type(module).__name__ in ("BatchNorm2d", "FrozenBatchNorm2d"):
                module.weight.copy_(rand(module.weight, 0.5, 1.5))
                module.bias.copy_(rand(module.bias, -0.2, 0.2))
                module.running_mean.copy_(rand(module.running_mean, -0.2, 0.2))
                module.running_var.copy_(rand(module.running_var, 0.5, 2.0))
            elif isinstance(module, nn.LayerNorm):
                module.weight.copy_(rand(module.weight, 0.7, 1.3))
                module.bias.copy_(rand(module.bias, -0.1, 0.1))
            elif isinstance(module, (nn.Linear, nn.Conv2d)) and module.bias is not None:
                module.bias.copy_(rand(module.bias, -0.1, 0.1))
        for name in ("cls_token", "pos_embed"):
            parameter = getattr(model, name, None)
            if isinstance(parameter, nn.Parameter):
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.1)
    return model.eval()


def calibrate_batch_norm(model, images):
    """Set every batch norm's running statistics to those of `images` (NCHW); returns the model in eval mode.

    A trained network's statistics match its data, so its activations keep their scale
    through the blocks; random statistics make a deep ResNet's grow block by block (to
    hundreds in ResNet-50's layer4), where float32 rounding alone exceeds 1e-4.
    """
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    momenta = [m.momentum for m in norms]
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # a cumulative average: over this one batch, its statistics
    model.train()
    with torch.no_grad():
        model(images)
    for norm, momentum in zip(norms, momenta):
        norm.momentum = momentum
    return model.eval()


def _pair(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)
