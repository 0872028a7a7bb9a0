"""Runs several examples in one process, as `python examples/NAME.py` would, one JSON line each.

    python -m tests.examples_child WORKDIR examples/a.py examples/b.py ...

Each example runs as `__main__` (`runpy.run_path`), with `sys.argv` set to its path and its
own fresh working folder under WORKDIR (examples write their pictures there); Keras's global
state is cleared between them. One process per group saves each example the import of Keras,
its backend and keras-hub (5-20 s on a 2-core machine), which is what lets every example run
on every backend leg (tests/test_examples.py).
"""

import contextlib
import io
import json
import os
import pathlib
import runpy
import sys
import time
import traceback


def run_one(path, workdir):
    import keras

    folder = pathlib.Path(workdir) / path.stem
    folder.mkdir(parents=True, exist_ok=True)
    stdout = io.StringIO()
    argv, cwd, start = sys.argv, os.getcwd(), time.perf_counter()
    error = None
    try:
        os.chdir(folder)
        sys.argv = [str(path)]
        with contextlib.redirect_stdout(stdout):
            runpy.run_path(str(path), run_name="__main__")
    except SystemExit as stop:
        if stop.code not in (None, 0):
            error = f"SystemExit({stop.code!r})"
    except BaseException:  # the report names the example and keeps its traceback
        error = traceback.format_exc()[-3000:]
    finally:
        sys.argv = argv
        os.chdir(cwd)
        keras.utils.clear_session(free_memory=True)
        keras.config.set_dtype_policy("float32")
        try:
            import matplotlib.pyplot as plt

            plt.close("all")
        except ImportError:
            pass
    return {"example": path.stem, "error": error, "stdout": stdout.getvalue()[-2000:],
            "seconds": round(time.perf_counter() - start, 1)}


def main(argv):
    workdir, paths = argv[0], [pathlib.Path(p) for p in argv[1:]]
    results = [run_one(path, workdir) for path in paths]
    print("EXAMPLES " + json.dumps(results), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
