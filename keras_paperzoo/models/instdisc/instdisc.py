"""The InstDisc trainer: Wu et al. 2018, "Unsupervised Feature Learning via Non-Parametric
Instance Discrimination" (CVPR 2018, https://arxiv.org/abs/1805.01978).
"""

import numpy as np

import keras
from keras import ops

from keras_paperzoo.data.indexed import split_indexed
from keras_paperzoo.models.moco.moco_augmentation import MoCoAugmentation
from keras_paperzoo.layers.l2_normalization import L2Normalization
from keras_paperzoo.layers.memory_bank import MemoryBank
from keras_paperzoo.layers.nce_normalizer import NCENormalizer
from keras_paperzoo.layers.projection_head import ProjectionHead
from keras_paperzoo.losses.contrastive import contrastive_accuracy, contrastive_logits, info_nce_from_logits
from keras_paperzoo.losses.nce import nce_loss
from keras_paperzoo.models.checks import check_choice, check_int, check_number
from keras_paperzoo.models.instdisc.instdisc_presets import INSTDISC_PRESETS
from keras_paperzoo.models.self_supervised import SelfSupervisedTrainer, check_backbone
from keras_paperzoo.training.ssl_sgd import contrastive_sgd

OWNER = "InstDisc"
LOSSES = ("nce", "softmax")


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class InstDisc(SelfSupervisedTrainer, keras.Model):
    """Instance discrimination: each image its own class, told apart from a memory bank by NCE.

    One training step is the paper's method (Sec. 3), on a batch of images x_i with
    their indices i (`x = {"images": ..., "index": ...}`, `data/indexed.py`):

    1. One augmented view of each image (`augmentation`, MoCo v1's recipe, which
       is InstDisc's: crop 0.2-1, grayscale 0.2, colour jitter 0.4, flip). There
       is no second view: the positive is the image's stored feature.
    2. f_i = normalize(W h_i), h_i = pool(backbone(x_i)): a linear layer to
       `feature_dim` (128) and L2 normalisation (Fig. 2; the authors' code: one
       `nn.Linear`, no ReLU).
    3. The positive v_i = V[i], the image's own memory-bank row from before this
       step, and m = `num_negatives` noise rows V[j], j ~ P_n = 1/n uniform, drawn
       per image (`layers/memory_bank.py`; the authors draw 1 + m indices and put
       i in column 0: the same thing). All under stop-gradient.
    4. Scores s = v . f / tau (B, 1 + m), positive first; P(i | v) = exp(s) / Z
       (eq. 3), Z = n x the mean of the first batch's exp(s), estimated once and
       kept (eq. 7; `NCENormalizer`, a saved variable).
    5. The NCE loss (eq. 6, `losses/nce.py`): -log h(i, v_i) - sum_j log(1 - h(j, v_j)),
       h = P / (P + m / n), averaged over the batch; plus the proximal term
       lambda ||f_i - v_i||^2 (Sec. 3.3: v_i^(t) = f_i is this step's feature,
       v_i^(t-1) the stored row), also averaged over the batch. With
       `loss="softmax"`: the cross-entropy of a softmax over the same 1 + m
       scores, the positive the target (eq. 2 with the m sampled rows for all n;
       the objective of the authors' later memory-bank models, "Softmax-CE loss
       as in CPC/MoCo", their README), no Z.
    6. After the loss, V[i] <- normalize(m_b V[i] + (1 - m_b) f_i) for the batch
       (m_b = `bank_momentum`, 0.5: the authors' `--nce-m`; the paper writes
       f_i -> v_i, a replacement, m_b = 0).

    The bank, its noise generator and Z are Keras variables updated with
    `assign` in the step: JAX threads them through `fit`, and `.keras` files and
    `paperzoo train`'s checkpoints keep them, so a resumed run continues with the
    same bank and Z. `fit` refuses training data without indices, or with
    indices outside [0, num_data), before training (a compiled step cannot check:
    JAX would clamp a bad index to the last row).

    The proximal term: the paper introduces it to damp the oscillation of a
    training loss in which each class is seen once per epoch (Fig. 3) but gives
    no value of lambda in its text; the authors' code has no such term (its
    bank momentum 0.5, which their README says "stabilizes the learning
    process", takes its place). The default `proximal=0.0` is the authors' code;
    `applications/instdisc_proximal.py` measures lambda > 0 against it.

    NCE on small data: with Z fixed from the first batch, NCE needs the features
    to spread while the bank still holds its random rows. At initialisation the
    embeddings of different images are nearly parallel (mean cosine 0.94-0.96 on
    the digits for CIFAR ResNet-8 and -20, in Keras and in PyTorch); a pass over a small data set
    (12 updates for 1,500 digits at batch 128, against 390 for the authors'
    CIFAR-10 and 5,000 for ImageNet) fills the bank with them, every noise score
    then nears 1 / tau while Z stays the first batch's, and the loss rises to its
    maximum m log(1 + exp(1 / tau) n / (Z m)) with every embedding collapsed
    onto one direction (measured here and with an independent PyTorch version of
    the step, `benchmarks/torch_reference/instdisc.py`). The softmax over the
    same rows has no Z and learns there; the `instdisc` recipe uses it on small
    data.

    Inference (`model(images)`, `predict`) returns f, the normalised 128-d
    embedding, of the inference view (images resized and normalised, not
    augmented). `encoder` is backbone + pooling (h); `embedding` is images -> f.
    `memory_bank_knn` is the paper's evaluation (Sec. 3.4): a weighted kNN of
    test embeddings against the bank's rows (k = 200, votes exp(s / 0.07)).

    Args:
        backbone: a Keras model with a known image input shape returning (B, D)
            features or (B, h, w, C) maps (any Keras model).
        num_data: n, the number of training images: the bank's rows (an int
            >= 1); the data's indices must lie in [0, n).
        num_negatives: m, noise samples per image (4096), at most n.
        temperature: tau > 0 (0.07).
        feature_dim: the embedding's width (128).
        bank_momentum: m_b in [0, 1) of the bank update (0.5; 0 replaces rows).
        proximal: lambda >= 0 of the proximal term (0.0: the authors' code; the
            paper gives no value).
        loss: "nce" (the paper's eq. 6) or "softmax" (cross-entropy over the
            1 + m scores, no Z).
        augmentation: "default" (`MoCoAugmentation(version=1)` at the backbone's
            input size), a dict of its arguments, a Keras layer, or None (the
            images are used as given).
        num_classes: None, or the classes of an online linear classifier on the
            stop-gradient h (`probe_accuracy`), trained when `fit` gets labels.
        seed: int or None: the bank's initial rows and the noise draws.

    Metrics: `loss` (the objective + proximal), `nce_loss` (eq. 6 alone; with
    the softmax, `softmax_loss`), `proximal_loss` (lambda ||f - v||^2) and
    `contrastive_accuracy` (how often the positive has the largest of the 1 + m
    scores).

    Example:

    ```python
    from keras_paperzoo.data.indexed import with_index
    from keras_paperzoo.models import InstDisc
    model = InstDisc.from_preset("instdisc_resnet20_cifar", num_data=len(images))
    model.compile(batch_size=128, steps_per_epoch=len(images) // 128, epochs=200)   # SGD 0.015, x0.1 at 120, 160
    model.fit(with_index(images), batch_size=128, epochs=200)   # raw images in [0, 1] with their rows
    accuracy = model.memory_bank_knn(train_labels, test_images, test_labels)   # k = 200, sigma = 0.07
    ```
    """

    min_batch_size = 1  # the smallest batch (SelfSupervisedTrainer.check_batch_size)
    batch_rule = 'its negatives come from the memory bank'
    presets = INSTDISC_PRESETS
    argument_attributes = {"loss": "objective"}
    indexed = True  # x = {"images", "index"}: each image's memory-bank row

    def __init__(self, backbone, num_data, num_negatives=4096, temperature=0.07, feature_dim=128,
                 bank_momentum=0.5, proximal=0.0, loss="nce", augmentation="default", num_classes=None, seed=None,
                 **kwargs):
        super().__init__(**kwargs)
        _validate(backbone, num_data, num_negatives, temperature, feature_dim, bank_momentum, proximal, loss)
        self.set_bank_arguments(num_data, num_negatives, temperature, feature_dim, bank_momentum, loss)
        self.proximal = float(proximal)
        self._setup(backbone, augmentation, num_classes, seed)

        # === Layers ===
        self.head = ProjectionHead((self.feature_dim,), name="head")  # W: one linear layer, no ReLU
        self.normalize = L2Normalization(name="l2_normalize")
        inputs = keras.Input(backbone.input_shape[1:], name="images")
        self.embedding = keras.Model(inputs, self.normalize(self.head(self.represent(inputs))),
                                     name="embedding")  # x -> f

        # === State updated outside gradient descent ===
        self.memory_bank = MemoryBank(self.num_data, self.feature_dim, momentum=self.bank_momentum, seed=seed,
                                      name="memory_bank")  # V: (n, d)
        self.normalizer = None
        if self.objective == "nce":
            self.normalizer = NCENormalizer(self.num_data, name="nce_normalizer")  # Z
        self.objective_loss_tracker = keras.metrics.Mean(name=f"{self.objective}_loss")  # nce_loss / softmax_loss
        self.proximal_loss_tracker = keras.metrics.Mean(name="proximal_loss")
        self.contrastive_accuracy_tracker = keras.metrics.Mean(name="contrastive_accuracy")
        self.built = True

    def default_augmentation(self, image_size, **arguments):
        return MoCoAugmentation(**{"version": 1, "seed": self.seed, "image_size": image_size, **arguments})

    # --- the parts, by their names in the paper ---------------------------------------
    @property
    def bank(self):
        """V: the (n, d) memory bank."""
        return self.memory_bank.bank

    @property
    def z(self):
        """Z, the NCE normalising constant (0 until the first training batch sets it); None for the softmax."""
        return None if self.normalizer is None else self.normalizer.z

    # --- the method ---------------------------------------------------------------------
    def inference(self, inputs):
        """f = normalize(W h) (B, d)."""
        return self.embedding(self.inference_view(inputs), training=False)

    def forward_pass(self, inputs, training):
        """Steps 1-2: {"f": (B, d) embeddings, "h": (B, D) representations, "index": (B,) rows}."""
        images, index = split_indexed(inputs, OWNER)
        view = self._view(images, training)
        h = self.represent(view, training=training)  # (B, D)
        f = self.normalize(self.head(h))  # (B, d), the only gradient path
        return {"f": f, "h": h, "index": index}

    def objective_loss(self, y_pred, training):
        f, index = ops.cast(y_pred["f"], "float32"), y_pred["index"]  # (B, d), (B,)
        positives = self.memory_bank.read(index)  # (B, d): v_i^(t-1), the image's own row
        noise = self.memory_bank.read(self.memory_bank.sample(ops.shape(f)[0], self.num_negatives))  # (B, m, d)
        scores = contrastive_logits(f, positives, noise, self.temperature)  # (B, 1 + m): v . f / tau
        if self.objective == "nce":
            probabilities = self.normalizer(ops.exp(scores))  # eq. (3): P(i | v) = exp(s) / Z, Z fixed (eq. 7)
            objective = nce_loss(probabilities, self.num_data)  # eq. (6)
        else:  # eq. (2)'s softmax over the same 1 + m rows, the positive the target (the authors' later models)
            objective = info_nce_from_logits(scores)
        proximal = self.proximal * ops.mean(ops.sum(ops.square(f - positives), axis=-1))  # Sec. 3.3
        if training:
            self.memory_bank.update(index, f)  # after the reads: v_i <- normalize(m v_i + (1 - m) f_i)
        self.objective_loss_tracker.update_state(objective)
        self.proximal_loss_tracker.update_state(proximal)
        self.contrastive_accuracy_tracker.update_state(contrastive_accuracy(scores))
        return objective + proximal

    def _view(self, images, training):
        if self.augmentation is None:
            return images
        view = self.augmentation(images, training=training)
        return view[0] if isinstance(view, (list, tuple)) else view

    def check_training_data(self, x):
        """`check_indexed_data`: one message for data without indices, or with an index outside the bank."""
        self.check_indexed_data(x)

    # --- the paper's evaluation -----------------------------------------------------------
    def memory_bank_knn(self, train_labels, test_images, test_labels, k=200, sigma=None, batch_size=256):
        """The paper's weighted kNN (Sec. 3.4) of test images against the memory bank; top-1 in [0, 1].

        Each test image's embedding f is compared with every bank row v_i by cosine
        similarity s_i; its k nearest rows vote for their images' classes with weights
        exp(s_i / sigma) (k = 200, sigma = tau = 0.07 as in training). The bank holds
        each image's feature from its last visit (momentum-averaged), not a fresh pass.

        Args:
            train_labels: (n,) the class of each training image, in bank-row order.
            test_images: raw images, as `fit` takes them.
            test_labels: (M,) their classes.
            k: neighbours (200; at most n). sigma: None (the temperature) or > 0.
        """
        from keras_paperzoo.evaluation.knn import knn_accuracy

        labels = np.asarray(train_labels).reshape(-1)
        if len(labels) != self.num_data:
            raise ValueError(f"{OWNER}'s memory bank has {self.num_data} rows, so train_labels must hold "
                             f"{self.num_data} labels (one per training image, in index order); got {len(labels)}.")
        features = self.predict(test_images, batch_size=batch_size, verbose=0)  # (M, d) f
        rows = keras.ops.convert_to_numpy(self.bank)  # (n, d)
        return knn_accuracy(rows, labels, features, test_labels, k=min(int(k), self.num_data),
                            temperature=self.temperature if sigma is None else sigma)

    # --- the paper's optimizer --------------------------------------------------------------
    def paper_optimizer(self, batch_size=256, steps_per_epoch=None, epochs=None, learning_rate=None,
                        weight_decay=1e-4):
        """InstDisc's SGD: lr 0.03 x B / 256, momentum 0.9, weight decay 1e-4, x0.1 at 120 and 160 of 200 epochs."""
        return contrastive_sgd(batch_size, steps_per_epoch, epochs, learning_rate=learning_rate, schedule="step",
                               weight_decay=weight_decay)


def _validate(backbone, num_data, num_negatives, temperature, feature_dim, bank_momentum, proximal, loss):
    """Check InstDisc's arguments; each message names the value and the rule."""
    check_backbone(OWNER, backbone)
    for name, value in (("num_data", num_data), ("num_negatives", num_negatives), ("feature_dim", feature_dim)):
        check_int(OWNER, name, value)
    if num_negatives > num_data:
        raise ValueError(
            f"{OWNER}'s memory bank of num_data={num_data} rows (one per training image) cannot give "
            f"num_negatives={num_negatives} noise samples: num_negatives must be at most num_data."
        )
    check_number(OWNER, "temperature", temperature, "> 0")
    check_number(OWNER, "bank_momentum", bank_momentum, "[0, 1)")
    check_number(OWNER, "proximal", proximal, ">= 0", label="proximal (lambda)")
    check_choice(OWNER, "loss", loss, LOSSES, rule="'nce' (the paper's) or 'softmax'")
