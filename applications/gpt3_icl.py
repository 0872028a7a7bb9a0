"""GPT-3's in-context learning in small: accuracy rises with the shots K on held-out tasks (Brown et al. 2020, Fig. 1.2).

The reproduction lives in keras_paperzoo/reproductions/gpt3_icl.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("gpt3_icl", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
