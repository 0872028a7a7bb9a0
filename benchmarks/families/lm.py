"""Language-model training steps (BERT-base, GPT-2 small) on every Keras backend vs transformers.

Models (`flops.LM_MODELS`):

- `bert_base`: `BertPretrainer(BertBackbone.from_preset("bert_base"))` with
  `compile()` (the paper's AdamW: `SelectiveDecayAdamW`, lr 1e-4 warmup + linear decay,
  weight decay 0.01 except biases and LayerNorm, eps 1e-6), masked LM on M = 20 chosen
  positions per sequence + next sentence prediction, batch 8 x 128 tokens, against
  transformers' `BertForPreTraining(BertConfig())`: `model.bert`, the chosen positions
  gathered, `model.cls` on them, the same two losses (`torch_reference/hf_lm.py`;
  `--bert-mlm full` runs the stock forward that scores all 128 positions instead).
- `gpt2_small`: `GPTCausalLM(GPTBackbone.from_preset("gpt2_small"))` with `compile()`
  (GPT-1's AdamW: lr 2.5e-4 warmup, weight decay 0.01 except biases and LayerNorm,
  eps 1e-8), mean next-token cross-entropy on x = ids[:, :-1], y = ids[:, 1:], batch
  4 x 256 tokens, against `GPT2LMHeadModel(GPT2Config())` with the same loss.

Both sides fp32, training mode (dropout 0.1 on), random weights, AdamW; torch threads 2
(`--threads` changes every framework). `bert_tiny` / `gpt_tiny` are smoke sizes.

    python -m benchmarks lm [--models bert_base gpt2_small] [--repeats 3]
        [--modes fit step] [--threads 1] [--pairs] [--json out.json]
    python -m benchmarks lm --models gpt_tiny --batch-size 2 --steps 1 --repeats 1   # smoke

Machinery as the `vision` / `ssl` families' (`turns.py`): per model, four processes
(transformers, Keras on JAX, TensorFlow, torch) start together and take turns
round-robin; Keras `fit()` epochs of N steps on NumPy arrays and the bare compiled
`train_step`, alternating; the reference's loop of N steps over N different batches.
Warmup dropped, median of `--repeats`. tokens/s = steps/s x B x T. MFU = steps/s x
FLOPs per step (`flops.lm_step_flops`) / peak.
`--pairs`: one set of turns per Keras backend with its own transformers process.
"""

from .. import flops, turns, workers

ITEM = "tokens"
MODELS = tuple(flops.LM_MODELS)
DEFAULT_MODELS = ("bert_base", "gpt2_small")
BATCH = {name: config["batch_size"] for name, config in flops.LM_MODELS.items()}
STEPS = {"bert_base": 2, "gpt2_small": 2, "bert_tiny": 3, "gpt_tiny": 3}
MODES = ["fit", "step"]


def add_arguments(p):
    p.add_argument("--seq-len", type=int, default=0, help="0: the model's (BERT 128, GPT-2 256)")
    p.add_argument("--bert-mlm", default="gathered", choices=["gathered", "full"],
                   help="transformers' MLM head on the chosen positions (as ours) or on all positions")


def configure(args):
    """The reference's torch threads: 2 unless `--threads` (the machine's cores)."""
    args.default_threads = 2


def model_config(model, batch_size=0, sequence_length=0):
    """`flops.LM_MODELS[model]` with the batch size and sequence length filled in."""
    config = dict(flops.LM_MODELS[model])
    config["batch_size"] = batch_size or config["batch_size"]
    config["sequence_length"] = sequence_length or config["sequence_length"]
    if config["sequence_length"] > config["max_sequence_length"]:
        raise ValueError(f"--seq-len {config['sequence_length']} exceeds {model}'s "
                         f"max_sequence_length {config['max_sequence_length']}.")
    return config


def heading(args):
    config = model_config(args.model, args.batch_size, args.seq_len)
    return f"batch {config['batch_size']} x {config['sequence_length']} tokens"


def items_per_step(args):
    config = model_config(args.model, args.batch_size, args.seq_len)
    return config["batch_size"] * config["sequence_length"]


def step_flops(args):
    return flops.lm_step_flops(**model_config(args.model, args.batch_size, args.seq_len))


def make_batches(config, n):
    """NumPy (x, y) of n sequences for `config`'s family (seed 0), as both sides receive them."""
    from ..torch_reference import hf_lm

    if config["family"] == "bert":
        return hf_lm.bert_batches(n, config["sequence_length"], config["vocabulary_size"],
                                  config["masked_positions"])
    return hf_lm.gpt_batches(n, config["sequence_length"], config["vocabulary_size"])


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def worker_reference(args):
    import transformers

    from ..torch_reference import hf_lm

    result = workers.start_reference(args)
    result["versions"]["transformers"] = transformers.__version__
    config = model_config(args.model, args.batch_size, args.seq_len)
    net = hf_lm.build(**config)
    result["model"] = hf_lm.describe(net)
    result["params"] = hf_lm.count_params(net)
    result["rss_after_import_mb"] = turns.peak_rss_mb()
    if config["family"] == "bert":
        step_fn, result["optimizer"] = hf_lm.make_bert_step(net, args.bert_mlm)
        result["model"] += f", MLM head on {'the chosen positions' if args.bert_mlm == 'gathered' else 'all positions'}"
    else:
        step_fn, result["optimizer"] = hf_lm.make_gpt_step(net)
    batches = hf_lm.to_torch(make_batches(config, args.steps * config["batch_size"]))
    return workers.run_reference_loop(result, step_fn, batches, args)


def build_keras_model(config):
    """(compiled keras-paperzoo trainer, description) for an `LM_MODELS` entry."""
    from keras_paperzoo import models

    if config["family"] == "bert":
        backbone = models.BertBackbone.from_preset(config["preset"])
        trainer = models.BertPretrainer(backbone)
        description = f"BertPretrainer(BertBackbone.from_preset({config['preset']!r}))"
    else:
        trainer = models.GPTCausalLM(models.GPTBackbone.from_preset(config["preset"]))
        description = f"GPTCausalLM(GPTBackbone.from_preset({config['preset']!r}))"
    trainer.compile()
    return trainer, description + ".compile()"


def worker_keras(args):
    result = workers.start_keras_worker(args.threads)
    config = model_config(args.model, args.batch_size, args.seq_len)
    model, result["model"] = build_keras_model(config)
    workers.describe_model(result, model)
    bsz = config["batch_size"]
    x, y = make_batches(config, args.steps * bsz)
    first_batch = (workers.take(x, 0, bsz), workers.take(y, 0, bsz))
    return workers.run_timed_blocks(result, model, {"x": x, "y": y, "batch_size": bsz}, first_batch, args)
