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

import keras


class Backbone(keras.Model):
    """Functional backbone with `from_preset(name, **overrides)`."""

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
        config = dict(cls.presets[name]["config"])
        config.update(overrides)
        return cls(**config)

    @classmethod
    def preset_names(cls):
        return sorted(cls.presets)

    def get_config(self):
        # Only the base Layer arguments; subclasses add their constructor arguments.
        return {"name": self.name, "trainable": self.trainable}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
