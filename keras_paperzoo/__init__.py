"""keras-paperzoo: landmark deep-learning papers as Keras 3 layers, backbones and
trainers that run `model.fit` on TensorFlow, JAX and PyTorch.

    from keras_paperzoo.models import GAN
"""

__version__ = "0.1.0"
