"""Figure 1 of Goodfellow et al. 2014: a 1-D GAN whose p_g approaches p_data.

    python applications/gan_toy_1d.py --output runs/gan_toy_1d

Data x ~ N(1, 0.5^2); noise z ~ U(-sqrt 3, sqrt 3) (unit variance);
small MLPs (G 16-16, D 32-32). Prints, before and after training, the
Jensen-Shannon divergence between a histogram of G's samples and p_data and the
mean |D(x) - 1/2| on a grid, and writes a picture of p_data, p_g and D like the
paper's Figure 1 (needs matplotlib).
"""

import argparse
import os
import pathlib
import sys

import numpy as np


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--output", default="runs/gan_toy_1d")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "jax")

    import keras

    from keras_paperzoo.evaluation import js_divergence
    from keras_paperzoo.models import GAN

    keras.utils.set_random_seed(args.seed)
    gan = GAN.from_preset("gan_toy_1d", seed=args.seed)
    gan.compile(d_optimizer=keras.optimizers.Adam(1e-3, beta_1=0.5), g_optimizer=keras.optimizers.Adam(1e-3, beta_1=0.5))
    rng = np.random.default_rng(args.seed)
    data = rng.normal(1.0, 0.5, size=(args.steps * 128, 1)).astype("float32")
    grid = np.linspace(-1.5, 3.5, 101).astype("float32")
    edges = np.linspace(-1.5, 3.5, 51)
    width = edges[1] - edges[0]
    centres = 0.5 * (edges[:-1] + edges[1:])
    p_data = np.exp(-0.5 * ((centres - 1.0) / 0.5) ** 2) / (0.5 * np.sqrt(2 * np.pi))

    def snapshot():
        samples = gan.generate(20000)[:, 0]
        p_g, _ = np.histogram(samples, bins=edges, density=True)
        d = keras.ops.convert_to_numpy(keras.ops.sigmoid(gan.discriminator(grid[:, None])))[:, 0]
        return p_g, d, js_divergence(p_data * width, p_g * width)

    before = snapshot()
    gan.fit(data, batch_size=128, epochs=1, verbose=0)
    after = snapshot()
    print(f"JSD(p_data, p_g): {before[2]:.3f} before, {after[2]:.3f} after (0 = identical)")
    where_data = np.abs(grid - 1.0) < 1.0  # within two standard deviations of p_data
    print(
        "mean |D(x) - 1/2| where the data are: "
        f"{np.abs(before[1] - 0.5)[where_data].mean():.3f} before, "
        f"{np.abs(after[1] - 0.5)[where_data].mean():.3f} after (Figure 1d: 0)"
    )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no picture")
        return 0
    out = pathlib.Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5), sharey=True)
    for ax, (p_g, d, jsd), title in zip(axes, (before, after), ("initial", "trained")):
        ax.plot(centres, p_data, "k:", label="p_data")
        ax.plot(centres, p_g, "g-", label="p_g")
        ax.plot(grid, d, "b--", label="D(x)")
        ax.set_title(f"{title}: JSD {jsd:.3f}")
        ax.legend()
    fig.savefig(out / "figure1.png", dpi=100, bbox_inches="tight")
    print(f"wrote {out / 'figure1.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
