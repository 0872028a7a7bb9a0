"""The trainer base (`keras_paperzoo.models.trainer.Trainer`) on a tiny trainer, and every trainer against it."""

import inspect

import numpy as np
import pytest

import keras

from keras_paperzoo.models.backbone import Backbone
from keras_paperzoo.models.trainer import Trainer
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model

X = np.random.default_rng(0).random((8, 6, 6, 1)).astype("float32")
Y = np.random.default_rng(1).random((8, 3)).astype("float32")


@keras.saving.register_keras_serializable(package="test_trainer")
class TinyBackbone(Backbone):
    presets = {"tiny": {"description": "One 3x3 conv of 4 filters, average-pooled.", "config": {"filters": 4}}}

    def __init__(self, filters=4, image_shape=(6, 6, 1), **kwargs):
        inputs = keras.Input(image_shape)
        outputs = keras.layers.GlobalAveragePooling2D()(keras.layers.Conv2D(filters, 3)(inputs))
        super().__init__(inputs, outputs, **kwargs)
        self.filters, self.image_shape = filters, tuple(image_shape)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "image_shape": self.image_shape}


@keras.saving.register_keras_serializable(package="test_trainer")
class TinyTrainer(Trainer, keras.Model):
    """A backbone, a nested layer argument (`head`) and plain arguments; its paper's SGD."""

    backbone_class = TinyBackbone
    presets = {
        "tiny_trainer": {
            "description": "The tiny backbone at 6 filters and a 3-d output.",
            "backbone": {"preset": "tiny", "overrides": {"filters": 6}},
            "arguments": {"output_dim": 3},
        },
    }

    def __init__(self, backbone, output_dim=2, head=None, scale=1.0, **kwargs):
        super().__init__(**kwargs)
        self.backbone = backbone
        self.output_dim = output_dim
        self.head = head if head is not None else keras.layers.Dense(output_dim, name="head")
        self.scale = scale
        self.calls = {}

    def call(self, images, training=False):
        return self.scale * self.head(self.backbone(images, training=training))

    def paper_optimizer(self, batch_size=256, momentum=0.9):
        self.calls["paper_optimizer"] = {"batch_size": batch_size, "momentum": momentum}
        return keras.optimizers.SGD(0.1 * batch_size / 256, momentum=momentum)

    def paper_loss(self, label_smoothing=0.0):
        self.calls["paper_loss"] = {"label_smoothing": label_smoothing}
        return keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=label_smoothing)


@keras.saving.register_keras_serializable(package="test_trainer")
class FixedLossTrainer(TinyTrainer):
    fixed_loss = True

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return keras.ops.mean(keras.ops.square(y_pred))


def _trainer(**kwargs):
    return TinyTrainer(TinyBackbone(filters=3), **kwargs)


# --- config and saving --------------------------------------------------------------------


def test_config_round_trip_nests_the_backbone_and_a_layer_argument():
    model = _trainer(output_dim=3, head=keras.layers.Dense(3, activation="tanh", name="tanh_head"), scale=2.0)
    config = model.get_config()
    assert config["backbone"]["class_name"] == "TinyBackbone" and config["head"]["class_name"] == "Dense"
    assert (config["output_dim"], config["scale"]) == (3, 2.0)
    clone = check_config_roundtrip(model)
    assert isinstance(clone.backbone, TinyBackbone) and clone.backbone.filters == 3
    assert isinstance(clone.head, keras.layers.Dense) and clone.head.activation is keras.activations.tanh
    assert (clone.output_dim, clone.scale, clone.name) == (3, 2.0, model.name)


def test_keras_file_round_trip_in_safe_mode_keeps_outputs_and_the_saved_optimizer(tmp_path):
    model = _trainer(output_dim=3)
    model.compile(optimizer=keras.optimizers.Adam(1e-3))  # not the paper's: the load must keep it
    check_fit(model, X, Y, batch_size=4, epochs=1)
    loaded = check_saved_model(model, X, tmp_path)
    assert isinstance(loaded.optimizer, keras.optimizers.Adam)
    assert float(loaded.optimizer.learning_rate) == pytest.approx(1e-3)
    assert isinstance(loaded.loss, keras.losses.CategoricalCrossentropy)  # the paper's loss, as saved


# --- compile --------------------------------------------------------------------------------


def test_compile_gives_the_papers_optimizer_with_the_recipe_routed_by_name():
    model = _trainer()
    model.compile(batch_size=64, label_smoothing=0.1, jit_compile=False)
    assert model.calls == {"paper_optimizer": {"batch_size": 64, "momentum": 0.9},
                           "paper_loss": {"label_smoothing": 0.1}}
    assert isinstance(model.optimizer, keras.optimizers.SGD)
    assert float(model.optimizer.learning_rate) == pytest.approx(0.025)  # 0.1 x 64 / 256
    assert model.loss.label_smoothing == pytest.approx(0.1)
    assert model.jit_compile is False  # keras.Model.compile's arguments pass through
    model.compile(optimizer="adam")  # a given optimizer is the user's
    assert isinstance(model.optimizer, keras.optimizers.Adam)


def test_unknown_compile_argument_is_refused_by_name():
    with pytest.raises(ValueError, match=r"unknown argument\(s\) \['batch_sise'\].*batch_size"):
        _trainer().compile(batch_sise=64)


def test_fixed_loss_refuses_loss_and_metrics():
    model = FixedLossTrainer(TinyBackbone())
    with pytest.raises(ValueError, match="FixedLossTrainer.compile takes no loss="):
        model.compile(loss="mse")
    with pytest.raises(ValueError, match="takes no loss= or metrics="):
        model.compile(metrics=["mae"])
    model.compile(batch_size=128)
    assert float(model.optimizer.learning_rate) == pytest.approx(0.05)
    check_fit(model, X, Y, batch_size=4, epochs=1)


# --- presets --------------------------------------------------------------------------------


def test_from_preset_takes_trainer_and_backbone_overrides():
    model = TinyTrainer.from_preset("tiny_trainer")
    assert (model.output_dim, model.backbone.filters) == (3, 6)
    model = TinyTrainer.from_preset("tiny_trainer", output_dim=5, filters=7, image_shape=(9, 9, 1))
    assert (model.output_dim, model.backbone.filters, model.backbone.image_shape) == (5, 7, (9, 9, 1))
    given = TinyBackbone(filters=2)
    assert TinyTrainer.from_preset("tiny_trainer", backbone=given).backbone is given
    with pytest.raises(ValueError, match="backbone.*filters"):  # one or the other
        TinyTrainer.from_preset("tiny_trainer", backbone=given, filters=3)


def test_unknown_override_is_refused_with_the_known_names():
    with pytest.raises(ValueError, match=r"Unknown override\(s\) \['depth'\].*output_dim.*filters, image_shape"):
        TinyTrainer.from_preset("tiny_trainer", depth=3)


def test_unknown_preset_lists_the_available_ones():
    with pytest.raises(ValueError, match="Unknown TinyTrainer preset 'huge'; available: tiny, tiny_trainer"):
        TinyTrainer.from_preset("huge")
    assert TinyTrainer.preset_names() == ["tiny", "tiny_trainer"]


def test_a_backbone_preset_name_builds_that_backbone_with_the_trainers_defaults():
    model = TinyTrainer.from_preset("tiny", output_dim=4)
    assert (model.backbone.filters, model.output_dim) == (4, 4)


# --- every trainer of the package ---------------------------------------------------------------

# Trainers that extend a base method through super() for a documented special case.
OWN_METHOD_EXCEPTIONS = {
    ("GPTCausalLM", "get_config"),  # the tokenizer is saved only when serializable by its config
}
MOVED_TRAINERS = {
    "GAN", "ImageClassifier", "MAE", "TransformerTranslator", "BertPretrainer", "BertClassifier",
    "BertSpanExtractor", "GPTCausalLM", "GPTClassifier",
}


def _package_trainers():
    import keras_paperzoo.models  # noqa: F401 (imports every trainer)

    found, todo = [], list(Trainer.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted({c for c in found if c.__module__.startswith("keras_paperzoo.")}, key=lambda c: c.__name__)


def test_every_trainer_uses_the_bases_config_methods():
    trainers = _package_trainers()
    assert MOVED_TRAINERS <= {cls.__name__ for cls in trainers}
    for cls in trainers:
        for method in ("get_config", "from_config", "compile_from_config"):
            if method in vars(cls):
                assert (cls.__name__, method) in OWN_METHOD_EXCEPTIONS, f"{cls.__name__} defines its own {method}"


def test_every_trainer_preset_follows_the_schema():
    for cls in _package_trainers():
        own = set(_init_arguments(cls))
        for name, preset in cls.presets.items():
            where = f"{cls.__name__} preset {name!r}"
            assert set(preset) == {"description", "backbone", "arguments"}, where
            assert isinstance(preset["description"], str) and preset["description"], where
            assert set(preset["backbone"]) == {"preset", "overrides"}, where
            assert isinstance(preset["backbone"]["overrides"], dict), where
            assert set(preset["arguments"]) <= own, f"{where}: {sorted(set(preset['arguments']) - own)}"
            backbone_preset = preset["backbone"]["preset"]
            backbone_class = cls.backbone_class_for(backbone_preset)
            if backbone_class is not None:
                assert backbone_preset is None or backbone_preset in backbone_class.presets, where
                known = set(_init_arguments(backbone_class)) | {"name", "dtype", "trainable"}
                assert set(preset["backbone"]["overrides"]) <= known, where


def _init_arguments(cls):
    return [n for n, p in inspect.signature(cls.__init__).parameters.items()
            if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
