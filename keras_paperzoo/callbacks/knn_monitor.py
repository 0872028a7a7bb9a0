"""`KNNMonitor`: the weighted kNN accuracy of an encoder's features, logged every epoch.

Self-supervised training has no accuracy of its own; InstDisc (Wu et al. 2018,
Sec. 3.4) and the MoCo authors' CIFAR demo watch a weighted kNN classifier
(k = 200, cosine similarity, exp(s / 0.1) votes) built on the training set's
features and evaluated on the test set. This callback adds that number to the
epoch's logs as `knn_acc`, so it appears in `History` and in checkpoints'
monitors.
"""

import keras

from keras_paperzoo.evaluation.features import extract_features
from keras_paperzoo.evaluation.knn import knn_accuracy


class KNNMonitor(keras.callbacks.Callback):
    """Log `knn_acc` (weighted kNN top-1 of `encoder`'s features) at the end of epochs.

    Args:
        train_data: `(images, labels)` arrays or an iterable of such batches: the
            labelled feature bank.
        test_data: the same for the evaluated images.
        encoder: a Keras model (images -> features), or a function of the model
            being trained returning one; default the trained model's `encoder`
            attribute (MoCo's backbone + pooling).
        k, temperature: 200 and 0.1 (see `keras_paperzoo.evaluation.knn`).
        every: evaluate every this many epochs (the others log nothing).
        batch_size: for feature extraction.
        name: the log key.

    Example:

    ```python
    moco.fit(images, epochs=200, callbacks=[KNNMonitor((x_train, y_train), (x_test, y_test))])
    ```
    """

    def __init__(self, train_data, test_data, encoder=None, k=200, temperature=0.1, every=1, batch_size=256,
                 name="knn_acc"):
        super().__init__()
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be an int >= 1; got {every!r}.")
        self.train_data, self.test_data = train_data, test_data
        self.encoder_arg = encoder
        self.k, self.temperature, self.every = k, temperature, every
        self.batch_size, self.name = batch_size, name
        self.history = []  # (epoch, accuracy)
        self._encoder = None

    def _resolve_encoder(self):
        if self._encoder is not None:
            return self._encoder
        encoder = self.encoder_arg
        if encoder is None:
            encoder = getattr(self.model, "encoder", None)
            if encoder is None:
                raise ValueError(
                    f"KNNMonitor: the model {self.model.name!r} has no `encoder`; pass encoder=..."
                )
        elif not isinstance(encoder, keras.Model) and callable(encoder):
            encoder = encoder(self.model)
        self._encoder = encoder
        return encoder

    def on_train_begin(self, logs=None):
        self._encoder = None

    def evaluate(self):
        """The current kNN accuracy in [0, 1]."""
        encoder = self._resolve_encoder()
        train_features, train_labels = extract_features(encoder, self.train_data, self.batch_size)
        test_features, test_labels = extract_features(encoder, self.test_data, self.batch_size)
        return knn_accuracy(train_features, train_labels, test_features, test_labels, k=self.k,
                            temperature=self.temperature)

    def on_epoch_end(self, epoch, logs=None):
        if (epoch + 1) % self.every:
            return
        accuracy = self.evaluate()
        self.history.append((epoch, accuracy))
        if logs is not None:
            logs[self.name] = accuracy
