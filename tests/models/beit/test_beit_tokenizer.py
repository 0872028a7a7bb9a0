"""BEiT's visual tokenizer (a DALL-E-style dVAE): schedules, tokens, the ELBO terms, fit, save, resume, bad inputs."""

import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.models.beit import VISUAL_TOKENIZER_PRESETS, VisualTokenizer, code_perplexity, kl_to_uniform
from tests.model_checks import InterruptAfterFirstEpoch, check_config_roundtrip, check_fit, check_saved_model

# 8 x 8 grey images (scikit-learn's digits' size), patch 2: a 4 x 4 token grid over 16 codes.
TINY = dict(image_shape=(8, 8, 1), patch_size=2, vocabulary_size=16, hidden_dim=8, num_res_blocks=1,
            temperature_start=1.0, temperature_end=1 / 16, temperature_steps=40, kl_weight=0.5, kl_warmup_steps=20)


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


def tiny(seed=0, **overrides):
    return VisualTokenizer(**{**TINY, **overrides}, seed=seed)


def digits(count=64):
    from sklearn.datasets import load_digits

    return (load_digits().images[:count, :, :, None] / 16.0).astype("float32")  # (N, 8, 8, 1) in [0, 1]


def cosine(step, start, end, steps):
    """NumPy reference of DALL-E's cosine anneal: start at 0, end from `steps` on."""
    progress = np.clip(np.asarray(step, "float64") / steps, 0.0, 1.0)
    return end + (start - end) * (1.0 + np.cos(np.pi * progress)) / 2.0


# --- the anneals (DALL-E App. A.2) -------------------------------------------------------------------

def test_temperature_and_kl_weight_follow_the_cosine_anneals():
    model = tiny()
    steps = np.array([0, 10, 20, 30, 40, 1000])
    np.testing.assert_allclose(np_(model.temperature(steps)), cosine(steps, 1.0, 1 / 16, 40), rtol=1e-6)
    np.testing.assert_allclose(np_(model.temperature(0)), 1.0, rtol=1e-6)  # start
    np.testing.assert_allclose(np_(model.temperature(20)), (1.0 + 1 / 16) / 2, rtol=1e-6)  # the middle
    np.testing.assert_allclose(np_(model.temperature(40)), 1 / 16, rtol=1e-6)  # end, and after
    np.testing.assert_allclose(np_(model.beta(steps)), cosine(steps, 0.0, 0.5, 20), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np_(model.beta([0, 10, 20, 99])), [0.0, 0.25, 0.5, 0.5], rtol=1e-6, atol=1e-7)
    model.schedule_step.assign(7)  # no argument: the tokenizer's own update count
    np.testing.assert_allclose(np_(model.temperature()), cosine(7, 1.0, 1 / 16, 40), rtol=1e-6)
    assert float(np_(tiny(kl_warmup_steps=0).beta(0))) == 0.5  # no warmup: the final weight at once


# --- tokens: BEiT Sec. 2.4, z_hat = argmax q(z | x) -------------------------------------------------

def test_tokens_are_the_argmax_of_the_encoder_logits_and_decode_to_the_inference_output():
    model = tiny()
    x = digits(4)
    logits = np_(model.logits(x))
    assert logits.shape == (4, 4, 4, 16) and model.grid_size == (4, 4) and model.vocabulary_size == 16
    ids = np_(model.tokenize(x))
    assert ids.shape == (4, 4, 4) and ids.dtype == np.int32 and ids.min() >= 0 and ids.max() < 16
    np.testing.assert_array_equal(ids, logits.argmax(-1))
    np.testing.assert_allclose(np_(model.decode(ids)), np_(model(x, training=False)), atol=1e-6)
    np.testing.assert_allclose(np_(model.decode(model.tokenize(x))), np_(model(x)), atol=1e-6)  # tensors too


def test_training_codes_are_gumbel_softmax_relaxations():
    model = tiny()
    logits = np_(model.logits(digits(4))) * 20
    soft = np_(model.gumbel_softmax(logits, 1.0))
    assert soft.shape == logits.shape and soft.min() > 0
    np.testing.assert_allclose(soft.sum(-1), 1.0, atol=1e-5)
    cold = np_(model.gumbel_softmax(logits, 1e-3))  # tau -> 0: one-hot of argmax(logits + g)
    assert cold.max(-1).mean() > 0.99  # (near-ties of logits + g stay soft)
    assert (cold.argmax(-1) == logits.argmax(-1)).mean() < 1.0  # the noise moves some codes
    assert not np.allclose(np_(model(digits(4), training=True)), np_(model(digits(4), training=False)))


# --- the loss: DALL-E's beta-ELBO with a Gaussian likelihood -----------------------------------------

def test_kl_term_is_the_kl_of_softmax_logits_to_the_uniform_prior():
    logits = np.random.default_rng(0).normal(size=(2, 3, 3, 16)).astype("float32") * 3
    q = np.exp(logits - logits.max(-1, keepdims=True))
    q /= q.sum(-1, keepdims=True)
    reference = (q * np.log(q * 16)).sum(-1)  # KL(q || 1/K)
    np.testing.assert_allclose(np_(kl_to_uniform(logits)), reference, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np_(kl_to_uniform(np.zeros((1, 16)))), 0.0, atol=1e-6)  # uniform q


def test_loss_is_mse_plus_beta_times_the_kl_per_pixel_value():
    model = tiny()
    model.schedule_step.assign(10)  # beta = 0.25
    x = digits(4)
    logits = np_(model.logits(x)).astype("float64")
    q = np.exp(logits - logits.max(-1, keepdims=True))
    q /= q.sum(-1, keepdims=True)
    kl = (q * np.log(q * 16)).sum(-1).mean()
    reconstruction = np_(model(x, training=False))
    mse = ((reconstruction - x) ** 2).mean()
    loss = model.compute_loss(x, y_pred=model(x, training=False), training=False)
    np.testing.assert_allclose(float(np_(loss)), mse + 0.25 * kl * 16 / 64, rtol=1e-5)  # h w / (H W C)
    np.testing.assert_allclose(float(np_(model.kl_tracker.result())), kl, rtol=1e-5)
    np.testing.assert_allclose(float(np_(model.reconstruction_tracker.result())), mse, rtol=1e-5)
    assert int(np_(model.schedule_step)) == 10  # evaluation does not advance the anneals


def test_perplexity_is_exp_of_the_entropy_of_the_code_usage():
    ids = np.array([[[0, 0], [1, 3]], [[0, 3], [3, 3]]], "int32")  # usage 3/8, 1/8, 0, 4/8 over K = 5
    p = np.array([3, 1, 0, 4]) / 8
    p = p[p > 0]
    np.testing.assert_allclose(float(np_(code_perplexity(ids, 5))), np.exp(-(p * np.log(p)).sum()), rtol=1e-6)
    np.testing.assert_allclose(float(np_(code_perplexity(np.full((2, 4, 4), 7), 16))), 1.0)  # collapse
    np.testing.assert_allclose(float(np_(code_perplexity(np.arange(16).reshape(1, 4, 4), 16))), 16.0, rtol=1e-6)


# --- fit, save, resume --------------------------------------------------------------------------------

def test_fit_lowers_the_reconstruction_loss_logs_the_schedules_saves_and_resumes_exactly(tmp_path):
    """One short fit (3 epochs of 10 updates) checked for its logs and `.keras` round trip; then the same run
    interrupted after epoch 0 and resumed with BackupAndRestore (the anneal step, weights and optimizer come
    back) and EpochSeeds (the resumed epochs draw the uninterrupted run's Gumbel noise): the same weights."""
    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds

    def run(name, interrupt=False):
        keras.utils.set_random_seed(0)  # the same initial weights in every run
        model = tiny(hidden_dim=16)
        model.compile(optimizer=keras.optimizers.Adam(1e-2))
        callbacks = [keras.callbacks.BackupAndRestore(str(tmp_path / name)), EpochSeeds(3)]
        callbacks += [InterruptAfterFirstEpoch()] if interrupt else []
        history = check_fit(model, digits(240), batch_size=24, epochs=3, shuffle=False, callbacks=callbacks)
        return model, history.history

    model, history = run("straight")
    assert {"loss", "reconstruction_loss", "kl", "temperature", "perplexity"} <= set(history)
    reconstruction = history["reconstruction_loss"]
    assert reconstruction[-1] < 0.75 * reconstruction[0], reconstruction  # JAX: 0.147 -> 0.091
    assert int(np_(model.schedule_step)) == int(np_(model.optimizer.iterations)) == 30  # one per update
    expected = [cosine(np.arange(e * 10, e * 10 + 10), 1.0, 1 / 16, 40).mean() for e in range(3)]
    np.testing.assert_allclose(history["temperature"], expected, rtol=1e-5)  # epoch means of the step's tau
    assert all(1.0 <= p <= 16.0 for p in history["perplexity"])
    # .keras round trip: the same tokens, weights, anneal step and optimizer state.
    loaded = check_saved_model(model, digits(4), tmp_path, outputs_of=lambda m, x: m.tokenize(x))
    assert int(np_(loaded.schedule_step)) == 30
    path = model.save_reconstructions(digits(4), tmp_path / "pictures" / "reconstructions.png")
    from PIL import Image

    assert Image.open(path).size == (4 * 8 + 3, 2 * 8 + 1)  # originals above reconstructions, 1-pixel gaps

    with pytest.raises(RuntimeError, match="interrupted"):
        run("broken", interrupt=True)
    resumed, resumed_history = run("broken")
    assert int(np_(resumed.schedule_step)) == 30
    np.testing.assert_allclose(resumed_history["temperature"], expected[1:], rtol=1e-5)
    for a, b in zip(model.weights, resumed.weights):
        np.testing.assert_allclose(np_(a), np_(b), rtol=1e-5, atol=1e-6)


def test_config_roundtrip_and_presets():
    model = tiny(seed=3)
    clone = check_config_roundtrip(model)
    assert clone.get_config() == model.get_config() and clone.seed == 3
    assert set(VISUAL_TOKENIZER_PRESETS) == {"dall_e_8192", "beit_tokenizer_digits"}
    paper = VISUAL_TOKENIZER_PRESETS["dall_e_8192"]["arguments"]
    assert (paper["image_shape"], paper["patch_size"], paper["vocabulary_size"]) == ((224, 224, 3), 16, 8192)
    assert (paper["temperature_end"], paper["temperature_steps"], paper["kl_weight"], paper["kl_warmup_steps"]) \
        == (1 / 16, 150_000, 6.6, 5000)
    digits_model = VisualTokenizer.from_preset("beit_tokenizer_digits", hidden_dim=8)
    assert digits_model.grid_size == (8, 8) and digits_model.vocabulary_size == 64 and digits_model.hidden_dim == 8
    with pytest.raises(ValueError, match="Unknown override"):
        VisualTokenizer.from_preset("beit_tokenizer_digits", depth=3)
    with pytest.raises(ValueError, match="Unknown VisualTokenizer preset"):
        VisualTokenizer.from_preset("dall_e")
    with pytest.raises(ValueError, match="loss"):
        model.compile(loss="mse")


# --- bad inputs ------------------------------------------------------------------------------------

@pytest.mark.parametrize("overrides, match", [
    ({"image_shape": (9, 8, 1)}, "multiples of patch_size"),
    ({"patch_size": 3, "image_shape": (9, 9, 1)}, "power of two"),
    ({"patch_size": 1}, "power of two"),
    ({"vocabulary_size": 1}, "vocabulary_size"),
    ({"temperature_end": 2.0}, "temperature_end must be <= temperature_start"),
    ({"temperature_end": 0.0}, "positive"),
    ({"kl_weight": -1.0}, "kl_weight"),
    ({"temperature_steps": -1}, "temperature_steps"),
    ({"seed": -1}, "seed"),
])
def test_bad_arguments_are_refused(overrides, match):
    with pytest.raises(ValueError, match=match):
        VisualTokenizer(**{**TINY, **overrides})


def test_bad_images_and_ids_are_refused():
    model = tiny()
    with pytest.raises(ValueError, match="multiples of patch_size 2"):
        model.tokenize(np.zeros((1, 7, 8, 1), "float32"))
    with pytest.raises(ValueError, match=r"shape \(B, 8, 8, 1\)"):
        model.tokenize(np.zeros((1, 16, 16, 1), "float32"))
    with pytest.raises(ValueError, match=r"in \[0, vocabulary_size=16\)"):
        model.decode(np.full((1, 4, 4), 16))
    with pytest.raises(ValueError, match=r"in \[0, vocabulary_size=16\)"):
        model.decode(-np.ones((1, 4, 4), "int32"))
    with pytest.raises(ValueError, match="shape"):
        model.decode(np.zeros((1, 4, 5), "int32"))
    with pytest.raises(ValueError, match="sample_weight"):
        model.compute_loss(digits(4), y_pred=model(digits(4)), sample_weight=np.ones(4))
    assert math.isclose(model.temperature_end, 1 / 16)


def test_a_frozen_trained_tokenizer_saves_and_loads_its_optimizer_state(tmp_path):
    # BEiT freezes the trained tokenizer it holds; loading must rebuild the tokenizer's optimizer on the
    # variables it trained (restore_compile), not on none, or its saved state is skipped with a warning.
    import warnings

    model = tiny()
    model.compile()
    model.fit(np.random.default_rng(0).random((8, 8, 8, 1), "float32"), batch_size=4, epochs=1, verbose=0)
    model.trainable = False
    model.save(tmp_path / "frozen.keras")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Skipping variable loading for optimizer ..." would raise
        loaded = keras.saving.load_model(tmp_path / "frozen.keras")
    assert not loaded.trainable and not loaded.trainable_variables
    assert len(loaded.optimizer.variables) == len(model.optimizer.variables) > 1
    for a, b in zip(model.optimizer.variables, loaded.optimizer.variables):
        np.testing.assert_array_equal(ops.convert_to_numpy(a), ops.convert_to_numpy(b))
