"""AdamW whose decoupled weight decay skips biases and normalisation parameters, saved with the model.

The MAE, BEiT and DeiT recipes (and timm's `param_groups_weight_decay`) apply
weight decay to weight matrices only: "no weight decay" for biases and LayerNorm
scales and offsets. Keras's `optimizer.exclude_from_weight_decay(...)` does this but
is not part of the optimizer's config, so a model saved to `.keras` and loaded
again would decay everything. `SelectiveDecayAdamW` keeps the rule in its config.
"""

import re

import keras

from keras_paperzoo.training.step import multi_tensor_adam_step, multi_tensor_clip_by_global_norm

NO_DECAY_RULES = ("bias_and_norm", None)


def is_bias_or_norm(variable):
    """True for biases and normalisation parameters: variables of rank <= 1 or named 'bias'.

    Rank <= 1 covers Dense/Conv biases and LayerNorm/BatchNorm gamma and beta (timm's
    `ndim <= 1` rule); the name catches `MultiHeadAttention`'s (heads, head_dim) biases.
    """
    return len(variable.shape) <= 1 or variable.name == "bias"


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class SelectiveDecayAdamW(keras.optimizers.AdamW):
    """`keras.optimizers.AdamW` with a serializable no-weight-decay rule.

    Args:
        no_decay: "bias_and_norm" (default: `is_bias_or_norm` variables get no decay)
            or None (decay every variable, Keras's behaviour).
        no_decay_paths: list of regular expressions; variables whose `path` matches
            one (`re.search`) get no decay either, e.g. `["position_embedding",
            "class_token"]` (MAE fine-tuning's no-decay list).
        epsilon: 1e-8 by default, PyTorch's AdamW default used by the papers' code
            (Keras's is 1e-7).
        Other arguments as for `keras.optimizers.AdamW`.

    Example:

    ```python
    # MAE pre-training (He et al. 2022, Table 8): AdamW(0.9, 0.95), weight decay 0.05.
    opt = SelectiveDecayAdamW(1.5e-4 * 4096 / 256, beta_2=0.95, weight_decay=0.05)
    ```
    """

    def __init__(self, learning_rate=0.001, weight_decay=0.004, epsilon=1e-8, no_decay="bias_and_norm",
                 no_decay_paths=(), **kwargs):
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay, epsilon=epsilon, **kwargs)
        if no_decay not in NO_DECAY_RULES:
            raise ValueError(f"no_decay must be 'bias_and_norm' or None; got {no_decay!r}.")
        self.no_decay = no_decay
        self.no_decay_paths = [str(p) for p in no_decay_paths]
        self._no_decay_pattern = re.compile("|".join(f"(?:{p})" for p in self.no_decay_paths)) if self.no_decay_paths else None

    def excluded(self, variable):
        """Whether the rule exempts `variable` (a Keras variable) from weight decay."""
        if self.no_decay == "bias_and_norm" and is_bias_or_norm(variable):
            return True
        return self._no_decay_pattern is not None and self._no_decay_pattern.search(variable.path) is not None

    def build(self, var_list):
        if not self.built:
            # Decided here, on the Keras variables: the TensorFlow backend later asks
            # `_use_weight_decay` about the underlying tf.Variables, which have no path.
            self._no_decay_keys = {self._var_key(v) for v in var_list if self.excluded(v)}
        super().build(var_list)

    def _use_weight_decay(self, variable):
        if self._var_key(variable) in getattr(self, "_no_decay_keys", ()):
            return False
        return super()._use_weight_decay(variable)

    def _clip_gradients(self, grads):
        # PyTorch: global-norm clipping as two multi-tensor calls (BERT's optimizer clips at 1.0).
        if self.global_clipnorm and not self.clipnorm:
            clipped = multi_tensor_clip_by_global_norm(grads, self.global_clipnorm)
            if clipped is not None:
                return clipped
        return super()._clip_gradients(grads)

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        # PyTorch: one multi-tensor update, as Keras's own AdamW gets there; elsewhere, or when a
        # subclass changes the per-variable `update_step`, Keras's loop over `update_step`.
        own_rule = type(self).update_step is not keras.optimizers.Adam.update_step
        if own_rule or not multi_tensor_adam_step(self, grads, trainable_variables, learning_rate):
            super()._backend_update_step(grads, trainable_variables, learning_rate)

    def decays(self, variable):
        """Whether `variable` (a Keras variable) gets weight decay from this optimizer."""
        return bool(self.weight_decay) and not self.excluded(variable) and self._use_weight_decay(variable)

    def get_config(self):
        config = super().get_config()
        config.update({"no_decay": self.no_decay, "no_decay_paths": list(self.no_decay_paths)})
        return config
