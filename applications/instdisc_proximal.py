"""InstDisc's Figure 3 in small form: does the proximal term make the training loss oscillate less?

The reproduction lives in keras_paperzoo/reproductions/instdisc_proximal.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("instdisc_proximal", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
