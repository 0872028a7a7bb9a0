"""BYOL's regression loss between the online prediction and the target projection, on `keras.ops`.

BYOL (Grill et al. 2020, https://arxiv.org/abs/2006.07733, Sec. 3.1 eq. 2) L2-normalises
the online network's prediction q_theta(z_theta) of one view and the target network's
projection z'_xi of the other view, and regresses one onto the other:

    L = || q_bar - z_bar' ||_2^2 = 2 - 2 <q, z'> / (||q|| ||z'||)

with a stop-gradient on the target (only the online network is trained by gradient; the
target follows it by EMA). Feeding view 2 to the online network and view 1 to the target
gives L~; the paper minimises L + L~.

- `byol_loss(online_prediction, target_projection)`: L, averaged over the batch.
- `symmetric_byol_loss(q1, z2, q2, z1)`: L + L~.

Example:

```python
q1, z2 = keras.random.normal((8, 256)), keras.random.normal((8, 256))
loss = byol_loss(q1, z2)                       # scalar in [0, 4]; about 2 for random vectors
total = symmetric_byol_loss(q1, z2, z2, q1)    # L + L~
```
"""

from keras import ops

from keras_paperzoo.losses.nt_xent import check_two_views


def byol_loss(online_prediction, target_projection):
    """2 - 2 cos(q, sg(z')) per sample (BYOL eq. 2), mean over the batch, in float32.

    Args:
        online_prediction: (B, D) the online predictor's output q for one view.
        target_projection: (B, D) the target projector's output z' for the other view;
            wrapped in `ops.stop_gradient` here, so no gradient reaches the target.

    Returns:
        Float32 scalar in [0, 4]: 0 when each q points along its z', 4 when opposite.

    Raises:
        ValueError: inputs not of rank 2, or of different shapes.
    """
    q = ops.cast(online_prediction, "float32")  # (B, D)
    z = ops.stop_gradient(ops.cast(target_projection, "float32"))  # (B, D), sg(z')
    check_two_views(q, z, "byol_loss", names=("online_prediction", "target_projection"))
    cosine = ops.sum(ops.normalize(q, axis=-1) * ops.normalize(z, axis=-1), axis=-1)  # (B,)
    return ops.mean(2.0 - 2.0 * cosine)


def symmetric_byol_loss(q1, z2, q2, z1):
    """L + L~ (BYOL eq. 2 and its symmetrisation): `byol_loss(q1, z2) + byol_loss(q2, z1)`.

    Args:
        q1: (B, D) online prediction of view 1.
        z2: (B, D) target projection of view 2.
        q2: (B, D) online prediction of view 2.
        z1: (B, D) target projection of view 1.

    Returns:
        Float32 scalar in [0, 8].
    """
    return byol_loss(q1, z2) + byol_loss(q2, z1)
