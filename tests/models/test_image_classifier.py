import numpy as np
import pytest

import keras

from keras_paperzoo.models import ImageClassifier
from keras_paperzoo.models.image_classifier import paper_optimizer
from keras_paperzoo.training import ScheduledMomentumSGD
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model


def _cnn():
    inputs = keras.Input((8, 8, 1))
    x = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inputs)
    return keras.Model(inputs, x, name="tiny_cnn")


def _data(n=32):
    rng = np.random.default_rng(0)
    return rng.random((n, 8, 8, 1)).astype("float32"), rng.integers(0, 3, n).astype("int32")


def test_feature_map_backbone_gets_pooling_and_head():
    model = ImageClassifier(_cnn(), num_classes=3)
    assert model.output_shape == (None, 3)
    assert model.count_params() == (3 * 3 * 1 * 4 + 4) + (4 * 3 + 3)
    assert [l.name for l in model.layers][-2:] == ["avg_pool", "predictions"]


def test_compile_defaults_fit_save_and_config(tmp_path):
    model = ImageClassifier(_cnn(), num_classes=3, dropout=0.1)
    model.compile(steps_per_epoch=4, epochs=2)
    assert isinstance(model.optimizer, ScheduledMomentumSGD)
    x, y = _data()
    history = check_fit(model, x, y, batch_size=8, epochs=1)
    assert history.history["loss"][0] == pytest.approx(np.log(3), abs=0.3)  # ~uniform at init
    check_config_roundtrip(model)
    loaded = check_saved_model(model, x[:4], tmp_path)
    assert isinstance(loaded.optimizer, ScheduledMomentumSGD) and loaded.optimizer.l2 == pytest.approx(1e-4)


def test_paper_schedules_scale_with_the_run():
    opt = paper_optimizer(_cnn(), steps_per_epoch=100, epochs=9)  # unknown backbone: ResNet's recipe
    assert opt._learning_rate.boundaries == [300, 600]
    assert opt.momentum == pytest.approx(0.9) and opt.l2 == pytest.approx(1e-4)


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_classes must be an int >= 2; got 1"):
        ImageClassifier(_cnn(), num_classes=1)
    with pytest.raises(ValueError, match="dropout"):
        ImageClassifier(_cnn(), num_classes=3, dropout=1.5)
    seq = keras.Sequential([keras.Input((4, 5)), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="returns shape"):
        ImageClassifier(seq, num_classes=3)


def test_vit_head_starts_at_zero_so_the_loss_is_exactly_log_k():
    # ViT (Dosovitskiy et al. 2021, Sec. 3.1, App. B.1.1): a zero-initialised D x K head.
    from keras_paperzoo.models import ViTBackbone

    backbone = ViTBackbone(patch_size=4, num_layers=1, hidden_dim=8, num_heads=2, mlp_dim=16, image_shape=(8, 8, 3))
    model = ImageClassifier(backbone, num_classes=5)
    head = model.get_layer("predictions")
    assert not np.any(keras.ops.convert_to_numpy(head.kernel))
    x = np.random.default_rng(0).random((4, 8, 8, 3)).astype("float32")
    y = np.arange(4) % 5
    loss = keras.losses.sparse_categorical_crossentropy(y, model.predict(x, verbose=0), from_logits=True)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(loss), np.log(5), rtol=1e-5)
    # Other backbones keep their own rule (a CNN here: Keras's glorot_uniform).
    assert np.any(keras.ops.convert_to_numpy(ImageClassifier(_cnn(), num_classes=3).get_layer("predictions").kernel))
