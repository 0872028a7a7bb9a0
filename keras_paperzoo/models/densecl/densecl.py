"""The DenseCL trainer: Wang et al. 2021, "Dense Contrastive Learning for Self-Supervised
Visual Pre-training" (CVPR 2021, https://arxiv.org/abs/2011.09157).

MoCo v2 (`models/moco/`) with a second, dense projection head on the backbone's feature
map and a second InfoNCE between corresponding locations of the two views. The model
subclasses `MoCo`: the momentum encoder (`training/momentum.py`), the queue
(`layers/feature_queue.py`, two of them here), Shuffling BN (`training/shuffle_bn.py`)
and the paper's SGD are MoCo's own, not copies.
"""

import keras
from keras import ops

from keras_paperzoo.layers.feature_queue import FeatureQueue
from keras_paperzoo.layers.l2_normalization import L2Normalization
from keras_paperzoo.layers.projection_head import ProjectionHead
from keras_paperzoo.losses.contrastive import contrastive_accuracy, contrastive_logits, info_nce_from_logits
from keras_paperzoo.models.checks import check_number
from keras_paperzoo.models.densecl.densecl_presets import DENSECL_PRESETS
from keras_paperzoo.models.moco.moco import MoCo
from keras_paperzoo.models.self_supervised import check_backbone, pool_features


def dense_correspondence(query_features, key_features):
    """DenseCL Sec. 3.3: for each location i of view 1, c_i = argmax_j cos(f_i, f'_j).

    Args:
        query_features: (B, S, D) or (B, h, w, D) backbone features of view 1.
        key_features: (B, S', D) or (B, h', w', D) backbone features of view 2.

    Returns:
        (B, S) int32: for each of view 1's S = h * w locations (row-major), the index of
        the most similar of view 2's S' locations.

    Example:

    ```python
    f = keras.random.normal((2, 4, 4, 8))
    dense_correspondence(f, f)     # (2, 16): [0, 1, ..., 15] for each image
    ```
    """
    query = _unit(_locations(ops.cast(ops.stop_gradient(ops.convert_to_tensor(query_features)), "float32")))
    key = _unit(_locations(ops.cast(ops.stop_gradient(ops.convert_to_tensor(key_features)), "float32")))
    # query: (B, S, D), key: (B, S', D), unit vectors per location
    similarity = ops.einsum("bid,bjd->bij", query, key)  # (B, S, S'), Delta: cosine similarities
    return ops.cast(ops.argmax(similarity, axis=-1), "int32")  # (B, S)


def _unit(vectors, epsilon=1e-12):
    """vectors / max(||vectors||, epsilon) along the last axis (F.normalize, as `L2Normalization`)."""
    return vectors * ops.rsqrt(ops.maximum(ops.sum(ops.square(vectors), axis=-1, keepdims=True), epsilon**2))


def _locations(maps):
    """(B, h, w, D) -> (B, h * w, D), row-major; (B, S, D) unchanged."""
    if len(maps.shape) == 3:
        return maps
    height, width, depth = maps.shape[1:]
    return ops.reshape(maps, (-1, height * width, depth))


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class DenseCL(MoCo):
    """Dense Contrastive Learning: MoCo v2 plus a pixel-level InfoNCE between the two views.

    One training step (the authors' `densecl.py`, which the paper's Sec. 3 describes):

    1. Two views x_q, x_k (given, or drawn by MoCo v2's augmentation, the paper's).
    2. Momentum update of the key encoder (MoCo eq. 2), at the start of the step.
    3. Both encoders map a view to the backbone map F (B, h, w, D) and two heads
       (Sec. 3.2): the global head (global average pooling, fc D -> 2048 -> ReLU ->
       fc 128, MoCo v2's) gives q / k (B, C); the dense head (1 x 1 convolution D ->
       2048 -> ReLU -> 1 x 1 convolution 128) gives a vector per location, r (query)
       and t (key), (B, h, w, C). The key side is computed without gradient and with
       Shuffling BN.
    4. Correspondence (Sec. 3.3): the backbone maps of the two views, L2-normalised
       per location, give the cosine similarity matrix Delta (h w x h w); location i
       of view 1 is matched to c_i = argmax_j Delta_ij of view 2
       (`dense_correspondence`; the argmax has no gradient, as in the authors'
       code, which takes it from the query backbone's and the key backbone's maps).
    5. L_q: MoCo's InfoNCE (Sec. 3.1, eq. 1) of q against k+ and the first queue.
       L_r (eq. 2): for each location s, InfoNCE of r^s against its positive
       t_{c_s} and the negatives of the second queue, averaged over the S = h w
       locations and the batch.
    6. L = (1 - lambda) L_q + lambda L_r (eq. 3), lambda = 0.5.
    7. Enqueue k into the first queue and the global average of the key's dense
       head output, normalised, into the second (the authors' `queue2`; the paper's
       text says "global projection head" features, its code the pooled dense ones).

    Temperature 0.2, momentum 0.999, queues of 65536 and the SGD recipe (lr 0.03 x
    batch / 256, momentum 0.9, weight decay 1e-4, cosine to 0 over 200 epochs) are the
    paper's (its ImageNet config), as is `compile()` with no arguments.

    A 1 x 1 convolution is a Dense layer on the channel axis, so the dense head is
    the same `ProjectionHead` as the global one, applied to every location; the two
    heads share their widths (`projection_hidden_dim`, `projection_dim`), as in the
    paper (2048 and 128 for both). The grid is the backbone's resolution (the
    authors' default `num_grid=None`: 7 x 7 for ResNet-50 at 224).

    The backbone must return a spatial map (B, h, w, D): this package's
    `ResNetBackbone` does (it has no pooling), as do keras-hub's CNN backbones
    (`keras_hub.models.ResNetBackbone`) and any functional CNN cut before its pooling
    (`keras.Model(cnn.input, cnn.get_layer("last_conv").output)`).

    Inference (`model(images)`) returns q (B, C), like MoCo; `model.backbone` is the
    dense representation kept for downstream use, `model.encoder` the pooled one.
    `model.query_encoder(images)` returns the dict of step 3's outputs.

    Args:
        backbone: a Keras model mapping (B, H, W, 3) images to (B, h, w, D) maps.
        queue_size: K, the length of each of the two queues (65536).
        momentum: m in [0, 1] (0.999).
        temperature: tau > 0 of both InfoNCE terms (0.2).
        projection_dim: C, the output width of both heads (128).
        projection_hidden_dim: the hidden width of both heads (2048).
        dense_weight: lambda in [0, 1] (0.5); 0 is MoCo v2, 1 the dense loss alone.
        shuffle_bn_splits: G >= 1 batch-norm groups (8 in the paper: 8 GPUs).
        augmentation: as MoCo's (`"default"`: MoCo v2's aug+, the paper's).
        num_classes: None, or the classes of an online linear probe (see MoCo).
        seed: int or None: the queues' initial values and the key shuffling.

    Metrics: `loss` (eq. 3), `global_loss` (L_q), `dense_loss` (L_r),
    `contrastive_accuracy` (of the global logits) and `dense_accuracy` (of the dense
    logits, over every location).

    Example:

    ```python
    from keras_paperzoo.models import DenseCL
    model = DenseCL.from_preset("densecl_tiny", image_shape=(16, 16, 3), queue_size=16)
    model.compile(batch_size=8, steps_per_epoch=2, epochs=1)    # the paper's SGD
    model.fit(keras.random.uniform((16, 16, 16, 3)), batch_size=8, epochs=1)
    dense_features = model.backbone.predict(images)   # (N, h, w, D)
    ```
    """

    presets = DENSECL_PRESETS

    def __init__(self, backbone, queue_size=65536, momentum=0.999, temperature=0.2, projection_dim=128,
                 projection_hidden_dim=2048, dense_weight=0.5, shuffle_bn_splits=8, augmentation="default",
                 num_classes=None, seed=None, **kwargs):
        _validate(backbone, dense_weight)
        super().__init__(backbone, version=2, queue_size=queue_size, momentum=momentum, temperature=temperature,
                         projection_dim=projection_dim, projection_hidden_dim=projection_hidden_dim,
                         shuffle_bn_splits=shuffle_bn_splits, augmentation=augmentation, num_classes=num_classes,
                         seed=seed, **kwargs)
        self.dense_weight = float(dense_weight)

        # === State updated outside gradient descent ===
        # The authors' queue2: pooled dense keys, the dense negatives (the first queue is MoCo's).
        self.dense_queue = FeatureQueue(self.queue_size, self.projection_dim,
                                        seed=None if seed is None else seed + 1, name="dense_queue")
        self.global_loss_tracker = keras.metrics.Mean(name="global_loss")
        self.dense_loss_tracker = keras.metrics.Mean(name="dense_loss")
        self.dense_accuracy_tracker = keras.metrics.Mean(name="dense_accuracy")

    def query_outputs(self, images):
        """Step 3 on symbolic `images`: {"q", "h", "dense", "dense_pooled", "features"}."""
        self.dense_head = ProjectionHead((self.projection_hidden_dim, self.projection_dim), name="dense_head")
        self.dense_normalize = L2Normalization(axis=-1, name="dense_l2_normalize")
        features = self.backbone(images)  # (B, h, w, D), F
        h = pool_features(features, "DenseCL")  # (B, D)
        dense = self.dense_head(features)  # (B, h, w, C): 1 x 1 conv, ReLU, 1 x 1 conv
        return {
            "q": self.normalize(self.head(h)),  # (B, C), the global head's
            "h": h,  # (B, D), the online probe's input
            "dense": self.dense_normalize(dense),  # (B, h, w, C), r (query) / t (key)
            "dense_pooled": self.dense_normalize(ops.mean(dense, axis=(1, 2))),  # (B, C), queue2's keys
            "features": features,  # (B, h, w, D), for the correspondence
        }

    # --- the algorithm --------------------------------------------------------------
    def inference(self, inputs):
        """q = normalize(global head(h)) (B, C)."""
        return self.query_encoder(self.inference_view(inputs), training=False)["q"]

    def forward_pass(self, inputs, training):
        """Step 1 and the query half of step 3: the query encoder's outputs and "x_k", the key view."""
        x_q, x_k = self.step_views(inputs, training)  # MoCo's
        outputs = self._encode(self.query_encoder, x_q, training, shuffle=False)  # the only gradient path
        return {**outputs, "x_k": x_k}

    def objective_loss(self, y_pred, training):
        if training:
            self.momentum_encoder.update()  # MoCo eq. 2, before the keys
        keys = self._encode(self.key_encoder, y_pred["x_k"], training, shuffle=training)  # Shuffling BN
        keys = keras.tree.map_structure(ops.stop_gradient, keys)
        queue, dense_queue = self.key_queue.read(), self.dense_queue.read()  # (K, C) each, before the enqueue

        # L_q: MoCo's InfoNCE on the global head (eq. 1).
        logits = contrastive_logits(y_pred["q"], keys["q"], queue, self.temperature)  # (B, 1 + K)
        global_loss = info_nce_from_logits(logits)

        # L_r: the dense InfoNCE at corresponding locations (eq. 2, Sec. 3.3).
        matches = dense_correspondence(y_pred["features"], keys["features"])  # (B, S)
        r = _locations(y_pred["dense"])  # (B, S, C)
        t = _locations(keys["dense"])  # (B, S, C)
        positives = ops.take_along_axis(t, ops.repeat(ops.expand_dims(matches, -1), t.shape[-1], axis=-1),
                                        axis=1)  # (B, S, C): t_{c_s}
        dense_logits = contrastive_logits(ops.reshape(r, (-1, r.shape[-1])),  # (B S, C)
                                          ops.reshape(positives, (-1, r.shape[-1])), dense_queue,
                                          self.temperature)  # (B S, 1 + K)
        dense_loss = info_nce_from_logits(dense_logits)  # mean over locations and images

        loss = (1.0 - self.dense_weight) * global_loss + self.dense_weight * dense_loss  # eq. 3
        if training:
            self.key_queue.enqueue(keys["q"])
            self.dense_queue.enqueue(keys["dense_pooled"])
        self.global_loss_tracker.update_state(global_loss)
        self.dense_loss_tracker.update_state(dense_loss)
        self.contrastive_accuracy_tracker.update_state(contrastive_accuracy(logits))
        self.dense_accuracy_tracker.update_state(contrastive_accuracy(dense_logits))
        return loss


def _validate(backbone, dense_weight):
    """DenseCL's own arguments (MoCo checks the rest); each message names the value and the rule."""
    check_backbone("DenseCL", backbone)
    if len(backbone.output_shape) != 4 or None in backbone.output_shape[1:]:
        raise ValueError(
            "DenseCL needs a backbone returning a spatial feature map (B, h, w, D) of known size for its dense "
            f"head and correspondence (e.g. a CNN without its pooling); {backbone.name} returns "
            f"{backbone.output_shape}."
        )
    check_number("DenseCL", "dense_weight", dense_weight, "[0, 1]", label="dense_weight (lambda)", named=False)
