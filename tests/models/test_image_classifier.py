import numpy as np
import pytest

import keras

from keras_paperzoo.models import AlexNetBackbone, ImageClassifier, ResNetBackbone, VGGBackbone, ViTBackbone
from keras_paperzoo.models.image_classifier import paper_optimizer
from keras_paperzoo.training import ScheduledMomentumSGD
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model


def _cnn():
    inputs = keras.Input((8, 8, 1))
    x = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inputs)
    return keras.Model(inputs, x, name="tiny_cnn")


def _resnet(stem="cifar", channels=1):
    """A one-block ResNet: the paper recipe's owner at test size."""
    return ResNetBackbone(stage_blocks=[1], stage_filters=[4], stem=stem, stem_filters=4,
                          shortcut="A" if stem == "cifar" else "B", image_shape=(8, 8, channels))


def _data(n=32):
    rng = np.random.default_rng(0)
    return rng.random((n, 8, 8, 1)).astype("float32"), rng.integers(0, 3, n).astype("int32")


def test_feature_map_backbone_gets_pooling_and_head():
    model = ImageClassifier(_cnn(), num_classes=3)
    assert model.output_shape == (None, 3)
    assert model.count_params() == (3 * 3 * 1 * 4 + 4) + (4 * 3 + 3)
    assert [l.name for l in model.layers][-2:] == ["avg_pool", "predictions"]


def test_compile_defaults_fit_save_and_config(tmp_path):
    model = ImageClassifier(_resnet(), num_classes=3, dropout=0.1)
    model.compile(steps_per_epoch=4, epochs=2)
    assert isinstance(model.optimizer, ScheduledMomentumSGD)
    x, y = _data()
    history = check_fit(model, x, y, batch_size=8, epochs=1)
    assert history.history["loss"][0] == pytest.approx(np.log(3), abs=0.3)  # ~uniform at init
    check_config_roundtrip(model)
    loaded = check_saved_model(model, x[:4], tmp_path)
    assert isinstance(loaded.optimizer, ScheduledMomentumSGD) and loaded.optimizer.l2 == pytest.approx(1e-4)


def test_paper_schedules_scale_with_the_run():
    opt = paper_optimizer(_resnet(stem="imagenet"), steps_per_epoch=100, epochs=9)  # ResNet's ImageNet drops
    assert opt._learning_rate.boundaries == [300, 600]
    assert opt.momentum == pytest.approx(0.9) and opt.l2 == pytest.approx(1e-4)


def test_a_resnet_cifar_backbone_gets_the_cifar_recipe():
    # He et al. 2016, Sec. 4.2: lr 0.1, /10 at 32k and 48k of 64k updates, momentum 0.9, L2 1e-4.
    model = ImageClassifier(_resnet(stem="cifar"), num_classes=3)
    model.compile()
    opt = model.optimizer
    assert isinstance(opt, ScheduledMomentumSGD)
    assert opt._learning_rate.boundaries == [32000, 48000]
    assert float(keras.ops.convert_to_numpy(opt._learning_rate(0))) == pytest.approx(0.1)
    assert opt.momentum == pytest.approx(0.9) and opt.l2 == pytest.approx(1e-4)
    head = model.get_layer("predictions").kernel_initializer
    assert isinstance(head, keras.initializers.RandomNormal) and head.stddev == pytest.approx(0.01)
    model.compile(steps_per_epoch=10, epochs=8)  # fitted to the run: 50 % and 75 % of 80 updates
    assert model.optimizer._learning_rate.boundaries == [40, 60]


def test_each_backbone_declares_its_papers_recipe():
    assert _resnet(stem="imagenet").classification_recipe()["drops"] == pytest.approx((1 / 3, 2 / 3))
    assert _resnet(stem="cifar").classification_recipe()["total_steps"] == 64000
    vit = ViTBackbone(patch_size=4, num_layers=1, hidden_dim=8, num_heads=2, mlp_dim=16, image_shape=(8, 8, 3))
    assert vit.classification_recipe()["optimizer"] == "adamw"
    assert vit.classification_recipe(fine_tune=True)["optimizer"] == "sgd_cosine"
    assert isinstance(paper_optimizer(vit), keras.optimizers.AdamW)
    assert isinstance(paper_optimizer(vit, fine_tune=True), ScheduledMomentumSGD)
    alexnet = AlexNetBackbone(image_shape=(67, 67, 3), filters=(2,) * 5, include_fc=False)
    vgg = VGGBackbone(configuration="A", image_shape=(32, 32, 3), filters=(2,) * 5, include_fc=False)
    for backbone, epochs in ((alexnet, 90), (vgg, 74)):  # Krizhevsky et al. Sec. 5; Simonyan & Zisserman Sec. 3.1
        recipe = backbone.classification_recipe()
        assert (recipe["learning_rate"], recipe["l2"], recipe["epochs"]) == (0.01, 5e-4, epochs)
        assert "head_initializer" not in recipe  # Keras's default head


def test_a_backbone_without_a_recipe_needs_an_optimizer():
    backbone = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Conv2D(4, 3)], name="plain_cnn")
    model = ImageClassifier(backbone, num_classes=3)
    with pytest.raises(ValueError, match=r"no paper recipe for a Sequential backbone .*pass compile\(optimizer=\.\.\.\)"):
        model.compile()
    with pytest.raises(ValueError, match="Sequential"):
        paper_optimizer(backbone)
    # Keras's default head (glorot_uniform), never ResNet's N(0, 0.01).
    assert isinstance(model.get_layer("predictions").kernel_initializer, keras.initializers.GlorotUniform)
    model.compile(optimizer="sgd")  # the paper's loss and accuracy still come with it
    assert isinstance(model.optimizer, keras.optimizers.SGD)
    x, y = _data(16)
    history = check_fit(model, x, y, batch_size=8, epochs=1)
    assert "accuracy" in history.history


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
