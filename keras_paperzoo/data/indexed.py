"""Training data that says which image is which: x = {"images": ..., "index": ...}.

InstDisc and CMC keep one memory-bank row per training image and read the row of each
image of a batch (`keras_paperzoo.layers.MemoryBank`), so their data yields each
image's index, its row in the training set, beside the image. The index is the
image's position in the arrays every loader of `keras_paperzoo.data` returns
(`load_dataset`: the embedded digits, `.npz` files, image folders and zips in sorted
path order, tensorflow-datasets splits in their stored order), so it is the same at
every load and every epoch. Three ways to get it:

- arrays, for `fit(x, ...)` with Keras's own shuffling: `with_index(images)`;
  Keras shuffles the dict's entries together, so each image keeps its index;
- `EpochShuffledBatches(images, with_index=True)`: the package's reproducible
  batches (`paperzoo train` uses them), in which a resumed run sees the same
  (image, index) pairs as the uninterrupted one;
- `tf.data`: `index_dataset(dataset)` numbers the elements before any shuffle.

Example:

```python
from keras_paperzoo.data.indexed import with_index
model.fit(with_index(images), batch_size=256, epochs=200)   # x = {"images": (N, ...), "index": (N,)}
```
"""

import numpy as np
from keras_paperzoo.optional import require_tensorflow

IMAGES = "images"
INDEX = "index"


def with_index(images):
    """{"images": images, "index": 0..N-1 (int32)}: each image beside its row in the training set."""
    images = np.asarray(images) if not hasattr(images, "shape") else images
    return {IMAGES: images, INDEX: np.arange(len(images), dtype="int32")}


def index_dataset(dataset):
    """A `tf.data.Dataset` of images (or (images, labels)) -> ({"images", "index"}[, labels]).

    Number the elements of the unbatched, unshuffled dataset: shuffle and batch after.
    """
    tf = require_tensorflow("index_dataset (a tf.data pipeline)")

    def pair(index, element):
        if isinstance(element, tuple):
            return ({IMAGES: element[0], INDEX: tf.cast(index, tf.int32)},) + element[1:]
        return {IMAGES: element, INDEX: tf.cast(index, tf.int32)}

    return dataset.enumerate().map(pair)


def split_indexed(inputs, owner):
    """(images, index) from x = {"images", "index"}; one message when the index is missing."""
    if isinstance(inputs, dict) and IMAGES in inputs and INDEX in inputs:
        return inputs[IMAGES], inputs[INDEX]
    got = f"a dict with keys {sorted(inputs)}" if isinstance(inputs, dict) else \
        f"{type(inputs).__name__} of shape {tuple(getattr(inputs, 'shape', ()))}"
    raise ValueError(
        f"{owner} reads each image's memory-bank row, so x must be {{'images': images, 'index': indices}} "
        f"(keras_paperzoo.data.indexed.with_index(images), or EpochShuffledBatches(..., with_index=True)); "
        f"got {got}."
    )


def check_index_range(index, size, owner):
    """Refuse indices outside [0, size) (a traced step cannot: JAX would clamp them silently)."""
    index = np.asarray(index)
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = int(index.min()) if index.min() < 0 else int(index.max())
        raise ValueError(
            f"{owner}'s memory bank has {size} rows (one per training image), so each index must be in "
            f"[0, {size}); got index {bad}. Build the model with the number of training images."
        )
