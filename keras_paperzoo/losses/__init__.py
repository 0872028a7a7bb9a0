"""Objectives as plain functions on keras.ops."""

from keras_paperzoo.losses.gan import (
    discriminator_loss,
    minimax_generator_loss,
    non_saturating_generator_loss,
)
