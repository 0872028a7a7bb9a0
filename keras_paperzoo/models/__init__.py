"""Models: one folder per paper (backbones, trainers, presets)."""

from keras_paperzoo.models.gan import GAN
