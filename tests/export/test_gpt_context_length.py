"""`paperzoo export GPT.keras --format litert --sequence-length N`: a LiteRT model of N token ids, or one line."""

import numpy as np
import pytest

import keras

from keras_paperzoo.cli import main

MAX_LENGTH = 12


@pytest.fixture
def gpt_file(tmp_path):
    from keras_paperzoo.models.gpt import GPTBackbone, GPTCausalLM

    keras.utils.set_random_seed(0)
    backbone = GPTBackbone(vocabulary_size=20, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
                           max_sequence_length=MAX_LENGTH)
    model = GPTCausalLM(backbone)
    path = tmp_path / "gpt.keras"
    model.save(path)
    return path, model


@pytest.mark.needs_tensorflow
@pytest.mark.one_leg("jax")  # the JAX and torch path (a child process on TensorFlow); test_export.py has both paths
def test_the_litert_model_takes_the_sequence_length_asked(gpt_file, tmp_path, capsys):
    from keras_paperzoo.export.verify import litert_interpreter

    path, model = gpt_file
    output = tmp_path / "gpt_5.tflite"
    assert main(["export", str(path), "--format", "litert", "--sequence-length", "5", "--output", str(output)]) == 0
    assert "token_ids of length 5" in capsys.readouterr().out
    interpreter = litert_interpreter(str(output))
    (ids_detail,) = interpreter.get_input_details()
    assert list(ids_detail["shape_signature"]) == [-1, 5] and ids_detail["dtype"] == np.int32
    # The logits of one prompt of 5 tokens, as Keras computes them.
    ids = np.array([[3, 1, 4, 1, 5]], "int32")
    interpreter.resize_tensor_input(ids_detail["index"], ids.shape)
    interpreter.allocate_tensors()
    interpreter.set_tensor(ids_detail["index"], ids)
    interpreter.invoke()
    (logits_detail,) = interpreter.get_output_details()
    logits = interpreter.get_tensor(logits_detail["index"])
    expected = keras.ops.convert_to_numpy(model(ids))
    assert logits.shape == (1, 5, 20) and np.max(np.abs(logits - expected)) < 1e-4


@pytest.mark.parametrize("length, message", [
    (str(MAX_LENGTH + 1), f"sequence_length must be an int from 1 to the model's max_sequence_length {MAX_LENGTH} "
                          f"(its position embeddings); got {MAX_LENGTH + 1}"),
    ("0", "argument --sequence-length: 0 must be at least 1"),
])
@pytest.mark.one_leg("jax")  # refused before any export work
def test_a_sequence_length_outside_the_position_table_is_refused_in_one_line(gpt_file, tmp_path, capsys, length,
                                                                              message):
    path, _ = gpt_file
    output = tmp_path / "gpt.tflite"
    assert main(["export", str(path), "--format", "litert", "--sequence-length", length, "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert err == f"paperzoo: error: {message}\n" and not output.exists()
