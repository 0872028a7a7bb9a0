"""Worker-side helpers shared by the families (run inside one subprocess per run).

Keras side (one Keras backend per process):
- `keras_info(threads)`: the backend, framework versions and thread settings.
- `jit_description(backend, model)`: what `compile()`'s `jit_compile` resolved to.
- `fit_block(...)` / `timed_fits(...)`: one `fit()` call (one epoch of N steps) per
  timed turn.
- `bare_step(model, data)`: the backend's compiled `train_step` on one batch already
  on the backend, as Keras's own trainers compile it, without `fit`.
- `start_keras_worker(threads)`, `describe_model(result, model)` and
  `run_timed_blocks(result, model, fit_kwargs, first_batch, args)`: the start, the model
  description and the timed fit / bare-step turns every Keras worker shares.

PyTorch reference side:
- `start_reference(args)`: torch threads, seed 0, the reference's result dict.
- `run_reference_loop(result, step_fn, batches, args)`: the reference's loop of N steps over
  N different batches, in the fit and bare-step turns, its last loss.

Data: `random_images(rng, n, size)` and `take(tree, start, stop)`.

Import only inside a worker subprocess (the functions import the frameworks).
"""

import math

from . import turns


def keras_info(threads):
    """{"run": backend, "versions": {...}, thread settings}; applies `--threads` to torch."""
    import keras

    backend = keras.backend.backend()
    info = {"run": backend}
    versions = {"keras": keras.__version__}
    if backend == "torch":
        import torch

        info["torch_threads"] = turns.torch_threads(threads)
        versions["torch"] = torch.__version__
    elif backend == "jax":
        import jax

        versions["jax"] = jax.__version__
    elif backend == "tensorflow":
        import tensorflow as tf

        versions["tensorflow"] = tf.__version__
        info["tf_threads"] = {
            "intra_op": tf.config.threading.get_intra_op_parallelism_threads(),
            "inter_op": tf.config.threading.get_inter_op_parallelism_threads(),
        }
    info["versions"] = versions
    return info


def seed(value=0):
    """Seed NumPy (and torch) without `keras.utils.set_random_seed`, which imports
    TensorFlow whenever it is installed (to seed tf.data): ~450 MB more RSS in the JAX
    and torch processes."""
    import numpy as np

    import keras

    np.random.seed(value)
    if keras.backend.backend() == "torch":
        import torch

        torch.manual_seed(value)


def jit_description(backend, model):
    if backend == "tensorflow":
        xla = "XLA" if model.jit_compile else "no XLA"
        return f"tf.function, jit_compile={model.jit_compile} ({xla})"
    if backend == "jax":
        return "jax.jit (XLA)" if model.jit_compile else "un-jitted"
    return "torch.compile" if model.jit_compile else "eager"


def sync_weights(model):
    """Wait for every dispatched step (JAX dispatches asynchronously): read the last weight."""
    import keras

    keras.ops.convert_to_numpy(model.weights[-1])


def fit_block(model, fit_kwargs, sync, out=None):
    """A function running one `model.fit(**fit_kwargs, epochs=1, shuffle=False, verbose=0)`
    and then `sync()`; the History goes to `out["history"]` when `out` is a dict."""

    def run(n=None):  # `n` (a warmup's step count) does not apply: a fit() block is one epoch
        history = model.fit(**fit_kwargs, epochs=1, shuffle=False, verbose=0)
        sync()
        if out is not None:
            out["history"] = history

    return run


def timed_fits(model, fit_args, repeats, sync, warmup_args=None, name="fit"):
    """`model.fit(*args, epochs=1, shuffle=False, verbose=0, ...)` once per turn.

    The warmup turn fits `warmup_args` (default `fit_args`); then `repeats` timed turns
    fit `fit_args`, each timed (wall and process CPU) up to `sync()`. One fit() call per
    timed block, not one fit() of R+1 epochs with turns taken between epochs: inside a
    single fit(), TensorFlow's tf.data pipeline (autotune) slows the next epochs 2-4x
    whenever other processes used the CPU between epochs (README, GAN finding 5).

    `fit_args` is a dict of keyword arguments (x, y, batch_size). Returns
    (warmup wall s, [wall s], [CPU s], last History).
    """
    walls, cpus, out = [], [], {}
    for i, phase in enumerate(turns.block_phases(name, repeats)):
        kwargs = warmup_args if (i == 0 and warmup_args is not None) else fit_args
        sw = turns.timed_block(fit_block(model, kwargs, sync, out), phase)
        walls.append(sw.wall)
        cpus.append(sw.cpu)
    return walls[0], walls[1:], cpus[1:], out["history"]


def bare_step(model, data):
    """(step, sync) running the backend's compiled `model.train_step(data)` on one batch.

    `data` is what `train_step` receives (NumPy arrays or a tuple of them); it is put on
    the backend once. TensorFlow: `tf.function(train_step, jit_compile=model.jit_compile)`;
    JAX: `jax.jit(train_step, donate_argnums=0)` on a copy of the model's state (as
    Keras's JAX trainer; the copy keeps donation from deleting the model's buffers);
    torch: `train_step` itself (eager, or as compiled by Keras). The last step's logs stay in
    `step.out["logs"]`.
    """
    import keras

    backend = keras.backend.backend()
    # Build metrics and optimizer as fit() does at its start (when no fit() ran before).
    model._symbolic_build(data_batch=data)
    out = {}
    if backend == "tensorflow":
        import tensorflow as tf

        fn = tf.function(model.train_step, jit_compile=bool(model.jit_compile),
                         reduce_retracing=True)
        data = tf.nest.map_structure(tf.constant, data)

        def step():
            out["logs"] = fn(data)

    elif backend == "jax":
        import jax

        fn = jax.jit(model.train_step, donate_argnums=0) if model.jit_compile else model.train_step
        data = jax.tree_util.tree_map(jax.numpy.asarray, data)
        state = (
            [v.value for v in model.trainable_variables],
            [v.value for v in model.non_trainable_variables],
            [v.value for v in model.optimizer.variables],
            [v.value for v in model.metrics_variables],
        )
        out["state"] = jax.tree_util.tree_map(lambda a: a.copy(), state)

        def step():
            out["logs"], out["state"] = fn(out["state"], data)

        def sync():
            jax.block_until_ready(out["state"])

        step.out = out
        return step, sync

    else:
        import torch

        data = keras.tree.map_structure(torch.as_tensor, data)

        def step():
            out["logs"] = model.train_step(data)

    def sync():
        keras.ops.convert_to_numpy(next(iter(out["logs"].values())))

    step.out = out
    return step, sync


def describe_optimizer(opt):
    """e.g. "ScheduledMomentumSGD(momentum=0.9, l2=0.0001)"."""
    config = opt.get_config()
    keys = ("momentum", "l2", "beta_1", "beta_2", "epsilon", "weight_decay", "global_clipnorm")
    parts = [f"{k}={config[k]}" for k in keys if config.get(k) not in (None, 0, 0.0, False)]
    return f"{type(opt).__name__}({', '.join(parts)})"


def start_keras_worker(threads):
    """`keras_info(threads)` plus the RSS after importing keras-paperzoo; seeds set. The worker's result dict."""
    result = keras_info(threads)
    import keras_paperzoo.models  # noqa: F401  (the models the workers build)

    result["rss_after_import_mb"] = turns.peak_rss_mb()
    seed(0)
    return result


def describe_model(result, model):
    """Record the compiled model's optimizer, jit setting and trainable parameter count in `result`."""
    result["optimizer"] = describe_optimizer(model.optimizer)
    result["jit"] = jit_description(result["run"], model)
    result["params"] = sum(math.prod(v.shape) for v in model.trainable_variables)


def run_timed_blocks(result, model, fit_kwargs, first_batch, args):
    """Time `model.fit(**fit_kwargs)` epochs and/or the bare compiled `train_step` on `first_batch` (per
    `args.modes`) in the turns of `turns.phases`; store the rates (steps = `args.steps`) and the last loss."""

    def sync():
        sync_weights(model)

    out, blocks = {}, {}
    if "fit" in args.modes:
        blocks["fit"] = fit_block(model, fit_kwargs, sync, out)
    if "step" in args.modes:
        holder = {}  # built at its first turn, after fit's warmup built the optimizer and metrics

        def bare(n=None):
            if "run" not in holder:
                step, sync_step = bare_step(model, first_batch)
                holder["run"] = turns.step_block(step, args.steps, sync_step)
            holder["run"](n)

        blocks["step"] = bare
    turns.store_timings(result, turns.run_blocks(blocks, args), args.steps)
    if "history" in out:
        result["final_loss"] = float(out["history"].history["loss"][-1])
    return result


# --------------------------------------------------------------------------------------
# PyTorch reference side
# --------------------------------------------------------------------------------------
def start_reference(args):
    """Apply `--threads` to torch (`default_threads` of the family when 0 and set), seed 0; the result dict."""
    import torch

    threads = args.threads or getattr(args, "default_threads", 0)
    result = {"run": turns.REFERENCE, "torch_threads": turns.torch_threads(threads),
              "versions": {"torch": torch.__version__}, "jit": "eager (PyTorch)"}
    torch.manual_seed(0)
    return result


def run_reference_loop(result, step_fn, batches, args):
    """Time the reference's loop in the turns of `turns.phases`: each block runs `args.steps` calls of
    `step_fn(*take(batches, i B, (i + 1) B))` over the `args.steps` different batches of `batches`
    (arrays, or nested tuples / dicts of them, of `args.steps * args.batch_size` rows), ended by reading
    the loss. Stores the rates and the last loss in `result`."""
    steps, bsz = args.steps, args.batch_size
    result.setdefault("rss_after_import_mb", turns.peak_rss_mb())
    state = {"i": 0}

    def step():
        i = state["i"] % steps
        state["i"] += 1
        state["loss"] = step_fn(*take(tuple(batches), i * bsz, (i + 1) * bsz))

    loop = turns.step_block(step, steps, lambda: float(state["loss"]))
    turns.store_timings(result, turns.run_blocks({mode: loop for mode in args.modes}, args), steps)
    result["final_loss"] = float(state["loss"])
    return result


# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------
def random_images(rng, n, size, nchw=False, uniform=False):
    """n random images (n, size, size, 3) float32 from `rng`: N(0, 1), or U[0, 1) with `uniform`;
    (n, 3, size, size) with `nchw` (the same numbers, transposed)."""
    import numpy as np

    shape = (n, size, size, 3)
    images = rng.random(shape, dtype=np.float32) if uniform else rng.standard_normal(shape, dtype=np.float32)
    return np.ascontiguousarray(images.transpose(0, 3, 1, 2)) if nchw else images


def take(tree, start, stop):
    """Rows start:stop of every array in a (nested dict / tuple of) array(s)."""
    if isinstance(tree, dict):
        return {k: take(v, start, stop) for k, v in tree.items()}
    if isinstance(tree, tuple):
        return tuple(take(v, start, stop) for v in tree)
    return tree[start:stop]
