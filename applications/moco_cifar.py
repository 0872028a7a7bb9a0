"""MoCo v2 on CIFAR-10 and MNIST at a CPU budget, and the momentum ablation (He et al. 2020, Sec. 4.1, Fig. / Table on m).

The reproduction lives in keras_paperzoo/reproductions/moco_cifar.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("moco_cifar", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
