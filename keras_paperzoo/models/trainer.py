"""`Trainer`: what every trainer of keras-paperzoo shares (as keras-hub's `Task`).

A trainer is a `keras.Model` that carries a paper's objective. Beyond the objective,
every trainer needs the same four things, written once here:

- `get_config()`: the constructor arguments, read from the attributes of the same
  name; the Keras objects among them (backbones, generators, tokenizers, layers)
  nested with `keras.saving.serialize_keras_object`.
- `from_config()`: those nested objects deserialized, then the constructor.
- `compile()` with no optimizer gives the paper's: the trainer's
  `paper_optimizer(**recipe)` builds it, where `recipe` is every `compile` argument
  that `keras.Model.compile` does not know (`batch_size`, `steps_per_epoch`,
  `epochs`, ...). `paper_loss` and `paper_metrics` likewise give the loss and
  metrics when the user passes none; a trainer whose objective *is* the loss
  (`fixed_loss = True`: MoCo's InfoNCE, MAE's masked MSE) refuses `loss=`.
  `set_run_length(**recipe)` is called by every `compile()`, the user's optimizer
  or the paper's: a trainer whose own state follows the run (BYOL's tau schedule,
  SwAV's prototype freeze) reads `steps_per_epoch` / `epochs` there.
- `compile_from_config()`: what was saved, not the paper's defaults.
- `from_preset(name, **overrides)` over one preset schema (`PRESET_SCHEMA`).
- `fit()` checks the NumPy data it is given once, before training (`check_fit_data`):
  every float array finite, and what the trainer adds in `check_inputs` (class ids
  in range, token ids in the vocabulary, sequence lengths, the smallest batch), with
  one message naming the value and the rule. Inside the compiled step the same
  mistakes train silently on JAX (an out-of-range id is clamped) or fail deep in the
  graph elsewhere. A `tf.data.Dataset`, a generator or another `PyDataset` cannot be
  read up front and is not checked.

`Trainer` is a mix-in placed before the Keras model class, so that functional
trainers (`ImageClassifier`, `GPTCausalLM`) and subclassed ones (`MoCo`) share it:
Keras turns a functional subclass into a `Functional` by rewriting the bases of its
class hierarchy, which must not reach the subclassed trainers.

```python
@keras.saving.register_keras_serializable(package="keras_paperzoo")
class MyTrainer(Trainer, keras.Model):
    backbone_class = ResNetBackbone
    presets = {
        "my_tiny": {
            "description": "ResNet-8 and a 32-d output.",
            "backbone": {"preset": "resnet20_cifar", "overrides": {"stage_blocks": [1, 1, 1]}},
            "arguments": {"output_dim": 32},
        },
    }

    def __init__(self, backbone, output_dim=128, **kwargs):
        super().__init__(**kwargs)
        self.backbone, self.output_dim = backbone, output_dim   # get_config reads these

    def paper_optimizer(self, batch_size=256):
        return keras.optimizers.SGD(0.1 * batch_size / 256, momentum=0.9)

trainer = MyTrainer.from_preset("my_tiny", output_dim=64)
trainer.compile(batch_size=64)        # the paper's SGD at lr 0.025
```
"""

import copy
import inspect

import numpy as np

import keras

from keras_paperzoo.data.checks import check_finite
from keras_paperzoo.models.backbone import argument_names, constructor_config
from keras_paperzoo.training.compile_state import restore_compile

# The arguments of keras.Model.compile: everything else given to a trainer's compile()
# is an argument of its paper recipe.
KERAS_COMPILE_ARGUMENTS = frozenset(inspect.signature(keras.Model.compile).parameters) - {"self"}

PRESET_SCHEMA = """A trainer preset is a dict with three keys:
    "description": one line on what it is and where its numbers come from;
    "backbone": {"preset": NAME or None, "overrides": {...}}: the backbone, built by
        `backbone_class.from_preset(NAME, **overrides)` (or `backbone_class(**overrides)`
        when NAME is None); trainers with other networks read the same dict in
        `build_backbones`;
    "arguments": {...}: the trainer's own constructor arguments."""


class Trainer:
    """Mix-in base of every trainer: config, presets and the paper's `compile()`.

    Class attributes a trainer sets:
        backbone_class: the class that builds the presets' backbones (its
            `from_preset`), e.g. `ResNetBackbone`.
        backbone_argument: the constructor argument that takes the backbone
            ("backbone"; MAE's is "encoder").
        presets: name -> preset (see `PRESET_SCHEMA`); when a name is not there but
            is one of `backbone_class.presets`, that backbone with no trainer
            arguments (`GPTCausalLM.from_preset("gpt2_small")`).
        fixed_loss: True when the paper's objective is the loss, so that
            `compile(loss=...)` and `compile(metrics=...)` are refused.
        shared_network_arguments: trainer arguments that `build_backbones` receives
            too (GAN's `latent_dim`).
        argument_attributes: constructor argument -> the attribute that holds it,
            where the two names differ (`loss` is keras.Model's own attribute, so
            InstDisc and CMC keep their `loss` argument in `objective`).

    Methods a trainer may implement:
        paper_optimizer(**recipe): the paper's optimizer (and schedule);
        paper_loss(**recipe), paper_metrics(**recipe): defaults for `loss=` and
            `metrics=` (None: Keras's);
        set_run_length(**recipe): the run's length for the trainer's own schedules
            (not the optimizer's), called by every `compile()`;
        build_backbones(backbone_spec, overrides): the constructor's network
            arguments from a preset's "backbone" entry (a GAN builds two).
    """

    backbone_class = None
    backbone_argument = "backbone"
    presets = {}
    fixed_loss = False
    # Trainer arguments that also size the networks a preset builds (GAN's latent_dim, the
    # size of z and of the generator's input): `from_preset` gives them to `build_backbones` too.
    shared_network_arguments = ()
    argument_attributes = {}

    # --- compile with the paper's recipe ------------------------------------------
    def paper_optimizer(self, **recipe):
        raise NotImplementedError(
            f"{type(self).__name__} has no paper optimizer: pass compile(optimizer=...)."
        )

    def paper_loss(self, **recipe):
        return None

    def paper_metrics(self, **recipe):
        return None

    def set_run_length(self, **recipe):
        """Called by every `compile()` (whatever the optimizer) with the recipe's run arguments it names.

        A trainer whose own state follows the run's length (BYOL's tau over K steps) sets
        it here, so that `compile(optimizer=X, steps_per_epoch=..., epochs=...)` keeps the
        paper's schedule. Nothing by default.
        """

    def compile(self, optimizer=None, loss=None, metrics=None, **kwargs):
        """`keras.Model.compile` with the paper's optimizer, loss and metrics where none is given.

        Args:
            optimizer, loss, metrics: as Keras's; None gives the paper's.
            **kwargs: `keras.Model.compile`'s other arguments (`jit_compile`, ...)
                and the paper recipe's (see the trainer's `paper_optimizer`).
        """
        keras_arguments = {k: v for k, v in kwargs.items() if k in KERAS_COMPILE_ARGUMENTS}
        recipe = {k: v for k, v in kwargs.items() if k not in KERAS_COMPILE_ARGUMENTS}
        hooks = (self.paper_optimizer, self.paper_loss, self.paper_metrics, self.set_run_length)
        known = set().union(*(argument_names(hook) for hook in hooks))
        unknown = sorted(set(recipe) - known)
        if unknown:
            raise ValueError(
                f"{type(self).__name__}.compile got unknown argument(s) {unknown}; its recipe takes "
                f"{sorted(known) or 'none'}, and keras.Model.compile takes {sorted(KERAS_COMPILE_ARGUMENTS)}."
            )
        if self.fixed_loss and (loss is not None or metrics is not None):
            raise ValueError(
                f"{type(self).__name__}.compile takes no loss= or metrics=: its loss and metrics are fixed, "
                f"the paper's objective (got loss={loss!r}, metrics={metrics!r})."
            )
        _call_with(self.set_run_length, recipe)  # with the user's optimizer too
        if optimizer is None:
            optimizer = _call_with(self.paper_optimizer, recipe)
        if loss is None:
            loss = _call_with(self.paper_loss, recipe)
        if metrics is None:
            metrics = _call_with(self.paper_metrics, recipe)
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **keras_arguments)

    def compile_from_config(self, config):
        restore_compile(self, config)  # what was saved, not compile()'s paper defaults

    # --- the data boundary ----------------------------------------------------------------
    def fit(self, x=None, y=None, *args, **kwargs):
        """`keras.Model.fit`, after `check_fit_data` of the training data and of NumPy `validation_data`."""
        batch_size = args[0] if args else kwargs.get("batch_size")
        self.check_fit_data(x, y, batch_size)
        validation = kwargs.get("validation_data")
        if isinstance(validation, (tuple, list)) and 1 <= len(validation) <= 3:  # (x, y) or (x, y, sample weights)
            self.check_fit_data(validation[0], validation[1] if len(validation) > 1 else None,
                                names=("validation_data[0]", "validation_data[1]"))
        return super().fit(x, y, *args, **kwargs)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        """`keras.Model.evaluate`, after `check_fit_data` of NumPy data (no batch-size rule: nothing is trained).

        `fit` runs its validation through here with Keras's cached dataset, checked once by `fit`.
        """
        if not kwargs.get("_use_cached_eval_dataset"):
            self.check_fit_data(x, y, names=("x", "y"))
        return super().evaluate(x, y, *args, **kwargs)

    def check_fit_data(self, x, y=None, batch_size=None, names=None):
        """Check the data `fit` got, once: NumPy arrays (a dict or tuple of them) or `EpochShuffledBatches`.

        `names`: (x's, y's) name in the messages for validation or evaluation data, whose
        batches train nothing, so the trainer's batch-size rules are not applied to them.

        Every float array must be finite (`check_finite`), then `check_inputs(x, y,
        batch_size, examples, drop_remainder)` applies the trainer's own rules. The cost is
        one vectorised pass over each array (min and max), once per `fit` call, not per
        step. Other data (`tf.data`, generators, tensors, other `PyDataset`s) cannot be read
        up front and is left to the step.
        """
        arrays = numpy_data(x, y, batch_size)
        if arrays is None:
            return
        x, y, batch_size, examples, drop_remainder, checked = arrays
        x_name, y_name = names or ("x", "y")
        if not checked:  # EpochShuffledBatches checks its x itself
            for name, value in _named_leaves(x, x_name):
                check_finite(value, name)
        for name, value in _named_leaves(y, y_name):
            check_finite(value, name)
        if names:  # validation or evaluation data: the trainer's value rules, not its batch rules
            batch_size, drop_remainder = None, False
        self.check_inputs(x, y, batch_size=batch_size, examples=examples, drop_remainder=drop_remainder)

    def check_inputs(self, x, y, batch_size=None, examples=None, drop_remainder=False):
        """The trainer's own rules for NumPy `x` and `y` (None when absent); raise a ValueError naming the value.

        `batch_size`: the batch `fit` will use, `examples`: N, `drop_remainder`: whether the
        last partial batch is dropped. Nothing by default.
        """

    # --- config -----------------------------------------------------------------------
    def get_config(self):
        """The constructor's arguments, read from the attributes of the same names."""
        return {"name": self.name, "trainable": self.trainable, **constructor_config(self, self.argument_attributes)}

    @classmethod
    def from_config(cls, config):
        config = copy.deepcopy(config)  # Keras's deserialization consumes nested dicts
        for name, value in config.items():
            if _is_serialized_object(value):
                config[name] = keras.saving.deserialize_keras_object(value)
        return cls(**config)

    # --- presets ------------------------------------------------------------------------
    @classmethod
    def preset_names(cls):
        names = set(cls.presets)
        if cls.backbone_class is not None:
            names |= set(cls.backbone_class.presets)
        return sorted(names)

    @classmethod
    def from_preset(cls, name, **overrides):
        """Build the named configuration; any trainer or backbone argument may be overridden.

        A trainer argument (`cls.__init__`'s) replaces the preset's; any other goes to
        the backbone; `backbone=` replaces the preset's backbone. Unknown names are
        refused with the known ones listed.
        """
        preset = cls._preset(name)
        if overrides.get("image_shape") is not None:  # 28.5 or 0 refused here for every trainer
            from keras_paperzoo.models.backbone import check_image_shape

            overrides["image_shape"] = check_image_shape(cls.__name__, overrides["image_shape"])
        own = set(argument_names(cls.__init__))
        arguments = dict(preset.get("arguments", {}))
        arguments.update({k: v for k, v in overrides.items() if k in own})
        backbone_overrides = {k: v for k, v in overrides.items() if k not in own}
        given = {k: arguments.pop(k) for k in list(arguments) if k in cls._network_arguments()}
        networks = {k: v for k, v in given.items() if v is not None}
        if not networks:
            shared = {k: arguments[k] for k in cls.shared_network_arguments if arguments.get(k) is not None}
            networks = cls.build_backbones(preset.get("backbone") or {}, {**backbone_overrides, **shared})
        elif backbone_overrides:
            raise ValueError(
                f"{cls.__name__}.from_preset: pass either {', '.join(f'{k}=' for k in sorted(networks))} or "
                f"{', '.join(f'{k}=' for k in sorted(backbone_overrides))}, not both (they would change the "
                "preset's network that the first replaces)."
            )
        return cls(**networks, **arguments)

    @classmethod
    def _network_arguments(cls):
        return (cls.backbone_argument,)

    @classmethod
    def _preset(cls, name):
        if name in cls.presets:
            return cls.presets[name]
        if cls.backbone_class is not None and name in cls.backbone_class.presets:
            return {"backbone": {"preset": name, "overrides": {}}, "arguments": {}}
        raise ValueError(
            f"Unknown {cls.__name__} preset {name!r}; available: {', '.join(cls.preset_names())}."
        )

    @classmethod
    def backbone_class_for(cls, preset):
        """The class that builds backbone preset `preset` (None: the trainer's own default network).

        `backbone_class` unless a trainer has networks of several kinds (CPC's image
        and sequence encoders).
        """
        return cls.backbone_class

    @classmethod
    def build_backbones(cls, backbone_spec, overrides):
        """{backbone_argument: backbone} for a preset's "backbone" entry and the user's overrides."""
        backbone_class = cls.backbone_class_for(backbone_spec.get("preset"))
        if backbone_class is None:
            raise ValueError(f"{cls.__name__} has no backbone class to build a preset's backbone from.")
        arguments = {**backbone_spec.get("overrides", {}), **overrides}
        known = set(argument_names(backbone_class.__init__)) | {"name", "dtype", "trainable"}
        unknown = sorted(set(arguments) - known)
        if unknown:
            raise ValueError(
                f"Unknown override(s) {unknown} for {cls.__name__}.from_preset: not an argument of "
                f"{cls.__name__} ({', '.join(argument_names(cls.__init__))}) nor of "
                f"{backbone_class.__name__} ({', '.join(sorted(known))})."
            )
        if backbone_spec.get("preset"):
            backbone = backbone_class.from_preset(backbone_spec["preset"], **arguments)
        else:
            backbone = backbone_class(**arguments)
        return {cls.backbone_argument: backbone}


def numpy_data(x, y=None, batch_size=None):
    """(x, y, batch_size, examples, drop_remainder, x_checked) of NumPy data given to `fit`, or None for other data.

    `EpochShuffledBatches` (and its subclasses) give their arrays; Keras's default batch
    for arrays is 32.
    """
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches

    if isinstance(x, keras.utils.PyDataset):
        if not isinstance(x, EpochShuffledBatches):
            return None
        batches = x
        if type(batches).__getitem__ is EpochShuffledBatches.__getitem__:  # rows of x (and y) as they are
            x, y = (x.x if _is_numpy(x.x) else None), (x.y if _is_numpy(x.y) else None)
        elif isinstance(getattr(x, "ids", None), np.ndarray) and getattr(x, "sequence_length", None):
            x, y = _windows(x.ids, x.sequence_length), None  # RandomWindows: every token, in windows of T
        else:
            return None
        return x, y, batches.batch_size, batches.size, batches.drop_remainder, True
    if not _is_numpy(x) or x is None:
        return None
    leaves = [v for _, v in _named_leaves(x, "x")]
    examples = len(leaves[0]) if leaves and np.ndim(leaves[0]) else None
    return x, y if _is_numpy(y) else None, batch_size or 32, examples, False, False


def _windows(ids, length):
    """(rows, length) windows of a token sequence covering every token (the last one overlapping)."""
    rows = ids[: len(ids) // length * length].reshape(-1, length)
    return np.concatenate([rows, ids[None, -length:]]) if len(ids) % length else rows


def _is_numpy(value):
    """A NumPy array, or a dict / list / tuple of them (None counts as nothing to check)."""
    if value is None or isinstance(value, np.ndarray):
        return True
    if isinstance(value, dict):
        return all(_is_numpy(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return bool(value) and all(isinstance(v, np.ndarray) or isinstance(v, (dict, list, tuple)) and _is_numpy(v)
                                   for v in value)
    return False


def _named_leaves(value, name):
    """[(name, array)] of NumPy `value`: x, x['images'], x[0], ..."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [leaf for key, v in value.items() for leaf in _named_leaves(v, f"{name}[{key!r}]")]
    if isinstance(value, (list, tuple)):
        return [leaf for i, v in enumerate(value) for leaf in _named_leaves(v, f"{name}[{i}]")]
    return [(name, value)]


def _call_with(hook, recipe):
    names = set(argument_names(hook))
    return hook(**{k: v for k, v in recipe.items() if k in names})


def _is_serialized_object(value):
    return isinstance(value, dict) and "class_name" in value and "config" in value
