"""A CIFAR ResNet classifier starts where the paper's recipe can train it (He et al. 2016, Sec. 4.2).

- The loss at initialisation is ~log(10): the 10-way head (N(0, 0.01), see
  `RESNET_HEAD_INITIALIZER`) does not turn the growing v1 residual stream into confident
  wrong predictions (Keras's glorot_uniform head started ResNet-56 at ~4.8).
- `compile(warmup_steps=...)` is the paper's ResNet-110 remedy: lr 0.01, then 0.1, then /10
  at 50 % and 75 % of the run.
"""

import numpy as np
import pytest

import keras

from keras_paperzoo.models.image_classifier import ImageClassifier, paper_optimizer
from keras_paperzoo.models.resnet import ResNetBackbone


def _start_loss(model, x, y):
    logits = model(x, training=True)  # the first training step's BN: batch statistics
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(y, logits)
    return float(keras.ops.convert_to_numpy(loss))


@pytest.mark.parametrize("name", ["resnet20_cifar", "resnet56_cifar"])
def test_loss_at_initialisation_is_near_log_10(name):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 32, 32, 3)).astype("float32")  # per-channel normalised inputs
    y = rng.integers(0, 10, 32)
    keras.utils.set_random_seed(1)
    model = ImageClassifier(ResNetBackbone.from_preset(name), 10)
    kernel = keras.ops.convert_to_numpy(model.get_layer("predictions").kernel)
    assert kernel.shape == (64, 10) and kernel.std() == pytest.approx(0.01, rel=0.3)
    assert _start_loss(model, x, y) == pytest.approx(np.log(10), abs=0.5)
    # The pooled features are what make the head matter: a v1 residual stream grows with
    # depth (rms ~1.4 at 20 layers, ~2.7 at 56), so the Keras default head (glorot_uniform,
    # std 0.16) starts far from uniform on the same features.
    features = keras.Model(model.input, model.get_layer("avg_pool").output)(x, training=True)
    glorot = keras.initializers.GlorotUniform(seed=0)((64, 10))
    logits = keras.ops.matmul(features, glorot)
    glorot_loss = float(keras.ops.convert_to_numpy(
        keras.losses.SparseCategoricalCrossentropy(from_logits=True)(y, logits)))
    assert glorot_loss > np.log(10) + 0.5


def test_other_backbones_keep_the_keras_default_head():
    inputs = keras.Input((8, 8, 1))
    cnn = keras.Model(inputs, keras.layers.Conv2D(4, 3)(inputs))
    head = ImageClassifier(cnn, 3).get_layer("predictions")
    assert isinstance(head.kernel_initializer, keras.initializers.GlorotUniform)


def test_warmup_trains_at_a_tenth_of_the_rate_first():
    backbone = ResNetBackbone(stage_blocks=[1], stage_filters=[4], stem="cifar", stem_filters=4,
                              shortcut="A", image_shape=(8, 8, 3))
    schedule = paper_optimizer(backbone, steps_per_epoch=100, epochs=4, warmup_steps=40)._learning_rate
    rates = [float(keras.ops.convert_to_numpy(schedule(s))) for s in (0, 39, 40, 199, 200, 299, 300, 399)]
    np.testing.assert_allclose(rates, [0.01, 0.01, 0.1, 0.1, 0.01, 0.01, 0.001, 0.001], rtol=1e-6)
    plain = paper_optimizer(backbone, steps_per_epoch=100, epochs=4)._learning_rate  # the paper's default
    assert float(keras.ops.convert_to_numpy(plain(0))) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="warmup_steps should be an int between 0 and the first lr drop "
                                         r"\(update 200 of 400\); got 200"):
        paper_optimizer(backbone, steps_per_epoch=100, epochs=4, warmup_steps=200)
    model = ImageClassifier(backbone, 3)
    model.compile(steps_per_epoch=10, epochs=2, warmup_steps=5)
    x = np.random.default_rng(0).normal(size=(16, 8, 8, 3)).astype("float32")
    history = model.fit(x, np.arange(16) % 3, batch_size=8, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert int(keras.ops.convert_to_numpy(model.optimizer.iterations)) == 2
