"""The base classes of the view layers: Keras's `DataLayer`, a random step, a one-view pipeline.

All the view layers subclass Keras's `DataLayer` (the base of Keras's own
preprocessing layers: `self.backend` switches to TensorFlow ops inside
`tf.data`), so they run in `tf.data` pipelines and inside models on TensorFlow,
JAX and PyTorch. Keras 3.15 exports no `DataLayer` (`keras.layers` has none): it
is imported from `keras.src` here, once, and the other modules take it from this
one.

- `RandomLayer`: a random step (a crop, a colour jitter, a blur) that works on
  batches (B, H, W, C) or single images (H, W, C) and passes images through at
  inference, unless it defines `inference`.
- `ViewPipeline`: a chain of steps giving one view of `image_size`, normalised
  last by the per-channel `mean` and `std` if given.
"""

from keras.src.layers.preprocessing.data_layer import DataLayer  # no public equivalent in Keras 3.15 (keras.layers has none)

from keras_paperzoo.data.views.checks import check_image_size, check_mean_std


class RandomLayer(DataLayer):
    """A DataLayer that works on batches (B, H, W, C) or single images (H, W, C)."""

    def __init__(self, **kwargs):
        # Augmentation computes in float32 under a mixed-precision policy too: the model's first
        # layer casts its output (a float16 / bfloat16 colour jitter would mix dtypes on TF).
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)

    def call(self, images, training=True):
        if not training:
            return self.inference(images)
        batched = len(images.shape) == 4
        if not batched:
            images = self.backend.numpy.expand_dims(images, 0)
        images = self.backend.cast(images, self.compute_dtype)
        outputs = self.augment(images)
        return outputs if batched else self.backend.numpy.squeeze(outputs, 0)

    def inference(self, images):
        return images

    def compute_output_shape(self, input_shape):
        return input_shape


class ViewPipeline(DataLayer):
    """Base of the one-view pipelines (ViewAugmentation; MoCoAugmentation, CMCAugmentation, CPCAugmentation).

    Its output is `image_size`; it holds no weights, only its steps' seeds; and
    (x - mean) / std per channel, if given, is its last step (`normalize`).
    """

    def __init__(self, image_size, mean=None, std=None, **kwargs):
        kwargs.setdefault("dtype", "float32")  # float32 under a mixed-precision policy
        super().__init__(**kwargs)
        self.image_size = check_image_size(image_size)
        self.mean, self.std = check_mean_std(mean, std)

    def build(self, input_shape):
        self.built = True  # the steps hold no weights (only seeds); they build on their first call

    def normalize(self, x):
        if self.mean is None:
            return x
        mean = self.backend.convert_to_tensor(self.mean, dtype=x.dtype)
        std = self.backend.convert_to_tensor(self.std, dtype=x.dtype)
        return (x - mean) / std

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-3], *self.image_size, input_shape[-1])

    def get_config(self):
        config = super().get_config()
        config.update({"image_size": list(self.image_size), "mean": self.mean, "std": self.std})
        return config
