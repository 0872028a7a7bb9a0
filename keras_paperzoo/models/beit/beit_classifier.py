"""BEiT fine-tuning for image classification (Bao et al. 2022, Sec. 2.6 and App. "Hyperparameters")."""

import keras

from keras_paperzoo.models.beit.beit_backbone import BEIT_NO_DECAY_PATHS
from keras_paperzoo.models.image_classifier import ImageClassifier
from keras_paperzoo.training.layerwise_decay import layerwise_decay_optimizer
from keras_paperzoo.training.schedules import WarmupCosineDecay
from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW

IMAGENET_TRAIN_IMAGES = 1_281_167


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class BEiTClassifier(ImageClassifier):
    """`ImageClassifier` on a `BEiTBackbone` with BEiT's fine-tuning optimizer as `compile()`'s default.

    The model is `ImageClassifier`'s: the backbone's representation (the average of
    the last layer's patch states, then a LayerNorm: p = softmax(avg(h_i^L) W_c),
    Sec. 2.6) and a linear head, initialised N(0, 0.02^2) truncated times 0.001 (the
    official `init_scale`; from the backbone's `classification_recipe`). Only
    `compile()` differs: `paper_optimizer` gives AdamW (0.9, 0.999) with layer-wise
    lr decay (`training.layerwise_decay`: layer l of L learns at
    lr x layer_decay^(L+1-l), embeddings at layer 0, the head at L+1), weight decay
    0.05 except on biases, norms, LayerScale, bias tables, [S], [M], E_pos.
    Label smoothing 0.1 (the paper's) is `compile(label_smoothing=0.1)` with one-hot labels.

    Args: as `ImageClassifier` (backbone, num_classes, dropout, activation).

    Example:

    ```python
    model = BEiTClassifier(beit.backbone, num_classes=10)
    model.compile(batch_size=128, steps_per_epoch=390, epochs=100)   # layer decay 0.65
    ```
    """

    def paper_optimizer(self, batch_size=1024, steps_per_epoch=None, epochs=100, warmup_epochs=20,
                        learning_rate=4e-3, layer_decay=0.65, weight_decay=0.05):
        """BEiT-B's ImageNet fine-tuning (App. "Hyperparameters for image classification"):
        lr 4e-3 x batch / 1024, `warmup_epochs` (20 of 100, kept at that share for shorter runs)
        then cosine to 0, AdamW (0.9, 0.999), weight decay 0.05, layer decay 0.65 (BEiT-L: 0.75).
        Deviation: the official schedule ends at a minimum lr of 1e-6 rather than 0."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int (the lr is 4e-3 x batch / 1024); got {batch_size!r}.")
        steps_per_epoch = int(steps_per_epoch or max(1, IMAGENET_TRAIN_IMAGES // batch_size))
        total = steps_per_epoch * int(epochs)
        warmup = min(int(warmup_epochs * steps_per_epoch), total // 5)
        schedule = WarmupCosineDecay(learning_rate * batch_size / 1024, warmup_steps=warmup, total_steps=total)
        base = SelectiveDecayAdamW(schedule, weight_decay=weight_decay, beta_1=0.9, beta_2=0.999)
        return layerwise_decay_optimizer(self, base, layer_decay=layer_decay, backbone=self.backbone,
                                         no_decay_paths=BEIT_NO_DECAY_PATHS)
