"""Data that carries each image's index: every (image, index) pair is the image's own row, after shuffling
and after a resume; missing or out-of-range indices get one message."""

import numpy as np
import pytest

from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
from keras_paperzoo.data.indexed import check_index_range, index_dataset, split_indexed, with_index


def _images(n=20):
    return np.random.default_rng(0).random((n, 4, 4, 3)).astype("float32")


def test_shuffled_batches_pair_each_image_with_its_row_also_when_resumed():
    images, labels = _images(), np.arange(20) % 3
    batches = EpochShuffledBatches(images, labels, batch_size=6, seed=5, with_index=True)
    seen = []
    for epoch in (0, 1):
        batches.set_epoch(epoch)
        for i in range(len(batches)):
            x, y = batches[i]
            np.testing.assert_array_equal(x["images"], images[x["index"]])
            np.testing.assert_array_equal(y, labels[x["index"]])
            assert x["index"].dtype == np.int32
            seen.append(x["index"].copy())
    assert not np.array_equal(seen[0], seen[3])  # epochs are shuffled differently
    resumed = EpochShuffledBatches(images, labels, batch_size=6, seed=5, with_index=True)
    resumed.set_epoch(1)  # a run resumed at epoch 1 sees the same pairs
    np.testing.assert_array_equal(resumed[2][0]["index"], seen[5])


@pytest.mark.needs_tensorflow
def test_arrays_and_tf_data():
    images = _images(5)
    x = with_index(images)
    np.testing.assert_array_equal(x["index"], np.arange(5))
    tf = pytest.importorskip("tensorflow")
    dataset = index_dataset(tf.data.Dataset.from_tensor_slices((images, np.arange(5) * 10))).shuffle(5, seed=0)
    for element, label in dataset:
        index = int(element["index"])
        np.testing.assert_array_equal(element["images"].numpy(), images[index])
        assert int(label) == index * 10


def test_missing_or_out_of_range_indices_get_one_message():
    with pytest.raises(ValueError, match=r"x must be \{'images': images, 'index': indices\}.*got ndarray of shape \(5, 4, 4, 3\)"):
        split_indexed(_images(5), "InstDisc")
    with pytest.raises(ValueError, match=r"has 20 rows .* in \[0, 20\); got index 20"):
        check_index_range(np.array([3, 20]), 20, "InstDisc")
    with pytest.raises(ValueError, match=r"got index -1"):
        check_index_range(np.array([-1, 2]), 20, "InstDisc")
