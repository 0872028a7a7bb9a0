"""`Prototypes`: SwAV's K trainable cluster centres, a bias-free linear layer with unit-norm columns.

SwAV (Caron et al. 2020, https://arxiv.org/abs/2006.09882, Sec. 3.1) scores each
L2-normalised feature z against K prototypes c_k: s = z . C, C = [c_1, ..., c_K]
(D, K), and the authors' code re-normalises every c_k to unit length at each
iteration (`w = normalize(prototypes.weight, dim=1, p=2)` before the forward), so
that z . c_k is a cosine. It also leaves the prototypes out of the first epoch's
updates (`freeze_prototypes_niters 5005`: their gradient is set to None, so the
optimizer neither moves them nor touches their state), which the authors found to
help the first iterations (the README's remedies for collapse include freezing
them longer).

Here:
- the columns are re-normalised by the kernel's constraint, which Keras's
  optimizers apply right after each update (on every backend, JAX's stateless step
  included): the same sequence as normalising at the start of the next step, and
  the kernel is unit-norm whenever it is read. Columns already of unit norm (to
  1e-5) are left bit for bit as they are.
- while frozen (`step < freeze_steps`), the kernel enters the forward pass under
  stop-gradient, so its gradient is exactly zero: an optimizer without weight
  decay on it (SGD, LARS and Adam with the prototypes out of the decay, as
  `SwAV.compile()` sets) leaves it and its slots (momentum, moments) unchanged.
  The step counter and `freeze_steps` are non-trainable int32 variables, saved
  with the model (a resumed run stays frozen exactly as long).

Call it once per training step (SwAV calls it once on the features of all crops,
concatenated): each call with `training=True` counts a step. `scores(z)` gives
z . C without gradient and without counting (SwAV's queue of past features).

Example:

```python
prototypes = Prototypes(3000, freeze_steps=5005)
scores = prototypes(z, training=True)          # z: (B, 128) unit vectors -> (B, 3000) cosines
```
"""

import numbers

import keras
from keras import ops

NORM_TOLERANCE = 1e-5  # columns whose norm is this close to 1 are left untouched


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class Prototypes(keras.layers.Layer):
    """K unit-norm prototypes C (D, K): z (B, D) -> scores z . C (B, K), no bias.

    Args:
        num_prototypes: K, an int >= 1 (3000 in SwAV).
        freeze_steps: the number of training steps (calls with `training=True`) during
            which the prototypes get no gradient, an int >= 0 (SwAV: one epoch,
            5005 iterations at batch 256); `set_freeze_steps` changes it.
        seed: int or None, for the initial random unit columns.
    """

    def __init__(self, num_prototypes, freeze_steps=0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(num_prototypes, bool) or not isinstance(num_prototypes, numbers.Integral) or num_prototypes < 1:
            raise ValueError(f"Prototypes num_prototypes must be an int >= 1; got num_prototypes={num_prototypes!r}.")
        _check_freeze_steps(freeze_steps)
        self.num_prototypes = int(num_prototypes)
        self.freeze_steps = int(freeze_steps)
        self.seed = seed
        self.step = self.add_weight(shape=(), initializer="zeros", dtype="int32", trainable=False,
                                    autocast=False, name="step")
        self.frozen_steps = self.add_weight(shape=(), initializer=keras.initializers.Constant(self.freeze_steps),
                                            dtype="int32", trainable=False, autocast=False, name="freeze_steps")

    def _unit_columns(self, shape, dtype=None):
        values = keras.random.normal(shape, seed=self.seed, dtype="float32")  # (D, K)
        return values / ops.norm(values, axis=0, keepdims=True)

    def _renormalize(self, kernel):
        """The kernel's constraint: each column c_k -> c_k / ||c_k|| (unless already unit-norm to 1e-5)."""
        kernel = ops.convert_to_tensor(kernel)  # (D, K); the optimizer hands over the variable
        norms = ops.sqrt(ops.sum(ops.square(kernel), axis=0, keepdims=True))  # (1, K)
        unit = ops.abs(norms - 1.0) <= NORM_TOLERANCE
        return ops.where(unit, kernel, kernel / ops.maximum(norms, 1e-12))

    def build(self, input_shape):
        dim = input_shape[-1]
        if dim is None:
            raise ValueError(f"Prototypes needs a known feature width; got input shape {tuple(input_shape)}.")
        self.kernel = self.add_weight(shape=(int(dim), self.num_prototypes), initializer=self._unit_columns,
                                      constraint=self._renormalize, name="kernel")  # C: (D, K)
        self.built = True

    @property
    def frozen(self):
        """Whether the next training step leaves the prototypes out (a boolean tensor)."""
        return ops.less(ops.convert_to_tensor(self.step), ops.convert_to_tensor(self.frozen_steps))

    def set_freeze_steps(self, freeze_steps):
        """Freeze the prototypes for the first `freeze_steps` training steps (counted from the first)."""
        _check_freeze_steps(freeze_steps)
        self.freeze_steps = int(freeze_steps)
        self.frozen_steps.assign(self.freeze_steps)

    def call(self, inputs, training=None):
        kernel = ops.convert_to_tensor(self.kernel)  # (D, K)
        if training:
            kernel = ops.where(self.frozen, ops.stop_gradient(kernel), kernel)  # zero gradient while frozen
            self.step.assign_add(1)
        return ops.matmul(inputs, ops.cast(kernel, inputs.dtype))  # (B, D) x (D, K) -> (B, K)

    def scores(self, features):
        """z . C for (N, D) features without gradient and without counting a step: (N, K)."""
        return ops.stop_gradient(ops.matmul(features, ops.cast(self.kernel, features.dtype)))

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], self.num_prototypes)

    def get_config(self):
        return {**super().get_config(), "num_prototypes": self.num_prototypes, "freeze_steps": self.freeze_steps,
                "seed": self.seed}


def _check_freeze_steps(freeze_steps):
    if isinstance(freeze_steps, bool) or not isinstance(freeze_steps, numbers.Integral) or freeze_steps < 0:
        raise ValueError(f"Prototypes freeze_steps must be an int >= 0; got freeze_steps={freeze_steps!r}.")
