"""Helpers shared by the benchmark scripts: FLOP counts, timing statistics, memory.

Nothing here imports a deep-learning framework, so the parent process of a
benchmark stays light and each framework is imported only in its own subprocess.
"""

import os
import platform
import resource
import statistics
import sys
import time

# The machine's nominal peak fp32 matmul rate (2 cores with AVX-512 FMA), used as the
# MFU denominator. Override with --peak-gflops.
DEFAULT_PEAK_GFLOPS = 250.0


# Layer sizes of the keras-paperzoo GAN presets that the benchmark can run (mirrors
# keras_paperzoo/models/gan/gan_presets.py, so that this module and the PyTorch
# reference need not import Keras; the Keras worker checks the parameter counts).
PRESET_DIMS = {
    "gan_mnist": {"latent_dim": 100, "g_hidden": (1200, 1200), "image_dim": 784,
                  "d_units": (240, 240), "pieces": 5},
    "gan_mnist_small": {"latent_dim": 16, "g_hidden": (128, 128), "image_dim": 784,
                        "d_units": (32, 32), "pieces": 5},
}


def gan_param_counts(latent_dim, g_hidden, image_dim, d_units, pieces):
    """(generator, discriminator) parameter counts of the MLP GAN with these sizes."""
    g, fan_in = 0, latent_dim
    for width in tuple(g_hidden) + (image_dim,):
        g += fan_in * width + width
        fan_in = width
    d, fan_in = 0, image_dim
    for units in d_units:
        d += fan_in * units * pieces + units * pieces
        fan_in = units
    d += fan_in + 1
    return g, d


def dense_flops(rows, fan_in, fan_out):
    """Forward multiply-add FLOPs of `rows x fan_in @ fan_in x fan_out` (2 m n k)."""
    return 2 * rows * fan_in * fan_out


def mlp_layer_dims(input_dim, widths):
    """[(fan_in, fan_out), ...] of a chain of dense layers."""
    dims, fan_in = [], input_dim
    for width in widths:
        dims.append((fan_in, width))
        fan_in = width
    return dims


def gan_step_flops(
    batch_size=100,
    latent_dim=100,
    g_hidden=(1200, 1200),
    image_dim=28 * 28,
    d_units=(240, 240),
    pieces=5,
    d_steps=1,
):
    """Matmul FLOPs of one GAN training step (Algorithm 1, k = `d_steps`), analytically.

    Only the dense/maxout matmuls are counted (2 m n k forward); biases, activations,
    maxout reductions, dropout, losses and optimizer updates are not. Two counts:

    - "conventional" (used for MFU): backward = 2 x forward of every network that is
      differentiated.
        D update = G fwd (m) + D fwd (2m: real and fake) + D bwd (2 x D fwd on 2m)
        G update = G fwd (m) + D fwd (m) + bwd through D and G (2 x (G fwd + D fwd) on m)
    - "minimal": the backward matmuls actually needed: weight gradients of the
      network being updated, input gradients of every layer the loss flows back
      through except the first layer of the chain (its input is data or z), and no
      weight gradients for D during the G update.
    """
    m = batch_size // d_steps
    g_dims = mlp_layer_dims(latent_dim, tuple(g_hidden) + (image_dim,))
    # A maxout layer is one matmul to units * pieces features; the next layer takes
    # `units` inputs (the max over pieces). D ends in one logit.
    d_dims, fan_in = [], image_dim
    for units in d_units:
        d_dims.append((fan_in, units * pieces))
        fan_in = units
    d_dims.append((fan_in, 1))

    def fwd(dims, rows):
        return sum(dense_flops(rows, a, b) for a, b in dims)

    g_fwd, d_fwd = fwd(g_dims, m), fwd(d_dims, m)
    d_update = g_fwd + 2 * d_fwd + 2 * (2 * d_fwd)
    g_update = g_fwd + d_fwd + 2 * (g_fwd + d_fwd)
    conventional = d_steps * d_update + g_update

    # minimal backward: dW for every layer of the updated net, dX for layers 2..L of
    # every net the gradient passes through (G's dX of layer 1 is w.r.t. z).
    d_dw = fwd(d_dims, 2 * m)
    d_dx_no_first = fwd(d_dims[1:], 2 * m)
    d_update_min = g_fwd + 2 * d_fwd + d_dw + d_dx_no_first
    g_update_min = g_fwd + d_fwd + fwd(d_dims, m) + g_fwd + fwd(g_dims[1:], m)
    minimal = d_steps * d_update_min + g_update_min
    return {
        "batch_size": batch_size,
        "g_layers": g_dims,
        "d_layers": d_dims,
        "g_forward": g_fwd,
        "d_forward": d_fwd,
        "d_update": d_steps * d_update,
        "g_update": g_update,
        "total": conventional,
        "total_minimal": minimal,
    }


def summarize(values):
    """Median, min, max and relative spread ((max - min) / median) of a list."""
    ordered = list(values)
    values = sorted(values)
    med = statistics.median(values)
    return {
        "median": med,
        "min": values[0],
        "max": values[-1],
        "spread": (values[-1] - values[0]) / med if med else float("nan"),
        "values": ordered,
    }


def peak_rss_mb():
    """Peak resident set size of this process in MB (ru_maxrss is KB on Linux)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def loadavg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


class Stopwatch:
    """Wall and process-CPU time of a block: `with Stopwatch() as sw: ...; sw.wall`."""

    def __enter__(self):
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self.cpu = time.process_time() - self.c0
        return False


def machine_info():
    info = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info
