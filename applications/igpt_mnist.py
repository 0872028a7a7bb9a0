"""iGPT on MNIST at a CPU budget: layer-wise linear probes, autoregressive and BERT side by side (Chen et al. 2020, Fig. 3).

The reproduction lives in keras_paperzoo/reproductions/igpt_mnist.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("igpt_mnist", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
