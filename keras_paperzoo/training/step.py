"""The one place in keras-paperzoo with backend branches: an optimizer update.

Papers such as the GAN update several networks in one training step, each with its
own loss and its own optimizer, in a fixed order (Goodfellow et al. 2014,
Algorithm 1: k discriminator updates, then one generator update). Keras's default
`train_step` knows one loss and one optimizer, so trainers of that kind subclass
`MultiOptimizerTrainer` and write their step once, with `keras.ops`:

```python
class MyTrainer(MultiOptimizerTrainer):
    def optimizer_groups(self):
        return {"critic": self.critic.trainable_variables,
                "actor": self.actor.trainable_variables}

    def multi_optimizer_step(self, data):
        critic_loss, _ = self.apply_update("critic", lambda: (self.critic_loss(data), None))
        actor_loss, _ = self.apply_update("actor", lambda: (self.actor_loss(data), None))
        return {"critic_loss": critic_loss, "actor_loss": actor_loss}
```

`apply_update` evaluates the loss with the variables as they are *now* (after the
updates before it in the same step), differentiates it with respect to that
group's variables only, and applies that group's optimizer:

- TensorFlow: `tf.GradientTape` inside Keras's `tf.function`.
- PyTorch: `torch.autograd.grad` on the group's parameters.
- JAX: stateless and jit-compiled. The whole step runs inside a
  `keras.StatelessScope` that maps every variable of the model, its optimizers and
  its metrics to the state Keras's JAX trainer threads through `fit`; each update
  differentiates with `jax.value_and_grad` over the group's values and writes the
  new values (and any other state the loss changed: batch-norm statistics, RNG
  seeds, queues) back into that scope. The new state is returned to Keras.

Writes made with `variable.assign` inside a step (momentum encoders, queues,
pointers) are thus carried on every backend, under `keras.distribution` too.
"""

import keras
from keras import ops

from keras_paperzoo.training.optimizer_group import OptimizerGroup


def apply_gradient_update(loss_fn, variables, optimizer):
    """One optimizer update of `variables` on the loss returned by `loss_fn`.

    Args:
        loss_fn: callable with no arguments returning `(loss, aux)`; `loss` is a
            scalar tensor, `aux` any nest of tensors (returned unchanged).
        variables: list of trainable `keras.Variable`s to differentiate and update.
        optimizer: a built `keras.optimizers.Optimizer` owning `variables`.

    Returns:
        `(loss, aux)` as computed before the update.

    The gradients are those of `optimizer.scale_loss(loss)`, and `optimizer.apply`
    divides them by the same scale, as in Keras's own `train_step`: under
    `mixed_float16` a `MultiOptimizerTrainer`'s optimizers carry the static
    `loss_scale_factor` `MIXED_FLOAT16_LOSS_SCALE`; without one the scale is 1.
    """

    def scaled_loss_fn():
        loss, aux = loss_fn()
        return optimizer.scale_loss(loss), (loss, aux)

    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        with tf.GradientTape() as tape:
            scaled, (loss, aux) = scaled_loss_fn()
        grads = tape.gradient(scaled, variables)
    elif backend == "torch":
        import torch

        scaled, (loss, aux) = scaled_loss_fn()
        params = [variable.value for variable in variables]
        grads = torch.autograd.grad(scaled, params, allow_unused=True)
    elif backend == "jax":
        _, (loss, aux), grads = _jax_value_and_grad(scaled_loss_fn, variables)
    else:
        raise NotImplementedError(
            f"Backend {backend!r} is not supported; use tensorflow, jax or torch."
        )
    _apply(optimizer, grads, variables)
    return loss, aux


def apply_simultaneous_updates(loss_fn, groups):
    """One update of several groups, each on its own loss, all from one evaluation of `loss_fn`.

    Every group's gradient is taken at the variables as they are *before* any of the
    updates, and then each group's optimizer applies its own: the simultaneous
    gradient step of the GAN authors' code (D and G from one minibatch, one forward
    pass, one dropout mask), where `apply_gradient_update` called in turn gives
    Algorithm 1's alternation (G sees the D just updated).

    Args:
        loss_fn: callable with no arguments returning `(losses, aux)`: `losses` a dict
            group name -> scalar loss, `aux` any nest of tensors (returned unchanged).
        groups: dict group name -> `(variables, optimizer)`; the variable lists are
            disjoint.

    Returns:
        `(losses, aux)` as computed before the updates.
    """
    names = list(groups)

    def scaled_loss_fn():
        losses, aux = loss_fn()
        if sorted(losses) != sorted(names):
            raise ValueError(f"loss_fn returned losses for {sorted(losses)}; the groups are {sorted(names)}.")
        scaled = {name: groups[name][1].scale_loss(losses[name]) for name in names}
        return scaled, (losses, aux)

    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        with tf.GradientTape(persistent=True) as tape:
            scaled, (losses, aux) = scaled_loss_fn()
        grads = {name: tape.gradient(scaled[name], groups[name][0]) for name in names}
        del tape
    elif backend == "torch":
        import torch

        scaled, (losses, aux) = scaled_loss_fn()
        grads = {}
        for i, name in enumerate(names):
            params = [variable.value for variable in groups[name][0]]
            grads[name] = torch.autograd.grad(
                scaled[name], params, allow_unused=True, retain_graph=i < len(names) - 1
            )
    elif backend == "jax":
        variables = [v for name in names for v in groups[name][0]]
        losses, aux, grads = _jax_group_grads(scaled_loss_fn, variables, groups, names)
    else:
        raise NotImplementedError(
            f"Backend {backend!r} is not supported; use tensorflow, jax or torch."
        )
    for name in names:  # every gradient above was taken before any variable changed
        variables, optimizer = groups[name]
        _apply(optimizer, grads[name], variables)
    return losses, aux


def _apply(optimizer, grads, variables):
    """`optimizer.apply` with missing gradients as zeros (outside autograd on PyTorch)."""
    grads = [
        ops.zeros_like(v) if g is None else g for g, v in zip(grads, variables)
    ]
    if keras.backend.backend() == "torch":
        import torch

        with torch.no_grad():
            optimizer.apply(grads, variables)
    else:
        optimizer.apply(grads, variables)


def multi_tensor_adam_step(optimizer, grads, variables, learning_rate):
    """Keras's Adam update (`keras.optimizers.Adam.update_step`) for all variables at once.

    On PyTorch it runs as `torch._foreach_*` calls over the list of parameters, as
    Keras's own `Adam`/`AdamW` do on that backend (Keras swaps its multi-tensor
    version in for those exact classes only, not for subclasses such as
    `SelectiveDecayAdamW`, which would otherwise run ~12 element-wise ops per
    variable from Python). The formula is Keras's, epsilon outside the square root:

        m <- m + (1 - beta_1) (g - m);  v <- v + (1 - beta_2) (g^2 - v)
        w <- w - lr sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon)

    Weight decay is not here: Keras's optimizer applies it before this step.

    Returns:
        True if it updated the variables; False (nothing done) on TensorFlow and JAX,
        whose compiled per-variable updates XLA fuses already, and with amsgrad.
    """
    if keras.backend.backend() != "torch" or optimizer.amsgrad:
        return False
    import torch

    with torch.no_grad():
        params = [variable.value for variable in variables]
        slots = [optimizer._get_variable_index(variable) for variable in variables]
        m = [optimizer._momentums[i].value for i in slots]
        v = [optimizer._velocities[i].value for i in slots]
        grads = [torch.as_tensor(g, dtype=p.dtype, device=p.device) for g, p in zip(grads, params)]
        step = float(optimizer.iterations + 1)
        lr = float(learning_rate)
        alpha = lr * (1 - optimizer.beta_2**step) ** 0.5 / (1 - optimizer.beta_1**step)
        torch._foreach_lerp_(m, grads, 1 - optimizer.beta_1)  # m + (1 - beta_1) (g - m)
        torch._foreach_mul_(v, optimizer.beta_2)
        torch._foreach_addcmul_(v, grads, grads, value=1 - optimizer.beta_2)  # v + (1 - beta_2) (g^2 - v)
        denominator = torch._foreach_sqrt(v)
        torch._foreach_add_(denominator, optimizer.epsilon)
        torch._foreach_addcdiv_(params, m, denominator, value=-alpha)
    return True


def multi_tensor_momentum_step(optimizer, grads, variables, learning_rate, momentum, decayed):
    """Keras's SGD update (`keras.optimizers.SGD.update_step`) with coupled L2, for all variables at once.

    On PyTorch it runs as `torch._foreach_*` calls, as Keras's own `SGD` does there
    (Keras swaps its multi-tensor version in for that exact class only, not for
    subclasses such as `ScheduledMomentumSGD`). Measured per update, with L2: ResNet-20's
    57 variables 10.5 -> 1.3 ms, ResNet-50's 159 variables 107 -> 56 ms (the L2 term's
    memory traffic is most of the rest: Keras's SGD without it takes 20 ms). Per variable:

        g <- g + l2 w  (where `decayed`);  v <- momentum v - lr g
        w <- w + v,  or with Nesterov  w <- w + momentum v - lr g

    Args:
        optimizer: the `keras.optimizers.SGD` (subclass) owning `variables`, with
            `l2` (float) and momentum slots when `momentum` may be non-zero.
        momentum: a function of no arguments returning this update's momentum (a
            float). It is called on PyTorch only, where a schedule's value can be read
            eagerly; inside TF's and JAX's compiled steps it could not.
        decayed: one bool per variable: whether it gets the `l2` term.

    Returns:
        True if it updated the variables; False (nothing done) on TensorFlow and JAX,
        whose compiled per-variable updates XLA fuses already.
    """
    if keras.backend.backend() != "torch":
        return False
    import torch

    with torch.no_grad():
        params = [variable.value for variable in variables]
        grads = [torch.as_tensor(g, dtype=p.dtype, device=p.device) for g, p in zip(grads, params)]
        if optimizer.l2:
            grads = [torch.add(g, p, alpha=optimizer.l2) if d else g for g, p, d in zip(grads, params, decayed)]
        lr = float(learning_rate)
        momentum = float(momentum())
        if not optimizer.momentums:  # a constant momentum of 0: no slots, plain SGD
            torch._foreach_add_(params, grads, alpha=-lr)
            return True
        velocities = [optimizer.momentums[optimizer._get_variable_index(v)].value for v in variables]
        torch._foreach_mul_(velocities, momentum)
        torch._foreach_add_(velocities, grads, alpha=-lr)  # v <- momentum v - lr g
        if optimizer.nesterov:
            torch._foreach_add_(params, velocities, alpha=momentum)
            torch._foreach_add_(params, grads, alpha=-lr)
        else:
            torch._foreach_add_(params, velocities)
    return True


def multi_tensor_clip_by_global_norm(grads, clip_norm):
    """Keras's `clip_by_global_norm` (g * clip_norm / max(||g||, clip_norm)) as multi-tensor calls.

    On PyTorch: `torch._foreach_norm` and `torch._foreach_mul` (as `torch.nn.utils.
    clip_grad_norm_`) instead of three ops per variable from Python. A non-finite norm
    gives NaN gradients, as in Keras. Returns None on TensorFlow and JAX (Keras's own
    clipping, fused by XLA there).
    """
    if keras.backend.backend() != "torch":
        return None
    import torch

    with torch.no_grad():
        present = [g for g in grads if g is not None]
        norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(present)))  # ||g|| over all gradients
        scale = clip_norm * torch.clamp(1.0 / norm, max=1.0 / clip_norm) + (norm - norm)
        scaled = iter(torch._foreach_mul(present, scale))
        return [None if g is None else next(scaled) for g in grads]


def _jax_stateless_loss(loss_fn, variables, caller):
    """`loss_fn` as a pure function of `variables`' values, inside the step's `StatelessScope`.

    Returns `(loss_of, values, outer)`: `loss_of(values) -> (loss, (aux, written))`,
    where `written` is the other state the loss changed (RNG seeds, batch-norm
    statistics, ...), for `outer.state_mapping.update(written)` afterwards.
    """
    from keras.src.backend.common.stateless_scope import get_stateless_scope

    outer = get_stateless_scope()
    if outer is None:
        raise RuntimeError(
            f"On JAX, {caller} must run inside "
            "MultiOptimizerTrainer.train_step (a StatelessScope holding the state)."
        )
    own_ids = {id(v) for v in variables}
    before = dict(outer.state_mapping)
    values = [outer.get_current_value(v) for v in variables]
    values = [v.value if value is None else value for v, value in zip(variables, values)]

    def loss_of(values):
        inner = keras.StatelessScope()
        inner.state_mapping = dict(before)
        inner.state_mapping.update({id(v): x for v, x in zip(variables, values)})
        with inner:
            loss, aux = loss_fn()
        written = {
            key: value
            for key, value in inner.state_mapping.items()
            if key not in own_ids and value is not before.get(key)
        }
        return loss, (aux, written)

    return loss_of, values, outer


def _jax_value_and_grad(loss_fn, variables):
    """`jax.value_and_grad` of `loss_fn` inside the step's `StatelessScope`."""
    import jax

    loss_of, values, outer = _jax_stateless_loss(loss_fn, variables, "apply_gradient_update")
    (loss, (aux, written)), grads = jax.value_and_grad(loss_of, has_aux=True)(values)
    outer.state_mapping.update(written)
    return loss, aux, grads


def _jax_group_grads(loss_fn, variables, groups, names):
    """Each group's loss differentiated w.r.t. its own variables: one forward pass, one VJP per group."""
    import jax

    loss_of, values, outer = _jax_stateless_loss(loss_fn, variables, "apply_simultaneous_updates")
    scaled, pullback, ((losses, aux), written) = jax.vjp(loss_of, values, has_aux=True)
    grads, start = {}, 0
    for name in names:
        count = len(groups[name][0])
        cotangent = {other: jax.numpy.zeros_like(scaled[other]) for other in names}
        cotangent[name] = jax.numpy.ones_like(scaled[name])
        (all_grads,) = pullback(cotangent)
        grads[name] = all_grads[start : start + count]
        start += count
    outer.state_mapping.update(written)
    return losses, aux, grads


# The static loss scale of a MultiOptimizerTrainer under mixed_float16: large enough to keep
# small gradients above float16's subnormal floor (6e-8), small enough that a loss of
# order 100 does not overflow its 65,504.
MIXED_FLOAT16_LOSS_SCALE = 128.0


class MultiOptimizerTrainer(keras.Model):
    """A `keras.Model` whose training step updates several optimizers in turn.

    Subclasses implement `optimizer_groups()` (name -> trainable variables) and
    `multi_optimizer_step(data)` (returns a dict of logs), calling
    `self.apply_update(name, loss_fn)` for each update. `compile(optimizers={...})`
    (or `optimizer={...}`, as `Trainer.compile` passes the paper's) takes one
    optimizer per group; they are held in one `OptimizerGroup`, so their
    state is saved with the model, restored by `BackupAndRestore` and threaded
    through JAX's stateless `fit`.

    Under the `mixed_float16` policy every group's loss is multiplied by
    `MIXED_FLOAT16_LOSS_SCALE` before differentiation and its gradients divided by it
    (the optimizers' `loss_scale_factor`): Keras's dynamic `LossScaleOptimizer` cannot sit
    inside a `MultiOptimizer`, so the scale is static and a step with non-finite gradients
    is not skipped. `compile(auto_scale_loss=False)` turns it off.
    """

    def optimizer_groups(self):
        raise NotImplementedError

    def multi_optimizer_step(self, data):
        raise NotImplementedError

    def evaluation_step(self, data):
        """Logs for `evaluate` and validation; no update. Defaults to no logs."""
        return {}

    # --- compile / save -----------------------------------------------------
    def compile(self, optimizers=None, optimizer=None, **kwargs):
        """One optimizer per group: `optimizers={name: optimizer}` (or `optimizer=` the same dict)."""
        if optimizer is not None:
            if optimizers is not None:
                raise ValueError("compile() takes `optimizers` or `optimizer` (the same dict), not both.")
            optimizers = optimizer
        if not isinstance(optimizers, dict) or not optimizers:
            raise ValueError(
                "compile() needs `optimizers`, a dict of group name -> optimizer "
                f"for the groups {sorted(self.optimizer_groups())}; got {optimizers!r}."
            )
        optimizers = {
            name: keras.optimizers.get(opt) for name, opt in optimizers.items()
        }
        loss_scale_factor = None
        if kwargs.pop("auto_scale_loss", True) and self.dtype_policy.name == "mixed_float16":
            # Keras wraps a single optimizer in a (dynamic) LossScaleOptimizer, which a
            # MultiOptimizer cannot hold: each group's loss is scaled by a static factor instead.
            loss_scale_factor = MIXED_FLOAT16_LOSS_SCALE
        groups = self.optimizer_groups()
        if sorted(optimizers) != sorted(groups):
            raise ValueError(
                f"compile() got optimizers for {sorted(optimizers)}, but this model "
                f"updates the groups {sorted(groups)}."
            )
        group = OptimizerGroup(optimizers, loss_scale_factor=loss_scale_factor)
        super().compile(optimizer=group, auto_scale_loss=False, **kwargs)
        group.assign_variables(groups)
        if self.built:
            group.build(self.trainable_variables)

    def compile_from_config(self, config):
        config = keras.saving.deserialize_keras_object(config)
        group = config.pop("optimizer")
        config = {k: v for k, v in config.items() if k in ("jit_compile", "steps_per_execution", "run_eagerly")}
        MultiOptimizerTrainer.compile(self, optimizers=dict(group.named_optimizers), **config)

    # --- RNG state is part of the trainer's state ---------------------------
    # Keras saves no SeedGenerator state, so a resumed run would draw other noise,
    # masks and dropout than the uninterrupted one. Trainers save them all.
    def _rng_states(self):
        states = []
        for layer in self._flatten_layers(include_self=True):
            for seed_generator in getattr(layer, "_seed_generators", []):
                states.append(seed_generator.state)
        return states

    def save_own_variables(self, store):
        super().save_own_variables(store)
        offset = len(self._trainable_variables + self._non_trainable_variables)
        for i, state in enumerate(self._rng_states()):
            store[str(offset + i)] = keras.ops.convert_to_numpy(state.value)

    def load_own_variables(self, store):
        own = self._trainable_variables + self._non_trainable_variables
        keys = set(store.keys())
        super().load_own_variables({str(i): store[str(i)] for i in range(len(own))})
        for i, state in enumerate(self._rng_states()):
            key = str(len(own) + i)
            if key in keys:
                state.assign(store[key])

    # --- the step, on every backend ---------------------------------------
    def apply_update(self, group, loss_fn):
        """Differentiate `loss_fn() -> (loss, aux)` w.r.t. group `group`; step its optimizer."""
        optimizer = self.optimizer[group]
        variables = self.optimizer.group_variables(group)
        return apply_gradient_update(loss_fn, variables, optimizer)

    def apply_updates_together(self, loss_fn):
        """`loss_fn() -> ({group: loss}, aux)` for every group; all stepped from one forward pass.

        Each group's gradient is taken before any update (`apply_simultaneous_updates`);
        `apply_update` called in turn is the alternating alternative.
        """
        groups = {
            group: (self.optimizer.group_variables(group), self.optimizer[group])
            for group in self.optimizer_groups()
        }
        return apply_simultaneous_updates(loss_fn, groups)

    def train_step(self, *args):
        if keras.backend.backend() == "jax":
            state, data = args
            return _jax_stateless_step(self, state, data, self._counted_step, training=True)
        return self._counted_step(args[0])

    def test_step(self, *args):
        if keras.backend.backend() == "jax":
            state, data = args
            return _jax_stateless_step(self, state, data, self.evaluation_step, training=False)
        return self.evaluation_step(args[0])

    def _counted_step(self, data):
        logs = self.multi_optimizer_step(data)
        self.optimizer.iterations.assign_add(1)
        return logs


def _jax_stateless_step(model, state, data, step_fn, training):
    """Run `step_fn(data)` with Keras's JAX `fit` state mapped onto the variables."""
    if training:
        groups = [
            model.trainable_variables,
            model.non_trainable_variables,
            model.optimizer.variables,
            model.metrics_variables,
        ]
    else:
        groups = [
            model.trainable_variables,
            model.non_trainable_variables,
            model.metrics_variables,
        ]
    mapping = [
        (variable, value)
        for variables, values in zip(groups, state)
        for variable, value in zip(variables, values)
    ]
    with keras.StatelessScope(state_mapping=mapping) as scope:
        logs = step_fn(data)
    new_state = tuple(
        [scope.get_current_value(variable) for variable in variables]
        for variables in groups
    )
    return logs, new_state
