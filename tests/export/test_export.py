"""Tests of keras_paperzoo.export: SavedModel / LiteRT export and numerical verification.

On the TensorFlow backend everything runs in-process. On JAX and PyTorch the export
runs in a child process under TensorFlow (~10 s each), so only a few tests take that
route: `test_live_model_via_any_backend_and_corrupted_check` and
`test_export_model_file_from_current_backend`.
"""

import json
import os

import keras
import numpy as np
import pytest

from keras_paperzoo.export import ExportResult
from keras_paperzoo.export import export_model
from keras_paperzoo.export import export_model_file
from keras_paperzoo.export import resolve_submodel
from keras_paperzoo.export import verify_export
from keras_paperzoo.export.verify import input_layout
from keras_paperzoo.export.verify import make_sample_inputs
from keras_paperzoo.export.verify import max_abs_diff

BACKEND = keras.backend.backend()
tf_only = pytest.mark.skipif(
    BACKEND != "tensorflow",
    reason="in-process export needs the TensorFlow backend; other backends go through "
    "the child process, covered by the *_via_any_backend / export_model_file tests",
)


def dense_model():
    x = keras.Input((4,), name="features")
    h = keras.layers.Dense(6, activation="relu")(x)
    return keras.Model(x, keras.layers.Dense(3, activation="sigmoid")(h), name="dense_clf")


def conv_model():
    x = keras.Input((8, 8, 1), name="image")
    h = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(x)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Flatten()(h)
    return keras.Model(x, keras.layers.Dense(2)(h), name="small_cnn")


@keras.saving.register_keras_serializable(package="paperzoo_tests")
class TwoPart(keras.Model):
    """GAN-like container: the thing worth exporting is `self.generator`."""

    def __init__(self, latent_dim=3, **kwargs):
        super().__init__(**kwargs)
        self.latent_dim = latent_dim
        z = keras.Input((latent_dim,), name="latent")
        self.generator = keras.Model(z, keras.layers.Dense(5, activation="tanh")(z), name="gen")
        f = keras.Input((5,), name="fake")
        self.critic = keras.Model(f, keras.layers.Dense(1)(f), name="critic")

    def call(self, z):
        return self.critic(self.generator(z))

    def get_config(self):
        return {**super().get_config(), "latent_dim": self.latent_dim}


def assert_saved_model_dynamic_batch(path, input_name, feature_shape, n_out):
    import tensorflow as tf

    fn = tf.saved_model.load(path).signatures["serving_default"]
    spec = fn.structured_input_signature[1]
    assert list(spec) == [input_name]
    assert spec[input_name].shape.as_list() == [None, *feature_shape]
    for batch in (1, 5):
        out = fn(**{input_name: tf.zeros((batch, *feature_shape), tf.float32)})
        (value,) = out.values()
        assert value.shape == (batch, n_out)


def assert_tflite_valid(path, input_name, feature_shape, n_out):
    assert os.path.isfile(path) and os.path.getsize(path) > 0
    with open(path, "rb") as f:
        head = f.read(8)
    assert head[4:8] == b"TFL3"  # flatbuffer file identifier of TFLite models
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        import tensorflow as tf

        Interpreter = tf.lite.Interpreter
    interp = Interpreter(model_path=path)
    (detail,) = interp.get_input_details()
    assert list(detail["shape_signature"]) == [-1, *feature_shape]
    for batch in (1, 5):
        interp.resize_tensor_input(detail["index"], [batch, *feature_shape])
        interp.allocate_tensors()
        interp.set_tensor(detail["index"], np.zeros((batch, *feature_shape), np.float32))
        interp.invoke()
        out = interp.get_tensor(interp.get_output_details()[0]["index"])
        assert out.shape == (batch, n_out)
    runner = interp.get_signature_runner("serving_default")
    assert list(interp.get_signature_list()["serving_default"]["inputs"]) == [input_name]
    assert runner is not None


# ---------------------------------------------------------------------------
# In-process export (TensorFlow backend)
# ---------------------------------------------------------------------------


@tf_only
@pytest.mark.parametrize(
    "make, input_name, feature_shape, n_out",
    [(dense_model, "features", (4,), 3), (conv_model, "image", (8, 8, 1), 2)],
)
def test_export_both_formats_match_keras(tmp_path, make, input_name, feature_shape, n_out):
    model = make()
    sm = export_model(model, tmp_path / "sm", format="saved_model")
    assert isinstance(sm, ExportResult)
    assert sm.format == "saved_model" and sm.path == str(tmp_path / "sm")
    assert 0.0 <= sm.max_abs_diff < 1e-5 and sm.ok
    assert_saved_model_dynamic_batch(sm.path, input_name, feature_shape, n_out)

    lite = export_model(model, tmp_path / "m.tflite", format="litert")
    assert lite.format == "litert" and lite.path.endswith("m.tflite")
    assert 0.0 <= lite.max_abs_diff < 1e-5 and lite.ok
    assert_tflite_valid(lite.path, input_name, feature_shape, n_out)


@tf_only
def test_multi_input_dict_model_and_named_inputs(tmp_path):
    a = keras.Input((4,), name="tokens_emb")
    b = keras.Input((2,), name="extra")
    h = keras.layers.Concatenate()([a, b])
    model = keras.Model(
        {"tokens_emb": a, "extra": b},
        {"logits": keras.layers.Dense(3)(h), "score": keras.layers.Dense(1)(h)},
    )
    for fmt, path in (("saved_model", tmp_path / "sm"), ("litert", tmp_path / "m.tflite")):
        result = export_model(model, path, format=fmt)
        assert result.max_abs_diff < 1e-5, (fmt, result)
    import tensorflow as tf

    fn = tf.saved_model.load(str(tmp_path / "sm")).signatures["serving_default"]
    assert set(fn.structured_input_signature[1]) == {"tokens_emb", "extra"}
    assert set(fn.structured_outputs) == {"logits", "score"}
    # Caller-provided inputs, keyed by name, batch 3.
    rng = np.random.default_rng(1)
    sample = {"tokens_emb": rng.normal(size=(3, 4)), "extra": rng.normal(size=(3, 2))}
    assert verify_export(model, tmp_path / "m.tflite", sample_inputs=sample) < 1e-5


@tf_only
def test_subclassed_model_called_once(tmp_path):
    class Tiny(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(2)

        def call(self, x):
            return self.dense(x) * 2.0

    model = Tiny()
    model(np.ones((1, 7), "float32"))
    assert input_layout(model).slots[0].name == "x"  # named after call()'s argument
    result = export_model(model, tmp_path / "sm", format="saved_model")
    assert result.max_abs_diff < 1e-5
    assert_saved_model_dynamic_batch(result.path, "x", (7,), 2)


@tf_only
def test_export_model_file_submodel_in_process(tmp_path):
    model_file = str(tmp_path / "two_part.keras")
    two = TwoPart()
    two(np.zeros((2, 3), "float32"))
    two.save(model_file)
    result = export_model_file(model_file, tmp_path / "gen.tflite", format="litert",
                               submodel="generator")
    assert result.ok and result.max_abs_diff < 1e-5
    assert_tflite_valid(result.path, "latent", (3,), 5)


@tf_only
def test_overwrite_replaces_existing_artifact(tmp_path):
    out = tmp_path / "sm"
    out.mkdir()
    (out / "old.txt").write_text("stale")
    result = export_model(dense_model(), out, format="saved_model", overwrite=True)
    assert result.ok and not (out / "old.txt").exists()
    assert (out / "saved_model.pb").is_file()


@tf_only
def test_cli_main_prints_json(tmp_path, capsys):
    from keras_paperzoo.export.__main__ import main

    model_file = str(tmp_path / "dense.keras")
    dense_model().save(model_file)
    out = str(tmp_path / "m.tflite")
    assert main([model_file, out, "--format", "litert"]) == 0
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert payload["path"] == out and payload["format"] == "litert"
    assert payload["max_abs_diff"] < 1e-5 and payload["ok"] is True
    # Errors come back as JSON with exit code 2.
    assert main([model_file, str(tmp_path / "sm"), "--format", "saved_model",
                 "--submodel", "nope"]) == 2
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert payload["error_type"] == "ValueError" and "nope" in payload["error"]


# ---------------------------------------------------------------------------
# Every backend (JAX / PyTorch go through the TensorFlow child process)
# ---------------------------------------------------------------------------


@pytest.mark.needs_tensorflow
def test_live_model_via_any_backend_and_corrupted_check(tmp_path):
    model = conv_model()
    result = export_model(model, tmp_path / "sm", format="saved_model")
    assert result.format == "saved_model"
    assert result.max_abs_diff < 1e-5 and result.ok
    assert_saved_model_dynamic_batch(result.path, "image", (8, 8, 1), 2)
    assert verify_export(model, result.path) < 1e-5

    # Change the Keras weights: the exported copy no longer matches.
    dense = model.layers[-1]
    dense.kernel.assign(keras.ops.convert_to_numpy(dense.kernel) + 0.5)
    diff = verify_export(model, result.path, format="saved_model")
    assert diff > 0.1


@pytest.mark.needs_tensorflow
def test_export_model_file_from_current_backend(tmp_path):
    model = dense_model()
    model_file = str(tmp_path / "dense.keras")
    model.save(model_file)
    result = export_model_file(model_file, tmp_path / "dense.tflite", format="litert")
    assert result.path == str(tmp_path / "dense.tflite")
    assert result.format == "litert" and result.ok and result.max_abs_diff < 1e-5
    assert_tflite_valid(result.path, "features", (4,), 3)
    # The artifact also matches the model as loaded on this backend.
    assert verify_export(keras.saving.load_model(model_file), result.path) < 1e-5


def test_export_model_file_wrong_submodel(tmp_path):
    model_file = str(tmp_path / "dense.keras")
    dense_model().save(model_file)
    with pytest.raises(ValueError, match="submodel 'generator' is not an attribute"):
        export_model_file(model_file, tmp_path / "sm", format="saved_model",
                          submodel="generator")


@pytest.mark.needs_tensorflow
def test_child_process_errors_are_reraised(monkeypatch, tmp_path):
    import subprocess

    from keras_paperzoo.export import child

    def fake_run(cmd, **kwargs):
        assert kwargs["env"]["KERAS_BACKEND"] == "tensorflow"
        assert cmd[1:3] == ["-m", "keras_paperzoo.export"]
        out = 'TF log noise\n{"error": "submodel \'g\' is bad", "error_type": "ValueError"}\n'
        return subprocess.CompletedProcess(cmd, 2, stdout=out, stderr="")

    monkeypatch.setattr(child.subprocess, "run", fake_run)
    with pytest.raises(ValueError, match="submodel 'g' is bad"):
        child.run_child(tmp_path / "m.keras", str(tmp_path / "o"), "saved_model",
                         "g", 1e-4, False)

    def crash(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, -9, stdout="", stderr="Killed")

    monkeypatch.setattr(child.subprocess, "run", crash)
    with pytest.raises(RuntimeError, match="(?s)exited with code -9.*Killed"):
        child.run_child(tmp_path / "m.keras", str(tmp_path / "o"), "litert",
                         None, 1e-4, False)


def test_resolve_submodel():
    two = TwoPart()
    assert resolve_submodel(two, "generator") is two.generator
    assert resolve_submodel(two, None) is two
    with pytest.raises(ValueError, match=r"Available: \['critic', 'generator'\]"):
        resolve_submodel(two, "encoder")
    with pytest.raises(ValueError, match="not a keras.Model"):
        resolve_submodel(two, "latent_dim")


def test_unknown_format_is_rejected(tmp_path):
    with pytest.raises(ValueError, match=r"format must be one of 'saved_model', 'litert'; got 'onnx'"):
        export_model(dense_model(), tmp_path / "x", format="onnx")
    model_file = str(tmp_path / "dense.keras")
    dense_model().save(model_file)
    with pytest.raises(ValueError, match="format must be one of"):
        export_model_file(model_file, tmp_path / "x", format="tflite")


def test_model_without_input_shape_is_rejected(tmp_path):
    unbuilt = keras.Sequential([keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="no defined input shape.*call it once"):
        export_model(unbuilt, tmp_path / "sm", format="saved_model")

    class Never(keras.Model):
        def call(self, x):
            return x

    with pytest.raises(ValueError, match="no defined input shape"):
        export_model(Never(), tmp_path / "sm", format="saved_model")


def test_bad_output_paths_are_rejected(tmp_path):
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("precious")
    with pytest.raises(ValueError, match="already exists and is not empty.*overwrite=True"):
        export_model(dense_model(), out, format="saved_model")
    assert (out / "keep.txt").read_text() == "precious"
    with pytest.raises(ValueError, match="must end with '.tflite'"):
        export_model(dense_model(), tmp_path / "model.bin", format="litert")
    with pytest.raises(ValueError, match="sample_inputs do not match"):
        export_model(dense_model(), tmp_path / "sm2", format="saved_model",
                     sample_inputs={"wrong_name": np.zeros((2, 4))})
    with pytest.raises(ValueError, match="shape"):
        export_model(dense_model(), tmp_path / "sm3", format="saved_model",
                     sample_inputs=np.zeros((2, 5)))


def test_default_sample_inputs_are_deterministic():
    layout = input_layout(conv_model())
    first, second = make_sample_inputs(layout), make_sample_inputs(layout)
    assert first[0].shape == (8, 8, 8, 1) and first[0].dtype == np.float32
    np.testing.assert_array_equal(first[0], second[0])
    assert abs(float(first[0].std()) - 1.0) < 0.2
    # Unnamed inputs are named after their InputLayer, not "keras_tensor_N".
    seq = keras.Sequential([keras.Input((5,)), keras.layers.Dense(2)])
    assert input_layout(seq).slots[0].name.startswith("input_layer")


def test_max_abs_diff_rules():
    ref = [np.zeros((2, 3)), np.ones((2, 1))]
    assert max_abs_diff(ref, {"output_0": np.zeros((2, 3)), "output_1": np.ones((2, 1))}) == 0.0
    got = {"output_0": np.zeros((2, 3)), "output_1": np.full((2, 1), 1.25)}
    assert max_abs_diff(ref, got) == pytest.approx(0.25)
    # output_10 sorts after output_2 (natural order), not between 1 and 2.
    many = [np.full((1,), float(i)) for i in range(11)]
    assert max_abs_diff(many, {f"output_{i}": many[i] for i in range(11)}) == 0.0
    assert max_abs_diff(ref, {"output_0": np.zeros((2, 3))}) == float("inf")
    assert max_abs_diff(ref[0], {"output_0": np.zeros((3, 3))}) == float("inf")
    nan = np.array([np.nan, 1.0])
    assert max_abs_diff(nan, {"output_0": np.array([np.nan, 1.0])}) == 0.0
    assert max_abs_diff(nan, {"output_0": np.array([0.0, 1.0])}) == float("inf")
    assert max_abs_diff({"b": np.ones(2), "a": np.zeros(2)},
                        {"a": np.zeros(2), "b": np.ones(2)}) == 0.0
    assert not ExportResult("p", "litert", float("nan")).ok
    assert ExportResult("p", "litert", 1e-4, tolerance=1e-4).ok



def test_sample_inputs_give_integer_sequences_a_default_length_and_refuse_unknown_float_dims():
    from keras_paperzoo.export.verify import DEFAULT_SEQUENCE_LENGTH, InputLayout, InputSlot

    layout = InputLayout(
        slots=(InputSlot("token_ids", (None, None), "int32"), InputSlot("padding_mask", (None, None), "bool")),
        structure={"token_ids": 0, "padding_mask": 1},
    )
    token_ids, mask = make_sample_inputs(layout, batch_size=3)
    assert token_ids.shape == mask.shape == (3, DEFAULT_SEQUENCE_LENGTH) == (3, 16)
    assert token_ids.dtype == np.int32 and set(np.unique(token_ids)) <= {0, 1} and mask.dtype == bool
    with pytest.raises(ValueError, match="'pixels' has shape \\(None, None, 3\\) with unknown non-batch"):
        make_sample_inputs(InputLayout(slots=(InputSlot("pixels", (None, None, 3), "float32"),), structure=0))
