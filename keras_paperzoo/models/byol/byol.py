"""The BYOL trainer: Grill et al. 2020, "Bootstrap Your Own Latent: A New Approach to
Self-Supervised Learning" (https://arxiv.org/abs/2006.07733).
"""

import keras
from keras import ops

from keras_paperzoo.models.byol.byol_augmentation import byol_views
from keras_paperzoo.layers.l2_normalization import L2Normalization
from keras_paperzoo.layers.projection_head import ProjectionHead
from keras_paperzoo.losses.byol import symmetric_byol_loss
from keras_paperzoo.models.byol.byol_presets import BYOL_PRESETS
from keras_paperzoo.models.checks import check_choice, check_int_list, check_number
from keras_paperzoo.models.self_supervised import SelfSupervisedTrainer, check_backbone
from keras_paperzoo.training.lars_schedule import lars_warmup_cosine, run_length
from keras_paperzoo.training.momentum import SCHEDULES, MomentumEncoder


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class BYOL(SelfSupervisedTrainer, keras.Model):
    """BYOL: an online network predicts a slowly moving target network's projection of another view.

    One training step (Sec. 3.1-3.2, Algorithm 1 of the appendix):

    1. Two views v, v' of each image from BYOL's asymmetric augmentations
       (`byol_views`: blur p 1.0 / 0.1, solarisation p 0 / 0.2), or `x=(v, v')`.
    2. The target network xi moves toward the online network theta:
       xi <- tau xi + (1 - tau) theta, tau_k = 1 - (1 - tau_base)(cos(pi k / K) + 1) / 2
       over the K steps of the run (`training/momentum.py`; the update is made at the
       start of step k + 1 rather than the end of step k, the same sequence).
    3. Online: y = f(v), z = g(y), q = predictor(z), for each view; target: z' =
       g_xi(f_xi(v')) for the other view, under stop-gradient.
    4. The loss (eq. 2): 2 - 2 cos(q, z'), symmetrised over the two views (L + L~).

    Projector g and predictor are `ProjectionHead`s: Linear (4096) - BN - ReLU -
    Linear (256) (Sec. 3.3). The target network (encoder and projector) is a
    `MomentumEncoder` copy of the online one, equal at start, non-trainable. Each
    view goes through the networks separately (batch norm per view, as in the
    authors' code). `prediction_dims=None` removes the predictor and
    `momentum_schedule="constant"` with `tau_base=0` makes the target a copy of
    the online network: the ablations of Table 5, where BYOL collapses; the metric
    `output_std` (the standard deviation across the batch of the normalised online
    projections, averaged over dimensions: about 1/sqrt(d) when spread, 0 when
    collapsed) shows it.

    Inference (`model(images)`) returns the online projection z; `encoder` is the
    online backbone + pooling, what the paper evaluates (Sec. 3.3: "the online
    encoder f_theta").

    Args:
        backbone: a Keras model with a known image input shape returning (B, D)
            features or (B, h, w, C) maps (any Keras model).
        projection_dims: the projector's widths ((4096, 256)).
        prediction_dims: the predictor's widths ((4096, 256)), the last equal to the
            projection's; None: no predictor (an ablation).
        tau_base: tau_base in [0, 1] (0.996).
        momentum_schedule: "cosine" (the paper's, from tau_base to 1 over the run
            that `compile()` describes) or "constant".
        augmentation: "default" (`byol_views` at the backbone's input size, blur on
            images of at least 96 pixels), a dict of `byol_views` arguments, a Keras
            layer returning two views, or None (then `x` holds the two views).
        num_classes: None, or the classes of an online linear classifier on the
            stop-gradient online representation of v (`probe_accuracy`).
        seed: int or None.

    Example:

    ```python
    from keras_paperzoo.models import BYOL
    byol = BYOL.from_preset("byol_tiny")
    byol.compile(batch_size=64, steps_per_epoch=20, epochs=10)   # LARS 0.2 x B / 256, tau over 200 steps
    byol.fit(images, batch_size=64, epochs=10)
    y = byol.encoder.predict(images)
    ```
    """

    batch_rule = "the projector and predictor batch-normalise over the batch: one image's projection is a constant"
    presets = BYOL_PRESETS

    def __init__(self, backbone, projection_dims=(4096, 256), prediction_dims=(4096, 256), tau_base=0.996,
                 momentum_schedule="cosine", augmentation="default", num_classes=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        check_backbone("BYOL", backbone)
        self.projection_dims = check_int_list("BYOL", "projection_dims", projection_dims)
        self.prediction_dims = check_int_list("BYOL", "prediction_dims", prediction_dims, allow_none=True)
        if self.prediction_dims is not None and self.prediction_dims[-1] != self.projection_dims[-1]:
            raise ValueError(
                f"BYOL's predictor must output the projection's width {self.projection_dims[-1]}; got "
                f"prediction_dims={prediction_dims!r}."
            )
        self.tau_base = check_number("BYOL", "tau_base", tau_base, "[0, 1]", named=False)
        self.momentum_schedule = check_choice("BYOL", "momentum_schedule", momentum_schedule, SCHEDULES,
                                              rule=f"one of {SCHEDULES}", named=False)
        self._setup(backbone, augmentation, num_classes, seed)

        # === Layers ===
        self.projector = ProjectionHead(self.projection_dims, batch_norm=True, name="projector")  # g_theta
        self.predictor = None
        if self.prediction_dims is not None:
            self.predictor = ProjectionHead(self.prediction_dims, batch_norm=True, name="predictor")  # q_theta
            self.predictor.build((None, self.projection_dims[-1]))
        inputs = keras.Input(backbone.input_shape[1:], name="images")
        self.online_network = keras.Model(inputs, self.projector(self.represent(inputs)), name="online_network")
        self.target_network = MomentumEncoder(self.online_network, self.tau_base, self.momentum_schedule,
                                              name="target_network")  # xi: encoder and projector
        self.normalize = L2Normalization(name="l2_normalize")
        self.output_std_tracker = keras.metrics.Mean(name="output_std")
        self.built = True

    def default_augmentation(self, image_size, **arguments):
        arguments.setdefault("blur", min(image_size) >= 96)
        return byol_views(image_size, seed=self.seed, **arguments)

    # --- one step ---------------------------------------------------------------------
    def inference(self, inputs):
        """The online projection z (B, 256)."""
        return self.online_network(self.inference_view(inputs), training=False)

    def forward_pass(self, inputs, training):
        """The online side of the step: {"y": (B, D) of v, "q": [q(v), q(v')], "views": [v, v']}."""
        views = self.views(inputs, training) if training else [self.inference_view(inputs)] * 2
        outputs = {"q": [], "views": views}
        for view in views:  # batch norm per view, as the authors' code
            y = self.represent(view, training=training)  # (B, D)
            z = self.projector(y, training=training)  # (B, 256)
            q = z if self.predictor is None else self.predictor(z, training=training)  # (B, 256)
            outputs["q"].append(q)
            outputs.setdefault("y", y)
            outputs.setdefault("z", z)
        return outputs

    def objective_loss(self, y_pred, training):
        if training:
            self.target_network.update()  # xi <- tau_k xi + (1 - tau_k) theta
        view, other_view = y_pred["views"]
        z_target = self.target_network(view, training=training)  # z'_xi of v: (B, 256), no gradient
        z_target_other = self.target_network(other_view, training=training)  # of v'
        q, q_other = y_pred["q"]
        loss = symmetric_byol_loss(q, z_target_other, q_other, z_target)  # eq. 2: L + L~
        normalized = ops.cast(self.normalize(y_pred["z"]), "float32")  # (B, 256)
        self.output_std_tracker.update_state(ops.mean(ops.std(normalized, axis=0)))
        return loss

    def probe_features(self, outputs):
        return outputs["y"]  # the online representation of v: (B, D)

    # --- the paper's optimizer -------------------------------------------------------------
    def set_run_length(self, batch_size=256, steps_per_epoch=None, epochs=None):
        """tau's K: the run's updates, `steps_per_epoch` x `epochs` (1000 ImageNet epochs at `batch_size`).

        Called by every `compile()`, with the paper's optimizer or the user's.
        """
        _, total = run_length(batch_size, steps_per_epoch, epochs, default_epochs=1000)
        self.target_network.set_total_steps(total)

    def paper_optimizer(self, batch_size=256, steps_per_epoch=None, epochs=None, learning_rate=None,
                        warmup_epochs=10, weight_decay=1.5e-6):
        """LARS, lr 0.2 x B / 256, 10 warmup epochs, cosine, wd 1.5e-6 (1000 epochs)."""
        return lars_warmup_cosine(0.2, batch_size, steps_per_epoch, epochs, default_epochs=1000,
                                  warmup_epochs=warmup_epochs, weight_decay=weight_decay, learning_rate=learning_rate)
