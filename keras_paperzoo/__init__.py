"""keras-paperzoo: landmark deep-learning papers as Keras 3 layers, backbones and
trainers that run `model.fit` on TensorFlow, JAX and PyTorch.

    from keras_paperzoo.models import GAN

Importing the package (any module of it) lets `keras.saving.load_model` find every class it
registers, without importing Keras or the models yet (see `keras_paperzoo._registration`):

    import keras, keras_paperzoo
    model = keras.saving.load_model("runs/gan/model.keras")
"""

from keras_paperzoo import _registration

__version__ = "0.1.0"

_registration.install()
