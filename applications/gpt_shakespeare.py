"""Character-level GPT on Tiny Shakespeare at a CPU budget, beside the published GPU figure.

The reproduction lives in keras_paperzoo/reproductions/gpt_shakespeare.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("gpt_shakespeare", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
