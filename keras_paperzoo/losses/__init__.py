"""Objectives as plain functions on keras.ops."""

from keras_paperzoo.losses.gan import (
    discriminator_loss,
    minimax_generator_loss,
    non_saturating_generator_loss,
)
from keras_paperzoo.losses.masked_reconstruction import masked_patch_mse, normalized_patch_targets
