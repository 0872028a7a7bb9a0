import numpy as np
import pytest
from PIL import Image

from keras_paperzoo.callbacks import SampleGrid, image_grid, latent_interpolation, save_png
from keras_paperzoo.models import GAN


def test_image_grid_places_each_image_in_row_major_order():
    images = np.stack([np.full((2, 3, 1), i / 4) for i in range(5)])  # 5 images of 2x3
    grid = image_grid(images, columns=3)
    assert grid.shape == (4, 9, 1) and grid.dtype == np.uint8
    assert grid[0, 3, 0] == round(0.25 * 255) and grid[2, 3, 0] == round(1.0 * 255)
    assert grid[3, 8, 0] == 255  # the empty sixth cell is white
    with pytest.raises(ValueError, match="N, H, W, C"):
        image_grid(np.zeros((2, 2)))
    spaced = image_grid(images, columns=3, gap=2)  # 2 white pixels between the images
    assert spaced.shape == (6, 13, 1)
    assert spaced[0, 5, 0] == round(0.25 * 255) and (spaced[:, 3:5] == 255).all() and (spaced[2:4] == 255).all()
    with pytest.raises(ValueError, match="gap must be an int >= 0"):
        image_grid(images, gap=-1)


def test_sample_grid_uses_fixed_noise_and_interpolation_rows_end_where_they_should(tmp_path):
    gan = GAN.from_preset("gan_mnist_small", seed=0)
    gan.compile()
    grid = SampleGrid(tmp_path, num_samples=4, seed=3, scale=1, gap=0)
    x = np.random.default_rng(0).random((20, 28, 28, 1)).astype("float32")
    gan.fit(x, batch_size=10, epochs=2, verbose=0, callbacks=[grid])
    first = np.asarray(Image.open(tmp_path / "samples_epoch_001.png"))
    assert first.shape == (56, 56)
    assert (tmp_path / "samples_epoch_002.png").is_file()
    expected_noise = np.random.default_rng(3).standard_normal((4, gan.latent_dim)).astype("float32")
    np.testing.assert_array_equal(grid.noise, expected_noise)  # the same z at every epoch
    last = gan.generator.predict(expected_noise, verbose=0)
    second = np.asarray(Image.open(tmp_path / "samples_epoch_002.png"))
    np.testing.assert_allclose(second[:28, :28] / 255, last[0, :, :, 0], atol=1 / 255)

    path = latent_interpolation(gan.generator, gan.latent_dim, tmp_path / "interp.png", rows=2, steps=5, seed=1,
                                scale=1, gap=0)
    picture = np.asarray(Image.open(path))
    assert picture.shape == (56, 140)
    rng = np.random.default_rng(1)
    z_a = rng.standard_normal((2, 1, gan.latent_dim))
    z_b = rng.standard_normal((2, 1, gan.latent_dim))
    ends = gan.generator.predict(np.concatenate([z_a[1], z_b[1]]).astype("float32"), verbose=0)
    np.testing.assert_allclose(picture[28:, :28] / 255, ends[0, :, :, 0], atol=1 / 255)  # row 2 starts at z_a
    np.testing.assert_allclose(picture[28:, 112:] / 255, ends[1, :, :, 0], atol=1 / 255)  # and ends at z_b
    save_png(np.zeros((3, 3, 1), "uint8"), tmp_path / "tiny.png", scale=2)
    assert Image.open(tmp_path / "tiny.png").size == (6, 6)


def test_sample_grids_are_a_bounded_set_with_the_last_epoch(tmp_path):
    gan = GAN.from_preset("gan_mnist_small", seed=0)
    gan.compile()
    x = np.random.default_rng(0).random((20, 28, 28, 1)).astype("float32")
    gan.fit(x, batch_size=10, epochs=23, verbose=0, callbacks=[SampleGrid(tmp_path, num_samples=4, scale=1)])
    saved = sorted(p.name for p in tmp_path.glob("samples_epoch_*.png"))
    assert saved == [f"samples_epoch_{e:03d}.png" for e in (3, 6, 9, 12, 15, 18, 21, 23)]  # every 3rd and the last
    assert np.asarray(Image.open(tmp_path / "samples_epoch_023.png")).shape == (58, 58)  # 2 x 28 + a 2-pixel gap
    with pytest.raises(ValueError, match="every must be None or an int >= 1; got 0"):
        SampleGrid(tmp_path, every=0)
