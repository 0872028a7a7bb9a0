"""Images as token sequences: the BEiT MIM step and the iGPT step on every Keras backend vs PyTorch.

Models (`flops.MIM_MODELS`):

- `beit_s16`: `BEiT(BEiTBackbone.from_preset("beit_base_patch16_224", hidden_dim=384, num_heads=6,
  mlp_dim=1536), StubTokenizer(...), target="tokens", seed=0)`: BEiT with ViT-S/16 sizes (12 x 384,
  6 heads, MLP 1536; BEiT-B's step is 3.6x the FLOPs, too slow for the 2-core CPU) at 224, relative
  position bias per layer, LayerScale 0.1, drop path 0.1, |V| = 8192, blockwise masks of 75 of
  the 196 patches drawn inside the step, the MIM head on every patch and the cross-entropy on the
  masked ones; `compile()`'s AdamW (0.9, 0.999), weight decay 0.05, clipping at 3.0. Batch 8.
  Against a plain PyTorch BEiT written from the paper (`torch_reference/beit.py`), masks drawn
  per image in NumPy inside its step (Algorithm 1, as the official data loader).
  The tokenizer's forward is not benchmarked on either side: `BEiT` always calls
  `tokenizer.tokenize(images)` inside its loss, so both sides get a stub tokenizer whose ids are
  a cheap deterministic function of the images (the patch mean squashed to an id:
  `torch_reference/beit.stub_tokens`, `StubTokenizer` here), a few ops on B x 224 x 224 x 3.
- `igpt_8x256`: `IGPT.from_preset("igpt_s", num_layers=8, hidden_dim=256, num_heads=8,
  intermediate_dim=1024)`: iGPT-S's context (32 x 32 = 1,024 pixels in raster order) and
  palette (512 colours + the SOS id) on an 8 x 256 GPT-2 pre-norm decoder (iGPT-S is 24 x 512:
  ~10x the FLOPs), dropout 0, the autoregressive objective (SOS, x_1 .. x_{n-1} in, next-pixel
  cross-entropy), `compile()`'s Adam (0.9, 0.95). Batch 2. Against transformers'
  `GPT2LMHeadModel(GPT2Config(vocab 513, n_positions 1024, 8 x 256, 8 heads, inner 1024, dropout
  0, tie_word_embeddings=False))` (`torch_reference/hf_lm.py`'s `describe`, `to_torch`): the
  same step up to the output projection's width (513 logits there, the SOS id included; 512
  here) and its bias-free `logits_projection` (transformers' `lm_head` has no bias either).
  Same loss (mean cross-entropy over all 1,024 positions) and Adam (lr 1e-3 constant, betas
  0.9 / 0.95, no weight decay, no clipping).

    python -m benchmarks mim [--models beit_s16 igpt_8x256] [--repeats 3] [--modes fit step]
        [--threads 1] [--json out.json]
    python -m benchmarks mim --models beit_s16 --batch-size 2 --steps 1 --repeats 1     # smoke

Images are N(0, 1) random tensors (seed 0) and pixel ids uniform in [0, 512); no
augmentation. Machinery as the `ssl` family's (`turns.py`): per model, four processes (PyTorch
reference, Keras on JAX, TensorFlow, torch) start together and take turns round-robin; Keras
`fit()` epochs of N steps on NumPy arrays (and the bare compiled `train_step` with `--modes fit
step`); the reference's loop of N steps over N different batches. Warmup dropped, median of
`--repeats`. MFU = steps/s x FLOPs per step (`flops.mim_step_flops`) / peak.
"""

from .. import flops, turns, workers

ITEM = "items"  # images for BEiT, pixels (tokens) for iGPT: the heading says which
MODELS = tuple(flops.MIM_MODELS)
BATCH = {name: config["batch_size"] for name, config in flops.MIM_MODELS.items()}
STEPS = {"beit_s16": 2, "igpt_8x256": 2}


def configure(args):
    """The reference's torch threads: 2 unless `--threads` (the machine's cores)."""
    args.default_threads = 2


def items_per_step(args):
    """Images for BEiT; pixels (tokens) for iGPT."""
    config = flops.MIM_MODELS[args.model]
    return args.batch_size * (config["resolution"] ** 2 if config["family"] == "igpt" else 1)


def heading(args):
    config = flops.MIM_MODELS[args.model]
    if config["family"] == "igpt":
        return f"batch {args.batch_size} x {config['resolution'] ** 2} pixels (items = pixels, i.e. tokens)"
    return f"batch {args.batch_size} images of {config['image_size']}x{config['image_size']} (items = images)"


def step_flops(args):
    return flops.mim_step_flops(args.model, args.batch_size)


def make_data(model, n, nchw=False):
    """n images (N(0, 1), float32; NHWC or NCHW) or n sequences of palette ids (int32), seed 0."""
    import numpy as np

    config = flops.MIM_MODELS[model]
    rng = np.random.default_rng(0)
    if config["family"] == "igpt":
        return rng.integers(0, config["palette_size"], size=(n, config["resolution"] ** 2)).astype("int32")
    return workers.random_images(rng, n, config["image_size"], nchw=nchw)


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def igpt_reference(config):
    """(transformers GPT2LMHeadModel, step(ids) -> detached loss, optimizer description) for `config`."""
    import torch
    import transformers
    from torch.nn import functional as F

    gpt_config = transformers.GPT2Config(
        vocab_size=config["palette_size"] + 1, n_positions=config["resolution"] ** 2, n_embd=config["hidden_dim"],
        n_layer=config["num_layers"], n_head=config["num_heads"], n_inner=config["intermediate_dim"],
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=False)
    model = transformers.GPT2LMHeadModel(gpt_config).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.95))
    sos_id, vocab = config["palette_size"], config["palette_size"] + 1

    def step(ids):
        opt.zero_grad(set_to_none=True)
        sos = torch.full((ids.shape[0], 1), sos_id, dtype=ids.dtype)
        logits = model(input_ids=torch.cat([sos, ids[:, :-1]], dim=1)).logits  # (B, n, k + 1)
        loss = F.cross_entropy(logits.reshape(-1, vocab), ids.reshape(-1))  # mean next-pixel NLL
        loss.backward()
        opt.step()
        return loss.detach()

    return model, step, "Adam(lr=0.001, betas=(0.9, 0.95)), no weight decay, no clipping"


def worker_reference(args):
    import torch

    from ..torch_reference import beit, hf_lm
    from ..torch_reference.steps import count_params

    result = workers.start_reference(args)
    config = flops.MIM_MODELS[args.model]
    data = make_data(args.model, args.steps * args.batch_size, nchw=True)
    if config["family"] == "igpt":
        import transformers

        result["versions"]["transformers"] = transformers.__version__
        net, step_fn, result["optimizer"] = igpt_reference(config)
        result["model"] = hf_lm.describe(net) + ", untied lm_head, dropout 0"
        batches = (hf_lm.to_torch(data),)
    else:
        net = beit.BEiT(image_size=config["image_size"], patch_size=config["patch_size"], dim=config["hidden_dim"],
                        depth=config["num_layers"], heads=config["num_heads"], mlp_dim=config["mlp_dim"],
                        vocabulary_size=config["vocabulary_size"],
                        num_masking_patches=config["num_masking_patches"]).train()
        step_fn, result["optimizer"] = beit.make_step(net, args.batch_size)
        result["model"] = "plain PyTorch BEiT, stub tokenizer (torch_reference/beit.py)"
        batches = (torch.from_numpy(data),)
    result["params"] = count_params(net)
    result["rss_after_import_mb"] = turns.peak_rss_mb()
    return workers.run_reference_loop(result, step_fn, batches, args)


def stub_tokenizer(patch_size, vocabulary_size, grid):
    """A frozen Keras layer with `tokenize(images) -> (B, h, w)` ids, `vocabulary_size` and `grid_size`:
    the same function of the images as `torch_reference/beit.stub_tokens` (NHWC here)."""
    import keras
    from keras import ops

    class StubTokenizer(keras.layers.Layer):
        def tokenize(self, images):
            images = ops.convert_to_tensor(images)
            h, w, c = grid[0], grid[1], images.shape[-1]
            patches = ops.reshape(images, (-1, h, patch_size, w, patch_size, c))  # (B, h, P, w, P, C)
            means = ops.mean(patches, axis=(2, 4, 5))  # (B, h, w)
            ids = ops.floor(ops.sigmoid(means * (patch_size * c ** 0.5)) * vocabulary_size)
            return ops.minimum(ops.cast(ids, "int32"), vocabulary_size - 1)

    tokenizer = StubTokenizer(trainable=False, name="stub_tokenizer")
    tokenizer.vocabulary_size, tokenizer.grid_size = vocabulary_size, tuple(grid)
    return tokenizer


def build_keras_model(model, batch_size, steps, epochs):
    """The keras-paperzoo trainer of `model`, compiled with its paper recipe (module docstring)."""
    config = flops.MIM_MODELS[model]
    if config["family"] == "igpt":
        from keras_paperzoo.models.igpt.igpt import IGPT

        sizes = {k: config[k] for k in ("num_layers", "hidden_dim", "num_heads", "intermediate_dim")}
        trainer = IGPT.from_preset(config["preset"], **sizes)
        trainer.compile(total_steps=steps * epochs)
        return trainer, f"IGPT.from_preset({config['preset']!r}, {', '.join(f'{k}={v}' for k, v in sizes.items())})"
    from keras_paperzoo.models.beit.beit import BEiT
    from keras_paperzoo.models.beit.beit_backbone import BEiTBackbone

    sizes = {k: config[k] for k in ("num_layers", "hidden_dim", "num_heads", "mlp_dim")}
    backbone = BEiTBackbone.from_preset(config["preset"], **sizes)
    tokenizer = stub_tokenizer(config["patch_size"], config["vocabulary_size"], backbone.grid_size)
    trainer = BEiT(backbone, tokenizer, num_masking_patches=config["num_masking_patches"], target="tokens", seed=0)
    trainer.compile(batch_size=batch_size, steps_per_epoch=steps, epochs=epochs)
    return trainer, (f"BEiT(BEiTBackbone.from_preset({config['preset']!r}, "
                     f"{', '.join(f'{k}={v}' for k, v in sizes.items())}), <stub tokenizer>, target='tokens')")


def worker_keras(args):
    result = workers.start_keras_worker(args.threads)
    steps, bsz = args.steps, args.batch_size
    model, result["model"] = build_keras_model(args.model, bsz, steps, args.repeats + 1)
    workers.describe_model(result, model)
    data = make_data(args.model, steps * bsz)
    return workers.run_timed_blocks(result, model, {"x": data, "batch_size": bsz}, data[:bsz], args)
