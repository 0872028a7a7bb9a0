"""The optional dependencies, imported where a feature needs them, with one clear line when missing.

Training, evaluation and `.keras` save / load on the JAX and torch backends need neither
TensorFlow nor its companions. These need them:

- TensorFlow: SavedModel and LiteRT export, the `tf.data` pipelines (`StreamBatches.
  from_dataset`, `index_dataset`, the BERT and translation input pipelines) and keras-hub's
  WordPiece tokenizers (which run TF ops);
- tensorflow-text: the raw-string text SavedModel;
- tensorflow-datasets: dataset names that are not files (`--dataset cifar10`).

Example:

```python
from keras_paperzoo.optional import require_tensorflow

tf = require_tensorflow("SavedModel export")  # raises MissingDependency if TF is absent
```
"""

import importlib
import importlib.util


class MissingDependency(ImportError):
    """An optional package that a feature needs is not installed; the message says which and how."""


def _missing(module, feature, install):
    package = install or module.replace("_", "-")
    return MissingDependency(
        f"{feature} needs {package}, which is not installed (pip install {package}); "
        "training on the JAX and torch backends does not."
    )


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
