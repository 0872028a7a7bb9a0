"""MAEReconstruction: input | masked | reconstruction | pasted, the same masks every epoch."""

import numpy as np
import pytest
from PIL import Image

from keras_paperzoo.callbacks.mae_reconstruction import MAEReconstruction, reconstruction_grid
from keras_paperzoo.models.mae.mae import MAE
from keras_paperzoo.models.vit.vit_backbone import ViTBackbone

IMAGES = np.random.default_rng(0).random((8, 32, 32, 3)).astype("float32")


def tiny_mae():
    encoder = ViTBackbone(patch_size=8, num_layers=2, hidden_dim=32, num_heads=2, mlp_dim=64,
                          image_shape=(32, 32, 3), dropout_rate=0.0)
    return MAE(encoder, decoder_depth=1, decoder_dim=32, decoder_heads=2, seed=0)


def test_pictures_show_input_masked_input_and_reconstructions_under_fixed_masks(tmp_path):
    mae = tiny_mae()
    callback = MAEReconstruction(IMAGES * 2 - 1, tmp_path, seed=4, value_range=(-1, 1), scale=1)
    callback.set_model(mae)
    callback.on_train_begin()
    np.testing.assert_array_equal(callback.noise, np.random.default_rng(4).random((8, 16)).astype("float32"))
    callback.on_epoch_end(0)
    callback.on_epoch_end(1)
    first = np.asarray(Image.open(tmp_path / "reconstruction_epoch_001.png"))
    second = np.asarray(Image.open(tmp_path / "reconstruction_epoch_002.png"))
    assert first.shape == (8 * 32, 4 * 32, 3)
    np.testing.assert_array_equal(first, second)  # same model, same masks
    # Column 0 is the input mapped from [-1, 1] to 0..255.
    np.testing.assert_allclose(first[:32, :32] / 255, IMAGES[0], atol=1 / 255)
    # Column 1: the removed patches mid-grey (0 in [-1, 1]), the visible ones the input.
    pictures = mae.reconstruct(IMAGES * 2 - 1, noise=callback.noise)
    mask = pictures["mask"][0].reshape(4, 4)
    for r in range(4):
        for c in range(4):
            tile = first[r * 8:(r + 1) * 8, 32 + c * 8:32 + (c + 1) * 8] / 255
            expected = np.full((8, 8, 3), 0.5) if mask[r, c] else IMAGES[0, r * 8:(r + 1) * 8, c * 8:(c + 1) * 8]
            np.testing.assert_allclose(tile, expected, atol=1 / 255)
    # Columns 2 and 3: the reconstruction, and the same with the visible patches pasted back.
    np.testing.assert_allclose(first[32:64, 64:96] / 255, np.clip((pictures["reconstruction"][1] + 1) / 2, 0, 1),
                               atol=1 / 255)
    np.testing.assert_allclose(first[32:64, 96:128] / 255, np.clip((pictures["pasted"][1] + 1) / 2, 0, 1),
                               atol=1 / 255)
    assert callback.last_path == tmp_path / "reconstruction_epoch_002.png"


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match=r"needs \(B, H, W, C\) images; got shape \(32, 32\)"):
        MAEReconstruction(np.zeros((32, 32)), "out")
    with pytest.raises(ValueError, match="value_range must be \\(low, high\\) with high > low"):
        reconstruction_grid({name: np.zeros((1, 2, 2, 1)) for name in ("images", "masked", "reconstruction",
                                                                      "pasted")}, value_range=(1, 1))
