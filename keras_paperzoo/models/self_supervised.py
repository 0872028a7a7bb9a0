"""`SelfSupervisedTrainer`: what the contrastive trainers (MoCo, SimCLR, BYOL, ...) share.

On top of `Trainer` (config, presets, the paper's `compile()`):

- the backbone check (any Keras model with a known image input shape; keras-hub's
  too) and the representation h: backbone, then global average pooling when the
  backbone returns a feature map (`encoder`, the model evaluated downstream);
- the views: `x` given as V views (`x=(view_1, view_2)`), or drawn from raw images
  by the trainer's `augmentation` (a layer returning a list of views, like
  `MultiViewAugmentation`, or one returning one view, called once per view: each
  call is an independent draw);
- an online linear classifier (`num_classes=`): a linear layer on stop-gradient
  features of the first view, trained beside the objective when labels are given
  (`fit(images, labels)`), its accuracy logged as `probe_accuracy` (solo-learn's
  "online linear evaluation"). The stop-gradient keeps the representation the
  objective's alone; the probe is updated by the trainer's optimizer.

- the smallest batch (`min_batch_size`, why: `batch_rule`): `fit` refuses a batch size,
  or NumPy data whose last batch, below it, and the step refuses such a batch at
  trace time on JAX and TensorFlow (the batch dimension is static there) and at every
  step on PyTorch (eager): a batch of one gives SimCLR no negative (loss 0, accuracy 1)
  and BYOL's batch-normalised projector one constant output. 2 where the objective
  compares an image with the batch's others (SimCLR, InvaSpread), spreads the batch
  over prototypes (SwAV's Sinkhorn) or batch-normalises pooled (B, D) vectors (SimCLR's,
  BYOL's and SwAV's heads) or shuffles batch norm (MoCo, DenseCL); 1 where the
  negatives come from elsewhere and batch norm sees feature maps only (InstDisc's and
  CMC's memory banks, CPC's other positions, DeepCluster's pseudo-labels).

- the step's frame: `call` (inference, or the forward half of the step) and
  `compute_loss` (the labels checked, the forward half run when Keras did not, the
  paper's objective, the online classifier's loss), around three hooks a trainer
  writes as its paper's algorithm box: `inference(inputs)`, `forward_pass(inputs,
  training)` and `objective_loss(outputs, training)`;
- memory-bank data (`check_indexed_data`): each image's row index in [0, num_data).

A trainer built on it calls `_setup(backbone, augmentation, num_classes, seed)` in
its constructor, implements `default_augmentation(image_size)` and the three hooks.
Its augmentation's config takes `mean` and `std` (per channel, applied after each
view is drawn): `paperzoo train` passes the training images' statistics through the
preset's `augmentation` arguments (`recipes/self_supervised.py`), so a paper's own
augmentation layer accepts them as the generic `ViewAugmentation` does.
"""

import numpy as np

import keras
from keras import ops

from keras_paperzoo.data.checks import check_batching
from keras_paperzoo.data.indexed import IMAGES, check_index_range, split_indexed
from keras_paperzoo.models.checks import check_num_classes
from keras_paperzoo.models.resnet.resnet_backbone import ResNetBackbone
from keras_paperzoo.models.trainer import Trainer
from keras_paperzoo.training.batch_guard import check_batch_dimension, tensorflow_batch_errors

_COUNT = {2: "two", 3: "three"}


def pool_features(features, owner="The trainer"):
    """(B, h, w, C) maps -> (B, C) by global average pooling; (B, D) features unchanged."""
    if len(features.shape) == 4:
        return ops.mean(features, axis=(1, 2))
    if len(features.shape) != 2:
        raise ValueError(f"{owner} needs a backbone returning (B, D) features or (B, h, w, C) maps; "
                         f"got shape {tuple(features.shape)}.")
    return features


class SelfSupervisedTrainer(Trainer):
    """Mix-in base of the self-supervised trainers (see the module docstring)."""

    fixed_loss = True
    backbone_class = ResNetBackbone  # what the papers train; any Keras image model can be passed
    # The smallest batch the objective is defined on, and why (see the module docstring).
    min_batch_size = 2
    batch_rule = "batch normalisation of its projections needs the statistics of at least two images"
    # Whether x carries each image's memory-bank row, {"images", "index"} (`check_indexed_data`).
    indexed = False

    def __init__(self, **kwargs):
        kwargs.setdefault("name", type(self).__name__.lower())  # "simclr", "moco", ...
        super().__init__(**kwargs)

    def _setup(self, backbone, augmentation, num_classes, seed, build_probe=True):
        """The backbone, the views' augmentation and (unless `build_probe=False`) the online classifier on h."""
        check_backbone(type(self).__name__, backbone)
        self.num_classes = check_num_classes(type(self).__name__, num_classes)
        self.backbone = backbone
        self.seed = seed
        self.augmentation = self._make_augmentation(augmentation)
        self.probe = None
        if build_probe:
            self.add_probe(int(backbone.output_shape[-1]))  # h's width

    def set_bank_arguments(self, num_data, num_negatives, temperature, feature_dim, bank_momentum, loss):
        """Keep the memory-bank objective's arguments (InstDisc's; CMC's, one bank per view), which the trainer
        has checked: n rows, m noise samples, tau, the embedding's width, the banks' momentum, "nce" or "softmax"."""
        self.num_data, self.num_negatives, self.feature_dim = int(num_data), int(num_negatives), int(feature_dim)
        self.temperature, self.bank_momentum = float(temperature), float(bank_momentum)
        self.objective = loss  # `loss` is keras.Model's attribute (set by compile)

    def add_probe(self, width):
        """The online linear classifier on `width` features (None without `num_classes`), built before fit
        traces; a trainer whose representation is not h (CMC's two views) adds it where its layers are made."""
        self.probe = None
        if self.num_classes is None:
            return
        self.probe = keras.layers.Dense(self.num_classes, name="online_probe")
        self.probe.build((None, width))
        self.probe_accuracy = keras.metrics.SparseCategoricalAccuracy(name="probe_accuracy")

    # --- the step's frame: call and compute_loss around the paper's objective ---------------
    def call(self, inputs, training=False):
        """Inference: `inference(inputs)`. Training: `forward_pass(inputs, training=True)`."""
        if not training:
            return self.inference(inputs)
        return self.forward_pass(inputs, training=True)

    def inference(self, inputs):
        """What `model(x)` and `predict` return: the paper's embedding of the inference view."""
        raise NotImplementedError

    def forward_pass(self, inputs, training):
        """The forward half of the step: a dict of tensors for `objective_loss` (`y_pred` in Keras's step).

        (Not `forward`: on PyTorch that name is torch.nn.Module's, which `model(x)` calls.)
        """
        raise NotImplementedError

    def objective_loss(self, outputs, training):
        """The paper's loss on `forward_pass`'s outputs; updates the trainer's state and metrics."""
        raise NotImplementedError

    def probe_features(self, outputs):
        """The online classifier's input among `forward_pass`'s outputs: h of the first view."""
        return outputs["h"]

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """`objective_loss` of the forward half (run here when Keras's step did not), plus the probe's loss."""
        self.check_labels(y)
        if not isinstance(y_pred, dict):
            y_pred = self.forward_pass(x, training)
        loss = self.objective_loss(y_pred, training)
        features = self.probe_features(y_pred) if self.probe is not None and y is not None else None
        return loss + self.probe_loss(features, y)

    # --- the smallest batch -------------------------------------------------------------
    @classmethod
    def check_batch_size(cls, batch_size, examples=None, drop_remainder=False):
        """Refuse a batch size (or, given N `examples`, a last batch) below `min_batch_size`, naming `batch_rule`."""
        check_batching(examples, batch_size, cls.min_batch_size, cls.__name__, cls.batch_rule, drop_remainder)

    def check_inputs(self, x, y, batch_size=None, examples=None, drop_remainder=False):
        self.check_batch_size(batch_size, examples, drop_remainder)

    def fit(self, *args, **kwargs):
        if self.indexed:  # memory-bank rows: the indices checked before anything is traced
            self.check_indexed_data(args[0] if args else kwargs.get("x"))
        with tensorflow_batch_errors():  # a batch too small in TensorFlow's graph: the same one line
            return super().fit(*args, **kwargs)

    def train_step(self, *args):
        """Keras's step (`args`: (data,), or (state, data) on JAX), after refusing a batch below `min_batch_size`.

        The batch dimension is known when the step is traced (JAX, TensorFlow with a
        static batch) or run (PyTorch), so the check costs nothing per step there; see
        `keras_paperzoo.training.batch_guard` for TensorFlow's unknown batch dimension.
        """
        leaves = [leaf for leaf in keras.tree.flatten(args[-1]) if len(getattr(leaf, "shape", ())) > 0]
        if leaves:
            check_batch_dimension(leaves[0], self.min_batch_size, self._refuse_batch)
        return super().train_step(*args)

    def _refuse_batch(self, batch):
        name = type(self).__name__
        got = "a smaller batch" if batch is None else f"a batch of {batch}"
        raise ValueError(f"{name} got {got}; its batches need at least {self.min_batch_size} ({self.batch_rule})")

    # --- augmentation and views ---------------------------------------------------
    def default_augmentation(self, image_size, **arguments):
        """The paper's augmentation layer at `image_size` with `arguments` overriding its defaults."""
        raise NotImplementedError

    def _make_augmentation(self, augmentation):
        if augmentation is None or isinstance(augmentation, keras.layers.Layer):
            return augmentation
        if augmentation == "default":
            augmentation = {}
        if not isinstance(augmentation, dict):
            raise ValueError(
                "augmentation must be 'default', a dict of the paper augmentation's arguments, a Keras "
                f"layer or None; got {augmentation!r}."
            )
        image_size = self.augmentation_image_size()
        if "image_size" not in augmentation and None in image_size:
            return None  # a variable-size backbone: the views must be given
        return self.default_augmentation(**{"image_size": image_size, **augmentation})

    def augmentation_image_size(self):
        """(H, W) at which the default augmentation draws its views: the backbone's input size."""
        return tuple(self.backbone.input_shape[1:3])

    def views(self, inputs, training, count=2):
        """`count` views of the batch: the given ones, or drawn by the augmentation."""
        if isinstance(inputs, (list, tuple)):
            if len(inputs) != count:
                raise ValueError(f"{type(self).__name__} takes {count} views; got {len(inputs)}.")
            views = list(inputs)
        elif self.augmentation is None:
            if training:
                raise ValueError(
                    f"{type(self).__name__} without augmentation needs {_COUNT.get(count, count)} views: "
                    "x=(view_1, view_2). "
                    f"Got one tensor of shape {tuple(inputs.shape)}; pass views or an augmentation."
                )
            views = [inputs] * count
        else:
            drawn = self.augmentation(inputs, training=training)
            if isinstance(drawn, (list, tuple)):
                views = list(drawn)[:count]
            else:
                views = [drawn] + [self.augmentation(inputs, training=training) for _ in range(count - 1)]
        batches = [view.shape[0] for view in views]
        if len({b for b in batches if b is not None}) > 1:
            raise ValueError(f"{type(self).__name__}'s views must hold the same images; got batch sizes {batches}.")
        return views

    def inference_view(self, inputs):
        """The images a model sees outside training: the first view, or the inputs as the
        augmentation's inference mode leaves them (resized and normalised, not augmented)."""
        if isinstance(inputs, (list, tuple)):
            return inputs[0]
        if isinstance(inputs, dict) and IMAGES in inputs:  # {"images", "index"} (memory-bank trainers)
            inputs = inputs[IMAGES]
        if self.augmentation is None:
            return inputs
        view = self.augmentation(inputs, training=False)
        return view[0] if isinstance(view, (list, tuple)) else view

    # --- representation ---------------------------------------------------------------
    def represent(self, images, training=False):
        """h = pool(backbone(images)): (B, D)."""
        return pool_features(self.backbone(images, training=training), type(self).__name__)

    @property
    def encoder(self):
        """backbone + global average pooling: the representation evaluated downstream.

        A new functional model on the shared backbone at each access; it takes images as
        the backbone does (normalised, when the augmentation normalises)."""
        inputs = keras.Input(self.encoder_input_shape(), name="images")
        features = self.backbone(inputs)
        if len(features.shape) == 4:
            features = keras.layers.GlobalAveragePooling2D(name="avg_pool")(features)
        return keras.Model(inputs, features, name=f"{self.name}_encoder")

    def encoder_input_shape(self):
        """(H, W, C) of the images `encoder` takes: the backbone's."""
        return self.backbone.input_shape[1:]

    # --- online linear evaluation -------------------------------------------------------
    def probe_loss(self, features, labels):
        """Cross-entropy of the online linear classifier on stop-gradient `features`; 0 without labels."""
        if self.probe is None or labels is None:
            return 0.0
        if len(labels.shape) > 1 and labels.shape[-1] == 1:
            labels = ops.squeeze(labels, -1)
        if len(labels.shape) != 1:
            raise ValueError(
                f"{type(self).__name__}'s y must be integer class labels (B,) for the online linear "
                f"classifier; got shape {tuple(labels.shape)}. Views go in x=(view_1, view_2)."
            )
        logits = ops.cast(self.probe(ops.stop_gradient(features)), "float32")  # (B, classes)
        self.probe_accuracy.update_state(labels, logits)
        return ops.mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))

    def check_indexed_data(self, x):
        """Refuse data without each image's row index, or with one outside [0, num_data) (arrays, batches).

        Memory-bank trainers (InstDisc, CMC) read and write each image's row; a traced
        step cannot refuse a bad index (JAX clamps it), so `fit` checks arrays and
        `EpochShuffledBatches` first. tf.data pipelines and generators are not read ahead.
        """
        from keras_paperzoo.data.epoch_batches import EpochShuffledBatches

        owner = type(self).__name__
        if isinstance(x, EpochShuffledBatches):
            if not x.with_index:
                raise ValueError(
                    f"{owner} reads each image's memory-bank row, so the batches must carry the index: "
                    "EpochShuffledBatches(..., with_index=True)."
                )
            check_index_range(np.asarray([0, len(x.x) - 1]), self.num_data, owner)
        elif isinstance(x, dict) or hasattr(x, "shape") or isinstance(x, (list, tuple)):
            _, index = split_indexed(x, owner)
            check_index_range(keras.ops.convert_to_numpy(index), self.num_data, owner)

    def check_labels(self, y):
        if y is not None and len(getattr(y, "shape", ())) == 4:
            raise ValueError(
                f"{type(self).__name__} got image-shaped y: pass the views together as x=(view_1, view_2) "
                "(a dataset element ((view_1, view_2),)); y holds class labels for the online classifier."
            )


def check_backbone(owner, backbone):
    """A keras.Model with a known (B, H, W, C) image input: what the self-supervised trainers need."""
    if not isinstance(backbone, keras.Model):
        raise ValueError(f"{owner} needs a keras.Model backbone; got {type(backbone).__name__}.")
    try:
        input_shape = backbone.input_shape
    except (AttributeError, ValueError):
        input_shape = None
    if not isinstance(input_shape, tuple) or len(input_shape) != 4:
        raise ValueError(
            f"{owner} needs a backbone with a known image input shape (B, H, W, C), e.g. built on "
            f"keras.Input; {backbone.name} has input shape {input_shape}."
        )
