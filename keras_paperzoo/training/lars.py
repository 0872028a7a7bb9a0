"""LARS, the layer-wise adaptive rate scaling optimizer of SimCLR, SwAV and BYOL.

You, Gitman and Ginsburg 2017, "Large Batch Training of Convolutional Networks"
(https://arxiv.org/abs/1708.03888, Algorithm 1), as SimCLR's `lars_optimizer.py` writes
it. For each variable w with gradient g:

    g <- g + weight_decay * w                                  (if w is decayed)
    trust_ratio = eta * ||w|| / ||g||  if ||w|| > 0 and ||g|| > 0, else 1   (if w is adapted)
    v <- momentum * v + learning_rate * trust_ratio * g
    w <- w - v                    (Nesterov: w <- w - (momentum * v + learning_rate * trust_ratio * g))

SimCLR (Chen et al. 2020, Sec. 2 and B.1): lr 0.3 x batch / 256, momentum 0.9, weight
decay 1e-6; BYOL (Grill et al. 2020, App. C): lr 0.2 x batch / 256, weight decay 1.5e-6;
both leave biases and batch-norm parameters out of the decay and the adaptation.
"""

import numbers

import keras
from keras import ops

from keras_paperzoo.training.selective_decay import is_bias_or_norm

BIAS_AND_NORM_NAMES = ("bias", "beta", "gamma", "batch_norm", "batchnorm", "layer_norm", "layernorm")


def is_bias_or_norm_parameter(variable):
    """LARS's default exclusion: rank <= 1, named 'bias', or a path naming a bias or normalisation.

    Rank <= 1 covers every Dense/Conv bias and BatchNorm/LayerNorm/GroupNorm gamma and beta
    whatever the layers are called (`is_bias_or_norm`); the case-insensitive substrings of
    `BIAS_AND_NORM_NAMES` in `variable.path` are SimCLR's and BYOL's name rule, for
    parameters of higher rank (e.g. `MultiHeadAttention`'s (heads, head_dim) biases).
    """
    path = variable.path.lower()
    return is_bias_or_norm(variable) or any(name in path for name in BIAS_AND_NORM_NAMES)


def _names(value, argument):
    if isinstance(value, str):
        value = (value,)
    names = tuple(value)
    if not all(isinstance(name, str) and name for name in names):
        raise ValueError(f"{argument} must be a list of non-empty name substrings; got {value!r}.")
    return names


def _number(value, argument, rule, holds):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not holds(value):
        raise ValueError(f"{argument} must be a number {rule}; got {value!r}.")
    return float(value)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class LARS(keras.optimizers.Optimizer):
    """Momentum SGD with a per-variable trust ratio eta ||w|| / ||g|| (You et al. 2017).

    Weight decay here is LARS's own, coupled: weight_decay * w is added to the gradient
    before the trust ratio, as in SimCLR's code. Keras's decoupled `weight_decay` of the
    base class is switched off (the base is given `weight_decay=None`, so `self.weight_decay`
    reads None); the coefficient is `self.lars_weight_decay` and the config's `weight_decay`.

    Which variables are decayed and adapted is decided once, in `build`, from the Keras
    variables (`decays(variable)`, `adapts(variable)`): a variable is excluded from the decay
    if `exclude_bias_and_norm_from_decay` and `is_bias_or_norm_parameter(variable)`, or its
    path contains one of `exclude_from_decay_names` (case-insensitive), or it was named to
    Keras's `optimizer.exclude_from_weight_decay(...)` before building; the same, with the
    `..._adaptation` arguments, for the trust ratio (an excluded variable uses trust ratio 1).

    Args:
        learning_rate: float or `LearningRateSchedule` (SimCLR: 0.3 x batch / 256).
        momentum: float in [0, 1), 0.9 in SimCLR and BYOL.
        weight_decay: float >= 0, coupled decay (SimCLR 1e-6, BYOL 1.5e-6).
        eta: float > 0, the trust coefficient (0.001 in both).
        nesterov: bool, Nesterov momentum (SimCLR's `use_nesterov`, off by default).
        exclude_bias_and_norm_from_decay: bool, apply `is_bias_or_norm_parameter` to the decay.
        exclude_bias_and_norm_from_adaptation: bool, the same for the trust ratio.
        exclude_from_decay_names: further substrings of variable paths to leave undecayed,
            e.g. `["head_supervised"]` (SimCLR's list). Name layers or variables, not the
            outer model: a model loaded from `.keras` has paths without its own name.
        exclude_from_adaptation_names: further substrings of paths to leave unadapted.
        **kwargs: the other `keras.optimizers.Optimizer` arguments (clipnorm, use_ema, ...).

    Example:

    ```python
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
    model.compile(optimizer=LARS(0.3 * 256 / 256, weight_decay=1e-6), loss="mse")  # SimCLR, batch 256
    model.fit(np.ones((16, 8)), np.zeros((16, 4)), verbose=0)
    ```
    """

    def __init__(
        self,
        learning_rate=0.3,
        momentum=0.9,
        weight_decay=1e-6,
        eta=0.001,
        nesterov=False,
        exclude_bias_and_norm_from_decay=True,
        exclude_bias_and_norm_from_adaptation=True,
        exclude_from_decay_names=(),
        exclude_from_adaptation_names=(),
        name=None,
        **kwargs,
    ):
        # weight_decay=None: the base class must not apply its decoupled decay on top of LARS's.
        super().__init__(learning_rate=learning_rate, weight_decay=None, name=name, **kwargs)
        self.momentum = _number(momentum, "momentum", "in [0, 1)", lambda m: 0 <= m < 1)
        self.lars_weight_decay = _number(0.0 if weight_decay is None else weight_decay, "weight_decay", ">= 0",
                                         lambda d: d >= 0)
        self.eta = _number(eta, "eta", "> 0", lambda e: e > 0)
        self.nesterov = bool(nesterov)
        self.exclude_bias_and_norm_from_decay = bool(exclude_bias_and_norm_from_decay)
        self.exclude_bias_and_norm_from_adaptation = bool(exclude_bias_and_norm_from_adaptation)
        self.exclude_from_decay_names = _names(exclude_from_decay_names, "exclude_from_decay_names")
        self.exclude_from_adaptation_names = _names(exclude_from_adaptation_names, "exclude_from_adaptation_names")

    def decays(self, variable):
        """Whether LARS adds weight_decay * w to the gradient of `variable` (a Keras variable)."""
        if not self.lars_weight_decay:
            return False
        if self.exclude_bias_and_norm_from_decay and is_bias_or_norm_parameter(variable):
            return False
        path = variable.path.lower()
        if any(name.lower() in path for name in self.exclude_from_decay_names):
            return False
        return self._use_weight_decay(variable)  # Keras's exclude_from_weight_decay(...)

    def adapts(self, variable):
        """Whether `variable` (a Keras variable) gets the trust ratio eta ||w|| / ||g||, not 1."""
        if self.exclude_bias_and_norm_from_adaptation and is_bias_or_norm_parameter(variable):
            return False
        path = variable.path.lower()
        return not any(name.lower() in path for name in self.exclude_from_adaptation_names)

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self.momentums = self.add_optimizer_variables(var_list, "momentum")  # v, one per variable
        # Decided here, on the Keras variables: on TensorFlow `update_step` receives the
        # underlying tf.Variables, which have no path; `_var_key` maps both to one key.
        self._decayed_keys = {self._var_key(v) for v in var_list if self.decays(v)}
        self._adapted_keys = {self._var_key(v) for v in var_list if self.adapts(v)}

    def update_step(self, gradient, variable, learning_rate):
        key = self._var_key(variable)  # Python decisions on the variable, none on tensor values
        learning_rate = ops.cast(learning_rate, variable.dtype)
        gradient = ops.cast(gradient, variable.dtype)
        if key in self._decayed_keys:
            gradient = gradient + self.lars_weight_decay * variable  # g <- g + wd w
        scaled_lr = learning_rate
        if key in self._adapted_keys:
            scaled_lr = learning_rate * self._trust_ratio(variable, gradient)  # scalar
        velocity = self.momentums[self._get_variable_index(variable)]
        step = scaled_lr * gradient  # lr * trust_ratio * g, the variable's shape
        self.assign(velocity, self.momentum * velocity + step)  # v <- m v + lr tr g
        if self.nesterov:
            self.assign_sub(variable, self.momentum * velocity + step)  # w <- w - (m v + lr tr g)
        else:
            self.assign_sub(variable, velocity)  # w <- w - v

    def _trust_ratio(self, variable, gradient):
        """eta ||w|| / ||g|| where both norms are > 0, else 1 (a scalar of the variable's dtype)."""
        w_norm = ops.sqrt(ops.sum(ops.square(variable)))  # ()
        g_norm = ops.sqrt(ops.sum(ops.square(gradient)))  # ()
        both_positive = ops.logical_and(w_norm > 0, g_norm > 0)
        ratio = self.eta * w_norm / ops.where(g_norm > 0, g_norm, ops.ones_like(g_norm))
        return ops.where(both_positive, ratio, ops.ones_like(ratio))

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "momentum": self.momentum,
                "weight_decay": self.lars_weight_decay,
                "eta": self.eta,
                "nesterov": self.nesterov,
                "exclude_bias_and_norm_from_decay": self.exclude_bias_and_norm_from_decay,
                "exclude_bias_and_norm_from_adaptation": self.exclude_bias_and_norm_from_adaptation,
                "exclude_from_decay_names": list(self.exclude_from_decay_names),
                "exclude_from_adaptation_names": list(self.exclude_from_adaptation_names),
            }
        )
        return config
