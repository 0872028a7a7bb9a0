"""Character-level GPT on Tiny Shakespeare at a CPU budget, beside the published GPU figure.

    paperzoo reproduce gpt --budget cpu                 # gpt_char_tiny, 600 updates
    paperzoo reproduce gpt --budget gpu                 # nanoGPT's run: --preset gpt_char_shakespeare --updates 5000
    paperzoo reproduce gpt --budget cpu --text path/to/tinyshakespeare.txt --backend jax
    paperzoo reproduce gpt --budget smoke               # --text sample: the built-in five sonnets

The claim reproduced: a small decoder-only Transformer trained on next-character
prediction (GPT-1 eq. 1) learns the text's structure. The published reference is
nanoGPT's `shakespeare_char` run: 6 layers x 384, 6 heads, context 256, dropout 0.2,
batch 64, 5,000 iterations on one GPU, validation loss 1.47 nats per character
(preset `gpt_char_shakespeare`, 10.8M parameters). On a 2-core CPU that run is out of
reach (hours); the default here is `gpt_char_tiny` (4 x 128, context 128, 0.8M
parameters) for `--updates` updates at batch 64, whose figure goes beside the
published one and beside two baselines computed on the same validation text: the
uniform distribution over the characters (ln V) and the unigram (character
frequency) model. The claims checked: the model's validation loss is below both
baselines.

Everything else is the `gpt` recipe (`paperzoo train gpt --dataset FILE`): nanoGPT's
90/10 split and optimisation (AdamW 0.9/0.99, lr 1e-3 with warmup and cosine to
1e-4, weight decay 0.1, clipping at 1.0), the validation loss over every
non-overlapping window of the last 10 %, samples with top-k 200 at temperature 0.8.

Writes gpt_shakespeare_metrics.json and gpt_shakespeare_results.md (with samples)
into --output-dir (the committed run: applications/results/), and the run's model and
samples into <output-dir>/gpt_shakespeare_run/.
"""

import argparse
import os
import pathlib
import shutil

import numpy as np

from keras_paperzoo.reproductions import common
PUBLISHED = {
    "validation_loss": 1.47,
    "source": "nanoGPT shakespeare_char (Karpathy): 6 x 384, context 256, dropout 0.2, batch 64, "
              "5,000 iterations, one GPU; 10.8M parameters",
    "cpu_reference": "tiny CPU configurations reach about 1.9-2.0 in minutes (runs of this reproduction)",
}


def unigram_loss(train_ids, valid_ids, vocabulary_size):
    """Cross-entropy (nats) of the validation characters under the training text's character frequencies (add-one)."""
    counts = np.bincount(train_ids, minlength=vocabulary_size) + 1.0
    log_p = np.log(counts / counts.sum())
    return float(-log_p[valid_ids].mean())


def claims(metrics):
    loss = metrics["validation_loss"]
    return {
        "below_uniform": {"holds": loss < metrics["uniform_loss"], "ours": loss, "baseline": metrics["uniform_loss"]},
        "below_unigram": {"holds": loss < metrics["unigram_loss"], "ours": loss, "baseline": metrics["unigram_loss"]},
    }


def report(metrics):
    rows = [
        "# Character-level GPT on Tiny Shakespeare",
        "",
        "| run | parameters | updates x batch | validation loss (nats/char) | bits/char |",
        "|---|---|---|---|---|",
        f"| ours: {metrics['preset']} on {metrics['backend']} ({metrics['train_seconds']:.0f} s) | "
        f"{metrics['parameters']:,} | {metrics['updates']} x {metrics['batch_size']} | "
        f"{metrics['validation_loss']:.3f} | {metrics['validation_bits_per_character']:.3f} |",
        f"| published: {PUBLISHED['source']} | 10.8M | 5000 x 64 | {PUBLISHED['validation_loss']} | "
        f"{PUBLISHED['validation_loss'] / np.log(2):.3f} |",
        f"| unigram baseline (character frequencies) | {metrics['vocabulary_size'] - 1} | - | "
        f"{metrics['unigram_loss']:.3f} | {metrics['unigram_loss'] / np.log(2):.3f} |",
        f"| uniform baseline (ln {metrics['vocabulary_size']}) | 0 | - | {metrics['uniform_loss']:.3f} | "
        f"{metrics['uniform_loss'] / np.log(2):.3f} |",
        "",
        f"CPU reference: {PUBLISHED['cpu_reference']}. Load average during the run: {metrics.get('load_average')}.",
        "",
        "Claims: " + ", ".join(f"{name} {'holds' if c['holds'] else 'does not hold'}"
                               for name, c in metrics["claims"].items()) + ".",
        "",
        "## Samples (top-k 200, temperature 0.8, from a newline)",
        "",
    ]
    for sample in metrics["samples"]:
        rows += ["```", sample.strip("\n"), "```", ""]
    return "\n".join(rows)


def main(argv=None):
    parser = common.ArgumentParser(__doc__.splitlines()[0], backend="torch")
    parser.add_argument("--text", default=os.environ.get("PAPERZOO_TINYSHAKESPEARE"),
                        help="a text file (default: tinyshakespeare.txt, found or downloaded: see --data-dir); "
                        "'sample': the built-in sonnets")
    parser.add_argument("--preset", default="gpt_char_tiny")
    parser.add_argument("--updates", type=int, default=600)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args(argv)
    if args.text is None:
        args.text = str(common.data_file("tiny_shakespeare", "or pass --text sample for a smoke run"))
    common.select_backend(args.backend)
    if args.text != "sample" and not pathlib.Path(args.text).is_file():
        raise FileNotFoundError(f"--text {args.text} does not exist: pass the path of tinyshakespeare.txt "
                                "(or --text sample)")
    text_source = None if args.text == "sample" else args.text

    from keras_paperzoo.data.char_text import CharTokenizer, load_text, split_ids
    from keras_paperzoo.recipes import gpt as recipe

    output_dir = pathlib.Path(args.output_dir)
    run_dir = output_dir / "gpt_shakespeare_run"
    shutil.rmtree(run_dir, ignore_errors=True)
    recipe_args = argparse.Namespace(
        dataset=text_source, preset=args.preset, epochs=1, steps_per_epoch=args.updates, batch_size=args.batch_size,
        output_dir=str(run_dir), seed=args.seed, resume=False, verbose=args.verbose,
    )
    metrics = recipe.run(recipe_args)
    text = load_text(text_source)
    tokenizer = CharTokenizer.from_text(text)
    train, valid = split_ids(tokenizer.encode(text))
    metrics["unigram_loss"] = unigram_loss(train, valid, tokenizer.vocabulary_size())
    metrics["load_average"] = [round(x, 1) for x in os.getloadavg()]
    metrics["published"] = PUBLISHED
    metrics["claims"] = claims(metrics)
    output_dir.mkdir(parents=True, exist_ok=True)
    metrics["text"] = args.text
    common.write_json(output_dir / "gpt_shakespeare_metrics.json", metrics)
    (output_dir / "gpt_shakespeare_results.md").write_text(report(metrics) + "\n", encoding="utf-8")
    print(report(metrics))
    return metrics


def paper_vs_ours(metrics):
    return [("validation loss (nats per character)", f"{PUBLISHED['validation_loss']} (nanoGPT, Tiny Shakespeare)",
             f"{metrics['validation_loss']:.3f} ({metrics['preset']}, {metrics['updates']} updates, "
             f"{pathlib.Path(metrics['text']).name})"),
            ("unigram / uniform baselines (nats)", "-", f"{metrics['unigram_loss']:.3f} / {metrics['uniform_loss']:.3f}")]
