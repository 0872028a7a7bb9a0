"""InvaSpread (Ye et al. 2019): one embedding network, two views, the instance-wise softmax loss over the batch.

    from keras_paperzoo.models.invaspread import InvaSpread
    model = InvaSpread.from_preset("invaspread_cifar_resnet18")
"""

from keras_paperzoo.models.invaspread.invaspread import InvaSpread, invaspread_optimizer
from keras_paperzoo.models.invaspread.invaspread_presets import INVASPREAD_PRESETS
