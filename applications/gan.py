"""GAN: Goodfellow et al. 2014, Figure 1 (a 1-D toy) and Table 1 (Parzen log-likelihood of MNIST, 225 +- 2).

The reproduction lives in keras_paperzoo/reproductions/gan.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("gan", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
