"""Layer-wise learning-rate decay for ViT fine-tuning, and AdamW without decay on biases and norms."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.models.image_classifier import ImageClassifier
from keras_paperzoo.models.vit.vit_backbone import ViTBackbone
from keras_paperzoo.training.layerwise_decay import (
    ScaledSchedule,
    layerwise_decay_optimizer,
    learning_rate_of,
    vit_layer_ids,
)
from keras_paperzoo.training.schedules import WarmupCosineDecay
from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW
from tests.model_checks import check_config_roundtrip, check_saved_model

DEPTH = 2
RNG = np.random.default_rng(0)
IMAGES = RNG.random((8, 32, 32, 3)).astype("float32")
LABELS = RNG.integers(0, 10, size=8).astype("int32")


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


def classifier():
    backbone = ViTBackbone(patch_size=8, num_layers=DEPTH, hidden_dim=32, num_heads=2, mlp_dim=64,
                           image_shape=(32, 32, 3), dropout_rate=0.0)
    model = ImageClassifier(backbone, num_classes=10)
    # ViT's head starts at zero (the paper's), which gives the backbone no gradient on the
    # first step; these tests measure that step's per-layer moves, so the head gets weights.
    head = model.get_layer("predictions")
    head.kernel.assign(np.random.default_rng(0).normal(0.0, 0.02, head.kernel.shape).astype("float32"))
    return model


def expected_layer(path):
    """The BEiT/MAE numbering, written from the variable's path."""
    if path.startswith(("patch_embedding/", "class_token/", "position_embedding/")):
        return 0
    for i in range(DEPTH):
        if path.startswith(f"transformer_block_{i}/"):
            return i + 1
    return DEPTH + 1  # encoder_norm, predictions


def test_layer_ids_follow_the_beit_mae_numbering():
    model = classifier()
    layer_of, depth = vit_layer_ids(model)
    assert depth == DEPTH
    ids = {v.path: layer_of[id(v)] for v in model.trainable_variables}
    assert ids == {path: expected_layer(path) for path in ids}
    assert ids["predictions/kernel"] == ids["encoder_norm/gamma"] == DEPTH + 1
    assert sorted(set(ids.values())) == [0, 1, 2, 3]


EMBEDDING_PREFIXES = ("hybrid_stem/", "patch_embedding/", "class_token/", "position_embedding/", "mask_embedding/")


def _rates_follow_the_numbering(model, backbone, depth, decay=0.75):
    """Each variable of `model` at 1e-3 x decay ** (depth + 1 - its BEiT/MAE layer), written from its path."""

    def layer(path):
        if path.startswith(EMBEDDING_PREFIXES):
            return 0
        blocks = [i for i in range(depth) if path.startswith(f"transformer_block_{i}/")]
        return blocks[0] + 1 if blocks else depth + 1

    opt = layerwise_decay_optimizer(model, keras.optimizers.AdamW(1e-3), layer_decay=decay, backbone=backbone)
    rates = {v.path: learning_rate_of(opt, v) for v in model.trainable_variables}
    assert rates == pytest.approx({p: 1e-3 * decay ** (depth + 1 - layer(p)) for p in rates}, rel=1e-6)
    return rates


@pytest.mark.backend_free("torch")  # building the backbones: a second on torch, ten on JAX
def test_rates_of_the_tiny_vit_hybrid_vit_and_beit_presets():
    """The per-variable rates of MAE's tiny ViT, a hybrid GAP ViT and BEiT's tiny preset, by the numbering."""
    from keras_paperzoo.models.beit.beit_backbone import BEiTBackbone
    from keras_paperzoo.models.mae.mae_presets import MAE_PRESETS

    vit = ViTBackbone(**MAE_PRESETS["mae_tiny"]["backbone"]["overrides"])
    rates = _rates_follow_the_numbering(ImageClassifier(vit, num_classes=3), vit, 4)
    assert rates["class_token/token"] == rates["patch_embedding/projection/kernel"] == pytest.approx(1e-3 * 0.75**5)
    assert rates["predictions/kernel"] == rates["encoder_norm/gamma"] == pytest.approx(1e-3)
    hybrid = ViTBackbone(patch_size=1, num_layers=1, hidden_dim=8, num_heads=2, mlp_dim=16, image_shape=(16, 16, 3),
                         pooling="gap", position_embedding="2d", hybrid="conv")
    rates = _rates_follow_the_numbering(ImageClassifier(hybrid, num_classes=3), hybrid, 1)
    assert "class_token/token" not in rates and rates["hybrid_stem/conv/kernel"] == pytest.approx(1e-3 * 0.75**2)
    beit = BEiTBackbone.from_preset("beit_tiny_digits")
    rates = _rates_follow_the_numbering(ImageClassifier(beit, num_classes=3), None, 4)  # found inside
    assert rates["mask_embedding/token"] == pytest.approx(1e-3 * 0.75**5)
    assert rates["pooled_norm/gamma"] == rates["encoder_norm/gamma"] == pytest.approx(1e-3)
    assert rates["transformer_block_3/attention_layer_scale"] == pytest.approx(1e-3 * 0.75)


def test_each_variable_gets_lr_times_decay_to_the_depth_above_it():
    model = classifier()
    opt = layerwise_decay_optimizer(model, SelectiveDecayAdamW(1e-2, weight_decay=0.05), layer_decay=0.65)
    opt.build(model.trainable_variables)
    for variable in model.trainable_variables:
        expected = 1e-2 * 0.65 ** (DEPTH + 1 - expected_layer(variable.path))
        assert learning_rate_of(opt, variable) == pytest.approx(expected, rel=1e-6), variable.path
    assert learning_rate_of(opt, model.backbone.patch_embedding.projection.kernel) == pytest.approx(1e-2 * 0.65**3)
    # One inner optimizer per layer, plus the default for variables created later.
    assert len(opt.optimizers) == DEPTH + 3


def test_weight_decay_skips_biases_norms_positions_and_class_token():
    model = classifier()
    opt = layerwise_decay_optimizer(model, SelectiveDecayAdamW(1e-2, weight_decay=0.05))
    opt.build(model.trainable_variables)
    decayed = {v.path for v in model.trainable_variables if opt._optimizer_map(v).decays(v)}
    kernels = {v.path for v in model.trainable_variables if v.name == "kernel"}  # patch, q/k/v/out, MLP, head
    assert decayed == kernels and len(kernels) == 1 + DEPTH * 6 + 1
    assert "position_embedding/embeddings" not in decayed and "class_token/token" not in decayed


def test_fit_applies_the_per_layer_rates_and_save_load_keeps_them(tmp_path):
    # Adam's first update moves each weight by lr * g / (|g| + eps): by almost exactly
    # its layer's rate wherever the gradient is not tiny. No weight decay here.
    model = classifier()
    opt = layerwise_decay_optimizer(model, SelectiveDecayAdamW(1e-2, weight_decay=0.0), layer_decay=0.5)
    model.compile(optimizer=opt)
    before = {v.path: np_(v) for v in model.trainable_variables}
    model.fit(IMAGES, LABELS, batch_size=8, epochs=1, verbose=0)
    for variable in model.trainable_variables:
        if variable.path.endswith("attention/key/bias"):
            continue  # its gradient is 0 (a key bias shifts a whole softmax row): Adam does not move it
        step = np.abs(np_(variable) - before[variable.path]).max()
        expected = 1e-2 * 0.5 ** (DEPTH + 1 - expected_layer(variable.path))
        assert step == pytest.approx(expected, rel=1e-2), variable.path
    loaded = check_saved_model(model, IMAGES, tmp_path)
    assert isinstance(loaded.optimizer, keras.optimizers.MultiOptimizer)
    for variable in loaded.trainable_variables:
        expected = 1e-2 * 0.5 ** (DEPTH + 1 - expected_layer(variable.path))
        assert learning_rate_of(loaded.optimizer, variable) == pytest.approx(expected, rel=1e-6), variable.path


def test_schedules_are_scaled_per_layer():
    schedule = WarmupCosineDecay(1e-3, warmup_steps=10, total_steps=100)
    scaled = ScaledSchedule(schedule, 0.25)
    for step in (0, 5, 10, 60, 100):
        assert float(np_(scaled(step))) == pytest.approx(0.25 * float(np_(schedule(step))), rel=1e-6)
    clone = ScaledSchedule.from_config(scaled.get_config())
    assert float(np_(clone(5))) == pytest.approx(float(np_(scaled(5))))
    model = classifier()
    opt = layerwise_decay_optimizer(model, SelectiveDecayAdamW(schedule), layer_decay=0.5)
    opt.build(model.trainable_variables)
    inner = opt._optimizer_map(model.backbone.class_token.token)
    assert isinstance(inner._learning_rate, ScaledSchedule) and inner._learning_rate.scale == 0.5**3


def test_selective_decay_adamw_decays_weights_only_and_keeps_its_rule_in_config():
    kernel = keras.Variable(np.ones((2, 2), "float32"), name="kernel")
    bias = keras.Variable(np.ones((2,), "float32"), name="bias")
    head_bias = keras.Variable(np.ones((2, 3), "float32"), name="bias")  # MultiHeadAttention's (heads, dim)
    table = keras.Variable(np.ones((3, 2), "float32"), name="embeddings")
    opt = SelectiveDecayAdamW(0.1, weight_decay=0.5, no_decay_paths=["embeddings"])
    variables = [kernel, bias, head_bias, table]
    opt.build(variables)
    # Zero gradients: Adam's step is 0, so only the decoupled decay moves weights: w <- w (1 - lr wd).
    opt.apply([np.zeros(v.shape, "float32") for v in variables], variables)
    np.testing.assert_allclose(np_(kernel), 1 - 0.1 * 0.5)
    for variable in (bias, head_bias, table):
        np.testing.assert_array_equal(np_(variable), 1.0)
    clone = check_config_roundtrip(opt)
    assert clone.no_decay == "bias_and_norm" and clone.no_decay_paths == ["embeddings"] and clone.epsilon == 1e-8


def test_errors_name_the_bad_value():
    model = classifier()
    for decay in (0.0, 1.5, True):
        with pytest.raises(ValueError, match=r"layer_decay must be in \(0, 1\]"):
            layerwise_decay_optimizer(model, layer_decay=decay)
    with pytest.raises(ValueError, match="not a MultiOptimizer"):
        layerwise_decay_optimizer(model, keras.optimizers.MultiOptimizer(lambda v: None))
    plain = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="needs exactly one ViTBackbone"):
        layerwise_decay_optimizer(plain)
    with pytest.raises(ValueError, match="no_decay must be 'bias_and_norm' or None"):
        SelectiveDecayAdamW(no_decay="all")
