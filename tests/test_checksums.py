"""Checksums of saved models and checkpoints (issue 35, item 5): a damaged or edited file is refused in one line."""

import argparse
import json
import zipfile

import numpy as np
import pytest

import keras

from keras_paperzoo.checksums import ChecksumError, check_keras_file, checksum_path, write_keras_checksum
from keras_paperzoo.cli import main

WEIGHTS = "model.weights.h5"


def _dense_model():
    inputs = keras.Input((3,), name="x")
    return keras.Model(inputs, keras.layers.Dense(2, kernel_initializer="ones")(inputs))


def _member_offset(path, name):
    """Where the stored bytes of a zip member begin in the file."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(name)
    with open(path, "rb") as f:
        f.seek(info.header_offset + 26)
        name_length, extra_length = np.frombuffer(f.read(4), "<u2")
    return info.header_offset + 30 + int(name_length) + int(extra_length), info.compress_size


def _flip_a_weights_byte(path):
    start, size = _member_offset(path, WEIGHTS)
    data = bytearray(path.read_bytes())
    data[start + size - 9] ^= 0xFF
    path.write_bytes(bytes(data))


def _rewrite_weights(path):
    """Change one byte of the weights and rebuild the archive (valid CRCs): only the SHA-256 can tell."""
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    weights = bytearray(members[WEIGHTS])
    weights[-9] ^= 0xFF
    members[WEIGHTS] = bytes(weights)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "model.keras"
    _dense_model().save(path)
    write_keras_checksum(path)
    return path


@pytest.mark.one_leg("jax")
def test_a_saved_model_with_its_checksum_loads(saved):
    assert checksum_path(saved).read_text().split() == [checksum_path(saved).read_text().split()[0], WEIGHTS]
    check_keras_file(saved)  # no error
    checksum_path(saved).unlink()
    check_keras_file(saved)  # a .keras without a checksum (user-made) is accepted


@pytest.mark.one_leg("jax")
@pytest.mark.parametrize("damage, message", [(_flip_a_weights_byte, "Bad CRC-32"),
                                              (_rewrite_weights, "do not match the SHA-256 in model.keras.sha256")])
def test_damaged_weights_are_refused_by_export_and_evaluate(saved, damage, message, capsys, tmp_path):
    damage(saved)
    with pytest.raises(ChecksumError, match=message):
        check_keras_file(saved)
    for argv in (["export", str(saved), "--format", "litert", "--output", str(tmp_path / "m.tflite")],
                 ["evaluate", "few-shot", str(saved), "--task", str(saved), "--shots", "0"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and err.startswith("paperzoo: error: ") and message in err, err
        assert "copy it again or retrain" in err
    assert not (tmp_path / "m.tflite").exists()


@pytest.mark.one_leg("jax")
def test_export_api_refuses_changed_weights(saved):
    from keras_paperzoo.export.exporters import load_model_file

    load_model_file(saved)
    _rewrite_weights(saved)
    with pytest.raises(ChecksumError, match="do not match the SHA-256"):
        load_model_file(saved)


def _run(output_dir, resume=False):
    from keras_paperzoo.recipes import common

    args = argparse.Namespace(recipe="dense", dataset="ones", epochs=2, seed=0, output_dir=str(output_dir),
                              resume=resume, verbose=0)
    return common.start_run(args, "dense")


def _fit(run, epochs):
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches

    model = _dense_model()
    model.compile("sgd", "mse")
    batches = EpochShuffledBatches(np.ones((8, 3), "float32"), np.ones((8, 2), "float32"), batch_size=4, seed=0)
    return run.fit(model, batches, epochs=epochs, verbose=0)


@pytest.mark.one_leg("jax")
def test_an_edited_checkpoint_state_is_refused_on_resume(tmp_path):
    from keras_paperzoo.recipes.common import RecipeError

    _fit(_run(tmp_path), 1)  # "killed" after epoch 1: the checkpoint stays
    path = tmp_path / "checkpoint" / "train" / "state.json"
    state = json.loads(path.read_text())
    assert state["states"][0]["epoch"] == 1 and len(state["sha256"]) == 64 and len(state["states"][0]["sha256"]) == 64
    state["states"][0]["epoch"] = 99
    path.write_text(json.dumps(state))
    with pytest.raises(RecipeError, match="state.json' does not match its SHA-256.*delete .* to start the run again"):
        _fit(_run(tmp_path, resume=True), 2)


@pytest.mark.one_leg("jax")
def test_a_damaged_checkpoint_weights_file_is_refused_on_resume(tmp_path):
    from keras_paperzoo.recipes.common import RecipeError

    _fit(_run(tmp_path), 1)
    weights = tmp_path / "checkpoint" / "train" / "epoch-000001.weights.h5"
    data = bytearray(weights.read_bytes())
    data[-9] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(RecipeError, match="does not match the SHA-256 written with it"):
        _fit(_run(tmp_path, resume=True), 2)
