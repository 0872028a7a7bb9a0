"""A linear probe of every location of a frozen feature map: the dense stand-in for detection and segmentation.

DenseCL (Wang et al. 2021) evaluates by fine-tuning detectors and segmenters on VOC,
COCO and Cityscapes. At a CPU budget this probes instead: the backbone's (N, h, w, D)
maps are frozen, each location's D features standardised, and one linear classifier
shared by all locations (a 1 x 1 convolution) is trained by softmax cross-entropy on
the class of the cell each location covers (`data/digit_canvas.py`'s `cell_labels`).
Reported: the accuracy over every cell, over the cells holding a digit, and the mean
IoU over the classes (segmentation's measure), with `miou_above` telling a difference
between two backbones from noise by a paired bootstrap over the test images.

Example:

```python
result = dense_linear_probe(backbone, (train_images, train_cells), (test_images, test_cells), num_classes=11)
result["miou"], result["accuracy"], result["predictions"].shape    # (N_test, h, w)
```
"""

import numpy as np

BOOTSTRAP = 200


def mean_iou(predictions, labels, num_classes):
    """Mean over the classes present in `labels` or `predictions` of TP / (TP + FP + FN)."""
    predictions, labels = np.asarray(predictions).ravel(), np.asarray(labels).ravel()
    ious = []
    for c in range(num_classes):
        predicted, actual = predictions == c, labels == c
        union = np.sum(predicted | actual)
        if union:
            ious.append(np.sum(predicted & actual) / union)
    return float(np.mean(ious))


def dense_linear_probe(backbone, train, test, num_classes, epochs=30, batch_size=512, learning_rate=0.01,
                       background=None, seed=0):
    """Train a linear classifier on every location of `backbone`'s frozen maps; its test scores.

    Args:
        backbone: a Keras model, images (N, H, W, C) -> maps (N, h, w, D).
        train, test: (images, cell labels (N, h, w) ints).
        num_classes: the classes of the labels.
        epochs, batch_size (locations per batch), learning_rate: of the probe (Adam;
            a convex problem on standardised features, so the optimiser only sets how
            fast it converges).
        background: the background class, left out of `foreground_accuracy` (None: none).
        seed: the probe's initialisation and batch order.

    Returns:
        {"accuracy", "foreground_accuracy", "miou"} in [0, 1] and "predictions" (N_test, h, w).
    """
    import keras

    def maps(images):
        features = np.asarray(backbone.predict(images, batch_size=256, verbose=0), "float32")  # (N, h, w, D)
        if features.ndim != 4:
            raise ValueError(f"dense_linear_probe needs (N, h, w, D) maps; the backbone gives {features.shape}.")
        return features

    train_maps, test_maps = maps(train[0]), maps(test[0])
    for images_maps, labels in ((train_maps, train[1]), (test_maps, test[1])):
        if images_maps.shape[:3] != np.asarray(labels).shape:
            raise ValueError(f"the cell labels {np.asarray(labels).shape} must match the maps' (N, h, w) "
                             f"{images_maps.shape[:3]}.")
    depth = train_maps.shape[-1]
    mean = train_maps.reshape(-1, depth).mean(0)
    std = train_maps.reshape(-1, depth).std(0) + 1e-6
    x_train = ((train_maps - mean) / std).reshape(-1, depth)  # (N h w, D)
    x_test = ((test_maps - mean) / std).reshape(-1, depth)
    y_train = np.asarray(train[1]).reshape(-1)
    keras.utils.set_random_seed(seed)
    probe = keras.Sequential([keras.Input((depth,)), keras.layers.Dense(num_classes)], name="dense_probe")
    probe.compile(optimizer=keras.optimizers.Adam(learning_rate),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    probe.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, verbose=0)
    predictions = np.argmax(probe.predict(x_test, batch_size=4096, verbose=0), -1).reshape(test_maps.shape[:3])
    labels = np.asarray(test[1])
    foreground = labels != background if background is not None else np.ones(labels.shape, bool)
    return {
        "accuracy": float(np.mean(predictions == labels)),
        "foreground_accuracy": float(np.mean(predictions[foreground] == labels[foreground])),
        "miou": mean_iou(predictions, labels, num_classes),
        "predictions": predictions,
    }


def miou_above(better, worse, labels, num_classes, seed=0, resamples=BOOTSTRAP):
    """Is mIoU(better) above mIoU(worse) by more than 2 standard errors of a paired bootstrap over the images?

    Args:
        better, worse: (N, h, w) predictions of two probes on the same test images.
        labels: (N, h, w) their cell labels.

    Returns:
        {"holds", "difference_points", "two_standard_errors_points"} (mIoU in points),
        the shape of `claims.accuracy_above`, so `claims.claim_line` prints it.
    """
    from keras_paperzoo.evaluation.claims import paired_bootstrap_above

    claim = paired_bootstrap_above(lambda p, y: mean_iou(p, y, num_classes), better, worse, labels, seed, resamples)
    return {"holds": claim["holds"], "difference_points": round(100 * claim["difference"], 2),
            "two_standard_errors_points": round(100 * claim["two_standard_errors"], 2)}
