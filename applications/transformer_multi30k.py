"""Transformer translation on Multi30k German -> English, BLEU on test_2016_flickr (Vaswani et al. 2017).

The reproduction lives in keras_paperzoo/reproductions/transformer_multi30k.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("transformer_multi30k", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
