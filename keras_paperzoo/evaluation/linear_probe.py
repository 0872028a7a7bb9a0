"""Linear classification on frozen features: the linear protocol of self-supervised papers.

MoCo (He et al. 2020, Sec. 4.1; the authors' `main_lincls.py`): freeze the
encoder (batch norm in inference mode), take the globally pooled features,
train one fully connected layer (weights N(0, 0.01), bias 0) with softmax
cross-entropy by SGD, momentum 0.9, **learning rate 30**, no weight decay, for
100 epochs with the rate divided by 10 at epochs 60 and 80; report top-1 test
accuracy. MAE (He et al. 2022, Sec. A.2) puts a batch norm without affine
parameters before the linear layer (`batch_norm=True`), which normalises the
features so one learning rate suits every encoder.

Deviation: the features are computed once from the un-augmented images (the
papers draw a random crop and flip per epoch and run the frozen encoder each
time); on a CPU budget this turns 100 encoder passes into one. Pass
`augmentation` to the encoder yourself if you need the paper's exact protocol.

Example:

```python
result = linear_probe(moco.encoder, (x_train, y_train), (x_test, y_test), epochs=100)
result["accuracy"]          # top-1 on the test set
result["classifier"]        # encoder + head, a keras.Model on images
```
"""

import numpy as np

import keras

from keras_paperzoo.evaluation.features import extract_features
from keras_paperzoo.training.optimizers import ScheduledMomentumSGD
from keras_paperzoo.training.schedules import StepDecay


def build_probe_head(feature_dim, num_classes, batch_norm=False, seed=0, name="linear_probe"):
    """[BatchNorm without affine, if `batch_norm`] -> Dense(num_classes), init N(0, 0.01), bias 0."""
    layers = [keras.Input((feature_dim,), name="features")]
    if batch_norm:
        layers.append(keras.layers.BatchNormalization(center=False, scale=False, epsilon=1e-6, name="probe_bn"))
    layers.append(
        keras.layers.Dense(
            num_classes,
            kernel_initializer=keras.initializers.RandomNormal(0.0, 0.01, seed=seed),
            bias_initializer="zeros",
            name="probe_fc",
        )
    )
    return keras.Sequential(layers, name=name)


def linear_probe(encoder, train, test, num_classes=None, epochs=100, batch_size=256, learning_rate=30.0,
                 momentum=0.9, weight_decay=0.0, drops=(0.6, 0.8), batch_norm=False, seed=0, verbose=0):
    """Train a linear classifier on the frozen `encoder`'s features; return its test accuracy.

    Args:
        encoder: Keras model, images -> (B, D) features or (B, h, w, C) maps
            (pooled). It is not modified.
        train, test: `(images, labels)` arrays or iterables of such batches.
        num_classes: default max label + 1.
        epochs, batch_size: 100 and 256 in MoCo.
        learning_rate: 30 (MoCo's grid-searched value; about 0.1 x batch / 256
            suits `batch_norm=True`, MAE's protocol).
        momentum, weight_decay: 0.9 and 0 (MoCo).
        drops: fractions of the run at which the rate is divided by 10 (60 and
            80 of 100 epochs).
        batch_norm: MAE's batch norm without affine before the linear layer.
        seed: the head's initialisation and the batch order.

    Returns:
        dict with `accuracy` (test top-1 in [0, 1]), `train_accuracy`, `head`
        (the trained linear layer on features), `classifier` (encoder + head,
        a Keras model on images) and `history`.
    """
    if not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be an int >= 1; got {epochs!r}.")
    if not learning_rate > 0:
        raise ValueError(f"learning_rate must be > 0; got {learning_rate}.")
    train_features, train_labels = extract_features(encoder, train, batch_size)
    test_features, test_labels = extract_features(encoder, test, batch_size)
    if train_labels is None or test_labels is None:
        raise ValueError("linear_probe needs labels for both the train and the test set.")
    num_classes = int(num_classes or max(train_labels.max(), test_labels.max()) + 1)

    head = build_probe_head(train_features.shape[1], num_classes, batch_norm=batch_norm, seed=seed)
    steps_per_epoch = int(np.ceil(len(train_features) / batch_size))
    total = steps_per_epoch * epochs
    boundaries = sorted({max(1, round(total * f)) for f in drops})
    schedule = StepDecay(learning_rate, boundaries=boundaries, factor=0.1)
    head.compile(
        optimizer=ScheduledMomentumSGD(schedule, momentum=momentum, l2=weight_decay),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
    )
    order = np.random.default_rng(seed).permutation(len(train_features))
    history = head.fit(
        train_features[order], train_labels[order], batch_size=batch_size, epochs=epochs, verbose=verbose
    )
    _, train_accuracy = head.evaluate(train_features, train_labels, batch_size=1024, verbose=0)
    _, accuracy = head.evaluate(test_features, test_labels, batch_size=1024, verbose=0)
    return {
        "accuracy": float(accuracy),
        "train_accuracy": float(train_accuracy),
        "head": head,
        "classifier": _classifier(encoder, head),
        "history": history.history,
    }


def _classifier(encoder, head):
    """encoder (frozen) -> pooling if needed -> head, as one model on images (None if no input shape)."""
    try:
        inputs = keras.Input(encoder.input_shape[1:], name="images")
    except (AttributeError, ValueError):
        return None
    features = encoder(inputs, training=False)
    if len(features.shape) == 4:
        features = keras.layers.GlobalAveragePooling2D()(features)
    return keras.Model(inputs, head(features), name="linear_probe_classifier")
