"""The base of every backbone: a functional `keras.Model` with named presets.

A backbone subclass builds its functional graph inside `__init__` (keras-hub's
three parts: `# === Layers ===`, `# === Functional Model ===`, `# === Config ===`),
validates its arguments with messages that name the value and the rule, returns
exactly its constructor arguments from `get_config()`, and lists its named
configurations in a class attribute `presets`:

```python
class TinyBackbone(Backbone):
    presets = {"tiny": {"description": "one conv", "config": {"filters": 8}}}

    def __init__(self, filters, image_shape=(32, 32, 3), **kwargs):
        inputs = keras.Input(image_shape)
        outputs = keras.layers.Conv2D(filters, 3)(inputs)
        super().__init__(inputs, outputs, **kwargs)
        self.filters, self.image_shape = filters, image_shape

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "image_shape": self.image_shape}

TinyBackbone.from_preset("tiny", filters=16)
```
"""

import copy
import inspect
import numbers

import keras


class Presets:
    """Named configurations for a model class: `from_preset(name, **overrides)` over a class attribute `presets`.

    Mixed into `Backbone` (functional) and into a backbone that must be a subclassed
    `keras.Model` (`BEiTBackbone`, whose [M] embedding and pre-training norm lie outside
    the graph of its `call`): such a class must not derive from `Backbone`, because once a
    functional subclass is built Keras rebases `Backbone` on `Functional`
    (`inject_functional_model_class`), and a subclassed model's `__init__` would then fail.
    """

    presets = {}

    @classmethod
    def from_preset(cls, name, **overrides):
        """Build the named configuration; any constructor argument can be overridden.

        Example: `ResNetBackbone.from_preset("resnet20_cifar", image_shape=(28, 28, 1))`.
        """
        if name not in cls.presets:
            raise ValueError(
                f"Unknown {cls.__name__} preset {name!r}; available: {', '.join(sorted(cls.presets))}."
            )
        known = set(inspect.signature(cls.__init__).parameters) - {"self", "kwargs"}
        unknown = sorted(set(overrides) - known - {"name", "dtype", "trainable"})
        if unknown:
            raise ValueError(
                f"Unknown override(s) {unknown} for {cls.__name__} preset {name!r}; "
                f"{cls.__name__} takes {', '.join(sorted(known))}."
            )
        config = dict(cls.presets[name]["config"])
        config.update(overrides)
        return cls(**config)

    @classmethod
    def preset_names(cls):
        return sorted(cls.presets)

    def get_config(self):
        # Only the base Layer arguments; subclasses add their constructor arguments
        # (`constructor_config(self)` where each is kept in the attribute of its name).
        return {"name": self.name, "trainable": self.trainable}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Backbone(Presets, keras.Model):
    """Functional backbone with `from_preset(name, **overrides)`."""


def argument_names(function):
    """Named parameters of `function`, without self and *args / **kwargs."""
    parameters = inspect.signature(function).parameters.values()
    return [
        p.name for p in parameters
        if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def constructor_config(model, attributes=None):
    """{argument: value} for every constructor argument of `model`, read from the attribute of the same name.

    `attributes` maps an argument to another attribute where the two names differ. Keras
    objects among the values (a backbone, a stem layer) are nested with
    `keras.saving.serialize_keras_object`; `from_config` turns them back (`deserialize_nested`).
    """
    attributes = attributes or {}
    config = {}
    for name in argument_names(type(model).__init__):
        value = getattr(model, attributes.get(name, name))
        if isinstance(value, keras.layers.Layer) or hasattr(value, "get_config"):
            value = keras.saving.serialize_keras_object(value)
        config[name] = value
    return config


def check_positive_ints(owner, name, values, length=None):
    """`values` as a tuple of positive ints (exactly `length` of them when given).

    Raises ValueError naming `owner` (e.g. "VGGBackbone"), the argument and the value.
    """
    try:
        values = tuple(values)
    except TypeError:
        values = None
    if (
        values is None
        or not values
        or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values)
        or (length is not None and len(values) != length)
    ):
        count = f"{length} " if length is not None else "a non-empty list of "
        raise ValueError(f"{owner} {name} must be {count}positive ints; got {name}={values!r}.")
    return values


def check_image_shape(owner, image_shape, include_fc=False, min_size=1, why="", fixed_size=False):
    """`image_shape` as (height, width, channels) of Python ints (None: a side of any size).

    Every model's `image_shape` goes through here (`Trainer.from_preset`, the backbones,
    the GAN's networks): 28.5 or 0 is refused, never truncated or built.

    Args:
        owner: the class name used in messages.
        include_fc: the net flattens its last feature map into dense layers, so height
            and width must be known.
        min_size: the smallest height/width the net's strides and poolings leave room for.
        why: what sets `min_size`, for the message (e.g. "the five 2x2 max-poolings").
        fixed_size: the model's patch grid or position table fixes height and width, so
            neither may be None (ViT, BEiT, BEiT's tokenizer).
    """
    try:
        image_shape = tuple(image_shape)
    except TypeError:
        image_shape = (image_shape,)
    if len(image_shape) != 3 or any(
        d is not None and (isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1) for d in image_shape
    ):
        raise ValueError(
            f"{owner} image_shape must be (height, width, channels) of positive ints; got {image_shape!r}."
        )
    image_shape = tuple(None if d is None else int(d) for d in image_shape)
    height, width, channels = image_shape
    if channels is None:
        raise ValueError(f"{owner} needs a known number of channels; got image_shape={image_shape}.")
    if fixed_size and (height is None or width is None):
        raise ValueError(f"{owner} needs a known height and width (its patch grid is fixed); got "
                         f"image_shape={image_shape}.")
    if include_fc and (height is None or width is None):
        raise ValueError(
            f"{owner} with include_fc=True needs a known height and width (fc6 takes the "
            f"flattened pool5 map); got image_shape={image_shape}. Pass include_fc=False for a "
            "feature extractor on images of any size."
        )
    for side, size in (("height", height), ("width", width)):
        if size is not None and size < min_size:
            raise ValueError(
                f"{owner} image {side} {size} is too small: {why} need at least {min_size} "
                f"pixels; got image_shape={image_shape}."
            )
    return image_shape


def transformer_layer_stack(layer_class, num_layers, intermediate_dim, num_heads, dropout, activation,
                            layer_norm_epsilon, initializer, normalize_first):
    """`num_layers` keras-hub Transformer layers of `layer_class` (`TransformerEncoder`, `TransformerDecoder`).

    Layer i is named `transformer_layer_{i}`; each gets a fresh `initializer()` for its kernels.
    BERT's encoder stack (post-norm) and GPT's decoder stack (pre-norm from GPT-2 on) are built
    here; `layer_class` is passed in, so this module does not import keras-hub (an optional package).
    """
    return [
        layer_class(
            intermediate_dim=intermediate_dim,
            num_heads=num_heads,
            dropout=dropout,
            activation=activation,
            layer_norm_epsilon=layer_norm_epsilon,
            kernel_initializer=initializer(),
            normalize_first=normalize_first,
            name=f"transformer_layer_{i}",
        )
        for i in range(num_layers)
    ]


def deserialize_nested(config, *names):
    """A copy of `config` with the serialized Keras objects under `names` deserialized.

    For `from_config` of models that wrap others (a trainer and its backbone, a GAN
    and its two networks, a translator and its tokenizer): their `get_config` nests
    the inner objects with `keras.saving.serialize_keras_object`. The copy is deep
    because Keras's deserialization consumes nested dicts. Entries that are absent,
    None or not serialized objects (no "class_name") are left as they are.

    Example: `return cls(**deserialize_nested(config, "backbone"))`.
    """
    config = copy.deepcopy(config)
    for name in names:
        value = config.get(name)
        if isinstance(value, dict) and "class_name" in value:
            config[name] = keras.saving.deserialize_keras_object(value)
    return config
