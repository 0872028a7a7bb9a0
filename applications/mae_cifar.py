"""MAE on CIFAR-10 and MNIST at a CPU budget: pre-train, probe, fine-tune vs from scratch (He et al. 2022, Sec. 4, Table 3).

The reproduction lives in keras_paperzoo/reproductions/mae_cifar.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("mae_cifar", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
