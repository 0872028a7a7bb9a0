"""The InvaSpread trainer: Ye et al. 2019, "Unsupervised Embedding Learning via Invariant and
Spreading Instance Feature" (CVPR 2019, https://arxiv.org/abs/1904.03436).
"""

import keras
from keras import ops

from keras_paperzoo.data.views import ViewAugmentation
from keras_paperzoo.layers.l2_normalization import L2Normalization
from keras_paperzoo.layers.projection_head import ProjectionHead
from keras_paperzoo.losses.invaspread import invaspread_loss
from keras_paperzoo.losses.nt_xent import nt_xent_accuracy
from keras_paperzoo.models.checks import check_flag, check_int, check_number
from keras_paperzoo.models.invaspread.invaspread_presets import INVASPREAD_PRESETS
from keras_paperzoo.models.self_supervised import SelfSupervisedTrainer
from keras_paperzoo.training.optimizers import ScheduledMomentumSGD

# The authors' CIFAR run (demo_seen.py): 301 epochs (range(0, 301)); adjust_learning_rate keeps lr for
# epochs 0-119, then x0.1 (120-159), x0.05 (160-199), x0.01 (200 on).
AUTHORS_EPOCHS = 301
AUTHORS_DROPS = ((120, 0.1), (160, 0.05), (200, 0.01))
CIFAR10_IMAGES = 50_000

# One view (demo_seen.py's transform_train, torchvision): RandomResizedCrop(scale 0.2-1), ColorJitter(0.4,
# 0.4, 0.4, 0.4) on every image (torchvision's random order of the four), RandomGrayscale(0.2),
# RandomHorizontalFlip, then Normalize. (The flip is drawn before the colour steps here: they act per
# pixel, so the order does not matter.)
INVASPREAD_VIEW = {"crop_scale": (0.2, 1.0), "jitter": (0.4, 0.4, 0.4, 0.4), "jitter_probability": 1.0,
                   "grayscale_probability": 0.2, "blur_probability": 0.0, "solarize_probability": 0.0}


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class InvaSpread(SelfSupervisedTrainer, keras.Model):
    """InvaSpread: one embedding network, two views of each image, negatives from the batch only.

    One training step is the paper's Siamese training (Sec. 3.2, Fig. 2):

    1. Two views of each of the N images: x_i in the first branch and its
       augmentation x^_i in the second (`augmentation`, or `x=(x, x_hat)`).
    2. Both through the one embedding network f (Sec. 3.1): backbone, global
       average pooling, a linear layer to `embedding_dim` (128), L2
       normalisation; the 2N images in one batch, as the authors' code
       concatenates them (batch norm sees all 2N).
    3. The instance-wise softmax loss J (Sec. 3.1, `losses/invaspread.py`): for
       each of the 2N features, a softmax over the 2N - 1 others at temperature
       tau; -log P(positive) for the other view of its image (invariance),
       -log(1 - P) for the 2N - 2 features of the other images (spreading). The
       features as class weights are constants, as in the authors' code.

    The views: the paper's derivation (Sec. 3.1) pairs an original image x_i
    with its augmentation x^_i; its Siamese training (Sec. 3.2) applies
    augmentation in the first branch too, and the authors' code draws both
    images from the same random transform (`CIFAR10Instance`: img1 =
    transform(img), img2 = transform(img)). That is the default here, two
    independent draws; `original_view=True` feeds the first branch the image
    itself (only resized and normalised, the augmentation's inference mode).

    Inference (`model(images)`) returns the normalised embedding f(x), (B,
    embedding_dim), on which the paper's kNN evaluation runs (the authors'
    `kNN` uses the network's output); `embedding_network` is that model (images
    as the backbone takes them), and `encoder` is backbone + pooling, h, as for
    the other trainers.

    Args:
        backbone: a Keras model with a known image input shape returning (B, D)
            features or (B, h, w, C) maps (any Keras model).
        temperature: tau > 0 (0.1, the paper's and the authors' `--batch-t`).
        embedding_dim: the size of the embedding f (128, the authors' `--low-dim`).
        original_view: False (the authors' code: two augmented views) or True
            (Sec. 3.1's original image and its augmentation).
        augmentation: "default" (the authors' CIFAR transform at the backbone's
            input size: random resized crop of area 0.2-1, colour jitter 0.4 on
            brightness, contrast, saturation and hue, grayscale with p 0.2,
            horizontal flip), a dict overriding its `ViewAugmentation` arguments
            (`crop_scale`, `mean`, `std`, ...), a Keras layer returning one view
            (called once per view), or None (then `x` holds the two views).
        num_classes: None, or the classes of an online linear classifier on the
            stop-gradient h of the first view (`probe_accuracy`).
        seed: int or None.

    Metrics: `loss` (J, the mean over the 2N features) and `contrastive_accuracy`
    (how often a feature's most probable class is the other view of its image).

    Example:

    ```python
    from keras_paperzoo.models import InvaSpread
    model = InvaSpread.from_preset("invaspread_tiny")
    model.compile(steps_per_epoch=20, epochs=10)        # SGD 0.03, momentum 0.9, weight decay 5e-4
    model.fit(images, batch_size=128, epochs=10)        # raw images in [0, 1]
    f = model.predict(images)                           # (N, 32) unit embeddings
    ```
    """

    batch_rule = "its negatives are the batch's other images"
    presets = INVASPREAD_PRESETS

    def __init__(self, backbone, temperature=0.1, embedding_dim=128, original_view=False, augmentation="default",
                 num_classes=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.temperature = check_number("InvaSpread", "temperature", temperature, "> 0", named=False)
        self.embedding_dim = check_int("InvaSpread", "embedding_dim", embedding_dim, named=False)
        self.original_view = check_flag("InvaSpread", "original_view", original_view, named=False)
        self._setup(backbone, augmentation, num_classes, seed)

        # === Layers ===
        self.head = ProjectionHead((self.embedding_dim,), name="head")  # linear, with bias (the authors' nn.Linear)
        self.normalize = L2Normalization(name="l2_normalize")
        self.contrastive_accuracy_tracker = keras.metrics.Mean(name="contrastive_accuracy")
        inputs = keras.Input(backbone.input_shape[1:], name="images")
        self.embedding_network = keras.Model(inputs, self.normalize(self.head(self.represent(inputs))),
                                             name="embedding_network")  # x -> f(x), unit norm
        self.built = True

    def default_augmentation(self, image_size, **arguments):
        return ViewAugmentation(image_size, **{**INVASPREAD_VIEW, "seed": self.seed, **arguments},
                                name="invaspread_view")

    # --- Siamese training (Sec. 3.2) ---------------------------------------------------------
    def inference(self, inputs):
        """f(x) (B, embedding_dim)."""
        return self.embedding_network(self.inference_view(inputs), training=False)

    def forward_pass(self, inputs, training):
        """{"h": (2N, D), "f": (2N, embedding_dim)} of both views."""
        if not training:
            x = x_hat = self.inference_view(inputs)
        elif self.original_view and not isinstance(inputs, (list, tuple)) and self.augmentation is not None:
            x = self.inference_view(inputs)  # Sec. 3.1: the image itself (resized, normalised)
            x_hat = self.views(inputs, training=True, count=1)[0]  # its augmentation
        else:
            x, x_hat = self.views(inputs, training)  # two independent draws (Sec. 3.2, the authors' code)
        h = self.represent(ops.concatenate([x, x_hat], axis=0), training=training)  # (2N, D)
        return {"h": h, "f": self.normalize(self.head(h))}  # f: (2N, embedding_dim), unit rows

    def objective_loss(self, outputs, training):
        f, f_hat = ops.split(outputs["f"], 2, axis=0)  # (N, C) each: x_i's and x^_i's
        loss = invaspread_loss(f, f_hat, self.temperature)  # J, Sec. 3.1
        self.contrastive_accuracy_tracker.update_state(nt_xent_accuracy(f, f_hat))
        return loss

    def probe_features(self, outputs):
        return ops.split(outputs["h"], 2, axis=0)[0]  # h of x: (N, D)

    # --- the paper's optimizer --------------------------------------------------------------
    def paper_optimizer(self, batch_size=128, steps_per_epoch=None, epochs=None, learning_rate=0.03,
                        weight_decay=5e-4):
        """The authors' CIFAR SGD (`invaspread_optimizer`) for a run of `steps_per_epoch` x `epochs`."""
        return invaspread_optimizer(batch_size, steps_per_epoch, epochs, learning_rate, weight_decay)


def invaspread_optimizer(batch_size=128, steps_per_epoch=None, epochs=None, learning_rate=0.03, weight_decay=5e-4):
    """The authors' CIFAR SGD (demo_seen.py): lr 0.03, momentum 0.9, weight decay 5e-4 added to the gradient.

    The rate steps down by x0.1, x0.05 and x0.01 of the initial at epochs 120, 160
    and 200 of the authors' 301; here at the same fractions of a run of
    `steps_per_epoch` x `epochs` updates (without them, 301 epochs of CIFAR-10's
    50,000 images at `batch_size`, the last partial batch dropped as the authors'
    loader does). The authors scale nothing with the batch size (128 in their
    command). Weight decay reaches every parameter, as PyTorch's SGD does.
    """
    check_int("InvaSpread's optimizer", "batch_size", batch_size, named=False)
    check_number("InvaSpread's optimizer", "learning_rate", learning_rate, "> 0", named=False)
    steps_per_epoch = steps_per_epoch or max(1, CIFAR10_IMAGES // batch_size)
    total = int(steps_per_epoch) * int(epochs or AUTHORS_EPOCHS)
    # PiecewiseConstantDecay gives values[k + 1] once the update count exceeds boundaries[k]: the drop at
    # update u (the first update of epoch 120 of 301) needs the boundary u - 1.
    drops = [max(1, round(total * epoch / AUTHORS_EPOCHS)) for epoch, _ in AUTHORS_DROPS]
    rate = keras.optimizers.schedules.PiecewiseConstantDecay(
        [u - 1 for u in drops], [float(learning_rate)] + [float(learning_rate) * f for _, f in AUTHORS_DROPS])
    return ScheduledMomentumSGD(rate, momentum=0.9, l2=weight_decay)
