"""`python -m keras_paperzoo.export MODEL_PATH OUT_PATH --format F [...]`.

Loads a `.keras` file, exports it (or one of its sub-models) and prints one JSON line:
`{"path": ..., "format": ..., "max_abs_diff": ..., "tolerance": ..., "ok": ...}`
(a non-finite max_abs_diff is written as the string "inf" or "nan").
Exit code 0 when `max_abs_diff <= tolerance`, 1 when above, 2 on an error (then the
JSON line is `{"error": message, "error_type": "ValueError"}`).

The exporters need the TensorFlow backend: under another `KERAS_BACKEND` this module
re-runs itself in a child process with `KERAS_BACKEND=tensorflow` (as
`export_model_file` does).

With `--vocabulary` (a BERT classifier) the SavedModel takes raw strings: the WordPiece
tokenizer and the packing to `--sequence-length` are in the graph (`export_text_classifier`);
the JSON line also carries `inputs`, `sequence_length`, `lowercase` and `note` (why it fell
back to token ids, when it did). A check failure is `{"error": ..., "error_type":
"ExportMismatchError"}` with exit code 2.

Examples:

    KERAS_BACKEND=tensorflow python -m keras_paperzoo.export gan.keras gen_sm \
        --format saved_model --submodel generator
    python -m keras_paperzoo.export runs/bert/model.keras bert_sm --format saved_model \
        --vocabulary runs/bert/vocabulary.txt --sequence-length 64
"""

import argparse
import json
import math
import sys

from keras_paperzoo.export.verify import FORMATS


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m keras_paperzoo.export",
        description="Export a .keras model to a TF SavedModel or LiteRT file and verify it.",
    )
    parser.add_argument("model_path", help="the .keras file to export")
    parser.add_argument("out_path", help="SavedModel directory, or a file ending in .tflite")
    parser.add_argument("--format", required=True, choices=FORMATS)
    parser.add_argument("--submodel", default=None,
                        help="attribute of the loaded model to export instead (e.g. generator)")
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="max |keras - artifact| accepted (exit 1 above it)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace out_path if it exists and is not empty")
    parser.add_argument("--sample-inputs", default=None,
                        help="npz of input_0, input_1, ... (model input order) to compare on")
    parser.add_argument("--save-outputs", default=None,
                        help="write the artifact's outputs on the sample inputs to this npz")
    text = parser.add_argument_group("BERT classifier taking raw strings (tokenizer in the graph)")
    text.add_argument("--vocabulary", default=None,
                      help="WordPiece vocabulary file the classifier was fine-tuned with")
    text.add_argument("--sequence-length", type=int, default=None,
                      help="pack texts to this length (default: the backbone's max_sequence_length)")
    text.add_argument("--pairs", action="store_true",
                      help="the classifier was fine-tuned on sentence pairs: two string inputs")
    text.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=None,
                      help="lower-case the text (default: inferred from the vocabulary)")
    text.add_argument("--tokenizer-config", default=None,
                      help="JSON of the keras-hub tokenizer's config (instead of --lowercase)")
    text.add_argument("--sample-texts", default=None,
                      help="JSON list of strings (or two lists with --pairs) to compare on")
    text.add_argument("--strings-only", action="store_true",
                      help="fail instead of falling back to token-id inputs")
    return parser


def run_text(args):
    import keras

    from keras_paperzoo.export import text

    if args.format != "saved_model":
        raise ValueError(
            "--vocabulary exports a SavedModel taking raw strings: use --format saved_model "
            "(LiteRT exports the backbone with token ids, without --vocabulary)"
        )
    if args.submodel or args.sample_inputs:
        raise ValueError("--vocabulary does not combine with --submodel or --sample-inputs")
    if keras.backend.backend() == "tensorflow":
        return text.export_text_in_child(args)
    if args.sample_texts or args.save_outputs or args.tokenizer_config:
        raise ValueError(
            "--sample-texts/--save-outputs/--tokenizer-config need KERAS_BACKEND=tensorflow; "
            f"the backend is {keras.backend.backend()!r}"
        )
    return text.export_text_classifier_file(
        args.model_path, args.vocabulary, args.out_path, sequence_length=args.sequence_length,
        pairs=args.pairs, lowercase=args.lowercase, tolerance=args.tolerance,
        overwrite=args.overwrite, allow_token_ids=not args.strings_only,
    )


def run(args):
    import keras
    import numpy as np

    from keras_paperzoo.export import child
    from keras_paperzoo.export import exporters
    from keras_paperzoo.export import verify

    if args.vocabulary is not None:
        return run_text(args)
    if args.pairs or args.sequence_length is not None or args.sample_texts or args.tokenizer_config:
        raise ValueError("--pairs, --sequence-length, --sample-texts and --tokenizer-config need --vocabulary")
    if keras.backend.backend() != "tensorflow":
        if args.sample_inputs or args.save_outputs:
            raise ValueError(
                "--sample-inputs/--save-outputs need KERAS_BACKEND=tensorflow; "
                f"the backend is {keras.backend.backend()!r}"
            )
        # Re-run under TensorFlow in a child process.
        return exporters.export_model_file(
            args.model_path, args.out_path, format=args.format, submodel=args.submodel,
            tolerance=args.tolerance, overwrite=args.overwrite,
        )
    model = exporters.resolve_submodel(exporters.load_model_file(args.model_path), args.submodel)
    sample = None
    if args.sample_inputs:
        with np.load(args.sample_inputs) as data:
            sample = [data[f"input_{i}"] for i in range(len(data.files))]
    if args.save_outputs is None:
        return exporters.export_model(model, args.out_path, format=args.format,
                                      sample_inputs=sample, tolerance=args.tolerance,
                                      overwrite=args.overwrite)
    # Same as export_model, keeping the artifact's raw outputs for the caller.
    tolerance = child.check_tolerance(args.tolerance)
    layout = verify.input_layout(model)
    arrays = (verify.make_sample_inputs(layout) if sample is None
              else verify.normalize_sample_inputs(layout, sample))
    path = child.prepare_path(args.out_path, args.format, args.overwrite)
    exporters.write_artifact(model, path, args.format, layout)
    artifact = verify.run_artifact(path, args.format, layout, arrays)
    np.savez(args.save_outputs, **artifact)
    diff = verify.max_abs_diff(verify.keras_outputs(model, layout, arrays), artifact)
    return exporters.ExportResult(path=path, format=args.format, max_abs_diff=diff,
                                  tolerance=tolerance)


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        result = run(args)
    except Exception as err:  # noqa: BLE001 - reported as JSON for the parent process
        print(json.dumps({"error": str(err), "error_type": type(err).__name__}), flush=True)
        return 2
    payload = result.to_dict()
    if not math.isfinite(payload["max_abs_diff"]):
        # Strict JSON has no Infinity/NaN: send "inf"/"nan", which float() reads back.
        payload["max_abs_diff"] = str(payload["max_abs_diff"])
    print(json.dumps(payload), flush=True)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
