"""The optional dependencies, imported where a feature needs them, with one clear line when missing.

Training, evaluation and `.keras` save / load on the JAX and torch backends need neither
TensorFlow nor its companions. These need them:

- TensorFlow: SavedModel and LiteRT export, the `tf.data` pipelines (`StreamBatches.
  from_dataset`, `index_dataset`, the BERT and translation input pipelines) and keras-hub's
  WordPiece tokenizers (which run TF ops);
- tensorflow-text: the raw-string text SavedModel;
- tensorflow-datasets: dataset names that are not files (`--dataset cifar10`).

They come with the `tf` extra (`pip install -e ".[tf]"`; export: `".[export]"`). keras-hub, whose
layers BERT, GPT, iGPT and the Transformer build on, is installed apart with
`pip install --no-deps "keras-hub>=0.32"` where TensorFlow is not wanted: its metadata requires
tensorflow-text, which pulls TensorFlow in, though its layers use neither.

Example:

```python
from keras_paperzoo.optional import require_tensorflow

tf = require_tensorflow("SavedModel export")  # raises MissingDependency if TF is absent
```
"""

import importlib
import importlib.util
import logging
import os
import re
import sys
import tempfile


class MissingDependency(ImportError):
    """An optional package that a feature needs is not installed; the message says which and how."""


# The keras-paperzoo extra that installs an optional module (pyproject.toml).
EXTRAS = {
    "tensorflow": "tf",
    "tensorflow_text": "tf",
    "tensorflow_datasets": "tf",
    "importlib_resources": "tf",
    "ai_edge_litert": "export",
    "sacrebleu": "text",
    "safetensors": "text",
    "skimage": "text",
}
# keras-hub's metadata requires tensorflow-text (and so TensorFlow); its layers need neither.
KERAS_HUB = 'pip install --no-deps "keras-hub>=0.32"'


def install_hint(module, install=None):
    """How to install `module`, in words: the extra that carries it, or the pip command.

    Example:
        >>> install_hint("tensorflow")
        'pip install -e ".[tf]" in the checkout, or pip install tensorflow'
    """
    if module == "keras_hub":
        return f"{KERAS_HUB} (--no-deps keeps TensorFlow out; the tf extra installs it with TensorFlow)"
    package = install or module.replace("_", "-")
    extra = EXTRAS.get(module)
    return f'pip install -e ".[{extra}]" in the checkout, or pip install {package}' if extra else f"pip install {package}"


def _missing(module, feature, install=None):
    package = install or module.replace("_", "-")
    tensorflow = EXTRAS.get(module) in ("tf", "export")
    return MissingDependency(
        f"{feature} needs {package}, which is not installed: {install_hint(module, install)}"
        + ("; training on the JAX and torch backends does not." if tensorflow else ".")
    )


def missing(error, feature):
    """`MissingDependency` for a `ModuleNotFoundError` raised while importing what `feature` needs."""
    return _missing(error.name.split(".")[0], feature)


def require(module, feature, install=None):
    """`module` imported, or `MissingDependency` naming `feature` and the pip command.

    Args:
        module: the import name, e.g. "tensorflow_text".
        feature: what needs it, in words ("SavedModel export").
        install: the pip requirement (default: `module` with "_" -> "-").
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name != module and not module.startswith(f"{error.name}."):
            raise  # the package is there but one of its own imports failed: show that
        raise _missing(module, feature, install) from None


def require_installed(module, feature, install=None):
    """`MissingDependency` if `module` is not installed, without importing it (for a feature that
    runs it in a child process, such as export from the JAX and torch backends)."""
    if importlib.util.find_spec(module) is None:
        raise _missing(module, feature, install)


def require_tensorflow(feature):
    """The `tensorflow` module, or `MissingDependency` naming `feature`."""
    return require("tensorflow", feature)


def require_keras_hub(feature):
    """The `keras_hub` module, or `MissingDependency` naming `feature` and `pip install --no-deps keras-hub`."""
    return require("keras_hub", feature)


def installed(module):
    """Whether `module` can be imported (without importing it); False for one set to None in sys.modules."""
    import sys

    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_extras(requirements, feature):
    """Refuse `feature` in one line, before it starts, when a module of `requirements` is not installed.

    Args:
        requirements: (import name, the keras-paperzoo extra that installs it, or a pip
            command when no extra does) pairs, e.g. (("tensorflow", "tf"), ("sacrebleu", "text"),
            ("keras_hub", 'pip install --no-deps "keras-hub>=0.32"')).
        feature: what needs them, in words ("paperzoo reproduce transformer").

    Raises:
        MissingDependency: naming every missing package and the extras (commands) to install.
    """
    missing = [(module, extra) for module, extra in requirements if not installed(module)]
    if missing:
        packages = ", ".join(module.replace("_", "-") for module, _ in missing)
        extras = ",".join(dict.fromkeys(extra for _, extra in missing if " " not in extra))
        commands = [f'pip install -e ".[{extras}]" (in the checkout)'] if extras else []
        commands += list(dict.fromkeys(extra for _, extra in missing if " " in extra))
        raise MissingDependency(f"{feature} needs {packages}, which {'is' if len(missing) == 1 else 'are'} not "
                                f"installed: {' and '.join(commands)}")


# TensorFlow's C++ start-up lines (oneDNN notes, CUDA probes), printed once per library it loads
# whatever TF_CPP_MIN_LOG_LEVEL says: absl's preamble and INFO / WARNING lines ("I0000 ...").
_STARTUP_CHATTER = re.compile(r"(WARNING: All log messages before absl::InitializeLog\(\)|[IW]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ \S+:\d+\])")


class _QuietTensorFlow:
    """A `sys.meta_path` finder that finds nothing itself: runs TensorFlow's own import with its start-up chatter dropped."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tensorflow":
            return None
        for finder in sys.meta_path:
            spec = None if finder is self or not hasattr(finder, "find_spec") else finder.find_spec(fullname, path, target)
            if spec is not None:
                loader = spec.loader
                if loader is not None and hasattr(loader, "exec_module"):
                    run = loader.exec_module
                    loader.exec_module = lambda module: _quietly(run, module)
                return spec
        return None


def _quietly(run, module):
    """`run(module)` with file descriptor 2 captured, then every captured line but the chatter written back."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            run(module)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            for line in captured.read().decode(errors="replace").splitlines(keepends=True):
                if not _STARTUP_CHATTER.match(line):
                    sys.stderr.write(line)
    logging.getLogger("tensorflow").setLevel(logging.ERROR)  # its Python warnings (tf.function retracing, ...)


def quiet_tensorflow():
    """Where TensorFlow is only a library (the JAX and torch backends: tf.data, keras-hub's WordPiece,
    tensorflow-datasets), import it without its start-up logs: TF_CPP_MIN_LOG_LEVEL=3 for its C++ logs,
    the lines it prints while loading dropped, its Python logger at ERROR. Errors still show.
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if "tensorflow" in sys.modules or any(isinstance(f, _QuietTensorFlow) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _QuietTensorFlow())
