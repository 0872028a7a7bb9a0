"""ResNet on CIFAR-10: He et al. 2016, Sec. 4.2, Table 6 and Figure 6 (plain vs residual).

The reproduction lives in keras_paperzoo/reproductions/resnet_cifar.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("resnet_cifar", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
