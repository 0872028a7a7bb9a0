"""SimCLR, BYOL and MoCo v2 at one CPU budget: BYOL's collapse ablations, SimCLR's h against z and temperature.

The reproduction lives in keras_paperzoo/reproductions/ssl_cifar.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("ssl_cifar", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
