"""Several random views of each image from per-view augmentation pipelines, as one Keras layer.

Contrastive and self-distillation methods compare views of the same images:
SimCLR, MoCo and BYOL take two (BYOL's two come from different pipelines),
SwAV's multi-crop takes 2 x 224 + 6 x 96 (views of different sizes).
`MultiViewAugmentation` holds the per-view pipelines and returns the list of
views, so that a trainer reads as the paper's algorithm box:

```python
views = augment(images, training=True)   # [view_1, ..., view_V]
z = [encoder(v) for v in views]
```

It is a Keras `DataLayer`, like the other view layers (`base.py`): it runs
inside a model's traced train step (TensorFlow, JAX under jit, PyTorch) and in
`tf.data` (`dataset.map(lambda x: tuple(augment(x)))`) on any backend.

Randomness: each pipeline draws from its own `keras.random.SeedGenerator`s, and
a pipeline used for several views draws again for each (independent views).
`seed=` re-seeds every generator inside the pipelines from (seed, pipeline,
layer), so the views are a function of `seed` alone, whatever seeds the
pipelines were built with. Inside a model, `EpochSeeds` (callbacks/epoch_seeds.py)
finds all these generators (they are variables of the layer) and sets them from
(seed, epoch) at each epoch start: a resumed run redraws the same views. In
`tf.data` under JAX or PyTorch, Keras runs the pipelines with TensorFlow
generators of its own, seeded from each layer's `seed` (which `seed=` sets); those
are not model variables, and `EpochSeeds` does not reach them.

`MultiCropAugmentation` is a `MultiViewAugmentation` of crops at set sizes
(SwAV's multi-crop, `models/swav/swav_augmentation.py`) that refuses images
smaller than a crop.
"""

import numpy as np

import keras

from keras_paperzoo.data.views.base import DataLayer
from keras_paperzoo.data.views.seeds import derived_seed, random_layers, reseed


def _view_counts(pipelines, views):
    """How many views each pipeline gives, checked; `views` as MultiViewAugmentation takes it."""
    if views is None:
        counts = [1] * len(pipelines)
    elif isinstance(views, (list, tuple)):
        if len(views) != len(pipelines):
            raise ValueError(
                f"views gives one count per pipeline: {len(pipelines)} pipelines, got views={views!r}."
            )
        counts = list(views)
    else:
        if len(pipelines) != 1:
            raise ValueError(
                f"views={views!r} (an int) repeats a single pipeline; got {len(pipelines)} pipelines. "
                "Give a count per pipeline instead, e.g. views=[2, 6]."
            )
        counts = [views]
    for count in counts:
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise ValueError(f"Each view count must be an int >= 1; got views={views!r}.")
    if sum(counts) < 2:
        raise ValueError(f"MultiViewAugmentation needs at least 2 views; got views={views!r} ({sum(counts)} view).")
    return [int(count) for count in counts]


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class MultiViewAugmentation(DataLayer):
    """V random views of each image, view i from its own augmentation pipeline.

    `call(images, training=True)` returns a list of V tensors (B, h_i, w_i, C),
    in the order of the pipelines (each repeated its count of times). With
    `training=False` it returns the same list structure, each entry from its
    pipeline's deterministic inference path (for the crop-based pipelines: a
    resize to the view's size, then the normalisation; the images themselves
    for a pipeline that neither resizes nor normalises), so that a functional
    model has one output structure in both modes.

    Args:
        view_augmentations: a Keras layer, or a list of Keras layers, each
            mapping images (B, H, W, C) to one view (e.g. `ViewAugmentation`,
            `MoCoAugmentation`). A layer may appear once only; to draw several
            views from one pipeline, give a count in `views`.
        views: None (one view per pipeline), an int V >= 2 (a single pipeline
            drawn V times, each an independent draw), or a list of counts, one
            per pipeline (SwAV's multi-crop: `[global_crop, local_crop]`,
            `views=[2, 6]`).
        seed: int >= 0 or None. If given, every generator inside the pipelines
            is re-seeded from (seed, pipeline index, layer index); if None, the
            pipelines keep the seeds they were built with.

    Example:

    ```python
    from keras_paperzoo.models.simclr import simclr_augmentation

    augment = MultiViewAugmentation(simclr_augmentation(32, color_strength=0.5, blur=False), views=2, seed=0)
    view_1, view_2 = augment(images, training=True)
    ```
    """

    def __init__(self, view_augmentations, views=None, seed=None, **kwargs):
        kwargs.setdefault("name", "multi_view_augmentation")
        kwargs.setdefault("dtype", "float32")  # float32 under a mixed-precision policy
        super().__init__(**kwargs)
        pipelines = (
            list(view_augmentations) if isinstance(view_augmentations, (list, tuple)) else [view_augmentations]
        )
        if not pipelines:
            raise ValueError(
                "view_augmentations is empty; got []. Give one layer per view, or one layer and views=V."
            )
        for index, pipeline in enumerate(pipelines):
            if not isinstance(pipeline, keras.layers.Layer):
                raise ValueError(
                    f"view_augmentations[{index}] must be a Keras layer; got {type(pipeline).__name__} {pipeline!r}."
                )
            for later in range(index + 1, len(pipelines)):
                if pipelines[later] is pipeline:
                    raise ValueError(
                        f"view_augmentations[{index}] and [{later}] are the same layer ({pipeline.name}); "
                        "give it once and its number of views in views=[...]."
                    )
        counts = _view_counts(pipelines, views)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be an int >= 0 or None; got {seed!r}.")
        self.views = list(views) if isinstance(views, (list, tuple)) else views
        self.seed = None if seed is None else int(seed)

        # === Layers ===
        self.view_augmentations = pipelines
        # view k comes from pipeline view_pipeline[k]: pipeline 0 count[0] times, then pipeline 1, ...
        self.view_pipeline = tuple(i for i, count in enumerate(counts) for _ in range(count))
        if self.seed is not None:
            for i, pipeline in enumerate(pipelines):
                for j, layer in enumerate(random_layers(pipeline)):
                    reseed(layer, derived_seed(self.seed, i, j))

    @property
    def num_views(self):
        return len(self.view_pipeline)

    def build(self, input_shape):
        self.built = True  # the pipelines hold no weights (only seeds); they build on their first call

    def call(self, images, training=True):
        # (B, H, W, C) -> [view_1, ..., view_V], view k: (B, h_k, w_k, C); each call a new draw.
        return [self.view_augmentations[i](images, training=training) for i in self.view_pipeline]

    def compute_output_shape(self, input_shape):
        return [self.view_augmentations[i].compute_output_shape(input_shape) for i in self.view_pipeline]

    def get_config(self):
        config = super().get_config()
        config.update(
            {"view_augmentations": [keras.saving.serialize_keras_object(p) for p in self.view_augmentations],
             "views": self.views, "seed": self.seed}
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["view_augmentations"] = [
            keras.saving.deserialize_keras_object(p) for p in config["view_augmentations"]
        ]
        return cls(**config)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class MultiCropAugmentation(MultiViewAugmentation):
    """`MultiViewAugmentation` of crops at set sizes (SwAV's multi-crop) that refuses images smaller than a crop.

    Its pipelines each have an `image_size` (the crop's); `call` raises when the
    images are smaller than a crop (a crop upsampled from a smaller image would be a
    blur, not a local view). Everything else is `MultiViewAugmentation`'s, in
    `tf.data` and in the model on every backend.
    """

    def call(self, images, training=True):
        height, width = images.shape[-3], images.shape[-2]  # (B, H, W, C) or one (H, W, C) image in tf.data
        for view, index in enumerate(self.view_pipeline):
            crop = tuple(self.view_augmentations[index].image_size)
            if (height is not None and height < crop[0]) or (width is not None and width < crop[1]):
                raise ValueError(
                    f"Multi-crop view {view} is a {crop[0]} x {crop[1]} crop, larger than the {height} x {width} "
                    "images: each crop must fit in the image (give smaller crop sizes or larger images)."
                )
        return super().call(images, training=training)
