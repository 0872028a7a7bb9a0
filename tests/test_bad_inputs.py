"""Bad input, one table: each case must stop with the exception (API) or one line and exit 2 (CLI) naming the value.

Issue 20, section 2. A row is (id, what to run, expected exception type or exit
status, a fragment of the message that names the offending value). The API rows call
the package; the CLI rows run `paperzoo` in-process. Everything fails before any
training, so the whole table takes seconds; it runs on every backend's leg.
"""

import dataclasses
import json

import numpy as np
import pytest

import keras

from keras_paperzoo.cli import main


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    run: object  # callable(files) raising, or a list of CLI arguments (with {placeholders} from `files`)
    error: object  # exception type (API) or exit status (CLI)
    names: str  # fragment of the message that names the value


def _digits(**kw):
    from keras_paperzoo.data import load_dataset

    return lambda f: load_dataset(**{"name_or_path": "digits", **kw})


def _load(key, **kw):
    from keras_paperzoo.data import load_dataset

    return lambda f: load_dataset(f[key], **kw)


def _batches(x=None, **kw):
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches

    def run(f):
        data = np.zeros((10, 4), "float32") if x is None else x
        return EpochShuffledBatches(data, **kw)

    return run


def _nan_images():
    x = np.zeros((10, 4, 4, 1), "float32")
    x[3, 1, 2, 0] = np.nan
    return x


def _imported(module, name):
    import importlib

    return getattr(importlib.import_module(module), name)


def _call(module, name, *args, **kwargs):
    return lambda f: _imported(module, name)(*args, **kwargs)


def _preset(module, cls, *args, **kwargs):
    return lambda f: _imported(module, cls).from_preset(*args, **kwargs)


def _start_run(**overrides):
    import argparse

    from keras_paperzoo.recipes import common

    def run(f):
        values = dict(recipe="gan", dataset="digits", epochs=3, steps_per_epoch=2, batch_size=50, image_size=None,
                      preset=None, output_dir=f["run_dir"], backend=None, seed=0, resume=True, verbose=0)
        values.update({k: v.format(**f) if isinstance(v, str) else v for k, v in overrides.items()})
        return common.start_run(argparse.Namespace(**values), "gan")

    return run


def _export(fmt="saved_model", **kwargs):
    def run(f):
        from keras_paperzoo.export import export_model

        inputs = keras.Input((3,), name="x")
        model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
        return export_model(model, kwargs.pop("path", f["tmp"] + "/out.tflite"), format=fmt, **kwargs)

    return run


def _tiny_gpt():
    from keras_paperzoo.models import GPTBackbone, GPTCausalLM

    backbone = GPTBackbone(vocabulary_size=11, num_layers=1, hidden_dim=8, num_heads=2, intermediate_dim=16,
                           max_sequence_length=6)
    lm = GPTCausalLM(backbone)
    lm.compile(optimizer="adam")
    return lm


def _tiny_classifier():
    from keras_paperzoo.models import ImageClassifier

    inputs = keras.Input((4, 4, 1))
    backbone = keras.Model(inputs, keras.layers.Flatten()(inputs))
    model = ImageClassifier(backbone, num_classes=10)
    model.compile(optimizer="sgd")
    return model


def _fit(build, x, y=None, **kw):
    """fit(x, y) on the model `build()` returns: each row must be refused before any training."""
    def run(f):
        return build().fit(x, y, epochs=1, verbose=0, **kw)

    return run


def _ssl(name, **kw):
    def build():
        model = _imported("keras_paperzoo.models", name).from_preset(f"{name.lower()}_tiny", **kw)
        model.compile(batch_size=2)
        return model

    return build


class _OneImageBatches(keras.utils.PyDataset):
    """Batches of one image that `fit` cannot read up front: the step itself must refuse them."""

    def __len__(self):
        return 2

    def __getitem__(self, index):
        return (np.zeros((1, 16, 16, 3), "float32"),)


def _poisoned_dense():
    inputs = keras.Input((3,), name="x")
    model = keras.Model(inputs, keras.layers.Dense(2, name="dense")(inputs))
    model.layers[-1].kernel.assign(np.full((3, 2), np.inf, "float32"))
    return model


def _save_non_finite(f):
    import argparse

    from keras_paperzoo.recipes import common

    values = dict(dataset="digits", epochs=1, steps_per_epoch=1, batch_size=2, seed=0, resume=False, verbose=0,
                  output_dir=f["tmp"] + "/non_finite_run")
    run = common.start_run(argparse.Namespace(**values), "toy")
    try:
        return run.save_model(_poisoned_dense(), "model.keras")
    finally:
        assert not (run.output_dir / "model.keras").exists()


def _text_ids(vocabulary, rows=4, length=5, at=None, value=None):
    """(rows, length) token ids in [0, vocabulary), with `value` (default: the vocabulary size) at `at`."""
    ids = np.random.default_rng(0).integers(0, vocabulary, (rows, length)).astype("int32")
    if at is not None:
        ids[at] = vocabulary if value is None else value
    return ids


def _translator_litert(f):
    from keras_paperzoo.export.translator import export_translator
    from keras_paperzoo.models.transformer.transformer_translator import TransformerTranslator

    translator = TransformerTranslator.from_preset("transformer_tiny", vocabulary_size=20)
    return export_translator(translator, f["tmp"] + "/t.tflite", format="litert")


API = [
    Case("unknown dataset name", _digits(name_or_path="no_such_dataset_xyz"), ValueError, "no_such_dataset_xyz"),
    Case("split", _load("npz", split="bogus"), ValueError, "'bogus'"),
    Case("image size 0", _digits(image_size=0), ValueError, "image_size=0"),
    Case("image size one number in a tuple", _digits(image_size=(28,)), ValueError, "image_size=(28,)"),
    Case("image size of 54 TiB", _digits(image_size=100000), ValueError, "100000 x 100000"),
    Case("colour mode", _digits(color_mode="cmyk"), ValueError, "'cmyk'"),
    Case("empty .npz", _load("empty_npz"), ValueError, "has no images (shape (0, 4, 4, 1))"),
    Case("negative label in .npz", _load("negative_npz"), ValueError, "label -1"),
    Case("pixels above 255", _load("bright_npz"), ValueError, "[300, 300]"),
    Case("NaN pixels in .npz", _load("nan_npz"), ValueError, "[nan, nan]"),
    Case(".npz without x_test", _load("partial_npz"), ValueError, "missing x_test"),
    Case("not an .npz", _load("not_npz"), ValueError, "not a readable .npz"),
    Case("float labels in .npz", _load("float_labels_npz"), ValueError, "dtype float"),
    Case("stray label 5000", _call("keras_paperzoo.data.checks", "check_class_ids", np.array([0, 1, 2, 5000])),
         ValueError, "Label 5000"),
    Case("negative class id", _call("keras_paperzoo.data.checks", "check_class_ids", np.array([0, -3])),
         ValueError, "Label -3"),
    Case("float class ids", _call("keras_paperzoo.data.checks", "check_class_ids", np.array([0.0, 1.0])),
         ValueError, "dtype float64"),
    Case("token id equal to the vocabulary size", _call("keras_paperzoo.data.checks", "check_token_ids",
                                                         [[1, 2, 3], [4, 9, 0]], 9), ValueError, "id 9 at (1, 1)"),
    Case("negative token id", _call("keras_paperzoo.data.checks", "check_token_ids", [[1, -2]], 9), ValueError,
         "id -2 at (0, 1)"),
    Case("NaN in the batches", _batches(_nan_images(), batch_size=2), ValueError, "nan at index (3, 1, 2, 0)"),
    Case("batch size 0", _batches(batch_size=0), ValueError, "got 0"),
    Case("batch larger than the data", _batches(batch_size=100), ValueError, "batch_size 100"),
    Case("steps per epoch 0", _batches(batch_size=2, steps_per_epoch=0), ValueError, "got 0"),
    Case("stream steps 0", _call("keras_paperzoo.data.epoch_batches", "StreamBatches", iter, 0), ValueError, "got 0"),
    Case("stream not callable", _call("keras_paperzoo.data.epoch_batches", "StreamBatches", [1], 3), ValueError,
         "got [1]"),
    Case("checkpoint keep 0", _call("keras_paperzoo.callbacks", "RunCheckpoint", "x", keep=0), ValueError, "got 0"),
    Case("monitor a string", _call("keras_paperzoo.callbacks", "StopOnNonFinite", "loss"), ValueError, "'loss'"),
    Case("epoch seed -1", _call("keras_paperzoo.callbacks", "EpochSeeds", -1), ValueError, "got -1"),
    Case("grid gap -1", _call("keras_paperzoo.callbacks", "image_grid", np.zeros((2, 2, 2, 1)), gap=-1), ValueError,
         "got -1"),
    Case("sample grid every 0", _call("keras_paperzoo.callbacks", "SampleGrid", "x", every=0), ValueError, "got 0"),
    Case("misspelt preset override", _preset("keras_paperzoo.models", "ResNetBackbone", "resnet20_cifar",
                                             stage_blocs=(1, 1, 1)), ValueError, "stage_blocs"),
    Case("unknown backbone preset", _preset("keras_paperzoo.models", "ResNetBackbone", "resnet21"), ValueError,
         "'resnet21'"),
    Case("unknown GAN preset", _preset("keras_paperzoo.models", "GAN", "gan_cifar_huge"), ValueError,
         "'gan_cifar_huge'"),
    Case("classifier with one class", lambda f: _imported("keras_paperzoo.models", "ImageClassifier")(
        _imported("keras_paperzoo.models", "ResNetBackbone").from_preset("resnet20_cifar"), num_classes=1),
         ValueError, "got 1"),
    Case("memory bank smaller than its negatives", lambda f: _imported("keras_paperzoo.layers", "MemoryBank")(
        16, 4).sample(2, 4096), ValueError, "16 rows cannot give 4096 negatives"),
    Case("CMC on grey images", lambda f: _imported("keras_paperzoo.models", "CMC").from_preset("cmc_tiny", num_data=32)(
        np.zeros((4, 32, 32, 1), "float32")), ValueError, "got shape (4, 32, 32, 1)"),
    Case("tokenizer repeats a character", _call("keras_paperzoo.data.char_text", "CharTokenizer", "abca"), ValueError,
         "distinct"),
    Case("character outside the vocabulary", lambda f: _imported("keras_paperzoo.data.char_text", "CharTokenizer")(
        "ab").encode("abz"), ValueError, "'z'"),
    Case("train fraction 1.5", _call("keras_paperzoo.data.char_text", "split_ids", np.arange(10), 1.5), ValueError,
         "1.5"),
    Case("text shorter than a window", _call("keras_paperzoo.data.char_text", "RandomWindows", np.arange(5), 8),
         ValueError, "has 5 tokens"),
    Case("export format", _export("onnx"), ValueError, "'onnx'"),
    Case("export tolerance", _export("litert", tolerance=-1), ValueError, "-1"),
    Case("LiteRT path without .tflite", _export("litert", path="/tmp/model.bin"), ValueError, "/tmp/model.bin"),
    Case("translator to LiteRT", _translator_litert, ValueError, "format='litert'"),
    Case("output folder is a file", _start_run(output_dir="{afile}", resume=False), ValueError, "is a file"),
    Case("resume with another batch size", _start_run(batch_size=20), ValueError, "--batch-size 20"),
    Case("resume with another seed", _start_run(seed=9), ValueError, "--seed 9"),
    # Issue 35: weights checked before saving; the smallest batch of each SSL trainer; fit's input checks.
    Case("non-finite weights saved as final", _save_non_finite, ValueError,
         "1 of 2 weight arrays are NaN or infinite (the first: dense/kernel)"),
    Case("SimCLR batch of 1", _fit(_ssl("SimCLR", image_shape=(16, 16, 3)), np.zeros((4, 16, 16, 3), "float32"),
                                   batch_size=1), ValueError, "SimCLR: batch size 1 is too small"),
    Case("SimCLR last batch of 1", _fit(_ssl("SimCLR", image_shape=(16, 16, 3)), np.zeros((5, 16, 16, 3), "float32"),
                                        batch_size=4), ValueError, "leave a last batch of 1"),
    Case("BYOL batch of 1", _fit(_ssl("BYOL", image_shape=(16, 16, 3)), np.zeros((4, 16, 16, 3), "float32"),
                                 batch_size=1), ValueError, "BYOL: batch size 1 is too small"),
    Case("SwAV batch of 1", _fit(_ssl("SwAV", image_shape=(16, 16, 3)), np.zeros((4, 16, 16, 3), "float32"),
                                 batch_size=1), ValueError, "SwAV: batch size 1 is too small"),
    Case("InvaSpread batch of 1", _fit(_ssl("InvaSpread", image_shape=(16, 16, 3)),
                                       np.zeros((4, 16, 16, 3), "float32"), batch_size=1), ValueError,
         "InvaSpread: batch size 1 is too small"),
    Case("MoCo batch of 1", lambda f: _imported("keras_paperzoo.models", "MoCo").check_batch_size(1), ValueError,
         "MoCo: batch size 1 is too small"),
    Case("a batch of 1 that fit cannot read up front", _fit(_ssl("SimCLR", image_shape=(16, 16, 3)),
                                                            _OneImageBatches()), ValueError,
         "SimCLR got a batch of 1; its batches need at least 2 (NT-Xent's negatives"),
    Case("class id equal to num_classes", _fit(_tiny_classifier, np.zeros((4, 4, 4, 1), "float32"),
                                               np.array([0, 1, 10, 2]), batch_size=2), ValueError,
         "y has label 10 at (2,); class ids must be integers in [0, 10)"),
    Case("class id -1", _fit(_tiny_classifier, np.zeros((4, 4, 4, 1), "float32"), np.array([0, -1, 3, 2])),
         ValueError, "y has label -1 at (1,)"),
    Case("NaN image given to fit", _fit(_tiny_classifier, _nan_images()[:4], np.array([0, 1, 2, 3])), ValueError,
         "x has 1 non-finite value (nan at (3, 1, 2, 0))"),
    Case("infinite image given to fit", _fit(_tiny_classifier, np.full((4, 4, 4, 1), np.inf, "float32"),
                                             np.array([0, 1, 2, 3])), ValueError, "(inf at (0, 0, 0, 0))"),
    Case("NaN in validation_data", _fit(_tiny_classifier, np.zeros((4, 4, 4, 1), "float32"), np.array([0, 1, 2, 3]),
                                        validation_data=(_nan_images()[:4], np.array([0, 1, 2, 3]))),
         ValueError, "validation_data[0] has 1 non-finite value (nan at (3, 1, 2, 0))"),
    Case("class id 10 given to evaluate", lambda f: _tiny_classifier().evaluate(
        np.zeros((4, 4, 4, 1), "float32"), np.array([0, 1, 10, 2]), verbose=0),
         ValueError, "y has label 10 at (2,); class ids must be integers in [0, 10)"),
    Case("NaN image given to a self-supervised fit", _fit(_ssl("SimCLR", image_shape=(4, 4, 1)), _nan_images()),
         ValueError, "x has 1 non-finite value (nan at (3, 1, 2, 0))"),
    Case("GPT target id equal to the vocabulary size", _fit(_tiny_gpt, _text_ids(11), _text_ids(11, at=(2, 3))),
         ValueError, "y has id 11 at (2, 3); ids must be in [0, 11)"),
    Case("GPT token id -1", _fit(_tiny_gpt, _text_ids(11, at=(1, 2), value=-1), _text_ids(11)), ValueError,
         "x has id -1 at (1, 2)"),
    Case("GPT sequence longer than its context", _fit(_tiny_gpt, _text_ids(11, length=7), _text_ids(11, length=7)),
         ValueError, "x has sequences of 7 tokens; at most 6"),
    Case("GPT prompt id -1", lambda f: _tiny_gpt().generate([[1, -1]], max_length=4), ValueError,
         "prompt 0 has id -1 at (1,)"),
    Case("GPT prompt id equal to the vocabulary size", lambda f: _tiny_gpt().generate([[1, 2], [11]], max_length=4),
         ValueError, "prompt 1 has id 11 at (0,)"),
    # Issue 35 items 4 and 6: every model's image_shape checked (Trainer.from_preset); the task readers name the file.
    Case("GAN image shape 28.5", _preset("keras_paperzoo.models", "GAN", "gan_mnist", image_shape=(28.5, 28, 1)),
         ValueError, "got (28.5, 28, 1)"),
    Case("SwAV image shape 0", _preset("keras_paperzoo.models", "SwAV", "swav_tiny", image_shape=(0, 32, 3)),
         ValueError, "got (0, 32, 3)"),
    Case("empty SQuAD file", _call("keras_paperzoo.data.squad", "read_squad", "/dev/null"), ValueError,
         "/dev/null is empty; a SQuAD v1.1 / v2.0 .json file"),
    Case("malformed SQuAD file", lambda f: _imported("keras_paperzoo.data.squad", "read_squad")(f["bad_squad"]),
         ValueError, "bad_squad.json is not JSON (Expecting value at line 1, column 11)"),
    Case("SQuAD question without an id", lambda f: _imported("keras_paperzoo.data.squad", "read_squad")(
        f["idless_squad"]), ValueError, "idless_squad.json (question 1): no 'id' field"),
    Case("JSON lines read as CoNLL", lambda f: _imported("keras_paperzoo.data.conll", "read_conll")(f["jsonl"]),
         ValueError, "tasks.jsonl line 1 is JSON, not CoNLL"),
]

CLI = [
    Case("unknown recipe", ["train", "vae"], 2, "unknown recipe 'vae'"),
    Case("negative epochs", ["train", "gan", "--epochs", "-3"], 2, "-3 must be at least 1"),
    Case("epochs not a number", ["train", "gan", "--epochs", "many"], 2, "'many'"),
    Case("batch size 0", ["train", "gan", "--batch-size", "0"], 2, "0 must be at least 1"),
    Case("steps per epoch 0", ["train", "gan", "--steps-per-epoch", "0"], 2, "0 must be at least 1"),
    Case("image size of 54 TiB", ["train", "gan", "--image-size", "100000"], 2, "100000 is larger than 4096"),
    Case("image size not a number", ["train", "gan", "--image-size", "big"], 2, "'big'"),
    Case("seed not a number", ["train", "gan", "--seed", "x1"], 2, "'x1'"),
    Case("parzen samples 0", ["train", "gan", "--parzen-samples", "0"], 2, "0 must be at least 1"),
    Case("verbose 5", ["train", "gan", "--verbose", "5"], 2, "invalid choice: 5"),
    Case("backend", ["train", "gan", "--backend", "mxnet"], 2, "'mxnet'"),
    Case("missing dataset file", ["train", "gan", "--dataset", "/no/such/file.npz"], 2, "/no/such/file.npz"),
    Case("output folder is a file", ["train", "gan", "--output-dir", "{afile}"], 2, "is a file"),
    Case("output folder under a file", ["train", "gan", "--output-dir", "{afile}/run"], 2, "cannot be created"),
    Case("GAN preset", ["train", "gan", "--preset", "nonsense"], 2, "'nonsense'"),
    Case("classifier preset", ["train", "resnet-cifar", "--preset", "resnet20"], 2, "'resnet20'"),
    Case("MAE preset", ["train", "mae", "--preset", "mae_huge_xyz"], 2, "'mae_huge_xyz'"),
    Case("MoCo preset", ["train", "moco", "--preset", "moco_v9"], 2, "'moco_v9'"),
    Case("GPT preset", ["train", "gpt", "--preset", "gpt5"], 2, "'gpt5'"),
    Case("BERT preset", ["train", "bert", "--preset", "bert_giant"], 2, "'bert_giant'"),
    Case("Transformer preset", ["train", "transformer", "--preset", "transformer_xl"], 2, "'transformer_xl'"),
    Case("SimCLR preset", ["train", "simclr", "--preset", "simclr_xyz"], 2, "'simclr_xyz'"),
    Case("BYOL preset", ["train", "byol", "--preset", "byol_v3"], 2, "'byol_v3'"),
    Case("InstDisc preset", ["train", "instdisc", "--preset", "instdisc_huge"], 2, "'instdisc_huge'"),
    Case("InvaSpread preset", ["train", "invaspread", "--preset", "invaspread_v2"], 2, "'invaspread_v2'"),
    Case("CMC preset", ["train", "cmc", "--preset", "cmc_huge"], 2, "'cmc_huge'"),
    Case("CPC sequence preset for the image recipe", ["train", "cpc", "--preset", "cpc_audio"], 2, "'cpc_audio'"),
    Case("CPC grid that does not fit the image", ["train", "cpc", "--image-size", "17"], 2,
         "image height 17 does not fit 4-pixel patches at stride 2"),
    Case("InstDisc batch larger than the bank", ["train", "instdisc", "--batch-size", "4000"], 2, "--batch-size 4000"),
    Case("SimCLR batch of 1", ["train", "simclr", "--batch-size", "1"], 2,
         "--batch-size 1: SimCLR: batch size 1 is too small; its batches need at least 2 (NT-Xent's negatives"),
    Case("BYOL batch of 1", ["train", "byol", "--batch-size", "1"], 2, "BYOL: batch size 1 is too small"),
    Case("stray label 5000 in .npz", ["train", "resnet-cifar", "--dataset", "{stray_npz}"], 2, "Label 5000"),
    Case("negative label in .npz", ["train", "resnet-cifar", "--dataset", "{negative_npz}"], 2, "label -1"),
    Case("empty .npz", ["train", "gan", "--dataset", "{empty_npz}"], 2, "has no images"),
    Case("NaN pixels", ["train", "gan", "--dataset", "{nan_npz}"], 2, "[nan, nan]"),
    Case("images for a text recipe", ["train", "gpt", "--dataset", "/no/such/text.txt"], 2, "/no/such/text.txt"),
    Case("resume without a run", ["train", "gan", "--resume", "--output-dir", "{tmp}/nothing"], 2,
         "no interrupted run to resume"),
    Case("resume with another batch size", ["train", "gan", "--resume", "--batch-size", "20", "--output-dir",
                                            "{run_dir}"], 2, "--batch-size 20"),
    Case("resume of another recipe", ["train", "mae", "--resume", "--output-dir", "{run_dir}"], 2,
         "holds a 'gan' run, not 'mae'"),
    Case("a new run over an interrupted one", ["train", "gan", "--output-dir", "{run_dir}"], 2,
         "holds an interrupted run"),
    Case("unreadable run record", ["train", "gan", "--resume", "--output-dir", "{broken_run_dir}"], 2,
         "run.json' is unreadable"),
    Case("missing model", ["export", "/no/model.keras", "--format", "litert"], 2, "'/no/model.keras'"),
    Case("export format", ["export", "x.keras", "--format", "onnx"], 2, "'onnx'"),
    Case("model not .keras", ["export", "{afile}", "--format", "litert"], 2, "is not a .keras file"),
    Case("corrupted .keras", ["export", "{bad_keras}", "--format", "litert"], 2, "is not a valid .keras file"),
    Case("export output under a file", ["export", "{dense_keras}", "--format", "litert", "--output",
                                        "{afile}/m.tflite"], 2, "which is a file"),
    Case("vocabulary for a non-BERT model", ["export", "{dense_keras}", "--format", "saved_model", "--vocabulary",
                                             "{afile}"], 2, "--vocabulary is for a BertClassifier"),
    # Issue 35 items 4 and 6: flags of another recipe; clearer messages; refused before Keras is imported.
    Case("GPT's flag for BERT", ["train", "bert", "--bpe-vocabulary-size", "300"], 2,
         "--bpe-vocabulary-size is not a flag of the bert recipe; it is read by gpt."),
    Case("iGPT's flag for the GAN", ["train", "gan", "--objective", "bert"], 2,
         "--objective is not a flag of the gan recipe; it is read by igpt."),
    Case("image size for a text recipe", ["train", "transformer", "--image-size", "32"], 2,
         "--image-size is not a flag of the transformer recipe"),
    Case("JSON lines for bert tagging", ["train", "bert", "--task", "tagging", "--task-data", "{jsonl}"], 2,
         "tasks.jsonl line 1 is JSON, not CoNLL"),
    Case("all-zero images", ["train", "resnet-cifar", "--dataset", "{zeros_npz}"], 2,
         "have a channel of zero variance (std [0.0, 0.0, 0.0]): every pixel is the same"),
    Case("truncated .keras", ["export", "{truncated_keras}", "--format", "litert"], 2,
         "is not a valid .keras file (a truncated or damaged zip archive"),
    Case("truncated .keras to evaluate", ["evaluate", "few-shot", "{truncated_keras}", "--task", "{jsonl}",
                                          "--shots", "0"], 2, "a truncated or damaged zip archive"),
    Case("export output under /proc", ["export", "{dense_keras}", "--format", "litert", "--output", "/proc/x.tflite"],
         2, "--output '/proc/x.tflite' cannot be written"),
    Case("task data missing", ["train", "gpt", "--task", "classification", "--task-data", "/no/task.jsonl"], 2,
         "gpt: --task-data '/no/task.jsonl' does not exist."),
    Case("unknown command", ["frobnicate"], 2, "'frobnicate'"),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    from keras_paperzoo.recipes import common

    tmp = tmp_path_factory.mktemp("bad_inputs")
    z = np.zeros((6, 4, 4), "uint8")
    labels = np.array([0, 1, 0, 1, 0, 1])
    np.savez(tmp / "empty.npz", x_train=z[:0], y_train=labels[:0], x_test=z[:0], y_test=labels[:0])
    np.savez(tmp / "negative.npz", x_train=z, y_train=labels - 1, x_test=z, y_test=labels)
    np.savez(tmp / "stray.npz", x_train=z, y_train=np.array([0, 1, 2, 0, 1, 5000]), x_test=z, y_test=labels)
    np.savez(tmp / "bright.npz", x_train=np.full((6, 4, 4), 300, "int32"), y_train=labels, x_test=z, y_test=labels)
    np.savez(tmp / "nan.npz", x_train=np.full((6, 4, 4), np.nan, "float32"), y_train=labels, x_test=z, y_test=labels)
    np.savez(tmp / "partial.npz", x_train=z, y_train=labels)
    np.savez(tmp / "float_labels.npz", x_train=z, y_train=labels * 1.0, x_test=z, y_test=labels)
    (tmp / "not.npz").write_text("not a zip")
    (tmp / "afile").write_text("a file")
    (tmp / "bad.keras").write_text("not a zip")
    inputs = keras.Input((3,), name="x")
    keras.Model(inputs, keras.layers.Dense(2)(inputs)).save(tmp / "dense.keras")
    import argparse

    arguments = dict(recipe="gan", dataset="digits", epochs=3, steps_per_epoch=2, batch_size=50, image_size=None,
                     preset=None, backend=None, seed=0, resume=False, verbose=0)
    for name in ("run", "broken_run"):
        run = common.start_run(argparse.Namespace(output_dir=str(tmp / name), **arguments), "gan")
        run._record_arguments()  # an interrupted run: its arguments recorded
    (tmp / "broken_run" / "checkpoint" / "run.json").write_text('{"arguments": ')
    # Issue 35 item 6's files.
    np.savez(tmp / "zeros.npz", x_train=np.zeros((40, 8, 8), "uint8"), y_train=np.arange(40) % 2,
             x_test=np.zeros((4, 8, 8), "uint8"), y_test=np.arange(4) % 2)
    (tmp / "bad_squad.json").write_text('{"data": [')
    (tmp / "idless_squad.json").write_text(json.dumps({"data": [{"paragraphs": [{"context": "a b", "qas": [
        {"question": "a?", "answers": [{"text": "a", "answer_start": 0}]}]}]}]}))
    (tmp / "tasks.jsonl").write_text('{"context": "a", "target": "b"}\n')
    (tmp / "truncated.keras").write_bytes((tmp / "dense.keras").read_bytes()[:3000])
    paths = {key: str(tmp / f"{key[:-4]}.npz") for key in
             ("empty_npz", "negative_npz", "stray_npz", "bright_npz", "nan_npz", "partial_npz", "float_labels_npz")}
    paths.update(npz=str(tmp / "stray.npz"), not_npz=str(tmp / "not.npz"), afile=str(tmp / "afile"),
                 bad_keras=str(tmp / "bad.keras"), dense_keras=str(tmp / "dense.keras"), run_dir=str(tmp / "run"),
                 broken_run_dir=str(tmp / "broken_run"), tmp=str(tmp))
    paths.update({name.replace(".", "_"): str(tmp / name) for name in ("zeros.npz", "truncated.keras")},
                 bad_squad=str(tmp / "bad_squad.json"), idless_squad=str(tmp / "idless_squad.json"),
                 jsonl=str(tmp / "tasks.jsonl"))
    return paths


def test_the_table_has_at_least_50_cases():
    assert len(API) + len(CLI) >= 50
    assert len({case.id for case in API}) == len(API) and len({case.id for case in CLI}) == len(CLI)


# Cases that run TensorFlow on any backend (export).
NEEDS_TENSORFLOW = ("translator to LiteRT",)


def _cases(cases):
    return [pytest.param(c, marks=pytest.mark.needs_tensorflow, id=c.id) if c.id in NEEDS_TENSORFLOW
            else pytest.param(c, id=c.id) for c in cases]


def test_the_cases_that_need_tensorflow_exist():
    assert set(NEEDS_TENSORFLOW) <= {case.id for case in API + CLI}


@pytest.mark.parametrize("case", _cases(API))
def test_api_bad_input_raises_naming_the_value(case, files):
    with pytest.raises(case.error) as raised:
        case.run(files)
    assert case.names in str(raised.value), str(raised.value)


@pytest.mark.parametrize("case", _cases(CLI))
def test_cli_bad_input_is_one_line_and_exit_2(case, files, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a default --output-dir (runs/RECIPE) lands here
    argv = [a.format(**files) for a in case.run]
    if argv[0] == "train" and "--output-dir" not in argv:
        argv += ["--output-dir", str(tmp_path / "run")]
    assert main(argv) == case.error
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("paperzoo: error: "), err
    assert case.names in err, err
    if argv[0] == "train" and "--resume" not in argv and "{" not in json.dumps(case.run):
        assert not (tmp_path / "run" / "checkpoint").exists()  # a refused run leaves nothing to --resume
