"""BERT's pre-training gain on SST-2, at CPU scale (Devlin et al. 2019, Table 1 and Sec. 5).

The reproduction lives in keras_paperzoo/reproductions/bert_sst2.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("bert_sst2", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
