"""Issue 33, item 1: after `import keras, keras_paperzoo` (and nothing else), `keras.saving.load_model`
finds every class the package registers: a fresh process loads one `.keras` file of every trainer
family (tests/trainer_zoo.py) and of the backbones and heads the trainers do not hold, with the
weights they were saved with; the table of registered names read from the sources is exactly what
the modules register.
"""

import importlib
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest

from keras_paperzoo import _registration
from tests.trainer_zoo import TRAINERS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _heads():
    """The backbones and task heads that no trainer of the zoo holds, tiny."""
    from keras_paperzoo import models

    bert = models.BertBackbone.from_preset("bert_tiny", num_layers=1, vocabulary_size=50, max_sequence_length=8)
    gpt = models.GPTBackbone.from_preset("gpt_char_tiny", num_layers=1)
    beit = models.BEiTBackbone(image_shape=(16, 16, 1), patch_size=8, num_layers=1, hidden_dim=8, num_heads=2,
                               mlp_dim=16)
    return {
        "alexnet": models.AlexNetBackbone(image_shape=(67, 67, 3), filters=(8, 8, 8, 8, 8), fc_units=(8, 8)),
        "vgg": models.VGGBackbone("A", image_shape=(32, 32, 3), filters=(4, 4, 4, 4, 4), fc_units=(8, 8)),
        "bert_classifier": models.BertClassifier(bert, 2),
        "bert_multiple_choice": models.BertMultipleChoice(bert),
        "bert_span_extractor": models.BertSpanExtractor(bert),
        "bert_token_tagger": models.BertTokenTagger(bert, 3),
        "gpt_classifier": models.GPTClassifier(gpt, 2),
        "beit_classifier": models.BEiTClassifier(beit, 2),
    }


LOAD = textwrap.dedent("""
    import sys
    import numpy as np
    {imports}
    assert "keras_paperzoo.models" not in sys.modules
    for path in sys.argv[1:]:
        model = keras.saving.load_model(path)
        np.savez(path + ".npz", *[np.asarray(w) for w in model.get_weights()])
        print(path, type(model).__name__)
""")


def _load_in_fresh_process(paths, imports):
    done = subprocess.run([sys.executable, "-c", LOAD.format(imports=imports), *paths], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(line.rsplit(" ", 1) for line in done.stdout.splitlines())


@pytest.mark.slow(reason="28 tiny models saved here and loaded in a fresh process: 30-60 s of CPU")
@pytest.mark.one_leg("torch")
def test_a_fresh_process_loads_every_trainer_and_backbone_after_importing_the_package(tmp_path):
    models = {name: build()[0] for name, build in TRAINERS.items()}
    models.update(_heads())
    saved = {}
    for name, model in models.items():
        path = str(tmp_path / f"{name}.keras")
        model.save(path)
        saved[path] = model
    loaded = _load_in_fresh_process(list(saved), "import keras, keras_paperzoo")
    assert loaded == {path: type(model).__name__ for path, model in saved.items()}
    for path, model in saved.items():
        with np.load(path + ".npz") as weights:
            assert len(weights.files) == len(model.weights), path
            for i, weight in enumerate(model.get_weights()):
                np.testing.assert_array_equal(weights[f"arr_{i}"], weight, err_msg=path)

    # Keras imported after the package: its registry becomes lazy when it loads.
    gan = str(tmp_path / "gan.keras")
    assert _load_in_fresh_process([gan], "import keras_paperzoo\nimport keras") == {gan: "GAN"}


@pytest.mark.backend_free("torch")
def test_the_table_of_registered_names_is_what_the_modules_register():
    table = _registration.registered_modules()
    for module in sorted(set(table.values())):
        importlib.import_module(module)
    registered = {name: obj for name, obj in keras.saving.get_custom_objects().items()
                  if name.startswith("keras_paperzoo>")}
    assert set(table) == set(registered)
    assert {name: obj.__module__ for name, obj in registered.items()} == table
    assert len(table) >= 100
    assert keras.saving.get_registered_object("keras_paperzoo>NotAClass") is None
