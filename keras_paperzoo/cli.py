"""The `paperzoo` command: list recipes, train one, export a trained model.

    paperzoo list
    paperzoo reproduce PAPER [--budget smoke|cpu|gpu|paper] [--output-dir DIR] [--backend B] [--seeds N] [MODULE ARGUMENTS]
    paperzoo train gan [--dataset D] [--epochs N] [--steps-per-epoch N] [--batch-size N]
                       [--output-dir DIR] [--backend tensorflow|jax|torch] [--seed S] [--resume]
    paperzoo export MODEL.keras --format saved_model|litert [--output PATH]
                    [--vocabulary FILE] [--sequence-length N] [--pairs] [--no-lowercase]
    paperzoo evaluate few-shot MODEL.keras --task TRAIN.jsonl [--eval-task EVAL.jsonl] --shots K
                    [--choices FIELD] [--seed S] [--limit N] [--tokenizer DIR] [--output FILE.json]

Problems with the request (unknown recipe, bad values, missing files) are reported
as one line on stderr with exit status 2.
"""

import argparse
import os
import pathlib
import sys
import tempfile

from keras_paperzoo.checksums import check_keras_file
from keras_paperzoo.optional import MissingDependency, missing, quiet_tensorflow
from keras_paperzoo.papers import PAPERS, class_name
from keras_paperzoo.recipes import COMMON_FLAGS, RECIPES
from keras_paperzoo.recipes.checks import check_files, check_preset, check_run_folder
from keras_paperzoo.reproductions import BUDGETS, REPRODUCTIONS

BACKENDS = ("tensorflow", "jax", "torch")
# The deployable part of each trainer, for `paperzoo export` (None: the whole model), from the papers' records.
EXPORT_SUBMODELS = {class_name(path): submodel for paper in PAPERS for path, submodel in paper.trainers.items()}


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


MAX_IMAGE_SIZE = 4096


def _image_size(text):
    value = _positive_int(text)
    if value > MAX_IMAGE_SIZE:
        raise argparse.ArgumentTypeError(f"{value} is larger than {MAX_IMAGE_SIZE} pixels a side")
    return value


def _int(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")


def build_parser():
    parser = _Parser(prog="paperzoo", description="Landmark deep-learning papers on Keras 3.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sub.add_parser("list", help="every recipe with its paper")

    train = sub.add_parser("train", help="train a recipe")
    train.add_argument("recipe", help="recipe name (see `paperzoo list`)")
    train.add_argument("--dataset", default=None, help="images: digits (default), a tensorflow-datasets name, a .npz, a folder or a .zip; text recipes: a text file or corpus (see each recipe)")
    train.add_argument("--epochs", type=_positive_int, default=None)
    train.add_argument("--steps-per-epoch", type=_positive_int, default=None)
    train.add_argument("--batch-size", type=_positive_int, default=None)
    train.add_argument("--image-size", type=_image_size, default=None, help="resize images to N x N (at most 4096; "
                       "default: the recipe's for digits, e.g. 32; alexnet 67 and vgg 32 on a CPU, the papers' 227 / 224)")
    train.add_argument("--preset", default=None, help="preset of the recipe's model, e.g. resnet56_cifar, vit_s16, mae_tiny")
    train.add_argument("--output-dir", default=None, help="default: runs/RECIPE")
    train.add_argument("--backend", choices=BACKENDS, default=None, help="Keras backend (default: $KERAS_BACKEND or tensorflow)")
    train.add_argument("--seed", type=_int, default=None, help="default 0")
    train.add_argument("--resume", action="store_true", help="continue the interrupted run in --output-dir exactly "
                       "(with the arguments it was started with; one given again must be the same)")
    train.add_argument("--warmup-steps", type=_int, default=None, help="(resnet-cifar) updates at lr / 10 before "
                       "the paper's 0.1 (default: 400 for resnet110_cifar, He et al. Sec. 4.2; 0 otherwise)")
    train.add_argument("--parzen-samples", type=_positive_int, default=None, help="(gan) generated samples for the Parzen estimate (default 10000)")
    train.add_argument("--gan-update", choices=("alternating", "simultaneous"), default=None, help="(gan) Algorithm 1's "
                       "alternating D-then-G step (default) or the authors' code's simultaneous one")
    train.add_argument("--objective", choices=("autoregressive", "bert"), default=None, help="(igpt) the pre-training "
                       "objective (default autoregressive)")
    train.add_argument("--probe-epochs", type=_positive_int, default=None, help="(self-supervised recipes: moco, simclr, byol, ...) epochs of the linear probe (default 100)")
    train.add_argument("--bpe-vocabulary-size", type=_int, default=None, metavar="N", help="(gpt) learn a byte-level BPE of N tokens from the training text (GPT-2's tokenizer, Sec. 2.2) instead of characters")
    train.add_argument("--task", default=None, help="(bert) the fine-tuning after pre-training: sst2 (default), "
                       "tagging, multiple_choice or squad; (gpt) lm (default: the language model alone) or GPT-1's "
                       "fine-tuning after it: classification, entailment, similarity or multiple_choice")
    train.add_argument("--task-data", default=None, metavar="PATH", help="(bert, gpt) the fine-tuning examples of a "
                       "--task other than the default: bert tagging a CoNLL file or folder, multiple_choice a SWAG .csv "
                       "or a .jsonl, squad a SQuAD .json; gpt a JSON-lines file (see docs/command.md)")
    train.add_argument("--data-parallel", action="store_true", default=None, help="(JAX) split each batch over "
                       "every local device, keras.distribution.DataParallel; --batch-size stays the global batch")
    train.add_argument("--verbose", type=_int, default=None, choices=(0, 1, 2), help="Keras progress output "
                       "(default: 1, progress bars, on a terminal; 2, one line an epoch, when output goes to a file or pipe)")

    papers = "\n".join(f"  {r.name:<12} {r.paper}\n  {'':<12} {r.claim}" for r in REPRODUCTIONS.values())
    reproduce = sub.add_parser(
        "reproduce", help="a paper's claim at a budget, the paper's number beside ours",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,  # the reproduction's own flags pass through whole: its --seed is not --seeds
        description="Run a paper's reproduction (keras_paperzoo/reproductions/) at a budget: it writes its metrics "
        "JSON, pictures and results Markdown, and reproduce_PAPER.md with the paper's numbers beside ours, the "
        "budget and the device. Arguments after the known ones go to the reproduction and override the budget's "
        "(e.g. --dataset, --epochs; see docs/reproductions.md).",
        epilog=f"papers:\n{papers}\n\nbudgets:\n  smoke  seconds, on the embedded digits or built-in text (tested)\n"
        "  cpu    the budget run on a 2-core CPU (the results in applications/results/)\n"
        "  gpu    a schedule for one accelerator\n  paper  the paper's schedule (scaled where its data is not offline)")
    reproduce.add_argument("paper", help="one of: " + ", ".join(REPRODUCTIONS))
    reproduce.add_argument("--budget", choices=BUDGETS, default="cpu", help="default: cpu")
    reproduce.add_argument("--output-dir", default=None, help="default: runs/reproduce/PAPER-BUDGET")
    reproduce.add_argument("--backend", choices=BACKENDS, default=None,
                           help="Keras backend (default: $KERAS_BACKEND, else the reproduction's)")
    reproduce.add_argument("--seeds", type=_positive_int, default=None,
                           help="train N seeds (from --seed, default 0), one process each in OUTPUT_DIR/seed-S, then "
                           "write PAPER_seeds_metrics.json / _results.md: each claim's mean and standard error over "
                           "seeds (keras_paperzoo/reproductions/seeds.py); a seed already done is kept")

    export = sub.add_parser("export", help="export a trained model for TF Serving or LiteRT")
    export.add_argument("model", help="a .keras file written by `paperzoo train`")
    export.add_argument("--format", required=True, choices=("saved_model", "litert"))
    export.add_argument("--output", default=None, help="default: beside the model")
    export.add_argument("--tolerance", type=float, default=1e-4)
    export.add_argument("--vocabulary", default=None, help="(BertClassifier, saved_model) WordPiece vocabulary: the SavedModel takes raw strings; default: vocabulary.txt beside the model if present")
    export.add_argument("--sequence-length", type=_positive_int, default=None, help="(GPTCausalLM) the exported model takes N token ids, 1 to the model's max_sequence_length (default: any length); (with a vocabulary) pack texts to N tokens; default: the backbone's max_sequence_length")
    export.add_argument("--pairs", action="store_true", help="(with a vocabulary) the classifier was fine-tuned on sentence pairs: two string inputs")
    export.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=None, help="(with a vocabulary) lower-case the text; default: inferred from the vocabulary")

    evaluate = sub.add_parser("evaluate", help="evaluate a trained model")
    protocols = evaluate.add_subparsers(dest="protocol", required=True, parser_class=_Parser)
    few_shot = protocols.add_parser(
        "few-shot", help="GPT-3's in-context learning: accuracy with K demonstrations in the prompt",
        description="Accuracy (with its standard error) of a causal language model on a JSON-lines task with K "
        "demonstrations drawn from the task's training file (Brown et al. 2020, Sec. 2; "
        "keras_paperzoo.evaluation.few_shot_evaluate). Each line is an example: a context, a target, and for a "
        "multiple-choice task its choices.")
    few_shot.add_argument("model", help="a .keras causal LM (GPTCausalLM) written by `paperzoo train gpt`")
    few_shot.add_argument("--task", required=True, help="JSON-lines file the demonstrations are drawn from")
    few_shot.add_argument("--eval-task", default=None, help="JSON-lines file of examples to evaluate (default: --task)")
    few_shot.add_argument("--shots", type=_int, required=True, help="K demonstrations per prompt (0: zero-shot)")
    few_shot.add_argument("--context-field", default="context")
    few_shot.add_argument("--target-field", default="target")
    few_shot.add_argument("--choices", default=None, help="the field holding each example's choices "
                          "(multiple choice, scored by log-likelihood); omitted: free-form answers, exact match")
    few_shot.add_argument("--description", default=None, help="a task description put before the demonstrations")
    few_shot.add_argument("--seed", type=_int, default=1234, help="the demonstrations' draw (default 1234)")
    few_shot.add_argument("--limit", type=_positive_int, default=None, help="evaluate the first N examples only")
    few_shot.add_argument("--tokenizer", default=None, help="a folder with vocabulary.json and merges.txt (a "
                          "byte-pair tokenizer); default: the tokenizer saved in the model")
    few_shot.add_argument("--output", default=None, help="write the result and per-example records as JSON here")
    few_shot.add_argument("--backend", choices=BACKENDS, default=None)
    return parser


def _few_shot(args):
    model_path = pathlib.Path(args.model)
    if not model_path.is_file() or model_path.suffix != ".keras":
        raise _UsageError(f"model file {str(model_path)!r} is not an existing .keras file")
    check_keras_file(model_path)  # a complete archive, its weights as saved (NAME.keras.sha256)
    for name in ("task", "eval_task"):
        path = getattr(args, name)
        if path is not None and not pathlib.Path(path).is_file():
            raise _UsageError(f"--{name.replace('_', '-')} file {path!r} does not exist")
    if args.shots < 0:
        raise _UsageError(f"--shots must be >= 0 (K demonstrations); got {args.shots}")
    if args.output:
        _check_writable(args.output)
    if args.backend:
        _select_backend(args.backend)
    import json

    import keras

    from keras_paperzoo import models  # noqa: F401 (registers the package's classes for loading)
    from keras_paperzoo.evaluation import FewShotTask, few_shot_evaluate

    model = keras.saving.load_model(model_path, safe_mode=True)
    if not hasattr(getattr(model, "backbone", None), "max_sequence_length"):
        raise _UsageError(f"{str(model_path)!r} holds a {type(model).__name__}, not a causal language model "
                          "with a backbone of known context (a GPTCausalLM)")
    tokenizer = getattr(model, "tokenizer", None)
    if args.tokenizer:
        import keras_hub

        folder = pathlib.Path(args.tokenizer)
        files = folder / "vocabulary.json", folder / "merges.txt"
        if not all(f.is_file() for f in files):
            raise _UsageError(f"--tokenizer {str(folder)!r} needs vocabulary.json and merges.txt")
        tokenizer = keras_hub.tokenizers.BytePairTokenizer(vocabulary=str(files[0]), merges=str(files[1]))
    if tokenizer is None:
        raise _UsageError(f"{str(model_path)!r} holds no tokenizer; pass --tokenizer DIR (vocabulary.json, merges.txt)")
    task = FewShotTask.from_jsonl(args.task, args.eval_task, context_field=args.context_field,
                                  target_field=args.target_field, choices=args.choices, description=args.description,
                                  name=pathlib.Path(args.task).stem)
    result = few_shot_evaluate(model, tokenizer, task, shots=args.shots, seed=args.seed, limit=args.limit)
    line = f"{task.name}: K={result['shots']}, {result['num_examples']} examples, accuracy {result['accuracy']:.4f} +- {result['accuracy_stderr']:.4f}"
    if "accuracy_per_token" in result:
        line += f" (per-token normalised {result['accuracy_per_token']:.4f} +- {result['accuracy_per_token_stderr']:.4f})"
    print(line)
    if args.output:
        pathlib.Path(args.output).write_text(json.dumps(result, indent=2, default=str))
    return 0


def _list():
    width = max(len(name) for name in RECIPES)
    for recipe in RECIPES.values():
        print(f"{recipe.name:<{width}}  {recipe.paper}: {recipe.description}")
    return 0


def _train(args):
    if args.recipe not in RECIPES:
        raise _UsageError(f"unknown recipe {args.recipe!r}; known: {', '.join(sorted(RECIPES))}")
    _check_recipe_flags(args)
    args.output_dir = args.output_dir or os.path.join("runs", args.recipe)
    # Before Keras (and TensorFlow) is imported, seconds: the files named, the preset and the output folder.
    check_files(args)
    check_preset(args)
    check_run_folder(args.output_dir, args.resume)
    if args.backend:
        _select_backend(args.backend)
    if args.verbose is None:  # progress bars flood a log file: one line an epoch there
        args.verbose = 1 if sys.stdout.isatty() else 2
    metrics = RECIPES[args.recipe].load().run(args)
    print(f"wrote {pathlib.Path(args.output_dir) / 'metrics.json'}: " + ", ".join(
        f"{k}={v:.4g}" for k, v in metrics.items() if isinstance(v, float)
    ))
    return 0


def _check_recipe_flags(args):
    """One line for a flag the recipe does not read (`Recipe.flags`), naming the recipes that do."""
    recipe = RECIPES[args.recipe]
    for name, value in vars(args).items():
        if name in ("command", "recipe") or name in COMMON_FLAGS or name in recipe.flags or value is None:
            continue
        takers = [r.name for r in RECIPES.values() if name in r.flags]
        raise _UsageError(f"--{name.replace('_', '-')} is not a flag of the {recipe.name} recipe; it is read by "
                          f"{', '.join(takers) or 'no recipe'}.")


def _reproduce(args, extra):
    if args.paper not in REPRODUCTIONS:
        raise _UsageError(f"unknown paper {args.paper!r}; known: {', '.join(REPRODUCTIONS)}")
    if args.backend:
        _select_backend(args.backend)
    if args.seeds is not None:
        from keras_paperzoo.reproductions.seeds import run_seeds

        try:
            run_seeds(args.paper, args.budget, args.seeds, extra, output_dir=args.output_dir, backend=args.backend)
        except RuntimeError as error:
            raise _UsageError(str(error))
        return 0
    from keras_paperzoo.reproductions.common import reproduce

    reproduce(args.paper, args.budget, extra, output_dir=args.output_dir, backend=args.backend)
    return 0


def _select_backend(backend):
    current = sys.modules.get("keras")
    if current is not None and current.backend.backend() != backend:
        raise _UsageError(f"--backend {backend}: Keras is already running on {current.backend.backend()}")
    os.environ["KERAS_BACKEND"] = backend


def _export(args):
    model_path = pathlib.Path(args.model)
    if not model_path.is_file():
        raise _UsageError(f"model file {str(model_path)!r} does not exist")
    if model_path.suffix != ".keras":
        raise _UsageError(f"model file {str(model_path)!r} is not a .keras file")
    check_keras_file(model_path)  # a complete archive, its weights as saved (NAME.keras.sha256)
    class_name = _keras_class_name(model_path)
    submodel = EXPORT_SUBMODELS.get(class_name)
    suffix = "_saved_model" if args.format == "saved_model" else ".tflite"
    output = args.output or str(model_path.with_name(model_path.stem + suffix))
    _check_writable(output)
    if class_name == "GPTCausalLM" and args.sequence_length is not None and args.vocabulary is None:
        return _export_causal_lm(args, model_path, output)
    vocabulary = _export_vocabulary(args, model_path, class_name)
    if vocabulary:
        return _export_text(args, model_path, vocabulary, output)
    from keras_paperzoo.export import export_model_file

    result = export_model_file(str(model_path), output, format=args.format, submodel=submodel, tolerance=args.tolerance)
    what = f"{model_path.name}:{submodel}" if submodel else model_path.name
    print(f"exported {what} to {result.path} ({args.format}); largest |exported - keras| = {result.max_abs_diff:.3g}")
    if not result.max_abs_diff <= args.tolerance:
        print(f"paperzoo: error: exported outputs differ from Keras's by {result.max_abs_diff:.3g} > {args.tolerance}", file=sys.stderr)
        return 1
    return 0


def _export_causal_lm(args, model_path, output):
    """A GPTCausalLM for a context of --sequence-length tokens (keras_paperzoo.export.text.export_causal_lm)."""
    from keras_paperzoo.export.text import export_causal_lm_file

    result = export_causal_lm_file(str(model_path), output, args.sequence_length, format=args.format,
                                   tolerance=args.tolerance)
    print(f"exported {model_path.name} (token_ids of length {args.sequence_length}) to {result.path} ({args.format}); "
          f"largest |exported - keras| = {result.max_abs_diff:.3g}")
    if not result.max_abs_diff <= args.tolerance:
        print(f"paperzoo: error: exported outputs differ from Keras's by {result.max_abs_diff:.3g} > {args.tolerance}", file=sys.stderr)
        return 1
    return 0


def _export_vocabulary(args, model_path, class_name):
    """The vocabulary that puts the tokenizer in the graph: --vocabulary, else vocabulary.txt beside a BertClassifier."""
    text_options = args.sequence_length is not None or args.pairs or args.lowercase is not None
    if args.vocabulary is None:
        beside = model_path.with_name("vocabulary.txt")
        if class_name == "BertClassifier" and args.format == "saved_model" and beside.is_file():
            return str(beside)
        if text_options:
            raise _UsageError("--sequence-length, --pairs and --lowercase need a vocabulary (--vocabulary FILE)")
        return None
    if class_name != "BertClassifier" or args.format != "saved_model":
        raise _UsageError(f"--vocabulary is for a BertClassifier exported with --format saved_model; "
                          f"{str(model_path)!r} is a {class_name} and --format is {args.format}")
    if not pathlib.Path(args.vocabulary).is_file():
        raise _UsageError(f"vocabulary file {args.vocabulary!r} does not exist")
    return args.vocabulary


def _export_text(args, model_path, vocabulary, output):
    from keras_paperzoo.export import ExportMismatchError, export_text_classifier_file

    try:
        result = export_text_classifier_file(str(model_path), vocabulary, output, sequence_length=args.sequence_length,
                                             pairs=args.pairs, lowercase=args.lowercase, tolerance=args.tolerance)
    except ExportMismatchError as error:
        print(f"paperzoo: error: {error}", file=sys.stderr)
        return 1
    if result.note:
        print(f"paperzoo: note: {result.note}", file=sys.stderr)
    inputs = " and ".join(f"{name} (string)" for name in result.inputs) if result.raw_strings else "token ids"
    print(f"exported {model_path.name} with {vocabulary} (lowercase={result.lowercase}, sequence_length="
          f"{result.sequence_length}) to {result.path} (saved_model, inputs: {inputs}); "
          f"largest |exported - keras| = {result.max_abs_diff:.3g}")
    return 0


def _check_writable(output):
    """One line, before any export work, for an --output that cannot be written."""
    path = pathlib.Path(output).absolute()
    for parent in (path, *path.parents):
        if parent.exists():
            if parent != path and not parent.is_dir():
                raise _UsageError(f"--output {output!r} lies under {str(parent)!r}, which is a file")
            folder = parent if parent.is_dir() else parent.parent
            try:  # a file made and removed: os.access says yes to root under /proc, /sys, a read-only mount
                tempfile.TemporaryFile(dir=folder).close()
            except OSError as error:
                raise _UsageError(f"--output {output!r} cannot be written (a file cannot be made in "
                                  f"{str(folder)!r}: {error.strerror or error})") from None
            return


def _keras_class_name(path):
    import json
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            return json.loads(archive.read("config.json")).get("class_name")
    except (zipfile.BadZipFile, KeyError, ValueError):
        raise _UsageError(f"{str(path)!r} is not a valid .keras file")


def main(argv=None):
    # TensorFlow's C++ start-up chatter (CUDA probes, oneDNN notes) is not for users.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if (getattr(args, "backend", None) or os.environ.get("KERAS_BACKEND")) in ("jax", "torch"):
            quiet_tensorflow()  # TensorFlow as a library (tf.data, tensorflow-datasets): no start-up logs
        if args.command == "reproduce":
            return _reproduce(args, extra)
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        if args.command == "list":
            return _list()
        if args.command == "train":
            return _train(args)
        if args.command == "evaluate":
            return _few_shot(args)
        return _export(args)
    except _UsageError as error:
        print(f"paperzoo: error: {error}", file=sys.stderr)
        return 2
    except (ValueError, OSError, MissingDependency) as error:
        # Dataset, recipe and argument checks raise ValueError subclasses with a
        # message naming the value and the rule; files that cannot be read or written
        # raise OSError (FileNotFoundError, PermissionError, ...), whose message names the
        # path; a feature whose optional package (TensorFlow for export) is not installed
        # raises MissingDependency with the pip command. PAPERZOO_DEBUG=1 shows the trace.
        if os.environ.get("PAPERZOO_DEBUG"):
            raise
        message = " ".join(str(error).split()) or type(error).__name__
        print(f"paperzoo: error: {message}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:  # an optional package a model imports (keras-hub for BERT, GPT, ...)
        if not error.name or error.name.split(".")[0] == "keras_paperzoo" or os.environ.get("PAPERZOO_DEBUG"):
            raise
        print(f"paperzoo: error: {missing(error, 'This command')}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
