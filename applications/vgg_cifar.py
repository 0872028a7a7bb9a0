"""VGG configurations A, A-LRN and B on CIFAR-10: LRN does not help, depth does (Simonyan & Zisserman 2015, Table 3).

The reproduction lives in keras_paperzoo/reproductions/vgg_cifar.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("vgg_cifar", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
