"""InstDisc (Wu et al. 2018): instance discrimination with a memory bank and NCE.

    from keras_paperzoo.models.instdisc import InstDisc
    model = InstDisc.from_preset("instdisc_resnet20_cifar", num_data=50_000)
"""

from keras_paperzoo.models.instdisc.instdisc import InstDisc
from keras_paperzoo.models.instdisc.instdisc_presets import INSTDISC_PRESETS
