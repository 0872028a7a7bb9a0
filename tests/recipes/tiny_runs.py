"""Tiny data and fast arguments that run every recipe in seconds, for the registry-driven recipe tests
(test_kill_and_resume.py, tests/export/test_export_recipes.py)."""

import numpy as np
import pytest

EPOCHS_AND_STEPS = ["--epochs", "3", "--steps-per-epoch", "3"]
DEFAULT_ARGUMENTS = ["--dataset", "{images}", *EPOCHS_AND_STEPS, "--batch-size", "8"]
FAST_ARGUMENTS = {
    "gan": [*DEFAULT_ARGUMENTS, "--parzen-samples", "20"],
    # The SSL recipes on their *_tiny presets (two residual blocks): the machinery under test is the recipe's and
    # the run's, not the network's; the default presets' ResNet-20s cost minutes of compilation per run on JAX.
    "moco": [*DEFAULT_ARGUMENTS, "--preset", "moco_tiny", "--probe-epochs", "2"],
    "densecl": [*DEFAULT_ARGUMENTS, "--preset", "densecl_tiny", "--probe-epochs", "2"],
    "simclr": [*DEFAULT_ARGUMENTS, "--preset", "simclr_tiny", "--probe-epochs", "2"],
    "byol": [*DEFAULT_ARGUMENTS, "--preset", "byol_tiny", "--probe-epochs", "2"],
    # swav_tiny's 8 prototypes: a batch of 8 spreads them (2 x 16 + 2 x 7 crops).
    "swav": [*DEFAULT_ARGUMENTS, "--preset", "swav_tiny", "--probe-epochs", "2"],
    "cpc": [*DEFAULT_ARGUMENTS, "--preset", "cpc_tiny", "--probe-epochs", "2"],
    # cmc_tiny's 32 negatives: half the 64 images, the most the recipe allows
    "cmc": [*DEFAULT_ARGUMENTS, "--preset", "cmc_tiny", "--probe-epochs", "2"],
    "invaspread": [*DEFAULT_ARGUMENTS, "--preset", "invaspread_tiny", "--probe-epochs", "2"],
    # NCE (instdisc_tiny), whose Z must resume too; the recipe cuts the noise samples to 32 of the 64 images.
    "instdisc": [*DEFAULT_ARGUMENTS, "--preset", "instdisc_tiny", "--probe-epochs", "2"],
    # k-means pseudo-labels re-clustered every epoch: deepcluster_tiny's k = 10 of the 64 images.
    "deepcluster": [*DEFAULT_ARGUMENTS, "--preset", "deepcluster_tiny", "--probe-epochs", "2"],
    # A 600-character text: windows (and samples) of 59 characters, not the built-in text's 128 (PyTorch's
    # cached decoding took 1 s of CPU per character under load).
    "gpt": ["--dataset", "{text}", *EPOCHS_AND_STEPS, "--batch-size", "4"],
    "bert": ["--dataset", "{documents}", *EPOCHS_AND_STEPS, "--batch-size", "4"],
    # The smallest images their networks take (conv1 11 x 11 / 4 and three poolings; VGG's five poolings).
    "alexnet": [*DEFAULT_ARGUMENTS, "--image-size", "67"],
    # 8 x 8 pixels: sequences of 64 palette ids, not 256 (the next-pixel loop is the same at any length).
    "igpt": [*DEFAULT_ARGUMENTS, "--image-size", "8"],
    "vgg": [*DEFAULT_ARGUMENTS, "--image-size", "32"],
    "transformer": ["--dataset", "{multi30k}", "--preset", "transformer_tiny", *EPOCHS_AND_STEPS, "--batch-size", "4"],
}
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
