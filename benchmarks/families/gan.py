"""The GAN training step (Goodfellow et al. 2014, MNIST) on every Keras backend vs plain PyTorch.

Runs `GAN.from_preset("gan_mnist")` (`--models gan_mnist_small`: tiny networks, i.e. the
per-step framework overhead) with `compile()`'s defaults (the paper's two
momentum SGDs) on random MNIST-shaped data, one subprocess per Keras backend (with
`KERAS_BACKEND` set) plus one for a plain eager PyTorch implementation of the same
networks and step (`benchmarks/torch_reference/gan_mnist.py`), and prints:
steps/s, images/s, the ratio to the PyTorch reference, peak RSS and model-FLOP
utilisation (MFU).

    python -m benchmarks gan [--steps N] [--repeats R] [--batch-size 100] [--json out.json]
    python -m benchmarks gan --batch-size 10 --steps 1 --repeats 1    # smoke

What is timed (see benchmarks/README.md):

- Keras "fit": `gan.fit(x, batch_size=B, epochs=1, shuffle=False, verbose=0)` on a
  NumPy array of N * B images (one epoch = N steps), called R + 1 times; each call
  is timed (wall and process CPU) up to a synchronisation on the model's weights.
  The first call (tracing / XLA compilation) is the warmup and is dropped; the
  headline is the median over the other R calls. fit()'s per-call setup (data
  adapter, callbacks, JAX state sync) is included, as in any training epoch.
- Keras "bare step": the backend's compiled `train_step` called in a Python loop on
  one batch already converted to a backend tensor (no `fit`, no data adapter, no
  callbacks): `tf.function(train_step, jit_compile=gan.jit_compile)` on TensorFlow,
  `jax.jit(train_step, donate_argnums=0)` on JAX (as Keras's own), `train_step` on
  torch. N warmup steps, then R repeats of N steps.
- PyTorch reference: N warmup steps, then R repeats of N steps.

All subprocesses are started together and then take turns: the parent lets one
process run one timed block (one warmup, one fit() call or one block of N bare steps)
while the others wait on a pipe, round-robin (the order rotates every round). So
every backend is timed under the same background load, which on a shared 2-core
machine drifts by minutes; warmups and imports are never overlapped with a timed block.

MFU = (analytic matmul FLOPs per step x steps/s) / peak (default 250 GFLOP/s); the
FLOP count is `flops.gan_step_flops` and is printed with the table.
"""

from .. import flops, turns, workers

REFERENCE = turns.REFERENCE
MODELS = tuple(flops.PRESET_DIMS)  # the GAN presets
DEFAULT_MODELS = ("gan_mnist",)
BATCH = {name: 100 for name in MODELS}
STEPS = {name: 20 for name in MODELS}
REPEATS = 5
MODES = ["fit", "step"]


def add_arguments(p):
    p.add_argument("--jit-compile", default="auto", choices=["auto", "true", "false"],
                   help="passed to GAN.compile (auto = Keras's default)")
    p.add_argument("--steps-per-execution", type=int, default=1,
                   help="passed to GAN.compile (not allowed >1 on torch)")


def heading(args):
    return f"preset {args.model}, batch {args.batch_size}, jit_compile {args.jit_compile}"


def step_flops(args):
    count = flops.gan_step_flops(batch_size=args.batch_size, **flops.PRESET_DIMS[args.model])
    count["description"] = (f"D update {count['d_update'] / 1e9:.3f} + G update {count['g_update'] / 1e9:.3f} "
                            f"GFLOP (minimal backward: {count['total_minimal'] / 1e9:.3f} GFLOP)")
    return count


def phases(run, args):
    """The timed blocks of one run, in order: every run has a fit warmup and repeats; the Keras
    runs then their bare steps' warmup and repeats (not alternating, unlike `turns.phases`)."""
    names = ["fit:warmup"] + [f"fit:{i}" for i in range(args.repeats)]
    if run != REFERENCE and "step" in args.modes:
        names += ["step:warmup"] + [f"step:{i}" for i in range(args.repeats)]
    if run != REFERENCE and "fit" not in args.modes:
        names = names[args.repeats + 1:]
    return names


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def worker_reference(args):
    import numpy as np
    import torch

    from ..torch_reference import gan_mnist

    result = workers.start_reference(args)
    result["rss_after_import_mb"] = turns.peak_rss_mb()
    result["jit"] = "eager (plain PyTorch)"
    dims = flops.PRESET_DIMS[args.model]
    trainer = gan_mnist.GANStep(seed=0, latent_dim=dims["latent_dim"], g_hidden=dims["g_hidden"],
                                d_units=dims["d_units"], pieces=dims["pieces"])
    result["params"] = {"generator": gan_mnist.count_params(trainer.G),
                        "discriminator": gan_mnist.count_params(trainer.D)}
    rng = np.random.default_rng(0)
    batch = torch.from_numpy(rng.random((args.batch_size, 28, 28, 1), dtype=np.float32))
    out = {}

    def step():
        out.update(trainer.step(batch))

    warm, walls, cpus = turns.time_loop(step, args.steps, args.repeats, lambda: float(out["d_loss"]), "fit",
                                        warmup_steps=args.warmup or None)
    result["warmup_s"] = warm
    result["step"] = turns.rates(walls, cpus, args.steps)
    result["fit"] = result["step"]  # the reference has no fit(); its loop is the step loop
    result["final_losses"] = {k: float(v) for k, v in out.items()}

    # The machine's matmul rate right now (1024^3, fp32), for context under load.
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    for _ in range(3):
        a @ b
    with turns.Stopwatch() as sw:
        for _ in range(20):
            a @ b
    result["measured_matmul_gflops"] = 20 * 2 * 1024**3 / sw.wall / 1e9
    return result


def worker_keras(args):
    import keras
    import numpy as np

    result = workers.keras_info(args.threads)
    backend = result["run"]
    from keras_paperzoo.models import GAN

    result["rss_after_import_mb"] = turns.peak_rss_mb()
    workers.seed(0)
    gan = GAN.from_preset(args.model, seed=0)
    compile_kwargs = {}
    if args.jit_compile != "auto":
        compile_kwargs["jit_compile"] = args.jit_compile == "true"
    if args.steps_per_execution != 1:
        compile_kwargs["steps_per_execution"] = args.steps_per_execution
    gan.compile(**compile_kwargs)
    result["jit"] = workers.jit_description(backend, gan)
    result["jit_compile"] = bool(gan.jit_compile)
    result["steps_per_execution"] = gan.steps_per_execution
    result["params"] = {"generator": gan.generator.count_params(),
                        "discriminator": gan.discriminator.count_params()}
    expected = flops.gan_param_counts(**flops.PRESET_DIMS[args.model])
    if (result["params"]["generator"], result["params"]["discriminator"]) != expected:
        raise RuntimeError(f"preset {args.model}: parameter counts {result['params']} differ "
                           f"from benchmarks/flops.py's PRESET_DIMS ({expected}); the FLOP "
                           "count would be wrong")

    rng = np.random.default_rng(0)
    steps, repeats, bsz = args.steps, args.repeats, args.batch_size
    images = rng.random((steps * bsz, 28, 28, 1), dtype=np.float32)

    def sync_model():
        # Wait for every dispatched step (JAX is asynchronous).
        for v in (gan.generator.weights[-1], gan.discriminator.weights[-1]):
            keras.ops.convert_to_numpy(v)

    if "fit" in args.modes:
        warm, walls, cpus, history = workers.timed_fits(
            gan, {"x": images, "batch_size": bsz}, repeats, sync_model)
        result["warmup_s"] = warm
        result["fit"] = turns.rates(walls, cpus, steps)
        result["final_losses"] = {k: float(v[-1]) for k, v in history.history.items()}

    # ---- bare compiled train_step ------------------------------------------------
    if "step" in args.modes:
        step, sync = workers.bare_step(gan, images[:bsz])
        warm, walls, cpus = turns.time_loop(step, steps, repeats, sync, "step", warmup_steps=args.warmup or None)
        result["step_warmup_s"] = warm
        result["step"] = turns.rates(walls, cpus, steps)
    return result
