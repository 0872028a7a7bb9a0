"""Run an exported artifact and compare it with the Keras model it came from.

Two artifact kinds are understood:

- ``"saved_model"``: a TensorFlow SavedModel directory, run through its
  ``serving_default`` signature (what TF Serving calls).
- ``"litert"``: a ``.tflite`` flatbuffer, run in the LiteRT interpreter
  (``ai_edge_litert`` when installed, else ``tf.lite.Interpreter``), its input
  tensors resized to the batch that is fed.

Inputs are fed by name: the exporter in this package names every serving input
after the model's input (``keras.Input(name=...)``), and the verifier looks the
same names up in the artifact's signature.

Example:

```python
import keras
from keras_paperzoo.export import export_model, verify_export

inputs = keras.Input((4,), name="features")
model = keras.Model(inputs, keras.layers.Dense(3)(inputs))
export_model(model, "/tmp/dense_sm", format="saved_model", overwrite=True)
print(verify_export(model, "/tmp/dense_sm"))  # ~0.0
```
"""

import dataclasses
import os
import re
import warnings

import numpy as np
from keras_paperzoo.optional import require_tensorflow

FORMATS = ("saved_model", "litert")
DEFAULT_BATCH_SIZE = 8
DEFAULT_SEED = 0
# Length given to unknown non-batch dimensions of integer and boolean inputs (token ids,
# segment ids, padding masks of sequence models).
DEFAULT_SEQUENCE_LENGTH = 16

_SERVING_KEY = "serving_default"


# ---------------------------------------------------------------------------
# The model's input layout: names, shapes, dtypes and the nesting it is called with.
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class InputSlot:
    """One input tensor of a model, as the artifact will see it.

    Attributes:
        name: serving name of the input (the model's input name, sanitised).
        shape: shape with the batch dimension first and set to `None`.
        dtype: Keras dtype string, e.g. `"float32"`.
    """

    name: str
    shape: tuple
    dtype: str


@dataclasses.dataclass(frozen=True)
class InputLayout:
    """The inputs of a model: flat slots plus the structure the model is called with.

    Attributes:
        slots: tuple of `InputSlot`, in `keras.tree.flatten` order.
        structure: the call structure with slot indices as leaves: `0` for a
            single-input model, `[0, 1]` for a list, `{"a": 0, "b": 1}` for a dict.
    """

    slots: tuple
    structure: object

    def pack(self, arrays):
        """Nest a flat list of arrays (slot order) the way the model is called."""
        import keras

        return keras.tree.map_structure(lambda i: arrays[i], self.structure)

    def describe(self):
        return ", ".join(f"{s.name}: shape={s.shape} dtype={s.dtype}" for s in self.slots)


def _sanitize_name(name, index):
    name = re.sub(r"[^A-Za-z0-9_.\-]", "_", str(name or "")).strip("_")
    if not name or not re.match(r"[A-Za-z]", name[0]):
        name = f"input_{index}" if not name else f"input_{name}"
    return name


def _unique(names):
    seen, out = {}, []
    for name in names:
        if name in seen:
            seen[name] += 1
            candidate = f"{name}_{seen[name]}"
            while candidate in seen:
                seen[name] += 1
                candidate = f"{name}_{seen[name]}"
            name = candidate
        seen[name] = 0
        out.append(name)
    return out


def _tensor_name(tensor):
    """Name of the InputLayer that made `tensor` (`keras.Input(name=...)`, else
    "input_layer", "input_layer_1", ...); an unnamed input's own KerasTensor name is
    only a counter ("keras_tensor_3")."""
    history = getattr(tensor, "_keras_history", None)
    operation = getattr(history, "operation", None)
    return getattr(operation, "name", None) or tensor.name


def _no_shape_error(model):
    return ValueError(
        f"model {getattr(model, 'name', type(model).__name__)!r} has no defined input "
        "shape, so it cannot be exported: the export needs every input's shape and "
        "dtype. Build it with keras.Input(...) (functional API), or call it once on "
        "a batch (model(x)) or model.build(input_shape) before exporting."
    )


def input_layout(model):
    """Work out a built model's input names, shapes, dtypes and call structure.

    Args:
        model: a built `keras.Model` (functional, Sequential, or a subclassed model
            that has been called or built on one input).

    Returns:
        An `InputLayout`.

    Raises:
        ValueError: the model has no defined input shape (never built or called).

    Example:

    ```python
    import keras
    from keras_paperzoo.export.verify import input_layout

    x = keras.Input((8, 8, 1), name="image")
    model = keras.Model(x, keras.layers.Conv2D(2, 3)(x))
    print(input_layout(model).slots)  # (InputSlot(name='image', shape=(None, 8, 8, 1), ...),)
    ```
    """
    import keras

    if not isinstance(model, keras.Model):
        raise ValueError(
            f"model must be a keras.Model, got {type(model).__name__}; wrap a layer "
            "in a functional model (keras.Model(inputs, layer(inputs))) to export it."
        )
    inputs = None
    try:
        inputs = model.inputs
    except (AttributeError, ValueError):
        inputs = None
    if inputs:
        try:
            tensors = model.input  # Functional: the nesting it was built with.
        except (AttributeError, ValueError):
            tensors = inputs[0] if len(inputs) == 1 else list(inputs)
        flat = keras.tree.flatten(tensors)
        names = _unique([_sanitize_name(_tensor_name(t), i) for i, t in enumerate(flat)])
        slots = tuple(
            InputSlot(
                name=n,
                shape=(None,) + tuple(t.shape)[1:],
                dtype=keras.backend.standardize_dtype(t.dtype),
            )
            for n, t in zip(names, flat)
        )
        structure = keras.tree.pack_sequence_as(tensors, list(range(len(flat))))
        return InputLayout(slots=slots, structure=structure)

    # Subclassed model: the only record of its input is the shape it was built with.
    shapes = getattr(model, "_build_shapes_dict", None)
    if not model.built or not shapes:
        raise _no_shape_error(model)
    values = list(shapes.values())
    shape = values[0] if len(values) == 1 else None
    if shape is None or not all(isinstance(d, (int, type(None))) for d in shape):
        raise ValueError(
            f"cannot infer the input layout of subclassed model {model.name!r} "
            f"(built with {dict(shapes)}); only single-tensor inputs are inferred. "
            "Wrap it in a functional model with one keras.Input per input."
        )
    import inspect

    params = [
        p.name
        for p in inspect.signature(model.call).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    name = _sanitize_name(params[0] if params else "inputs", 0)
    dtype = keras.backend.standardize_dtype(getattr(model, "input_dtype", None) or "float32")
    slot = InputSlot(name=name, shape=(None,) + tuple(shape)[1:], dtype=dtype)
    return InputLayout(slots=(slot,), structure=0)


# ---------------------------------------------------------------------------
# Sample inputs
# ---------------------------------------------------------------------------


def _dtype_kind(dtype):
    """NumPy's kind letter of a Keras dtype name ("f" for bfloat16, "?" for strings and others)."""
    if dtype == "bfloat16":
        return "f"
    try:
        return np.dtype(dtype).kind
    except TypeError:
        return "?"


def make_sample_inputs(layout, batch_size=DEFAULT_BATCH_SIZE, seed=DEFAULT_SEED):
    """Build a deterministic random batch for every input slot (flat list, slot order).

    Float inputs are N(0, 1); integer inputs are 0 or 1 (valid ids for any embedding);
    boolean inputs are random True/False. Unknown non-batch dimensions of integer and
    boolean inputs (a sequence model's token ids, segment ids, padding mask) get
    `DEFAULT_SEQUENCE_LENGTH`.

    Args:
        layout: an `InputLayout` (see `input_layout`).
        batch_size: leading dimension of every array.
        seed: seed of the NumPy generator.

    Returns:
        A list of NumPy arrays, one per slot.

    Raises:
        ValueError: a non-batch dimension of a float input is unknown (`None`); pass
            `sample_inputs`.
    """
    rng = np.random.default_rng(seed)
    arrays = []
    for slot in layout.slots:
        dims = slot.shape[1:]
        kind = _dtype_kind(slot.dtype)
        if kind in ("i", "u", "b"):  # token ids, segment ids, masks: a sequence of the default length
            dims = tuple(DEFAULT_SEQUENCE_LENGTH if d is None else d for d in dims)
        if any(d is None for d in dims):
            raise ValueError(
                f"input {slot.name!r} has shape {slot.shape} with unknown non-batch "
                "dimensions, so no default sample batch can be built; pass "
                "sample_inputs= with concrete arrays."
            )
        shape = (batch_size,) + tuple(int(d) for d in dims)
        if kind == "f":
            arr = rng.standard_normal(shape).astype("float32")
            arr = arr.astype(slot.dtype) if slot.dtype != "bfloat16" else arr
        elif kind in "iu":
            arr = rng.integers(0, 2, size=shape).astype(slot.dtype)
        elif kind == "b":
            arr = rng.random(shape) < 0.5
        else:
            raise ValueError(
                f"input {slot.name!r} has dtype {slot.dtype}; no default sample can be "
                "built for it: pass sample_inputs="
            )
        arrays.append(arr)
    return arrays


def normalize_sample_inputs(layout, sample_inputs):
    """Turn user sample inputs (array, list, tuple or dict) into a flat list in slot order.

    A dict may be keyed like the model's input dict or by input name; a list or tuple
    is positional; a single array fits a single-input model. Arrays are cast to each
    input's dtype.

    Args:
        layout: an `InputLayout`.
        sample_inputs: the arrays to feed.

    Returns:
        A list of NumPy arrays, one per slot.

    Raises:
        ValueError: the sample inputs do not fit the model's inputs.
    """
    import keras

    n = len(layout.slots)
    names = [s.name for s in layout.slots]
    flat = None
    if isinstance(sample_inputs, dict):
        if isinstance(layout.structure, dict) and set(sample_inputs) == set(layout.structure):
            try:
                keras.tree.assert_same_structure(layout.structure, sample_inputs)
                flat = keras.tree.flatten(sample_inputs)
            except (ValueError, TypeError):
                flat = None
        if flat is None and set(sample_inputs) == set(names):
            flat = [sample_inputs[name] for name in names]
    elif isinstance(sample_inputs, (list, tuple)):
        if len(sample_inputs) == n:
            flat = list(sample_inputs)
    elif n == 1:
        flat = [sample_inputs]
    if n == 1 and isinstance(sample_inputs, (list, tuple)):
        # One input: [array] or a nested list that is itself the array.
        single = len(sample_inputs) == 1 and np.ndim(sample_inputs[0]) == len(
            layout.slots[0].shape
        )
        flat = [sample_inputs[0]] if single else [sample_inputs]
    if flat is None or len(flat) != n:
        raise ValueError(
            "sample_inputs do not match the model's inputs: expected "
            f"{n} array(s) ({layout.describe()}) as a single array (one input), a "
            "list/tuple in input order, or a dict keyed by input name; got "
            f"{type(sample_inputs).__name__}."
        )
    out = []
    for slot, arr in zip(layout.slots, flat):
        arr = np.asarray(keras.ops.convert_to_numpy(arr) if not isinstance(arr, np.ndarray) else arr)
        if slot.dtype != "bfloat16":
            arr = arr.astype(slot.dtype, copy=False)
        expected = slot.shape[1:]
        if arr.ndim != len(slot.shape) or any(
            e is not None and e != a for e, a in zip(expected, arr.shape[1:])
        ):
            raise ValueError(
                f"sample input for {slot.name!r} has shape {arr.shape}; the model "
                f"expects {slot.shape} (None = any size)."
            )
        out.append(arr)
    return out


# ---------------------------------------------------------------------------
# Running Keras and the artifacts
# ---------------------------------------------------------------------------


def keras_outputs(model, layout, arrays):
    """Run the Keras model in inference mode on flat `arrays`; returns NumPy outputs."""
    import keras

    tensors = [keras.ops.convert_to_tensor(a) for a in arrays]
    outputs = model(layout.pack(tensors), training=False)
    return keras.tree.map_structure(lambda t: np.asarray(keras.ops.convert_to_numpy(t)), outputs)


def _match_feed(signature_names, layout, arrays):
    """Map slot arrays to the artifact's input names."""
    signature_names = list(signature_names)
    feed = {slot.name: arr for slot, arr in zip(layout.slots, arrays)}
    if set(signature_names) == set(feed):
        return feed
    if len(signature_names) == 1 and len(arrays) == 1:
        return {signature_names[0]: arrays[0]}
    raise ValueError(
        f"the artifact's inputs {sorted(signature_names)} do not match the model's "
        f"inputs {sorted(feed)}; was it exported from this model?"
    )


def run_saved_model(path, layout, arrays):
    """Call a SavedModel's `serving_default` signature; returns {output name: array}."""
    tf = require_tensorflow("Running a SavedModel")

    loaded = tf.saved_model.load(str(path))
    if _SERVING_KEY not in loaded.signatures:
        raise ValueError(
            f"SavedModel {path} has no {_SERVING_KEY!r} signature (has "
            f"{sorted(loaded.signatures)}); TF Serving needs one."
        )
    fn = loaded.signatures[_SERVING_KEY]
    spec = fn.structured_input_signature[1]
    feed = _match_feed(spec.keys(), layout, arrays)
    result = fn(**{k: tf.constant(v, dtype=spec[k].dtype) for k, v in feed.items()})
    return {k: np.asarray(v.numpy()) for k, v in result.items()}


def litert_interpreter(path, prefer_tf=False):
    """A LiteRT interpreter of the .tflite at `path`: ai-edge-litert's, else (or with prefer_tf) TensorFlow's."""
    if not prefer_tf:
        try:
            from ai_edge_litert.interpreter import Interpreter

            return Interpreter(model_path=str(path))
        except ImportError:
            pass
    tf = require_tensorflow("Running a LiteRT model without ai-edge-litert")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tf.lite.Interpreter's deprecation notice
        return tf.lite.Interpreter(model_path=str(path))


def _invoke_litert(interpreter, layout, arrays):
    signatures = interpreter.get_signature_list()
    if signatures:
        key = _SERVING_KEY if _SERVING_KEY in signatures else sorted(signatures)[0]
        runner = interpreter.get_signature_runner(key)
        feed = _match_feed(signatures[key]["inputs"], layout, arrays)
        # The runner resizes every input tensor to the fed shape (batch included)
        # and reallocates before invoking.
        result = runner(**feed)
        return {k: np.asarray(v) for k, v in result.items()}
    # No signature: feed by tensor order, resizing each input to the sample batch.
    details = interpreter.get_input_details()
    if len(details) != len(arrays):
        raise ValueError(
            f"the .tflite file has {len(details)} input(s), the model {len(arrays)}"
        )
    for det, arr in zip(details, arrays):
        interpreter.resize_tensor_input(det["index"], list(arr.shape))
    interpreter.allocate_tensors()
    for det, arr in zip(details, arrays):
        interpreter.set_tensor(det["index"], arr.astype(det["dtype"], copy=False))
    interpreter.invoke()
    return {
        f"output_{i}": np.asarray(interpreter.get_tensor(det["index"]))
        for i, det in enumerate(interpreter.get_output_details())
    }


def run_litert(path, layout, arrays):
    """Run a `.tflite` file on `arrays` (inputs resized to their batch); {name: array}."""
    try:
        return _invoke_litert(litert_interpreter(path), layout, arrays)
    except RuntimeError as err:
        # ai_edge_litert has no Flex delegate: models with SELECT_TF_OPS need
        # TensorFlow's own interpreter.
        if "flex" not in str(err).lower() and "select" not in str(err).lower():
            raise
        return _invoke_litert(litert_interpreter(path, prefer_tf=True), layout, arrays)


def run_artifact(path, format, layout, arrays):
    """Run an exported artifact of `format` on flat `arrays`; returns {output name: array}."""
    if format == "saved_model":
        return run_saved_model(path, layout, arrays)
    if format == "litert":
        return run_litert(path, layout, arrays)
    raise ValueError(f"format must be one of {FORMATS}, got {format!r}")


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------


def _natural_key(name):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def _pair_outputs(reference, artifact):
    """Pair Keras outputs with artifact outputs; None if the structures differ."""
    import keras

    if isinstance(reference, dict) and set(reference) == set(artifact):
        return [(reference[k], artifact[k]) for k in sorted(reference)]
    flat = keras.tree.flatten(reference)
    names = sorted(artifact, key=_natural_key)
    if len(flat) != len(names):
        return None
    return [(ref, artifact[name]) for ref, name in zip(flat, names)]


def max_abs_diff(reference, artifact):
    """Largest |Keras - artifact| over all outputs and elements.

    Args:
        reference: Keras outputs (array, or list/tuple/dict of arrays).
        artifact: artifact outputs, `{output name: array}` as the runners return them.

    Returns:
        A float: `inf` when the number or shapes of outputs differ or NaNs do not
        line up; positions where both sides are NaN are ignored.
    """
    pairs = _pair_outputs(reference, artifact)
    if pairs is None:
        return float("inf")
    worst = 0.0
    for ref, got in pairs:
        ref = np.asarray(ref, dtype=np.float64)
        got = np.asarray(got, dtype=np.float64)
        if ref.shape != got.shape:
            return float("inf")
        ref_nan, got_nan = np.isnan(ref), np.isnan(got)
        if np.any(ref_nan != got_nan):
            return float("inf")
        keep = ~ref_nan
        if np.any(keep):
            worst = max(worst, float(np.max(np.abs(ref[keep] - got[keep]))))
    return worst


def infer_format(path):
    """`"litert"` for a `.tflite` path, `"saved_model"` for a directory."""
    path = os.fspath(path)
    if path.endswith(".tflite"):
        return "litert"
    if os.path.isdir(path):
        return "saved_model"
    raise ValueError(
        f"cannot tell the format of {path!r}: a .tflite file is 'litert', a "
        "directory is 'saved_model'; pass format="
    )


def verify_export(model, path, format=None, sample_inputs=None):
    """Largest absolute difference between a Keras model and an artifact exported from it.

    Runs `model` (inference mode) and the artifact on the same inputs and compares
    every output element. A large value is returned, not raised: the caller decides.

    Args:
        model: the built `keras.Model` the artifact should reproduce.
        path: SavedModel directory or `.tflite` file.
        format: `"saved_model"` or `"litert"`; inferred from `path` when `None`.
        sample_inputs: array, list/tuple or dict of arrays fitting the model's inputs;
            default a seeded N(0, 1) batch of 8 built from the input shapes.

    Returns:
        The maximum absolute difference as a float (`inf` if the outputs' number or
        shapes differ).

    Example:

    ```python
    import keras
    from keras_paperzoo.export import export_model, verify_export

    x = keras.Input((4,), name="features")
    model = keras.Model(x, keras.layers.Dense(3)(x))
    export_model(model, "/tmp/dense.tflite", format="litert", overwrite=True)
    model.layers[-1].kernel.assign(model.layers[-1].kernel + 1.0)
    print(verify_export(model, "/tmp/dense.tflite"))  # large: the weights changed
    ```
    """
    format = infer_format(path) if format is None else format
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    layout = input_layout(model)
    arrays = (
        make_sample_inputs(layout)
        if sample_inputs is None
        else normalize_sample_inputs(layout, sample_inputs)
    )
    reference = keras_outputs(model, layout, arrays)
    return max_abs_diff(reference, run_artifact(path, format, layout, arrays))
