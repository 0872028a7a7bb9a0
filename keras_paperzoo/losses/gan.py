"""The GAN objective (Goodfellow et al. 2014, eq. 1) and the generator's two losses.

V(D, G) = E_x[log D(x)] + E_z[log(1 - D(G(z)))].

All functions take the discriminator's *logits* by default (D(x) = sigmoid(logit)),
so log D = -softplus(-logit) and log(1 - D) = -softplus(logit) stay finite where
the probabilities saturate (the notes' warning about log D(G(z)) -> -inf).
"""

from keras import ops


def _log_d(outputs, from_logits):
    """(log D, log(1 - D)) from logits or from probabilities, in float32 (half-precision D outputs too)."""
    outputs = ops.cast(outputs, "float32")
    if from_logits:
        return -ops.softplus(-outputs), -ops.softplus(outputs)
    p = ops.clip(outputs, 1e-7, 1.0 - 1e-7)
    return ops.log(p), ops.log(1.0 - p)


def discriminator_loss(real_outputs, fake_outputs, from_logits=True):
    """-[mean log D(x) + mean log(1 - D(G(z)))]: minus V, which D ascends (Algorithm 1).

    Example:

    ```python
    discriminator_loss(keras.ops.zeros((4, 1)), keras.ops.zeros((4, 1)))  # log 4
    ```
    """
    log_d_real, _ = _log_d(real_outputs, from_logits)
    _, log_one_minus_d_fake = _log_d(fake_outputs, from_logits)
    return -(ops.mean(log_d_real) + ops.mean(log_one_minus_d_fake))


def minimax_generator_loss(fake_outputs, from_logits=True):
    """mean log(1 - D(G(z))): the term G descends in eq. 1 (saturates early in training)."""
    _, log_one_minus_d_fake = _log_d(fake_outputs, from_logits)
    return ops.mean(log_one_minus_d_fake)


def non_saturating_generator_loss(fake_outputs, from_logits=True):
    """-mean log D(G(z)): the paper's practical advice (Sec. 3), same fixed point, strong early gradients."""
    log_d_fake, _ = _log_d(fake_outputs, from_logits)
    return -ops.mean(log_d_fake)


GENERATOR_LOSSES = {
    "non_saturating": non_saturating_generator_loss,
    "minimax": minimax_generator_loss,
}
