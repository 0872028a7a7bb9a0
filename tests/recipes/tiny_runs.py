"""Tiny data and fast arguments that run every recipe in seconds, for the registry-driven recipe tests
(test_kill_and_resume.py, tests/export/test_export_recipes.py)."""

import numpy as np
import pytest

from keras_paperzoo.recipes import RECIPES

EPOCHS_AND_STEPS = ["--epochs", "3", "--steps-per-epoch", "3"]
DEFAULT_ARGUMENTS = ["--dataset", "{images}", *EPOCHS_AND_STEPS, "--batch-size", "8"]
# Each recipe's own tiny run (`Recipe.tiny_run` in its paper's record, keras_paperzoo/papers.py), else DEFAULT_ARGUMENTS.
FAST_ARGUMENTS = {name: list(recipe.tiny_run) for name, recipe in RECIPES.items() if recipe.tiny_run}
# Skipped unless $PAPERZOO_TEST_ALL_RECIPES=1 (run with it when a recipe is added or changed).
_CLASSIFIER = "the recipe module (classifier.py) and trainer (ImageClassifier) of resnet-cifar, which is tested"
TOO_SLOW_TO_RESUME = {  # each passes with $PAPERZOO_TEST_ALL_RECIPES=1 on every backend (2026-11-26)
    "vit": f"{_CLASSIFIER}; ViT-Ti's 12 layers: 41 / 101 / 234 s per test on torch / JAX / TensorFlow",
    "alexnet": f"{_CLASSIFIER}; 42 / 58 / 64 s per test on torch / JAX / TensorFlow at 67 px",
    "vgg": f"{_CLASSIFIER}; 52 / 80 / 93 s per test on torch / JAX / TensorFlow at 32 px",
}
TOO_SLOW_TO_EXPORT = {
    "alexnet": f"{_CLASSIFIER}, whose export is the same ImageClassifier's (25 s on TensorFlow at 67 px with "
               "$PAPERZOO_TEST_ALL_RECIPES=1, 2026-11-26)",
    "vgg": f"{_CLASSIFIER}, whose export is the same ImageClassifier's (23 s on TensorFlow at 32 px with "
           "$PAPERZOO_TEST_ALL_RECIPES=1, 2026-11-26)",
}


def skip_if_too_slow(name, table):
    import os

    if name in table and not os.environ.get("PAPERZOO_TEST_ALL_RECIPES"):
        pytest.skip(table[name])


def make_tiny_data(folder):
    """A 64-image .npz (16 x 16 RGB, 10 classes), a small text corpus, a 600-character text and a Multi30k-shaped folder."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(80, 16, 16, 3), dtype=np.uint8)
    y = np.arange(80) % 10
    np.savez(folder / "images.npz", x_train=x[:64], y_train=y[:64], x_test=x[64:], y_test=y[64:])
    words = "the a cat dog sat ran on under mat house red blue small big quickly slowly".split()
    documents = []
    for d in range(12):
        documents.append("\n".join(" ".join(rng.choice(words, size=rng.integers(4, 9))) + " ." for _ in range(6)))
    (folder / "documents.txt").write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    (folder / "text.txt").write_text(("\n".join(documents))[:600], encoding="utf-8")
    multi30k = folder / "multi30k"
    multi30k.mkdir()
    de = "der die das hund katze sitzt läuft auf unter matte haus rot blau klein groß".split()
    for split, n in (("train", 48), ("val", 8), ("test_2016_flickr", 8)):
        pairs = [(rng.choice(de, size=rng.integers(3, 7)), rng.choice(words, size=rng.integers(3, 7))) for _ in range(n)]
        (multi30k / f"{split}.de").write_text("\n".join(" ".join(p[0]) for p in pairs) + "\n", encoding="utf-8")
        (multi30k / f"{split}.en").write_text("\n".join(" ".join(p[1]) for p in pairs) + "\n", encoding="utf-8")
    return {"images": str(folder / "images.npz"), "documents": str(folder / "documents.txt"),
            "text": str(folder / "text.txt"), "multi30k": str(multi30k)}


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory):
    """`make_tiny_data` in a temporary folder."""
    return make_tiny_data(tmp_path_factory.mktemp("tiny_data"))


def recipe_arguments(name, tiny_data, epochs_and_steps=None):
    """The fast `paperzoo train NAME` arguments, optionally with other --epochs/--steps-per-epoch."""
    arguments = [a.format(**tiny_data) for a in FAST_ARGUMENTS.get(name, DEFAULT_ARGUMENTS)]
    if epochs_and_steps is not None:
        for flag, value in zip(("--epochs", "--steps-per-epoch"), epochs_and_steps):
            arguments[arguments.index(flag) + 1] = str(value)
    return arguments
