"""BEiT on MNIST at a CPU budget: MIM on visual tokens vs on pixels, fine-tuned, vs from scratch (Bao et al. 2022, Table 4).

The reproduction lives in keras_paperzoo/reproductions/beit_mnist.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("beit_mnist", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
