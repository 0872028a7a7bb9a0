"""Exponential moving average of one model's weights into another's.

MoCo (He et al. 2020, eq. 2): theta_k <- m * theta_k + (1 - m) * theta_q.
BYOL's target network uses the same update. The target's variables should be
non-trainable; the update is a plain `assign`, so it runs inside a traced step on
every backend (on JAX inside `MultiOptimizerTrainer`'s stateless scope).
"""

from keras import ops


def ema_update(target_variables, source_variables, momentum):
    """`target <- momentum * target + (1 - momentum) * source`, variable by variable.

    Args:
        target_variables: list of `keras.Variable`s updated in place (the momentum
            / key / target encoder).
        source_variables: list of `keras.Variable`s or tensors of the same shapes
            (the online / query encoder).
        momentum: float or scalar tensor m in [0, 1]; m = 1 leaves the target
            unchanged, m = 0 copies the source.

    Example:

    ```python
    key_encoder = keras.models.clone_model(query_encoder)
    ema_update(key_encoder.weights, query_encoder.weights, 0.999)
    ```
    """
    target_variables = list(target_variables)
    source_variables = list(source_variables)
    if len(target_variables) != len(source_variables):
        raise ValueError(
            f"ema_update needs as many target as source variables; got "
            f"{len(target_variables)} and {len(source_variables)}."
        )
    if isinstance(momentum, (int, float)) and not 0.0 <= momentum <= 1.0:
        raise ValueError(f"momentum must be in [0, 1]; got {momentum}.")
    for target, source in zip(target_variables, source_variables):
        if tuple(target.shape) != tuple(source.shape):
            raise ValueError(
                f"ema_update: shape {tuple(target.shape)} of {target.path} does not "
                f"match the source shape {tuple(source.shape)}."
            )
        m = ops.cast(momentum, target.dtype)
        source_value = ops.cast(source, target.dtype)
        target.assign(m * target + (1.0 - m) * source_value)
