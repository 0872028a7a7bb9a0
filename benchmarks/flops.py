"""The analytic FLOP counts the benchmarks divide by (MFU), and the architecture tables they need.

Every count is matmuls and convolutions only (2 m n k forward; backward = 2 x forward unless
a docstring says otherwise). The tables mirror the keras-paperzoo presets the families build,
so that the parent process and the PyTorch references need not import Keras. Tested in
tests/test_benchmark_flops.py, tests/test_cmc_benchmark_flops.py and
tests/test_instdisc_benchmark_flops.py. Nothing here imports a deep-learning framework.
"""


# Layer sizes of the keras-paperzoo GAN presets that the benchmark can run (mirrors
# keras_paperzoo/models/gan/gan_presets.py, so that this module and the PyTorch
# reference need not import Keras; the Keras worker checks the parameter counts).
PRESET_DIMS = {
    "gan_mnist": {"latent_dim": 100, "g_hidden": (1200, 1200), "image_dim": 784,
                  "d_units": (240, 240), "pieces": 5},
    "gan_mnist_small": {"latent_dim": 16, "g_hidden": (128, 128), "image_dim": 784,
                        "d_units": (32, 32), "pieces": 5},
}


def gan_param_counts(latent_dim, g_hidden, image_dim, d_units, pieces):
    """(generator, discriminator) parameter counts of the MLP GAN with these sizes."""
    g, fan_in = 0, latent_dim
    for width in tuple(g_hidden) + (image_dim,):
        g += fan_in * width + width
        fan_in = width
    d, fan_in = 0, image_dim
    for units in d_units:
        d += fan_in * units * pieces + units * pieces
        fan_in = units
    d += fan_in + 1
    return g, d


def dense_flops(rows, fan_in, fan_out):
    """Forward multiply-add FLOPs of `rows x fan_in @ fan_in x fan_out` (2 m n k)."""
    return 2 * rows * fan_in * fan_out


def mlp_layer_dims(input_dim, widths):
    """[(fan_in, fan_out), ...] of a chain of dense layers."""
    dims, fan_in = [], input_dim
    for width in widths:
        dims.append((fan_in, width))
        fan_in = width
    return dims


def gan_step_flops(
    batch_size=100,
    latent_dim=100,
    g_hidden=(1200, 1200),
    image_dim=28 * 28,
    d_units=(240, 240),
    pieces=5,
    d_steps=1,
):
    """Matmul FLOPs of one GAN training step (Algorithm 1, k = `d_steps`), analytically.

    Only the dense/maxout matmuls are counted (2 m n k forward); biases, activations,
    maxout reductions, dropout, losses and optimizer updates are not. Two counts:

    - "conventional" (used for MFU): backward = 2 x forward of every network that is
      differentiated.
        D update = G fwd (m) + D fwd (2m: real and fake) + D bwd (2 x D fwd on 2m)
        G update = G fwd (m) + D fwd (m) + bwd through D and G (2 x (G fwd + D fwd) on m)
    - "minimal": the backward matmuls actually needed: weight gradients of the
      network being updated, input gradients of every layer the loss flows back
      through except the first layer of the chain (its input is data or z), and no
      weight gradients for D during the G update.
    """
    m = batch_size // d_steps
    g_dims = mlp_layer_dims(latent_dim, tuple(g_hidden) + (image_dim,))
    # A maxout layer is one matmul to units * pieces features; the next layer takes
    # `units` inputs (the max over pieces). D ends in one logit.
    d_dims, fan_in = [], image_dim
    for units in d_units:
        d_dims.append((fan_in, units * pieces))
        fan_in = units
    d_dims.append((fan_in, 1))

    def fwd(dims, rows):
        return sum(dense_flops(rows, a, b) for a, b in dims)

    g_fwd, d_fwd = fwd(g_dims, m), fwd(d_dims, m)
    d_update = g_fwd + 2 * d_fwd + 2 * (2 * d_fwd)
    g_update = g_fwd + d_fwd + 2 * (g_fwd + d_fwd)
    conventional = d_steps * d_update + g_update

    # minimal backward: dW for every layer of the updated net, dX for layers 2..L of
    # every net the gradient passes through (G's dX of layer 1 is w.r.t. z).
    d_dw = fwd(d_dims, 2 * m)
    d_dx_no_first = fwd(d_dims[1:], 2 * m)
    d_update_min = g_fwd + 2 * d_fwd + d_dw + d_dx_no_first
    g_update_min = g_fwd + d_fwd + fwd(d_dims, m) + g_fwd + fwd(g_dims[1:], m)
    minimal = d_steps * d_update_min + g_update_min
    return {
        "batch_size": batch_size,
        "g_layers": g_dims,
        "d_layers": d_dims,
        "g_forward": g_fwd,
        "d_forward": d_fwd,
        "d_update": d_steps * d_update,
        "g_update": g_update,
        "total": conventional,
        "total_minimal": minimal,
    }


def conv2d_flops(out_h, out_w, in_channels, out_channels, kernel_size, groups=1):
    """Forward multiply-add FLOPs of one image through a conv: 2 H' W' C_out C_in k^2 / groups."""
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    return 2 * out_h * out_w * out_channels * (in_channels // groups) * kh * kw


def _conv_out(size, kernel_size, stride, padding):
    return (size + 2 * padding - kernel_size) // stride + 1


# Architectures of the keras-paperzoo presets the vision benchmark runs (mirrors
# keras_paperzoo/models/resnet/resnet_presets.py and vit/vit_presets.py, so that the
# parent process and the references need not import Keras).
VISION_MODELS = {
    "resnet20": {"family": "resnet", "stage_blocks": (3, 3, 3), "stage_filters": (16, 32, 64),
                 "block_type": "basic", "stem": "cifar", "shortcut": "A",
                 "image_size": 32, "num_classes": 10},
    "resnet50": {"family": "resnet", "stage_blocks": (3, 4, 6, 3),
                 "stage_filters": (64, 128, 256, 512), "block_type": "bottleneck",
                 "stem": "imagenet", "shortcut": "B", "image_size": 224, "num_classes": 1000},
    "vit_s16": {"family": "vit", "patch_size": 16, "num_layers": 12, "hidden_dim": 384,
                "num_heads": 6, "mlp_dim": 1536, "image_size": 224, "num_classes": 1000},
    "vit_b16": {"family": "vit", "patch_size": 16, "num_layers": 12, "hidden_dim": 768,
                "num_heads": 12, "mlp_dim": 3072, "image_size": 224, "num_classes": 1000},
}


def resnet_forward_flops(stage_blocks, stage_filters, block_type="basic", stem="imagenet",
                         shortcut="B", image_size=224, num_classes=1000, stem_filters=None, **_):
    """Forward FLOPs of one image through a ResNet v1 classifier, convs and the head only.

    Every conv (stem, block convs, projection shortcuts of option B/C) counts
    2 H' W' C_out C_in k^2; the linear head 2 C num_classes. Batch norm, ReLU, pooling,
    the shortcut additions and option A's zero padding are not counted. Strides as in
    `ResNetBackbone`: the first block of stages 2.. strides by 2 (bottleneck: in the 3x3).
    `stem_filters`: the stem's width (default 64 for "imagenet", 16 for "cifar", as
    `ResNetBackbone`). Returns {"convs": ..., "head": ..., "total": ..., "layers":
    [(name, flops), ...]}.
    """
    layers = []
    size, channels = image_size, 3
    if stem == "imagenet":
        width = stem_filters or 64
        size = _conv_out(size, 7, 2, 3)
        layers.append(("stem_conv", conv2d_flops(size, size, channels, width, 7)))
        channels = width
        size = _conv_out(size, 3, 2, 1)  # max pool
    else:
        width = stem_filters or 16
        layers.append(("stem_conv", conv2d_flops(size, size, channels, width, 3)))
        channels = width
    expansion = 4 if block_type == "bottleneck" else 1
    for s, (blocks, filters) in enumerate(zip(stage_blocks, stage_filters), start=1):
        for b in range(1, blocks + 1):
            stride = 2 if (s > 1 and b == 1) else 1
            out_size = _conv_out(size, 3, stride, 1)
            name = f"stage{s}_block{b}"
            if block_type == "bottleneck":
                layers.append((f"{name}_conv1", conv2d_flops(size, size, channels, filters, 1)))
                layers.append((f"{name}_conv2", conv2d_flops(out_size, out_size, filters, filters, 3)))
                layers.append((f"{name}_conv3", conv2d_flops(out_size, out_size, filters, 4 * filters, 1)))
            else:
                layers.append((f"{name}_conv1", conv2d_flops(out_size, out_size, channels, filters, 3)))
                layers.append((f"{name}_conv2", conv2d_flops(out_size, out_size, filters, filters, 3)))
            out_channels = expansion * filters
            changes = stride > 1 or channels != out_channels
            if shortcut == "C" or (shortcut == "B" and changes):
                layers.append((f"{name}_shortcut_conv",
                               conv2d_flops(out_size, out_size, channels, out_channels, 1)))
            size, channels = out_size, out_channels
    convs = sum(f for _, f in layers)
    head = dense_flops(1, channels, num_classes)
    layers.append(("head", head))
    return {"convs": convs, "head": head, "total": convs + head, "layers": layers}


def vit_forward_flops(patch_size, num_layers, hidden_dim, num_heads, mlp_dim, image_size=224,
                      num_classes=1000, class_token=True, **_):
    """Forward FLOPs of one image through a ViT classifier, matmuls only.

    T = (image / patch)^2 + 1 tokens. Patch embedding 2 N (P^2 3) D; per block: q, k, v
    projections 3 x 2 T D D, attention scores Q K^T 2 T T D and weighted values A V
    2 T T D (summed over heads), output projection 2 T D D, MLP 2 x 2 T D M; the head
    2 D num_classes. Layer norms, softmax, GELU, biases and residual additions are not
    counted.
    """
    n = (image_size // patch_size) ** 2
    t = n + (1 if class_token else 0)
    patch = 2 * n * patch_size * patch_size * 3 * hidden_dim
    parts = transformer_block_flops(t, hidden_dim, mlp_dim)
    block = parts.pop("total")
    head = dense_flops(1, hidden_dim, num_classes)
    total = patch + num_layers * block + head
    return {"patch_embedding": patch, "block": block, "block_parts": parts,
            "head": head, "tokens": t, "total": total}


def transformer_block_flops(tokens, dim, mlp_dim):
    """Forward matmul FLOPs of one Transformer block on `tokens` tokens of width `dim`.

    q, k, v projections 3 x 2 T D D, scores Q K^T 2 T T D and weighted values A V
    2 T T D (summed over heads), output projection 2 T D D, MLP 2 x 2 T D M.
    """
    t, d, m = tokens, dim, mlp_dim
    parts = {"qkv": 3 * dense_flops(t, d, d), "attention": 2 * (2 * t * t * d),
             "proj": dense_flops(t, d, d), "mlp": dense_flops(t, d, m) + dense_flops(t, m, d)}
    parts["total"] = sum(parts.values())
    return parts


def vision_step_flops(model, batch_size):
    """FLOPs of one training step of a `VISION_MODELS` entry: 3 x forward x batch.

    Backward = 2 x forward (input and weight gradients of every layer; the first
    conv's input gradient is counted although no one needs it), the usual convention.
    Optimizer updates, losses and everything `*_forward_flops` leaves out are not counted.
    """
    config = VISION_MODELS[model]
    count = resnet_forward_flops if config["family"] == "resnet" else vit_forward_flops
    forward = count(**config)["total"]
    return {"forward_per_image": forward, "batch_size": batch_size,
            "forward": forward * batch_size, "backward": 2 * forward * batch_size,
            "total": 3 * forward * batch_size}


# The self-supervised steps of the `ssl` family (mirrors the keras-paperzoo presets it
# builds: MoCo.from_preset("moco_cifar_resnet18", version=2, ...),
# SimCLR.from_preset("simclr_cifar_resnet18"), BYOL.from_preset("byol_cifar_resnet18"),
# InvaSpread.from_preset("invaspread_cifar_resnet18") and MAE.from_preset("mae_vit_s16")).
CIFAR_RESNET18 = {"stage_blocks": (2, 2, 2, 2), "stage_filters": (64, 128, 256, 512), "block_type": "basic",
                  "stem": "cifar", "stem_filters": 64, "shortcut": "B", "image_size": 32}
SSL_MODELS = {
    "moco_v2": {"family": "moco", "backbone": CIFAR_RESNET18,
                "feature_dim": 512, "hidden_dim": 2048, "projection_dim": 128, "queue_size": 4096,
                "temperature": 0.2, "momentum": 0.99, "bn_splits": 8, "image_size": 32},
    # DenseCL: moco_v2 plus the dense head 1x1 512 -> 2048 -> 128 on the 4 x 4 map, lambda 0.5, two queues.
    "densecl": {"family": "densecl", "backbone": CIFAR_RESNET18,
                "feature_dim": 512, "hidden_dim": 2048, "projection_dim": 128, "queue_size": 4096,
                "temperature": 0.2, "momentum": 0.99, "bn_splits": 8, "image_size": 32, "grid": 4},
    # SwAV: 2 x 32 + 6 x 14 crops (the preset's multi-crop), projector 512 -> 2048 (BN, ReLU) -> 128, K = 3000
    # prototypes, tau 0.1, Sinkhorn eps 0.05 x 3 on crops 0 and 1 over a queue of ~3840 past features each.
    "swav": {"family": "swav", "preset": "swav_cifar_resnet18", "backbone": CIFAR_RESNET18,
             "feature_dim": 512, "projection_dims": (2048, 128), "num_prototypes": 3000, "crop_counts": (2, 6),
             "crop_sizes": (32, 14), "temperature": 0.1, "epsilon": 0.05, "sinkhorn_iterations": 3,
             "crops_for_assign": (0, 1), "queue_length": 3840, "image_size": 32},
    # SimCLR v1 head: Dense 512 -> 512 (BN, ReLU) -> 128 (BN); NT-Xent over the 2N views, tau 0.5 (App. B.9).
    "simclr": {"family": "simclr", "preset": "simclr_cifar_resnet18", "backbone": CIFAR_RESNET18,
               "feature_dim": 512, "projection_dims": (512, 128), "temperature": 0.5, "image_size": 32},
    # BYOL: projector 512 -> 4096 (BN, ReLU) -> 256, predictor 256 -> 4096 (BN, ReLU) -> 256, tau_base 0.996.
    "byol": {"family": "byol", "preset": "byol_cifar_resnet18", "backbone": CIFAR_RESNET18,
             "feature_dim": 512, "projection_dims": (4096, 256), "prediction_dims": (4096, 256),
             "tau_base": 0.996, "image_size": 32},
    # InvaSpread: linear 512 -> 128 embedding (bias, no BN), L2-normalised; tau 0.1 over the 2N views.
    "invaspread": {"family": "invaspread", "preset": "invaspread_cifar_resnet18", "backbone": CIFAR_RESNET18,
                   "feature_dim": 512, "embedding_dim": 128, "temperature": 0.1, "image_size": 32},
    "mae_vit_s16": {"family": "mae", "image_size": 224, "patch_size": 16, "num_layers": 12,
                    "hidden_dim": 384, "num_heads": 6, "mlp_dim": 1536, "decoder_depth": 8,
                    "decoder_dim": 512, "decoder_heads": 16, "decoder_mlp_dim": 2048,
                    "mask_ratio": 0.75},
}


def moco_step_flops(batch_size, backbone, feature_dim, hidden_dim, projection_dim, queue_size, **_):
    """FLOPs of one MoCo v2 training step (Algorithm 1), convs and matmuls only.

    Encoder forward per image = backbone convs (`resnet_forward_flops`, no classifier)
    + MLP head 2 (F H + H C). Query encoder: forward + backward (2 x forward); key
    encoder: forward only (no gradient). Logits q k+ and q queue^T: 2 B (1 + K) C
    forward, plus the same again backward for dL/dq (k and the queue are constants).
    BN, pooling, the normalisation, the loss, the momentum update (2 x params) and
    the optimizer update are not counted.
    """
    convs = resnet_forward_flops(**backbone)["convs"]
    head = dense_flops(1, feature_dim, hidden_dim) + dense_flops(1, hidden_dim, projection_dim)
    encoder = convs + head
    logits = dense_flops(batch_size, projection_dim, 1 + queue_size)
    query = 3 * encoder * batch_size
    key = encoder * batch_size
    total = query + key + 2 * logits
    return {"encoder_forward_per_image": encoder, "backbone_forward_per_image": convs,
            "head_forward_per_image": head, "batch_size": batch_size, "query_encoder": query,
            "key_encoder": key, "logits": 2 * logits, "total": total,
            "description": f"B x (3 x {encoder / 1e9:.4f} query fwd+bwd + 1 x key fwd) + "
                           f"logits 2 x {logits / 1e9:.3f}"}


def densecl_step_flops(batch_size, backbone, feature_dim, hidden_dim, projection_dim, queue_size, grid, **_):
    """FLOPs of one DenseCL step: MoCo v2's (`moco_step_flops`) plus the dense parts, matmuls only.

    Per image and encoder pass: the dense head on S = grid^2 locations, 2 S (F H + H C).
    Query: forward + backward (3 x), key: forward. The correspondence (no gradient): the
    S x S similarity of the two backbone maps, 2 S^2 F per image. Dense logits: each of
    the B S queries against 1 + K, 2 B S (1 + K) C forward and as much backward for dL/dr.
    """
    moco = moco_step_flops(batch_size, backbone, feature_dim, hidden_dim, projection_dim, queue_size)
    locations = grid * grid
    dense_head = locations * (dense_flops(1, feature_dim, hidden_dim) + dense_flops(1, hidden_dim, projection_dim))
    correspondence = batch_size * 2 * locations * locations * feature_dim
    dense_logits = dense_flops(batch_size * locations, projection_dim, 1 + queue_size)
    dense = 4 * dense_head * batch_size + correspondence + 2 * dense_logits
    return {**moco, "dense_head_forward_per_image": dense_head, "correspondence": correspondence,
            "dense_logits": 2 * dense_logits, "total": moco["total"] + dense,
            "description": f"{moco['description']} + dense head 4 x B x {dense_head / 1e9:.4f} + correspondence "
                           f"{correspondence / 1e9:.3f} + dense logits 2 x {dense_logits / 1e9:.3f}"}


def mae_step_flops(batch_size, image_size, patch_size, num_layers, hidden_dim, mlp_dim,
                   decoder_depth, decoder_dim, decoder_mlp_dim, mask_ratio, channels=3, **_):
    """FLOPs of one MAE pre-training step (Sec. 3), matmuls only; backward = 2 x forward.

    Per image, forward: the patch embedding of all N patches (2 N P^2 C D; both
    implementations embed every patch, then drop the masked ones), the encoder's
    blocks on 1 + K tokens (K = N (1 - mask_ratio) visible, class token kept), the
    decoder embedding 2 (1 + K) D d, the decoder's blocks on 1 + N tokens, and the
    pixel predictor 2 (1 + N) d P^2 C (both compute it for the class token too).
    Layer norms, softmax, GELU, masking, gathers and the loss are not counted.
    """
    n = (image_size // patch_size) ** 2
    k = int(n * (1 - mask_ratio))
    pixels = patch_size * patch_size * channels
    patch = 2 * n * pixels * hidden_dim
    encoder = num_layers * transformer_block_flops(1 + k, hidden_dim, mlp_dim)["total"]
    decoder_embed = dense_flops(1 + k, hidden_dim, decoder_dim)
    decoder = decoder_depth * transformer_block_flops(1 + n, decoder_dim, decoder_mlp_dim)["total"]
    predictor = dense_flops(1 + n, decoder_dim, pixels)
    forward = patch + encoder + decoder_embed + decoder + predictor
    return {"forward_per_image": forward, "patch_embedding": patch, "encoder_blocks": encoder,
            "decoder_embed": decoder_embed, "decoder_blocks": decoder, "predictor": predictor,
            "visible_tokens": k, "batch_size": batch_size, "forward": forward * batch_size,
            "total": 3 * forward * batch_size,
            "description": f"3 x {forward / 1e9:.4f} GFLOP x {batch_size} (encoder on {1 + k} "
                           f"tokens, decoder on {1 + n})"}


def mlp_forward_flops(input_dim, widths):
    """Forward FLOPs of one row through a chain of dense layers (2 fan_in fan_out each)."""
    return sum(dense_flops(1, a, b) for a, b in mlp_layer_dims(input_dim, widths))


def simclr_step_flops(batch_size, backbone, feature_dim, projection_dims, **_):
    """FLOPs of one SimCLR step (Algorithm 1) on N = `batch_size` images, convs and matmuls only.

    Both views of every image, 2N in all, go through the encoder (backbone convs +
    the head's dense layers) forward and backward (3 x forward). NT-Xent's similarity
    matrix z z^T of the 2N views: 2 (2N)^2 C forward and, both factors being z, 2 x
    that backward. BN, pooling, the normalisation, softmax, the `contrastive_accuracy`
    metric's second z z^T (forward only, 0.002 % of the step at N = 128) and the
    optimizer are not counted.
    """
    head = mlp_forward_flops(feature_dim, projection_dims)
    return _two_view_step_flops(batch_size, backbone, head, projection_dims[-1], 3, "z z^T")


def byol_step_flops(batch_size, backbone, feature_dim, projection_dims, prediction_dims, **_):
    """FLOPs of one BYOL step (Sec. 3.1, symmetrised loss) on B = `batch_size` images, convs and matmuls only.

    Online network (backbone + projector + predictor) on both views of every image,
    forward and backward: 3 x online forward x 2B; target network (backbone +
    projector, no predictor) on both views, forward only: target forward x 2B. BN,
    pooling, the cosine loss, the EMA update of the target (2 x 12.6 M parameters)
    and the optimizer are not counted.
    """
    convs = resnet_forward_flops(**backbone)["convs"]
    projector = mlp_forward_flops(feature_dim, projection_dims)
    predictor = mlp_forward_flops(projection_dims[-1], prediction_dims)
    online = convs + projector + predictor
    target = convs + projector
    views = 2 * batch_size
    total = 3 * online * views + target * views
    return {"online_forward_per_image": online, "target_forward_per_image": target,
            "backbone_forward_per_image": convs, "projector_forward_per_image": projector,
            "predictor_forward_per_image": predictor, "batch_size": batch_size,
            "online": 3 * online * views, "target": target * views, "total": total,
            "description": f"2B views (B = {batch_size}) x (3 x {online / 1e9:.4f} online fwd+bwd + "
                           f"{target / 1e9:.4f} target fwd)"}


def invaspread_step_flops(batch_size, backbone, feature_dim, embedding_dim, **_):
    """FLOPs of one InvaSpread step (Sec. 3.2, Siamese training) on N = `batch_size` images, convs and matmuls only.

    Both views of every image, 2N in all, go through the embedding network (backbone
    convs + the linear 512 -> 128 layer) forward and backward (3 x forward). The
    similarities x x^T of the 2N features: 2 (2N)^2 C forward and the same again
    backward, to the inputs only (the instance weights are constants). BN, pooling,
    the normalisation, softmax and log terms, the `contrastive_accuracy` metric's
    similarities and the optimizer are not counted.
    """
    head = dense_flops(1, feature_dim, embedding_dim)
    return _two_view_step_flops(batch_size, backbone, head, embedding_dim, 2, "x x^T")


def _two_view_step_flops(batch_size, backbone, head, dim, passes, name):
    """Both views of N images, 2N in all, through the encoder (backbone convs + `head` FLOPs per
    image) forward and backward (3 x forward), plus `passes` x the (2N)^2 similarities of
    `dim`-wide features (2 (2N)^2 dim each)."""
    convs = resnet_forward_flops(**backbone)["convs"]
    encoder = convs + head
    views = 2 * batch_size
    similarities = dense_flops(views, dim, views)
    return {"encoder_forward_per_image": encoder, "backbone_forward_per_image": convs,
            "head_forward_per_image": head, "batch_size": batch_size, "encoder": 3 * encoder * views,
            "similarities": passes * similarities, "total": 3 * encoder * views + passes * similarities,
            "description": f"3 x {encoder / 1e9:.4f} x 2N views (N = {batch_size}) + "
                           f"{name} {passes} x {similarities / 1e9:.4f}"}


def swav_queue_length(batch_size, queue_length=3840):
    """SwAV's queue at batch B: `queue_length` rounded up to a multiple of B (the trainer needs one), so
    that K = 3000 prototypes <= queue + batch at the CPU batch sizes (the authors' batch-256 setting)."""
    return -(-queue_length // batch_size) * batch_size


def swav_step_flops(batch_size, backbone, feature_dim, projection_dims, num_prototypes, crop_counts, crop_sizes,
                    crops_for_assign, queue_length, **_):
    """FLOPs of one SwAV multi-crop step (Sec. 3.1-3.2) on B images, convs and matmuls only.

    Each crop (`crop_counts` of each size in `crop_sizes`) through the backbone convs at its
    size, forward and backward (3 x forward); the projector and the prototypes z . C on all
    V B crops, 3 x (2 (F H + H C) + 2 C K). The codes' queue scores (no gradient): each
    assignment crop's L = `swav_queue_length(B)` past features against the prototypes,
    2 L C K. BN, pooling, the normalisations, Sinkhorn's element-wise iterations, the
    softmaxes and the optimizer are not counted.
    """
    crops = sum(crop_counts)
    convs = {size: resnet_forward_flops(**{**backbone, "image_size": size})["convs"] for size in crop_sizes}
    backbone_total = sum(3 * convs[size] * count * batch_size for size, count in zip(crop_sizes, crop_counts))
    head = mlp_forward_flops(feature_dim, projection_dims) + dense_flops(1, projection_dims[-1], num_prototypes)
    queue = swav_queue_length(batch_size, queue_length)
    queue_scores = len(crops_for_assign) * dense_flops(queue, projection_dims[-1], num_prototypes)
    total = backbone_total + 3 * head * crops * batch_size + queue_scores
    sizes = " + ".join(f"{count} x {size}px {convs[size] / 1e9:.4f}" for size, count in zip(crop_sizes, crop_counts))
    return {"backbone_forward_per_crop": convs, "head_forward_per_crop": head, "batch_size": batch_size,
            "crops": crops, "queue_length": queue, "backbone": backbone_total, "heads": 3 * head * crops * batch_size,
            "queue_scores": queue_scores, "total": total,
            "description": f"B = {batch_size} x 3 x ({sizes}) + heads 3 x {head / 1e9:.4f} x {crops} crops + "
                           f"queue scores {queue_scores / 1e9:.3f} (L = {queue})"}


SSL_STEP_FLOPS = {"moco": moco_step_flops, "densecl": densecl_step_flops, "swav": swav_step_flops,
                  "simclr": simclr_step_flops, "byol": byol_step_flops,
                  "invaspread": invaspread_step_flops, "mae": mae_step_flops}


def ssl_step_flops(model, batch_size):
    """FLOPs of one training step of an `SSL_MODELS` entry (`SSL_STEP_FLOPS` of its family)."""
    config = SSL_MODELS[model]
    return SSL_STEP_FLOPS[config["family"]](batch_size, **config)


# The language-model steps of the `lm` family (mirrors keras-paperzoo's presets
# `BertBackbone.from_preset("bert_base")` and `GPTBackbone.from_preset("gpt2_small")`,
# and `transformers.BertConfig()` / `GPT2Config()`, whose defaults are the same sizes).
# `bert_tiny` / `gpt_tiny` (the presets bert_tiny and gpt_char_tiny) are for smoke runs.
LM_MODELS = {
    "bert_base": {"family": "bert", "preset": "bert_base", "vocabulary_size": 30522, "num_layers": 12,
                  "hidden_dim": 768, "num_heads": 12, "intermediate_dim": 3072, "max_sequence_length": 512,
                  "sequence_length": 128, "batch_size": 8, "masked_positions": 20},
    "gpt2_small": {"family": "gpt", "preset": "gpt2_small", "vocabulary_size": 50257, "num_layers": 12,
                   "hidden_dim": 768, "num_heads": 12, "intermediate_dim": 3072, "max_sequence_length": 1024,
                   "sequence_length": 256, "batch_size": 4},
    "bert_tiny": {"family": "bert", "preset": "bert_tiny", "vocabulary_size": 30522, "num_layers": 2,
                  "hidden_dim": 128, "num_heads": 2, "intermediate_dim": 512, "max_sequence_length": 512,
                  "sequence_length": 128, "batch_size": 8, "masked_positions": 20},
    "gpt_tiny": {"family": "gpt", "preset": "gpt_char_tiny", "vocabulary_size": 65, "num_layers": 4,
                 "hidden_dim": 128, "num_heads": 4, "intermediate_dim": 512, "max_sequence_length": 128,
                 "sequence_length": 64, "batch_size": 4},
}


def lm_step_flops(family, batch_size, sequence_length, vocabulary_size, num_layers, hidden_dim,
                  intermediate_dim, masked_positions=0, **_):
    """FLOPs of one BERT pre-training or GPT causal-LM training step, matmuls only.

    Backward = 2 x forward (the usual convention), so a step is 3 x forward, which for
    N matmul parameters each seeing every token is the familiar 6 N x tokens. With
    B sequences of T tokens, width D, feed-forward F, L layers, vocabulary V:

    - per layer and token, forward: q, k, v and output projections 2 x 4 D^2, the
      feed-forward 2 x 2 D F, attention scores Q K^T and weighted values A V 2 x 2 T D
      (summed over heads; causal attention counted in full, as both implementations
      compute the whole T x T score matrix and mask it);
    - GPT (`family="gpt"`): the tied output projection h W_e^T, 2 V D per token, on all
      B T positions;
    - BERT (`family="bert"`, MLM + NSP as `BertPretrainer` and the BERT reference
      code): the masked-LM head only on the M = `masked_positions` chosen positions
      per sequence, 2 (D^2 + V D) each (transform dense, then the tied decoder); the
      pooler 2 D^2 and the NSP classifier 2 x 2 D once per sequence.

    step = 6 B T L (4 D^2 + 2 D F) + 12 B T L T D + head, with head = 6 B T V D (GPT)
    or 6 B M (D^2 + V D) + 6 B (D^2 + 2 D) (BERT). Embedding lookups, biases,
    LayerNorm, softmax, GELU, dropout, the losses and the optimizer are not counted.
    """
    b, t, d, f, v, n = batch_size, sequence_length, hidden_dim, intermediate_dim, vocabulary_size, num_layers
    tokens = b * t
    dense_params = n * (4 * d * d + 2 * d * f)  # the blocks' weight matrices
    blocks = tokens * n * (2 * (4 * d * d + 2 * d * f) + 2 * (2 * t * d))
    attention = tokens * n * 2 * (2 * t * d)
    if family == "gpt":
        head = dense_flops(tokens, d, v)
        head_params = v * d
    elif family == "bert":
        head = dense_flops(b * masked_positions, d, d) + dense_flops(b * masked_positions, d, v)
        head += dense_flops(b, d, d) + dense_flops(b, d, 2)
        head_params = d * d + v * d + d * d + 2 * d
    else:
        raise ValueError(f"family must be 'bert' or 'gpt'; got {family!r}.")
    forward = blocks + head
    return {"forward": forward, "total": 3 * forward, "tokens": tokens, "blocks_forward": blocks,
            "attention_forward": attention, "head_forward": head, "block_params": dense_params,
            "head_params": head_params,
            "description": (f"3 x ({blocks / 1e9:.2f} blocks incl. {attention / 1e9:.2f} attention "
                            f"+ {head / 1e9:.2f} head) GFLOP fwd for {tokens} tokens")}


# The CMC step of the `cmc` family (mirrors CMC.from_preset("cmc_cifar_resnet18", num_data=50000,
# temperature=0.07)): per view a half-width CIFAR ResNet-18.
CIFAR_RESNET18_HALF = {"stage_blocks": (2, 2, 2, 2), "stage_filters": (32, 64, 128, 256), "block_type": "basic",
                       "stem": "cifar", "stem_filters": 64, "shortcut": "B", "image_size": 32}
CMC_MODELS = {
    "cmc_cifar_resnet18": {"preset": "cmc_cifar_resnet18", "backbone": CIFAR_RESNET18_HALF, "feature_dim": 128,
                           "num_negatives": 4096, "temperature": 0.07, "num_data": 50_000, "image_size": 32},
}


def cmc_step_flops(model, batch_size):
    """FLOPs of one CMC step on B = `batch_size` images, convs and matmuls only; backward = 2 x forward.

    Per image, forward: each view's encoder (`resnet_forward_flops` of the backbone, its
    stem conv counted for the view's 1 or 2 input channels instead of 3) and its linear
    layer 2 D C; the scores of each direction against 1 + m bank rows, 2 (1 + m) C, whose
    backward is one more 2 (1 + m) C (dL/dz only: the rows are constants). Encoders 3 x
    forward x B. The Lab conversion, BN, pooling, the normalisation, exp, the NCE loss, the
    bank updates and the optimizer are not counted.
    """
    config = CMC_MODELS[model]
    backbone, c, m = config["backbone"], config["feature_dim"], config["num_negatives"]
    full = resnet_forward_flops(**backbone)
    size, stem = backbone["image_size"], backbone["stem_filters"]
    width = backbone["stage_filters"][-1] * (4 if backbone["block_type"] == "bottleneck" else 1)
    encoders = 0
    for channels in (1, 2):  # L, ab
        stem_flops = conv2d_flops(size, size, channels, stem, 3)
        encoders += full["convs"] - full["layers"][0][1] + stem_flops + dense_flops(1, width, c)
    scores = 2 * 2 * dense_flops(1, c, 1 + m)  # two directions, forward + dL/dz
    total = batch_size * (3 * encoders + scores)
    return {"encoders_forward_per_image": encoders, "scores_per_image": scores, "batch_size": batch_size,
            "total": total,
            "description": f"B x (3 x {encoders / 1e9:.4f} both encoders fwd+bwd + scores {scores / 1e9:.4f}) "
                           f"(B = {batch_size})"}


# The CPC steps of the `cpc` family (mirrors keras_paperzoo/models/cpc/cpc_presets.py).
_CPC_SMALL = {"image_size": 16, "patch": 4, "stride": 2, "stem": 32, "filters": (16, 32), "outputs": (64, 128),
              "context_blocks": 3, "context_units": 64}
CPC_MODELS = {
    "cpc_v1_small": {**_CPC_SMALL, "steps": (1, 2, 3, 4, 5), "directions": 1, "target_dim": None},
    "cpc_v2_small": {**_CPC_SMALL, "steps": (3,), "directions": 4, "target_dim": 64},
}


def cpc_step_flops(model, batch_size):
    """FLOPs of one CPC step on B = `batch_size` images, convs and matmuls only; backward = 2 x forward.

    Forward: the patch encoder on B x rows x cols patches (every conv 2 H' W' C_out C_in
    k^2: stem, per block the projection shortcut, 1x1, 3x3 and 1x1); per direction the
    context's blocks on the grid (1x1 D -> U, 1x3, 2x1, 1x1 U -> D), the targets'
    projection (v2) and per step k the predictions W_k c (M_k = B (rows - k) cols rows of
    D -> Dt) and their scores against the N = B rows cols candidates (2 M_k N Dt).
    """
    m = CPC_MODELS[model]
    size, patch, stride = m["image_size"], m["patch"], m["stride"]
    rows = cols = (size - patch) // stride + 1
    flops, side, channels = conv2d_flops(patch, patch, 3, m["stem"], 3), patch, m["stem"]
    for s, (f, out) in enumerate(zip(m["filters"], m["outputs"])):
        out_side = side // 2 if s > 0 else side
        flops += conv2d_flops(out_side, out_side, channels, out, 1)  # shortcut (shape changes)
        flops += conv2d_flops(side, side, channels, f, 1)
        flops += conv2d_flops(out_side, out_side, f, f, 3)
        flops += conv2d_flops(out_side, out_side, f, out, 1)
        side, channels = out_side, out
    n = batch_size * rows * cols
    encoder = n * flops
    depth, units, width = channels, m["context_units"], m["target_dim"] or channels
    block = (conv2d_flops(rows, cols, depth, units, 1) + conv2d_flops(rows, cols, units, units, (1, 3))
             + conv2d_flops(rows, cols, units, units, (2, 1)) + conv2d_flops(rows, cols, units, depth, 1))
    per_direction = batch_size * m["context_blocks"] * block
    per_direction += dense_flops(n, depth, width) if m["target_dim"] else 0
    for k in m["steps"]:
        predictions = batch_size * (rows - k) * cols
        per_direction += dense_flops(predictions, depth, width) + dense_flops(predictions, width, n)
    forward = encoder + m["directions"] * per_direction
    return {"forward": forward, "encoder_forward": encoder, "total": 3 * forward,
            "description": f"3 x ({encoder / 1e9:.3f} encoder + {(forward - encoder) / 1e9:.3f} context and "
                           f"scores) GFLOP"}


# The InstDisc step of the `instdisc` family (InstDisc.from_preset("instdisc_resnet20_cifar")):
# the CIFAR ResNet-20, a linear 64 -> 128 layer, tau 0.07.
INSTDISC_FEATURE_DIM, INSTDISC_TEMPERATURE = 128, 0.07


def instdisc_step_flops(batch_size, num_negatives, feature_dim=INSTDISC_FEATURE_DIM, backbone=None):
    """FLOPs of one InstDisc step, convs and matmuls only; backward = 2 x forward for the network.

    Per image: the backbone's convs and the linear layer 64 -> 128, forward and backward (3 x).
    The scores V f: 2 (1 + m) d per image forward, the same again backward (to f only: the
    bank is a constant). The gather of B (1 + m) rows, the normalisation, exp, the NCE terms,
    BN and the bank update are not counted.
    """
    backbone = backbone or VISION_MODELS["resnet20"]
    convs = resnet_forward_flops(**backbone)["convs"]
    head = dense_flops(1, backbone["stage_filters"][-1], feature_dim)
    network = convs + head
    scores = dense_flops(batch_size, feature_dim, 1 + num_negatives)
    total = 3 * network * batch_size + 2 * scores
    return {"network_forward_per_image": network, "backbone_forward_per_image": convs, "batch_size": batch_size,
            "network": 3 * network * batch_size, "scores": 2 * scores, "total": total,
            "description": f"3 x {network / 1e9:.4f} x B (B = {batch_size}) + scores 2 x {scores / 1e9:.4f}"}


# The image-token steps of the `mim` family: BEiT's masked image modelling and iGPT's
# autoregressive step (mirrors `BEiT(BEiTBackbone.from_preset("beit_base_patch16_224", <ViT-S/16
# sizes>), <stub tokenizer>)` and `IGPT.from_preset("igpt_s", <8 x 256>)`).
MIM_MODELS = {
    # BEiT with ViT-S/16 sizes (BEiT-B's step is 3.6x this: too slow for the 2-core CPU), |V| = 8192 as DALL-E's.
    "beit_s16": {"family": "beit", "preset": "beit_base_patch16_224", "image_size": 224, "patch_size": 16,
                 "num_layers": 12, "hidden_dim": 384, "num_heads": 6, "mlp_dim": 1536, "vocabulary_size": 8192,
                 "num_masking_patches": 75, "batch_size": 8},
    # iGPT-S's 32 x 32 context (1,024 pixels) and 512-colour palette on an 8 x 256 GPT-2 decoder (iGPT-S is 24 x 512).
    "igpt_8x256": {"family": "igpt", "preset": "igpt_s", "palette_size": 512, "resolution": 32, "num_layers": 8,
                   "hidden_dim": 256, "num_heads": 8, "intermediate_dim": 1024, "batch_size": 2},
}


def beit_step_flops(batch_size, image_size, patch_size, num_layers, hidden_dim, mlp_dim, vocabulary_size,
                    channels=3, **_):
    """FLOPs of one BEiT MIM step (Sec. 2.2-2.3), matmuls only; backward = 2 x forward.

    Per image, forward: the patch embedding of all N patches 2 N P^2 C D (masked ones are
    replaced by e_[M] after it), L blocks on 1 + N tokens (`transformer_block_flops`: the
    relative position bias is an addition, not counted), and the MIM head 2 N D |V| on
    every patch (both sides score all N and mask the loss, as keras-paperzoo's `BEiT`).
    The tokenizer (a stub here), the masks, LayerNorm, softmax, GELU, LayerScale, the loss
    and the optimizer are not counted.
    """
    n = (image_size // patch_size) ** 2
    patch = 2 * n * patch_size * patch_size * channels * hidden_dim
    blocks = num_layers * transformer_block_flops(1 + n, hidden_dim, mlp_dim)["total"]
    head = dense_flops(n, hidden_dim, vocabulary_size)
    forward = patch + blocks + head
    return {"forward_per_image": forward, "patch_embedding": patch, "blocks": blocks, "head": head,
            "tokens": 1 + n, "batch_size": batch_size, "forward": forward * batch_size,
            "total": 3 * forward * batch_size,
            "description": f"3 x {forward / 1e9:.4f} GFLOP x {batch_size} (blocks on {1 + n} tokens, "
                           f"head {n} x {hidden_dim} x {vocabulary_size})"}


def igpt_step_flops(batch_size, palette_size, resolution, num_layers, hidden_dim, intermediate_dim, **_):
    """FLOPs of one iGPT autoregressive step (Sec. 2.1): `lm_step_flops` of a GPT over n = resolution^2
    pixels whose output projection is the untied d x palette layer (2 d k per position, not V = k + 1)."""
    return lm_step_flops("gpt", batch_size, resolution * resolution, palette_size, num_layers, hidden_dim,
                         intermediate_dim)


def mim_step_flops(model, batch_size):
    """FLOPs of one training step of a `MIM_MODELS` entry."""
    config = dict(MIM_MODELS[model], batch_size=batch_size)
    return (beit_step_flops if config["family"] == "beit" else igpt_step_flops)(**config)
