"""DenseCL against MoCo v2 at the same budget on digits placed on a canvas, probed at every location (Wang et al. 2021).

The reproduction lives in keras_paperzoo/reproductions/densecl_canvas.py (`paperzoo reproduce --help`);
this entry point runs it with the arguments given, writing into applications/results/.
"""
import pathlib
import sys

from keras_paperzoo.reproductions.common import script

sys.exit(script("densecl_canvas", sys.argv[1:], results=pathlib.Path(__file__).resolve().parent / "results"))
