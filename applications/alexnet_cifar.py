"""AlexNet with and without local response normalization on CIFAR-10 (Krizhevsky et al. 2012, Sec. 3.3).

The reproduction lives in keras_paperzoo/reproductions/alexnet_cifar.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("alexnet_cifar", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
