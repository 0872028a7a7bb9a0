"""MAE (He et al. 2022): the masked-autoencoder trainer, its decoder and presets."""

from keras_paperzoo.models.mae.mae import MAE, paper_optimizer
from keras_paperzoo.models.mae.mae_decoder import MAEDecoder
from keras_paperzoo.models.mae.mae_presets import MAE_PRESETS
