from keras_paperzoo.models.gan.gan import GAN, paper_optimizer
from keras_paperzoo.models.gan.gan_networks import (
    build_discriminator,
    build_generator,
    set_output_bias_from_data,
)
from keras_paperzoo.models.gan.gan_presets import GAN_PRESETS
