"""Export a Keras model to a TF SavedModel or a LiteRT flatbuffer, and check it numerically.

`export_model` writes the artifact and then runs both the Keras model and the
artifact on the same batch, returning the largest absolute difference in an
`ExportResult`. `export_model_file` does the same for a `.keras` file, optionally
exporting one of the loaded model's sub-models (a GAN's `generator`, an SSL
trainer's `encoder`).

Backends: both artifacts are TensorFlow graphs, written by Keras's TensorFlow
exporter. On the TensorFlow backend the export happens in this process. On JAX and
PyTorch it runs in a child process, `python -m keras_paperzoo.export` with
`KERAS_BACKEND=tensorflow`: a live model is first saved to a temporary `.keras`
file (so its classes must be serializable), and the artifact's outputs are sent
back and compared with the live model in this process.

Example:

```python
import keras
from keras_paperzoo.export import export_model

x = keras.Input((4,), name="features")
h = keras.layers.Dense(6, activation="relu")(x)
model = keras.Model(x, keras.layers.Dense(3, activation="sigmoid")(h))
result = export_model(model, "/tmp/clf_sm", format="saved_model", overwrite=True)
print(result.path, result.max_abs_diff, result.ok)
result = export_model(model, "/tmp/clf.tflite", format="litert", overwrite=True)
```
"""

import math
import os
import tempfile
import warnings

import numpy as np

from keras_paperzoo.checksums import check_keras_file
from keras_paperzoo.export import child
from keras_paperzoo.export import verify
from keras_paperzoo.export.child import DEFAULT_TOLERANCE
from keras_paperzoo.export.child import ExportResult
from keras_paperzoo.export.verify import FORMATS
from keras_paperzoo.optional import require_tensorflow

# ---------------------------------------------------------------------------
# Argument checks (cheap, done before any export work or child process)
# ---------------------------------------------------------------------------


def _check_format(format):
    if format not in FORMATS:
        raise ValueError(
            f"format must be one of {', '.join(repr(f) for f in FORMATS)}; got {format!r}"
        )


# ---------------------------------------------------------------------------
# In-process export (TensorFlow backend)
# ---------------------------------------------------------------------------


def _input_signature(layout):
    """[structure of tf.TensorSpec]: one positional argument, dynamic batch, named inputs."""
    import keras

    tf = require_tensorflow("SavedModel and LiteRT export")

    specs = [tf.TensorSpec(shape=s.shape, dtype=s.dtype, name=s.name) for s in layout.slots]
    return [keras.tree.map_structure(lambda i: specs[i], layout.structure)]


def write_artifact(model, path, format, layout):
    signature = _input_signature(layout)
    keras_format = "tf_saved_model" if format == "saved_model" else "litert"
    model.export(path, format=keras_format, input_signature=signature, verbose=False)


def _export_here(model, path, format, arrays, tolerance, layout):
    write_artifact(model, path, format, layout)
    reference = verify.keras_outputs(model, layout, arrays)
    artifact = verify.run_artifact(path, format, layout, arrays)
    return ExportResult(
        path=path,
        format=format,
        max_abs_diff=verify.max_abs_diff(reference, artifact),
        tolerance=tolerance,
    )


# ---------------------------------------------------------------------------
# Child process (JAX / PyTorch backends)
# ---------------------------------------------------------------------------


def _export_via_child(model, path, format, arrays, tolerance, overwrite, layout):
    with tempfile.TemporaryDirectory(prefix="paperzoo_export_") as tmp:
        model_file = child.save_for_child(model, tmp)
        inputs_npz = os.path.join(tmp, "inputs.npz")
        outputs_npz = os.path.join(tmp, "outputs.npz")
        np.savez(inputs_npz, **{f"input_{i}": a for i, a in enumerate(arrays)})
        payload = child.run_child(
            model_file, path, format, None, tolerance, overwrite, inputs_npz, outputs_npz
        )
        with np.load(outputs_npz) as data:
            artifact = {k: data[k] for k in data.files}
    # Compare with the live model on this backend, not only the reloaded TF copy.
    reference = verify.keras_outputs(model, layout, arrays)
    diffs = [verify.max_abs_diff(reference, artifact), float(payload["max_abs_diff"])]
    diff = float("nan") if any(math.isnan(d) for d in diffs) else max(diffs)
    return ExportResult(path=payload["path"], format=format, max_abs_diff=diff,
                        tolerance=tolerance)


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def export_model(model, path, format="saved_model", sample_inputs=None,
                 tolerance=DEFAULT_TOLERANCE, overwrite=False):
    """Export a built Keras model for deployment and verify the artifact numerically.

    `"saved_model"` writes a TensorFlow SavedModel directory whose `serving_default`
    signature (what TF Serving calls) takes one tensor per model input, named after
    the input (`keras.Input(name=...)`), with a dynamic batch dimension.
    `"litert"` writes a `.tflite` flatbuffer with the same signature.

    The Keras model (inference mode) and the artifact are then run on the same batch
    and the largest absolute difference is returned; a large difference is reported,
    not raised.

    On the TensorFlow backend everything runs in this process; on JAX and PyTorch the
    model is saved to a temporary `.keras` file and exported by a child process with
    `KERAS_BACKEND=tensorflow` (about 10 s of TensorFlow start-up), then compared
    with the live model here.

    Args:
        model: a built `keras.Model` (functional, Sequential, or subclassed and
            already called on a batch).
        path: output SavedModel directory, or output file ending in `.tflite`.
        format: `"saved_model"` or `"litert"`.
        sample_inputs: inputs to compare on: an array (one input), a list/tuple in
            input order, or a dict keyed by input name. Default: a batch of 8 drawn
            from N(0, 1) with a fixed seed, shaped from the model's input shapes.
        tolerance: `result.ok` is `max_abs_diff <= tolerance`.
        overwrite: replace `path` if it exists and is not empty.

    Returns:
        `ExportResult` with `path`, `format`, `max_abs_diff`, `tolerance`, `ok`.

    Raises:
        ValueError: unknown format; model without a defined input shape (build or
            call it first); `path` exists and is not empty (without `overwrite`);
            a litert path not ending in `.tflite`; sample inputs that do not fit.

    Example:

    ```python
    import keras
    from keras_paperzoo.export import export_model

    x = keras.Input((8, 8, 1), name="image")
    h = keras.layers.Conv2D(4, 3, activation="relu")(x)
    model = keras.Model(x, keras.layers.GlobalAveragePooling2D()(h))
    result = export_model(model, "/tmp/conv.tflite", format="litert", overwrite=True)
    assert result.ok, result.max_abs_diff
    ```
    """
    _check_format(format)
    tolerance = child.check_tolerance(tolerance)
    from keras_paperzoo.export import translator

    if translator.is_translator(model):  # a decoding loop, not one call: its own SavedModel (export/translator.py)
        if sample_inputs is not None:
            raise ValueError("sample_inputs is not taken for a TransformerTranslator (it is checked on seeded ids).")
        if child.backend() == "tensorflow":
            return translator.export_translator(model, path, format=format, tolerance=tolerance, overwrite=overwrite)
        if format != "saved_model":  # the refusal of export_translator, without a child process
            raise ValueError(f"A TransformerTranslator exports to format='saved_model' only; got format={format!r}.")
        path = child.check_path_only(path, format, overwrite)
        with tempfile.TemporaryDirectory(prefix="paperzoo_export_") as tmp:
            payload = child.run_child(child.save_for_child(model, tmp), path, format, None, tolerance, overwrite)
        return ExportResult(path=payload["path"], format=format, max_abs_diff=float(payload["max_abs_diff"]),
                            tolerance=tolerance)
    layout = verify.input_layout(model)
    arrays = (
        verify.make_sample_inputs(layout)
        if sample_inputs is None
        else verify.normalize_sample_inputs(layout, sample_inputs)
    )
    if child.backend() == "tensorflow":
        path = child.prepare_path(path, format, overwrite)
        return _export_here(model, path, format, arrays, tolerance, layout)
    path = child.check_path_only(path, format, overwrite)
    return _export_via_child(model, path, format, arrays, tolerance, overwrite, layout)


# Packages whose modules register serializable classes that a saved model can hold (the
# GPT recipe's `CharTokenizer` lives in data/, optimizers and schedules in training/).
REGISTERING_PACKAGES = ("keras_paperzoo.layers", "keras_paperzoo.training", "keras_paperzoo.data")


def import_paperzoo_models():
    """Import `keras_paperzoo.models` and every module of `REGISTERING_PACKAGES`, so that the
    classes they register can be deserialized.

    Missing is fine (returns False); a module that fails for another reason is
    reported with a warning instead of stopping the export.
    """
    import importlib
    import pkgutil

    try:
        import keras_paperzoo.models  # noqa: F401
    except ImportError:
        return False
    except Exception as err:  # noqa: BLE001 - a half-written sibling must not break export
        warnings.warn(
            f"could not import keras_paperzoo.models ({type(err).__name__}: {err}); "
            "custom paperzoo classes may fail to load",
            stacklevel=2,
        )
        return False
    for package_name in REGISTERING_PACKAGES:
        package = importlib.import_module(package_name)
        for module in pkgutil.iter_modules(package.__path__, package_name + "."):
            try:
                importlib.import_module(module.name)
            except Exception as err:  # noqa: BLE001 - an optional dependency missing must not break export
                warnings.warn(f"could not import {module.name} ({type(err).__name__}: {err})", stacklevel=2)
    return True


def load_model_file(model_path):
    """Load a `.keras` file with `safe_mode=True` after registering paperzoo classes."""
    import keras

    model_path = os.fspath(model_path)
    if not os.path.isfile(model_path):
        raise ValueError(f"model_path {model_path!r} is not a file (expected a .keras file)")
    check_keras_file(model_path)  # a complete archive, its weights as saved (NAME.keras.sha256 beside)
    import_paperzoo_models()
    return keras.saving.load_model(model_path, safe_mode=True)


def _model_attributes(model):
    """Public attribute names of `model` holding a keras.Model (torch keeps them in _modules)."""
    import keras

    names = set(vars(model)) | set(getattr(model, "_modules", None) or {})
    found = []
    for name in sorted(names):
        if name.startswith("_"):
            continue
        try:
            value = getattr(model, name)
        except Exception:  # noqa: BLE001 - a property that cannot be read is not a submodel
            continue
        if isinstance(value, keras.Model):
            found.append(name)
    return found


def resolve_submodel(model, submodel):
    """Return `model` or its attribute `submodel` (dotted paths allowed), a keras.Model.

    Raises:
        ValueError: the attribute does not exist or is not a `keras.Model`; the message
            lists the attributes that are.
    """
    import keras

    if not submodel:
        return model
    target = model
    for part in submodel.split("."):
        if not part or not hasattr(target, part):
            available = _model_attributes(model)
            raise ValueError(
                f"submodel {submodel!r} is not an attribute of the loaded model "
                f"{model.name!r} ({type(model).__name__}); submodel must name an "
                f"attribute holding a keras.Model. Available: {available or 'none'}."
            )
        target = getattr(target, part)
    if not isinstance(target, keras.Model):
        raise ValueError(
            f"submodel {submodel!r} of {model.name!r} is a {type(target).__name__}, "
            "not a keras.Model; submodel must name an attribute holding a keras.Model."
        )
    return target


def export_model_file(model_path, path, format="saved_model", submodel=None,
                      tolerance=DEFAULT_TOLERANCE, overwrite=False):
    """Load a `.keras` file (or one of its sub-models) and export it with `export_model`.

    Works from any backend: on JAX and PyTorch the whole job runs in a child process
    (`python -m keras_paperzoo.export ...` with `KERAS_BACKEND=tensorflow`) whose JSON
    result is parsed here; when `submodel` is given the file is also loaded here first,
    so a wrong name fails fast. The file is loaded with `safe_mode=True` after importing
    `keras_paperzoo.models` (where paperzoo's serializable classes are registered).
    The check uses the default sample batch (seeded N(0, 1), batch 8).

    Args:
        model_path: path of a `.keras` file.
        path: output SavedModel directory, or output file ending in `.tflite`.
        format: `"saved_model"` or `"litert"`.
        submodel: name of an attribute of the loaded model to export instead, e.g.
            `"generator"` for a GAN or `"encoder"` for an SSL trainer (dots allowed).
        tolerance: `result.ok` is `max_abs_diff <= tolerance`.
        overwrite: replace `path` if it exists and is not empty.

    Returns:
        `ExportResult`.

    Raises:
        ValueError: unknown format, bad path, missing file, or `submodel` that is
            not a `keras.Model` attribute of the loaded model.

    Example:

    ```python
    import keras
    from keras_paperzoo.export import export_model_file

    x = keras.Input((4,), name="features")
    keras.Model(x, keras.layers.Dense(3)(x)).save("/tmp/dense.keras")
    result = export_model_file("/tmp/dense.keras", "/tmp/dense.tflite", format="litert",
                               overwrite=True)
    print(result.max_abs_diff)
    ```
    """
    _check_format(format)
    tolerance = child.check_tolerance(tolerance)
    if not os.path.isfile(os.fspath(model_path)):
        raise ValueError(f"model_path {os.fspath(model_path)!r} is not a file (expected a .keras file)")
    if child.backend() == "tensorflow":
        model = resolve_submodel(load_model_file(model_path), submodel)
        return export_model(model, path, format=format, tolerance=tolerance, overwrite=overwrite)
    path = child.check_path_only(path, format, overwrite)
    if submodel:
        # Fail fast (no ~10 s TensorFlow start-up) on a submodel name that is wrong.
        resolve_submodel(load_model_file(model_path), submodel)
    payload = child.run_child(model_path, path, format, submodel, tolerance, overwrite)
    return ExportResult(path=payload["path"], format=payload["format"],
                        max_abs_diff=float(payload["max_abs_diff"]), tolerance=tolerance)
