"""`EpochShuffledBatches` over a dict of named inputs (GPT-1's fine-tuning without tf.data)."""

import numpy as np
import pytest

from keras_paperzoo.data.epoch_batches import EpochShuffledBatches


def _inputs(n=10):
    return {"token_ids": np.arange(n * 3).reshape(n, 3), "cls_index": np.arange(n)}, np.arange(n) * 10


def test_a_dict_of_inputs_is_batched_row_for_row_in_the_epochs_order():
    x, y = _inputs()
    batches = EpochShuffledBatches(x, y, batch_size=4, seed=3)
    assert len(batches) == 2  # 10 // 4, the remainder dropped
    for epoch in (0, 1):
        batches.set_epoch(epoch)
        order = np.random.default_rng([3, epoch]).permutation(10)
        for index in range(len(batches)):
            bx, by = batches[index]
            rows = order[index * 4:(index + 1) * 4]
            np.testing.assert_array_equal(bx["cls_index"], rows)  # every input and y take the same rows
            np.testing.assert_array_equal(bx["token_ids"], x["token_ids"][rows])
            np.testing.assert_array_equal(by, rows * 10)


def test_a_dict_of_inputs_is_checked_in_one_line():
    x, y = _inputs()
    with pytest.raises(ValueError, match=r"^x's inputs must have one number of examples; got \{'token_ids': 10, "
                                         r"'cls_index': 9\}\.$"):
        EpochShuffledBatches({**x, "cls_index": x["cls_index"][:9]}, y, batch_size=4)
    with pytest.raises(ValueError, match=r"^x\['mask'\] has 1 non-finite values"):
        EpochShuffledBatches({**x, "mask": np.array([np.nan] + [0.0] * 9)}, y, batch_size=4)
    with pytest.raises(ValueError, match=r"batch_size 11 is larger than the dataset \(10 examples\)"):
        EpochShuffledBatches(x, y, batch_size=11)
    with pytest.raises(ValueError, match=r"^augment and with_index take an array x"):
        EpochShuffledBatches(x, y, batch_size=4, with_index=True)
