"""BEiT's MIM trainer: the masked-token loss, the pixel baseline, compile() defaults, fit, save, resume."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.models.beit import BEiT, BEiTBackbone, BEiTClassifier
from keras_paperzoo.training.layerwise_decay import learning_rate_of
from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW
from tests.model_checks import InterruptAfterFirstEpoch, check_config_roundtrip, check_fit, check_saved_model

VOCAB = 8
TINY = dict(patch_size=2, num_layers=1, hidden_dim=16, num_heads=2, mlp_dim=32, image_shape=(16, 16, 1))


@keras.saving.register_keras_serializable(package="keras_paperzoo_tests")
class StubTokenizer(keras.layers.Layer):
    """A fixed random patch projection and an argmax: (B, 16, 16, 1) -> (B, 8, 8) ids in [0, VOCAB)."""

    def __init__(self, vocabulary_size=VOCAB, patch_size=2, **kwargs):
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.patch_size = patch_size
        self.projection = keras.layers.Conv2D(vocabulary_size, patch_size, strides=patch_size, name="projection")

    def build(self, input_shape):
        self.projection.build(input_shape)

    @property
    def grid_size(self):
        return (16 // self.patch_size, 16 // self.patch_size)

    def tokenize(self, images):
        return ops.argmax(self.projection(images), axis=-1)

    def get_config(self):
        return {**super().get_config(), "vocabulary_size": self.vocabulary_size, "patch_size": self.patch_size}


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


def images(batch=4, seed=0):
    return np.random.default_rng(seed).uniform(size=(batch, 16, 16, 1)).astype("float32")


def tokenizer(patch_size=2):
    layer = StubTokenizer(patch_size=patch_size)
    layer.build((None, 16, 16, 1))
    return layer


def tiny(target="tokens", seed=0, **kwargs):
    backbone = BEiTBackbone(**TINY, **kwargs)
    return BEiT(backbone, tokenizer() if target == "tokens" else None, target=target, seed=seed)


def fixed_mask(batch=4):
    mask = np.zeros((batch, 64), "float32")
    for b in range(batch):
        mask[b, np.random.default_rng(b).choice(64, 10 + 3 * b, replace=False)] = 1.0
    return mask


def log_softmax(logits):
    logits = logits.astype("float64")
    return logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) - logits.max(
        -1, keepdims=True)


def test_mim_loss_is_the_cross_entropy_over_masked_positions_near_ln_v_at_init():
    model = tiny()
    x, mask = images(), fixed_mask()
    out = model(x, patch_mask=mask)
    assert out["logits"].shape == (4, 64, VOCAB)
    tokens = np_(model.tokenizer.tokenize(x)).reshape(4, 64)
    nll = -np.take_along_axis(log_softmax(np_(out["logits"])), tokens[..., None], -1)[..., 0]
    expected = (nll * mask).sum() / mask.sum()  # over all masked positions of the batch
    model.mim_accuracy_tracker.reset_state()
    loss = float(np_(model.compute_loss(x, None, out)))
    np.testing.assert_allclose(loss, expected, rtol=1e-5)
    assert abs(loss - np.log(VOCAB)) < 0.15  # N(0, 0.02^2) head: nearly uniform predictions
    hits = (np_(out["logits"]).argmax(-1) == tokens).astype("float64")
    np.testing.assert_allclose(float(np_(model.mim_accuracy_tracker.result())), (hits * mask).sum() / mask.sum(),
                               rtol=1e-5)
    noisy = np_(out["logits"]) + (1 - mask)[..., None] * 30 * np.random.default_rng(1).normal(size=(4, 64, VOCAB))
    noisy_loss = model.compute_loss(x, None, {"logits": ops.convert_to_tensor(noisy.astype("float32")),
                                              "mask": out["mask"]})
    np.testing.assert_allclose(float(np_(noisy_loss)), loss, rtol=1e-5)  # unmasked logits do not count


def test_pixel_target_loss_is_the_masked_normalised_patch_mse():
    model = tiny("pixels")
    x, mask = images(), fixed_mask()
    out = model(x, patch_mask=mask)
    pred = np_(out["pred"]).astype("float64")
    assert pred.shape == (4, 64, 4)  # P * P * C = 2 * 2 * 1
    patches = x.reshape(4, 8, 2, 8, 2, 1).transpose(0, 1, 3, 2, 4, 5).reshape(4, 64, 4).astype("float64")
    target = (patches - patches.mean(-1, keepdims=True)) / np.sqrt(patches.var(-1, ddof=1, keepdims=True) + 1e-6)
    expected = (((pred - target) ** 2).mean(-1) * mask).sum() / mask.sum()
    np.testing.assert_allclose(float(np_(model.compute_loss(x, None, out))), expected, rtol=1e-4)
    clone = check_config_roundtrip(model)
    assert clone.target == "pixels" and clone.tokenizer is None and clone.head.units == 4


def test_blockwise_masks_default_count_and_seed():
    model = tiny(seed=3)
    assert model.masked_patches == 24  # round(64 * 75 / 196), the official 75 of 196
    first = np_(model(images())["mask"])
    assert first.shape == (4, 64) and set(np.unique(first)) <= {0.0, 1.0}
    counts = first.sum(1)
    assert counts.max() <= 24 and counts.mean() > 18
    np.testing.assert_array_equal(np_(BEiT(model.backbone, model.tokenizer, seed=3)(images())["mask"]), first)  # same seed, same masks
    assert BEiT(model.backbone, model.tokenizer, num_masking_patches=0.5).masked_patches == 32


def test_compile_defaults_are_the_papers_pre_training_optimizer():
    model = tiny()
    model.compile(batch_size=256, steps_per_epoch=100, epochs=800)
    opt = model.optimizer
    assert isinstance(opt, SelectiveDecayAdamW)
    assert opt.beta_1 == 0.9 and opt.beta_2 == 0.999 and opt.weight_decay == 0.05 and opt.global_clipnorm == 3.0
    schedule = opt._learning_rate
    assert schedule.warmup_steps == 10 * 100 and schedule.total_steps == 800 * 100
    np.testing.assert_allclose(float(np_(schedule(0))), 0.0)
    np.testing.assert_allclose(float(np_(schedule(1000))), 1.5e-3 * 256 / 2048, rtol=1e-6)  # peak after warmup
    np.testing.assert_allclose(float(np_(schedule(80000))), 0.0, atol=1e-9)
    opt.build(model.trainable_variables)
    decays = {v.path: opt.decays(v) for v in model.trainable_variables}
    assert decays["transformer_block_0/attention/query/kernel"] and decays["mim_head/kernel"]
    for path in ("transformer_block_0/attention/relative_position_bias/relative_position_bias_table",
                 "class_token/token", "mask_embedding/token", "transformer_block_0/attention_layer_scale",
                 "transformer_block_0/mlp_dense_1/bias", "encoder_norm/gamma"):
        assert not decays[path], path
    with pytest.raises(ValueError, match="loss"):
        model.compile(loss="mse")


def test_classifier_fine_tunes_with_layer_decay():
    model = BEiTClassifier(BEiTBackbone(**TINY), num_classes=3)
    model.compile(batch_size=8, steps_per_epoch=2, epochs=2)
    opt = model.optimizer
    rates = {v.path: learning_rate_of(opt, v) for v in model.trainable_variables}
    peak = 4e-3 * 8 / 1024  # 4 updates: warmup min(20 epochs, 4 // 5) = 0, so step 0 is at the peak
    expected = {"patch_embedding/projection/kernel": 0, "mask_embedding/token": 0,
                "transformer_block_0/mlp_dense_1/kernel": 1,
                "transformer_block_0/attention/relative_position_bias/relative_position_bias_table": 1,
                "pooled_norm/gamma": 2, "predictions/kernel": 2}  # L = 1: the head is layer L + 1 = 2
    for path, layer in expected.items():
        np.testing.assert_allclose(rates[path], peak * 0.65 ** (2 - layer), rtol=1e-5, err_msg=path)
    head = np_(model.get_layer("predictions").kernel)
    assert 0 < np.abs(head).max() <= 2 * 0.02 * 0.001  # trunc-normal 0.02 x init_scale 0.001
    assert model(images()).shape == (4, 3)


def test_fit_save_and_exact_resume(tmp_path):
    """compile() defaults, fit, `.keras` save/load; then interrupted after epoch 0 and resumed (BackupAndRestore
    + EpochSeeds, which re-draws the resumed epoch's masks): the same weights as the uninterrupted run."""
    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds

    keras.utils.set_random_seed(0)
    model = tiny()
    model.compile(batch_size=2048, steps_per_epoch=2, epochs=2)  # the paper optimizer at lr 1.5e-3
    initial = [np_(v) for v in model.weights]

    def run(name, interrupt=False):
        # Each run starts from the same state, as a fresh process would: the initial weights, an empty
        # optimizer (its moments and step count at 0). One model keeps one compiled train step for the three runs.
        for variable, value in zip(model.weights, initial):
            variable.assign(value)
        for variable in model.optimizer.variables if model.optimizer.built else ():
            variable.assign(np.zeros(variable.shape, variable.dtype))
        callbacks = [keras.callbacks.BackupAndRestore(str(tmp_path / name)), EpochSeeds(3)]
        callbacks += [InterruptAfterFirstEpoch()] if interrupt else []
        history = check_fit(model, images(8), batch_size=4, epochs=2, shuffle=False, callbacks=callbacks)
        return [np_(w) for w in model.trainable_weights], history

    straight, history = run("straight")
    assert set(history.history) == {"loss", "mim_accuracy"}
    clone = check_config_roundtrip(model)
    assert clone.target == "tokens" and clone.masked_patches == 24 and clone.backbone.grid_size == (8, 8)
    mask = fixed_mask()
    check_saved_model(model, images(), tmp_path, atol=1e-5,
                      outputs_of=lambda m, x: m(x, training=False, patch_mask=mask)["logits"])
    with pytest.raises(RuntimeError, match="interrupted"):
        run("broken", interrupt=True)
    resumed, _ = run("broken")
    for a, b in zip(straight, resumed):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_bad_arguments_are_refused():
    backbone = BEiTBackbone(**TINY)
    for value in (0, 64, 1.5, -0.2):
        with pytest.raises(ValueError, match="num_masking_patches"):
            BEiT(backbone, tokenizer(), num_masking_patches=value)
    with pytest.raises(ValueError, match="token grid"):
        BEiT(backbone, tokenizer(patch_size=4))  # a 4 x 4 token grid for an 8 x 8 patch grid
    with pytest.raises(ValueError, match="target"):
        BEiT(backbone, tokenizer(), target="features")
    with pytest.raises(ValueError, match="tokenizer"):
        BEiT(backbone, None)
    with pytest.raises(ValueError, match="BEiTBackbone"):
        BEiT(keras.Sequential([keras.layers.Dense(2)]), tokenizer())
