"""Features of a frozen encoder over a dataset, as NumPy arrays (for kNN and linear probes)."""

import numpy as np

import keras


def _is_array_pair(data):
    return (
        isinstance(data, (tuple, list))
        and len(data) == 2
        and hasattr(data[0], "shape")
        and (data[1] is None or hasattr(data[1], "shape"))
    )


def _pool(features):
    features = np.asarray(keras.ops.convert_to_numpy(features), "float32")
    if features.ndim == 4:  # (B, h, w, C) maps: global average pooling
        features = features.mean(axis=(1, 2))
    if features.ndim != 2:
        raise ValueError(f"The encoder should return (B, D) features or (B, h, w, C) maps; got {features.shape}.")
    return features


def _labels(labels):
    labels = np.asarray(keras.ops.convert_to_numpy(labels))
    if labels.ndim == 2:  # (N, 1) or one-hot (N, classes)
        labels = labels[:, 0] if labels.shape[1] == 1 else labels.argmax(axis=1)
    return labels


def extract_features(encoder, data, batch_size=256, verbose=0):
    """Run `encoder` in inference mode over `data`; return (features (N, D), labels (N,)).

    Args:
        encoder: a Keras model mapping images to (B, D) features or (B, h, w, C)
            maps (these are globally average-pooled).
        data: `(images, labels)` arrays, or an iterable of `(images, labels)`
            batches (a `tf.data.Dataset`, a `keras.utils.PyDataset`, a list).
        batch_size: for arrays.
        verbose: 1 shows a progress bar (`keras.utils.Progbar`), 0 nothing.

    Example:

    ```python
    features, labels = extract_features(moco.encoder, (x_test, y_test))
    ```
    """
    if _is_array_pair(data):
        images, labels = data
        batch_size = min(batch_size, len(images))
        features = []
        progress = keras.utils.Progbar(len(images), verbose=verbose, unit_name="image")
        for i in range(0, len(images), batch_size):
            chunk = np.asarray(keras.ops.convert_to_numpy(images[i : i + batch_size]))
            size = len(chunk)
            if size < batch_size:  # pad the last chunk: one input shape, one compiled function
                chunk = np.concatenate([chunk, np.repeat(chunk[-1:], batch_size - size, axis=0)])
            features.append(_pool(encoder.predict_on_batch(chunk))[:size])
            progress.add(size)
        labels = None if labels is None else _labels(labels)
    else:
        features, labels = [], []
        total = len(data) if hasattr(data, "__len__") else None
        progress = keras.utils.Progbar(total, verbose=verbose, unit_name="batch")
        for batch in (data[i] for i in range(len(data))) if isinstance(data, keras.utils.PyDataset) else data:
            if not isinstance(batch, (tuple, list)) or len(batch) < 2:
                raise ValueError("extract_features needs (images, labels) batches; got one tensor per batch.")
            features.append(_pool(encoder.predict_on_batch(batch[0])))
            labels.append(_labels(batch[1]))
            progress.add(1)
        if not features:
            raise ValueError("extract_features got an empty dataset.")
        labels = np.concatenate(labels)
    return np.concatenate(features), labels
