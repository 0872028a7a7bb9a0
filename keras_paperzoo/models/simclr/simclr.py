"""The SimCLR trainer: Chen et al. 2020, "A Simple Framework for Contrastive Learning of Visual
Representations" (https://arxiv.org/abs/2002.05709), and Chen et al. 2020b, "Big
Self-Supervised Models are Strong Semi-Supervised Learners" (SimCLR v2,
https://arxiv.org/abs/2006.10029).
"""

import keras
from keras import ops

from keras_paperzoo.models.simclr.simclr_augmentation import simclr_views
from keras_paperzoo.layers.l2_normalization import L2Normalization
from keras_paperzoo.layers.projection_head import ProjectionHead
from keras_paperzoo.losses.nt_xent import nt_xent, nt_xent_accuracy
from keras_paperzoo.models.checks import check_choice, check_number
from keras_paperzoo.models.self_supervised import SelfSupervisedTrainer, check_backbone
from keras_paperzoo.models.simclr.simclr_presets import SIMCLR_PRESETS
from keras_paperzoo.training.lars_schedule import lars_warmup_cosine

HEAD_LAYERS = {1: 2, 2: 3}  # v1: z = W2 relu(W1 h); v2: three layers (Sec. 2 of v2)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class SimCLR(SelfSupervisedTrainer, keras.Model):
    """SimCLR: two views of each image, encoder f, head g, NT-Xent on z = g(f(x)).

    One training step is SimCLR's Algorithm 1:

    1. Two augmentations of each of the N images (`augmentation`, SimCLR's
       crop, flip, colour distortion and blur; or `x=(x_a, x_b)`).
    2. h = f(x) for the 2N views in one batch (the authors' code concatenates the
       views, so batch norm sees all 2N), z = g(h).
    3. NT-Xent (eq. 1, `losses/nt_xent.py`) over the 2N views: each view's positive
       is the other view of its image, its negatives the other 2N - 2 views.

    The head g is a `ProjectionHead` (Sec. 2.1): v1 two layers, v2 three (v2,
    Sec. 2: "a deeper projection head"), each hidden layer as wide as h (2048 for
    ResNet-50) with batch norm and ReLU, the output (128-d) with batch norm, as
    the authors' code builds it (the paper's equation shows no norm). SimCLR v2
    fine-tunes from the head's first layer: `fine_tuning_encoder()` returns
    backbone, pooling and that layer.

    Under `keras.distribution.DataParallel` (JAX) the batch is a global array:
    NT-Xent sees the negatives of the global batch and batch norm its statistics,
    the paper's global BN (Sec. 3: "we aggregate BN mean and variance over all
    devices"), so the loss and weights equal one device's (tested).

    Inference (`model(images)`) returns the normalised projections z / ||z||;
    `encoder` is backbone + pooling, h, which the paper evaluates (Sec. 4.2: h
    is better than z by more than 10 %).

    Args:
        backbone: a Keras model with a known image input shape returning (B, D)
            features or (B, h, w, C) maps (any Keras model).
        version: 1 or 2 (the head's depth; v2 also names SimCLR v2's deeper
            backbones and its memory, left out here).
        temperature: tau > 0 (0.1 on ImageNet; 0.5 in the CIFAR-10 runs, B.9).
        projection_dims: the head's widths, the last one z's; None: h's width
            for each hidden layer and 128 for z.
        augmentation: "default" (`simclr_views` at the backbone's input size:
            colour strength 1.0, blur on images of at least 96 pixels, ImageNet
            size, not on CIFAR's, as the paper's B.9), a dict of `simclr_views`
            arguments, a Keras layer, or None (then `x` holds the two views).
        num_classes: None, or the classes of an online linear classifier on the
            stop-gradient h of the first view (`probe_accuracy`).
        seed: int or None.

    Metrics: `loss` (NT-Xent) and `contrastive_accuracy` (how often a view's
    positive is its most similar view).

    Example:

    ```python
    from keras_paperzoo.models import SimCLR
    simclr = SimCLR.from_preset("simclr_tiny")
    simclr.compile(batch_size=64, steps_per_epoch=20, epochs=10)   # LARS, 0.3 x B / 256, warmup, cosine
    simclr.fit(images, batch_size=64, epochs=10)                   # raw images in [0, 1]
    h = simclr.encoder.predict(images)
    ```
    """

    batch_rule = "NT-Xent's negatives are the batch's other images, 2(N-1) per view"
    presets = SIMCLR_PRESETS

    def __init__(self, backbone, version=1, temperature=0.1, projection_dims=None, augmentation="default",
                 num_classes=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        check_backbone("SimCLR", backbone)
        self.version = int(check_choice("SimCLR", "version", version, tuple(HEAD_LAYERS), named=False))
        self.temperature = check_number("SimCLR", "temperature", temperature, "> 0", named=False)
        if projection_dims is None:
            width = int(backbone.output_shape[-1])  # h's width: C of (B, h, w, C) maps or D of (B, D)
            projection_dims = [width] * (HEAD_LAYERS[self.version] - 1) + [128]
        self._setup(backbone, augmentation, num_classes, seed)

        # === Layers ===
        self.head = ProjectionHead(projection_dims, batch_norm=True, output_batch_norm=True, name="head")  # g
        self.projection_dims = list(self.head.widths)
        self.normalize = L2Normalization(name="l2_normalize")
        self.contrastive_accuracy_tracker = keras.metrics.Mean(name="contrastive_accuracy")
        inputs = keras.Input(backbone.input_shape[1:], name="images")
        self.projector = keras.Model(inputs, self.head(self.represent(inputs)), name="projector")  # x -> z
        self.built = True

    def default_augmentation(self, image_size, **arguments):
        arguments.setdefault("blur", min(image_size) >= 96)  # ImageNet-size images only (B.9)
        return simclr_views(image_size, seed=self.seed, **arguments)

    # --- Algorithm 1 ----------------------------------------------------------------
    def inference(self, inputs):
        """z / ||z|| (B, C)."""
        return self.normalize(self.projector(self.inference_view(inputs), training=False))

    def forward_pass(self, inputs, training):
        """{"h": (2N, D), "z": (2N, C)} of both views."""
        x_a, x_b = self.views(inputs, training) if training else [self.inference_view(inputs)] * 2
        h = self.represent(ops.concatenate([x_a, x_b], axis=0), training=training)  # (2N, D), f
        return {"h": h, "z": self.head(h, training=training)}  # z = g(h): (2N, C)

    def objective_loss(self, outputs, training):
        z_a, z_b = ops.split(outputs["z"], 2, axis=0)  # (N, C) each
        loss = nt_xent(z_a, z_b, self.temperature)  # eq. 1 over the 2N views
        self.contrastive_accuracy_tracker.update_state(nt_xent_accuracy(z_a, z_b))
        return loss

    def probe_features(self, outputs):
        return ops.split(outputs["h"], 2, axis=0)[0]  # h of the first views: (N, D)

    # --- downstream -----------------------------------------------------------------------
    def fine_tuning_encoder(self, head_layers=None):
        """backbone, pooling and the first `head_layers` of g: SimCLR v2 fine-tunes from layer 1."""
        head_layers = (1 if self.version == 2 else 0) if head_layers is None else head_layers
        if isinstance(head_layers, bool) or not isinstance(head_layers, int) or not 0 <= head_layers < self.head.depth:
            raise ValueError(f"head_layers must be an int in [0, {self.head.depth - 1}]; got {head_layers!r}.")
        inputs = keras.Input(self.backbone.input_shape[1:], name="images")
        features = self.represent(inputs)
        if head_layers:
            features = self.head(features, depth=head_layers)
        return keras.Model(inputs, features, name=f"{self.name}_fine_tuning_encoder")

    # --- the paper's optimizer --------------------------------------------------------------
    def paper_optimizer(self, batch_size=256, steps_per_epoch=None, epochs=None, learning_rate=None,
                        learning_rate_scaling="linear", warmup_epochs=10, weight_decay=1e-6):
        """LARS, lr 0.3 x B / 256 ("sqrt": 0.075 x sqrt(B)), 10 warmup epochs, cosine, wd 1e-6 (100 epochs)."""
        base = 0.3 if learning_rate_scaling == "linear" else 0.075
        return lars_warmup_cosine(base, batch_size, steps_per_epoch, epochs, default_epochs=100,
                                  warmup_epochs=warmup_epochs, weight_decay=weight_decay,
                                  scaling=learning_rate_scaling, learning_rate=learning_rate)
