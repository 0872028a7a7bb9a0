"""MAE's reconstruction objective (He et al. 2022, Sec. 3, "Reconstruction target").

"Our loss function computes the mean squared error (MSE) between the reconstructed
and original images in the pixel space. We compute the loss only on masked patches,
similar to BERT." Per patch n of sample b, with P^2 C pixel values:

    l_{b,n} = mean_j (pred_{b,n,j} - target_{b,n,j})^2
    loss    = sum_{b,n} mask_{b,n} l_{b,n} / sum_{b,n} mask_{b,n}        (mask 1 = removed)

The variant with normalised pixels (the paper's default for its released models)
uses each target patch normalised by its own mean and standard deviation.
"""

from keras import ops


def normalized_patch_targets(patches, epsilon=1e-6):
    """(B, N, K) patches -> (patches - mean) / sqrt(var + epsilon), statistics per patch over its K values.

    "We compute the mean and standard deviation of all pixels in a patch and use them
    to normalize this patch" (Sec. 3). The variance is the unbiased one (divided by
    K - 1), as in the authors' PyTorch code (`Tensor.var`'s default); epsilon 1e-6 as
    there.

    Example:

    ```python
    t = normalized_patch_targets(keras.ops.ones((2, 196, 768)))  # all zeros: constant patches
    ```
    """
    patches = ops.cast(patches, "float32")  # statistics in float32 under a mixed-precision policy
    count = patches.shape[-1]
    if count is None or count < 2:
        raise ValueError(f"Per-patch normalisation needs at least 2 values per patch; got {count}.")
    mean = ops.mean(patches, axis=-1, keepdims=True)  # (B, N, 1)
    var = ops.sum(ops.square(patches - mean), axis=-1, keepdims=True) / (count - 1)  # (B, N, 1), unbiased
    return (patches - mean) / ops.sqrt(var + epsilon)


def masked_patch_mse(predictions, targets, mask):
    """Mean squared error over the masked patches only: a float32 scalar.

    Args:
        predictions, targets: (B, N, K) patch pixel values.
        mask: (B, N), 1 for masked (removed) patches, 0 for visible ones; visible
            patches contribute nothing. (With nothing masked the loss is 0.)

    Example:

    ```python
    pred, target = keras.ops.zeros((1, 4, 3)), keras.ops.ones((1, 4, 3))
    masked_patch_mse(pred, target, keras.ops.convert_to_tensor([[1.0, 0.0, 0.0, 1.0]]))  # 1.0
    ```
    """
    predictions = ops.cast(predictions, "float32")  # the mean in float32 under a mixed-precision policy
    targets = ops.cast(targets, "float32")
    mask = ops.cast(mask, "float32")
    per_patch = ops.mean(ops.square(predictions - targets), axis=-1)  # (B, N)
    return ops.sum(per_patch * mask) / ops.maximum(ops.sum(mask), 1.0)
