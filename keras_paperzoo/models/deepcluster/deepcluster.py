"""The DeepCluster trainer: Caron et al. 2018, "Deep Clustering for Unsupervised Learning of Visual
Features" (ECCV 2018, https://arxiv.org/abs/1807.05520).
"""

import numpy as np

import keras
from keras import ops

from keras_paperzoo.clustering import kmeans, pca_whiten
from keras_paperzoo.data.indexed import split_indexed
from keras_paperzoo.data.views import ViewAugmentation
from keras_paperzoo.models.deepcluster.deepcluster_callback import Reclustering
from keras_paperzoo.models.deepcluster.deepcluster_presets import DEEPCLUSTER_PRESETS
from keras_paperzoo.models.checks import check_choice, check_int
from keras_paperzoo.models.deepcluster.deepcluster_sampler import fit_batches
from keras_paperzoo.models.self_supervised import SelfSupervisedTrainer, check_backbone
from keras_paperzoo.training.optimizers import ScheduledMomentumSGD

OWNER = "DeepCluster"
KMEANS_INITS = ("random", "k-means++")
CLASSIFIER_STDDEV = 0.01  # the authors' top layer: weights N(0, 0.01), bias 0


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class DeepCluster(SelfSupervisedTrainer, keras.Model):
    """DeepCluster: train a classifier on k-means pseudo-labels of the network's own features.

    The paper's method (Sec. 3.2-3.4, Fig. 1), one epoch at a time:

    1. Features of the whole training set from the current network: h =
       pool(backbone(x)) of each image's inference view (no augmentation).
    2. PCA to `pca_dim` = 256 dimensions with whitening, then L2 normalisation
       (Sec. 4, "Implementation details"; `clustering/pca.py`). Features narrower
       than 256 (a CIFAR ResNet-20's 64) keep all their dimensions, whitened.
    3. k-means with k = `num_clusters` (10,000 on ImageNet; `clustering/kmeans.py`,
       `kmeans_iterations` = 20 Lloyd steps from `kmeans_init` = "random" seeds,
       as the authors' faiss call), seeded from (seed, epoch); each image's
       cluster is its pseudo-label y_n (eq. 2), kept in `pseudo_labels`.
    4. The classifier W on top (a linear layer h -> k logits) re-initialised,
       N(0, 0.01) weights and zero bias, its optimizer state zeroed (the
       authors build a new top layer and its optimizer every epoch): cluster
       numbers mean nothing from one epoch to the next.
    5. One epoch of SGD on the cross-entropy of W h against the pseudo-labels
       (eq. 1), the images drawn uniformly over the non-empty clusters (Sec.
       3.4: otherwise one big cluster is a trivial solution;
       `ClusterBalancedBatches`), each image augmented by a random resized crop
       and a horizontal flip (the authors' training transform).

    Steps 1-4 are the `Reclustering` callback that `fit` adds; it logs the NMI
    between consecutive epochs' assignments (`nmi_previous`, Fig. 2b) and, when
    `fit` gets labels, between the assignments and the labels (`nmi_labels`,
    Fig. 2a). `fit` takes the training images as arrays (`fit(images)` or
    `fit(images, labels)`; labels only feed the NMI and the online probe) or as
    `EpochShuffledBatches`, and serves its own uniform-over-clusters batches of
    {"images", "index"} from them: every image must be in memory, since all are
    clustered every epoch.

    The pseudo-labels are a non-trainable variable (one int per training image),
    saved by `.keras` files and checkpoints; the k-means seed and the new
    classifier weights come from (seed, epoch), so a resumed run continues as the
    uninterrupted one.

    Deviations from the paper, named: no Sobel filtering of the input (the paper
    feeds the network two Sobel-filtered grey channels, Sec. 4; here the backbone
    sees the images as given, so the encoder is a plain image model like the
    package's other self-supervised ones: pass a backbone preceded by your own
    filter to get it); the paper's AlexNet-BN / VGG-16 are any Keras backbone here
    (the presets use ResNets); the CPU presets use k = 10 x the classes instead of
    10,000.

    Inference (`model(images)`, `predict`) returns h (B, D), the features that are
    clustered; `encoder` is backbone + pooling.

    Args:
        backbone: a Keras model with a known image input shape returning (B, D)
            features or (B, h, w, C) maps.
        num_data: N, the number of training images (one pseudo-label each).
        num_clusters: k, an int in [2, N] (10,000).
        pca_dim: PCA dimensions kept before k-means (256), an int >= 1.
        kmeans_iterations: Lloyd iterations per clustering (20, the authors').
        kmeans_init: "random" (faiss's, the authors') or "k-means++".
        augmentation: "default" (random resized crop, scale 0.08-1, and a
            horizontal flip at the backbone's input size), a dict of
            `ViewAugmentation` arguments, a Keras layer, or None.
        num_classes: None, or the classes of an online linear probe on the
            stop-gradient h, trained when `fit` gets labels.
        seed: int or None: the k-means seeds, the classifier's fresh weights and
            the sampler's draws.

    Metrics: `loss` (the cross-entropy on pseudo-labels) and
    `pseudo_label_accuracy`; from `Reclustering`: `nmi_previous`, `nmi_labels`,
    `kmeans_inertia`, `clusters_used`.

    Example:

    ```python
    import numpy as np
    from keras_paperzoo.models import DeepCluster
    images = np.random.default_rng(0).random((64, 32, 32, 3)).astype("float32")
    model = DeepCluster.from_preset("deepcluster_tiny", num_data=64, num_clusters=4, seed=0)
    model.compile()   # SGD lr 0.05, momentum 0.9, weight decay 1e-5
    history = model.fit(images, batch_size=16, epochs=2, verbose=0)
    history.history["nmi_previous"]   # NMI between epoch 1's and epoch 0's clusters
    ```
    """

    min_batch_size = 1  # the smallest batch (SelfSupervisedTrainer.check_batch_size)
    batch_rule = 'each image is classified by its own pseudo-label'
    presets = DEEPCLUSTER_PRESETS

    def __init__(self, backbone, num_data, num_clusters=10_000, pca_dim=256, kmeans_iterations=20,
                 kmeans_init="random", augmentation="default", num_classes=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        _validate(backbone, num_data, num_clusters, pca_dim, kmeans_iterations, kmeans_init, seed)
        self.num_data = int(num_data)
        self.num_clusters = int(num_clusters)
        self.pca_dim = int(pca_dim)
        self.kmeans_iterations = int(kmeans_iterations)
        self.kmeans_init = kmeans_init
        self._setup(backbone, augmentation, num_classes, seed)

        # === Layers ===
        feature_dim = int(backbone.output_shape[-1])
        self.classifier = keras.layers.Dense(
            self.num_clusters, kernel_initializer=keras.initializers.RandomNormal(stddev=CLASSIFIER_STDDEV, seed=seed),
            name="top_layer")  # W, re-initialised every epoch
        self.classifier.build((None, feature_dim))

        # === State updated outside gradient descent ===
        self.pseudo_labels = self.add_weight(shape=(self.num_data,), dtype="int32", initializer="zeros",
                                             trainable=False, name="pseudo_labels")  # y_n, one per image
        self.clustered = self.add_weight(shape=(), dtype="int32", initializer="zeros", trainable=False,
                                         name="clustered")  # 1 once pseudo_labels hold a clustering
        self.pseudo_label_accuracy = keras.metrics.SparseCategoricalAccuracy(name="pseudo_label_accuracy")
        self.built = True

    def default_augmentation(self, image_size, **arguments):
        # The authors' training transform: RandomResizedCrop (0.08-1) and a horizontal flip, nothing else.
        defaults = {"crop_scale": (0.08, 1.0), "jitter_probability": 0.0, "grayscale_probability": 0.0,
                    "blur_probability": 0.0, "seed": self.seed, "name": "deepcluster_augmentation"}
        return ViewAugmentation(**{**defaults, "image_size": image_size, **arguments})

    # --- the clustering (steps 1-3), run between epochs by `Reclustering` ---------------
    def cluster_features(self, images, batch_size=256):
        """h of every image's inference view, as a (N, D) float32 NumPy array."""
        features = []
        for start in range(0, len(images), batch_size):
            chunk = images[start:start + batch_size]
            features.append(np.asarray(ops.convert_to_numpy(self(chunk, training=False)), "float32"))
        return np.concatenate(features)

    def cluster(self, features, epoch):
        """PCA-`pca_dim` whitening, L2 normalisation and k-means of (N, D) features; a `KMeansResult`."""
        if len(features) != self.num_data:
            raise ValueError(f"{OWNER} was built for num_data={self.num_data} training images; got "
                             f"{len(features)}. Build it with the number of images fit receives.")
        reduced = pca_whiten(features, self.pca_dim)  # (N, min(256, D)), unit rows
        return kmeans(reduced, self.num_clusters, init=self.kmeans_init, max_iterations=self.kmeans_iterations,
                      seed=self._draw_seed(epoch, 0))

    def _draw_seed(self, epoch, stream):
        """(seed, epoch, stream); without a seed, one drawn from NumPy's global generator, which
        `keras.utils.set_random_seed` seeds and `paperzoo train`'s checkpoints keep."""
        seed = int(self.seed) if self.seed is not None else int(np.random.randint(0, 2**31 - 1))
        return [seed, int(epoch), int(stream)]

    def assignments(self):
        """The current pseudo-labels (N,) as NumPy, or None before the first clustering."""
        if int(ops.convert_to_numpy(self.clustered)) == 0:
            return None
        return np.asarray(ops.convert_to_numpy(self.pseudo_labels))

    def set_pseudo_labels(self, assignments):
        self.pseudo_labels.assign(np.asarray(assignments, "int32"))
        self.clustered.assign(1)

    def reset_classifier(self, epoch):
        """Step 4: W ~ N(0, 0.01), b = 0, drawn from (seed, epoch); the classifier's optimizer slots zeroed."""
        rng = np.random.default_rng(self._draw_seed(epoch, 1))
        kernel, bias = self.classifier.kernel, self.classifier.bias
        kernel.assign(rng.normal(0.0, CLASSIFIER_STDDEV, size=tuple(kernel.shape)).astype(kernel.dtype))
        bias.assign(np.zeros(tuple(bias.shape), bias.dtype))
        optimizer = getattr(self, "optimizer", None)
        if optimizer is not None and optimizer.built:
            prefixes = tuple(v.path.replace("/", "_") + "_" for v in (kernel, bias))
            for slot in optimizer.variables:
                if slot.name.startswith(prefixes):
                    slot.assign(ops.zeros(slot.shape, slot.dtype))

    # --- the training step (step 5) -----------------------------------------------------
    def inference(self, inputs):
        """h (B, D) of the inference view."""
        return self.represent(self.inference_view(inputs), training=False)

    def forward_pass(self, inputs, training):
        """{"h": (B, D) features, "logits": (B, k) classifier scores, "index": (B,) rows}."""
        images, index = split_indexed(inputs, OWNER)
        view = self.augmentation(images, training=training) if self.augmentation is not None else images
        h = self.represent(view, training=training)  # (B, D)
        return {"h": h, "logits": self.classifier(h), "index": index}

    def objective_loss(self, y_pred, training):
        targets = ops.take(self.pseudo_labels, ops.cast(y_pred["index"], "int32"))  # (B,): y_n, eq. (1)
        logits = ops.cast(y_pred["logits"], "float32")  # (B, k)
        self.pseudo_label_accuracy.update_state(targets, logits)
        return ops.mean(keras.losses.sparse_categorical_crossentropy(targets, logits, from_logits=True))

    # --- fit: the outer loop -------------------------------------------------------------
    def fit(self, x=None, y=None, batch_size=None, epochs=1, callbacks=None, shuffle=True, **kwargs):
        """`keras.Model.fit` over uniform-over-clusters batches, re-clustering before every epoch.

        Args:
            x: the training images (N, H, W, C) (or `with_index(images)`), or
                `EpochShuffledBatches` / `ClusterBalancedBatches` over them; any
                other finite data (a `PyDataset`, a `tf.data.Dataset`, a torch
                `DataLoader`) of images or (images, labels) batches is read once
                into memory, in its order (its index order for {"images", "index"}),
                and served from there.
            y: optional (N,) labels: `nmi_labels` and the online probe.
            batch_size: for arrays (32 when None).
            callbacks: as Keras's; a `Reclustering` among them is used (else one is added).
            shuffle: ignored: the sampler draws each epoch's order.
        """
        batches = self._batches(x, y, batch_size)
        callbacks = list(callbacks or [])
        reclustering = next((c for c in callbacks if isinstance(c, Reclustering)), None)
        if reclustering is None:
            reclustering = Reclustering()
            callbacks.insert(0, reclustering)
        reclustering.bind(batches)
        return super().fit(batches, epochs=epochs, callbacks=callbacks, shuffle=False, **kwargs)

    def _batches(self, x, y, batch_size):
        batches = fit_batches(x, y, batch_size, seed=0 if self.seed is None else int(self.seed))
        if len(batches.x) != self.num_data:
            raise ValueError(f"{OWNER} was built for num_data={self.num_data} training images (one pseudo-label "
                             f"each); fit got {len(batches.x)}.")
        return batches

    # --- the paper's optimizer -------------------------------------------------------------
    def paper_optimizer(self, batch_size=256, steps_per_epoch=None, epochs=None, learning_rate=0.05,
                        weight_decay=1e-5):
        """DeepCluster's SGD (Sec. 4; the authors' `main.py`): lr 0.05, momentum 0.9, weight decay 1e-5
        (coupled, PyTorch's), constant over the run. `batch_size`, `steps_per_epoch` and `epochs` are
        accepted for the recipes' uniform `compile()` and change nothing: the paper does not scale the rate."""
        return ScheduledMomentumSGD(float(learning_rate), momentum=0.9, l2=float(weight_decay))


def _validate(backbone, num_data, num_clusters, pca_dim, kmeans_iterations, kmeans_init, seed):
    """Check DeepCluster's arguments; each message names the value and the rule."""
    check_backbone(OWNER, backbone)
    for name, value in (("num_data", num_data), ("pca_dim", pca_dim), ("kmeans_iterations", kmeans_iterations)):
        check_int(OWNER, name, value)
    check_int(OWNER, "num_clusters", num_clusters, low=2, label="num_clusters (k)")
    if num_clusters > num_data:
        raise ValueError(f"{OWNER} cannot make num_clusters={num_clusters} clusters of num_data={num_data} images: "
                         "k must be at most the number of training images.")
    check_choice(OWNER, "kmeans_init", kmeans_init, KMEANS_INITS)
    check_int(OWNER, "seed", seed, low=0, allow_none=True)
