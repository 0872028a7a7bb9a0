"""Analyses of a trained ViT from its attention probabilities (the paper's Fig. 7 right, App. D.7)."""

import numpy as np

import keras


def mean_attention_distance(attention_scores, grid_size, token_pixels, num_prefix_tokens=1):
    """Attention-weighted mean distance in pixels between query and key patches, per layer and head.

    ViT App. D.7: "averaging the distance between the query pixel and all other
    pixels, weighted by the attention weight" (the analogue of a CNN's receptive
    field size). Distances are between patch centres; the class token has no
    position, so its row and column are left out and each patch query's weights
    over the patch keys are renormalised to sum to 1. Averaged over queries and
    images (the paper used 128 images).

    Args:
        attention_scores: list (one per layer) of (B, heads, T, T) probabilities, e.g.
            `ViTBackbone.attention_scores(images)`; or one such array.
        grid_size: (h, w) patch grid.
        token_pixels: (height, width) in input pixels of one token (the patch size, or
            the patch size times the hybrid stem's stride).
        num_prefix_tokens: tokens before the patches (1 with a class token).

    Returns a NumPy array (layers, heads).
    """
    if not isinstance(attention_scores, (list, tuple)):
        attention_scores = [attention_scores]
    h, w = grid_size
    ph, pw = token_pixels
    rows, cols = np.meshgrid((np.arange(h) + 0.5) * ph, (np.arange(w) + 0.5) * pw, indexing="ij")
    centres = np.stack([rows.reshape(-1), cols.reshape(-1)], axis=-1)  # (N, 2)
    distance = np.linalg.norm(centres[:, None, :] - centres[None, :, :], axis=-1)  # (N, N)
    out = []
    for scores in attention_scores:
        a = np.asarray(keras.ops.convert_to_numpy(scores), dtype="float64")
        a = a[..., num_prefix_tokens:, num_prefix_tokens:]  # patch queries x patch keys
        a = a / np.sum(a, axis=-1, keepdims=True)
        out.append(np.sum(a * distance, axis=-1).mean(axis=(0, 2)))  # (heads,)
    return np.stack(out)
