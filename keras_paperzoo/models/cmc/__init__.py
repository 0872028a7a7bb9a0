"""CMC (Tian, Krishnan, Isola 2019): contrastive multiview coding of the L and ab views of images.

    from keras_paperzoo.models.cmc import CMC
    cmc = CMC.from_preset("cmc_resnet20_cifar", num_data=50_000)
"""

from keras_paperzoo.models.cmc.cmc import CMC
from keras_paperzoo.models.cmc.cmc_augmentation import CMCAugmentation
from keras_paperzoo.models.cmc.cmc_layers import LabViews
from keras_paperzoo.models.cmc.cmc_optimizer import cmc_optimizer
from keras_paperzoo.models.cmc.cmc_presets import CMC_PRESETS
