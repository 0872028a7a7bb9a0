"""Models: one folder per paper (backbones, trainers, presets)."""

from keras_paperzoo.models.gan import GAN
from keras_paperzoo.models.image_classifier import ImageClassifier
