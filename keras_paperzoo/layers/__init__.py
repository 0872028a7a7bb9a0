"""Building blocks used by more than one paper."""

from keras_paperzoo.layers.maxout import Maxout
