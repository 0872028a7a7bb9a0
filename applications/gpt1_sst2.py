"""GPT-1's pre-training gain at CPU scale: SST-2 and a synthetic multiple-choice task (Radford et al. 2018, Table 5).

The reproduction lives in keras_paperzoo/reproductions/gpt1_sst2.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("gpt1_sst2", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
