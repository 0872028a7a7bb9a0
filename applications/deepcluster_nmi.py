"""DeepCluster's Figure 2a in small form: the NMI between the clusters and the labels rises over training (Caron et al. 2018).

The reproduction lives in keras_paperzoo/reproductions/deepcluster_nmi.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("deepcluster_nmi", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
