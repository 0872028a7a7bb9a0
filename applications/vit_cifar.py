"""A small ViT from scratch on CIFAR-10: class token vs global average pooling (Dosovitskiy et al. 2021, App. D.3).

The reproduction lives in keras_paperzoo/reproductions/vit_cifar.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("vit_cifar", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
