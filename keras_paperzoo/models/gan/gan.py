"""The GAN trainer: Algorithm 1 of Goodfellow et al. 2014, "Generative Adversarial Nets".

https://arxiv.org/abs/1406.2661
"""

import inspect

import keras
from keras import ops

from keras_paperzoo.losses.gan import GENERATOR_LOSSES, discriminator_loss
from keras_paperzoo.models.checks import check_choice, check_int
from keras_paperzoo.models.gan.gan_networks import GAN_NETWORKS
from keras_paperzoo.models.gan.gan_presets import GAN_PRESETS
from keras_paperzoo.models.trainer import Trainer
from keras_paperzoo.training.optimizers import ScheduledMomentumSGD
from keras_paperzoo.training.schedules import ExponentialDecayWithFloor, LinearRamp
from keras_paperzoo.training.step import MultiOptimizerTrainer

NOISE_KINDS = ("gaussian", "uniform")
UPDATES = ("alternating", "simultaneous")


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class GAN(Trainer, MultiOptimizerTrainer):
    """A generator and a discriminator trained by the minimax game of eq. 1.

    Each training step is one iteration of the paper's Algorithm 1:

    1. `d_steps` (the paper's k) times: take a minibatch of m real images and m
       noise samples z ~ p_z, and update D by ascending
       mean log D(x) + mean log(1 - D(G(z))).
    2. Take m fresh noise samples and update G by descending
       mean log(1 - D(G(z))) (`generator_loss="minimax"`) or, by default, ascending
       mean log D(G(z)) (`"non_saturating"`, the paper's practical advice, Sec. 3).

    A `fit` batch of size B gives k minibatches of m = B // k real images, one per
    discriminator update (so with k = 1, m = B). D and G have separate optimizers.
    `compile()` with no arguments gives the paper's MNIST setting for both: SGD,
    learning rate 0.1 divided by 1.000004 after every update (floor 1e-6), momentum
    0.5 rising linearly to 0.7 by epoch 250 (the authors' pylearn2 configuration).
    The authors' code minimises the discriminator's cross-entropy averaged over the
    2m real and generated examples, which is half of our `d_loss` (-V, Algorithm 1);
    so D's default learning rate here is 0.05, the same update as theirs. (Their
    code also updates D and G at once from one minibatch: `update="simultaneous"`;
    the default follows Algorithm 1: D first, then G with fresh noise.)

    The discriminator returns *logits*; D(x) is their sigmoid, applied inside the
    losses for numerical stability (pass `from_logits=False` for a discriminator
    that ends in a sigmoid).

    Args:
        generator: a `keras.Model` mapping noise (batch, latent_dim) to samples.
        discriminator: a `keras.Model` mapping samples to one logit per sample.
        latent_dim: int, size of z; read from the generator's input when omitted.
        d_steps: int k >= 1, discriminator updates per generator update. The paper
            uses k = 1 ("the least expensive option").
        generator_loss: `"non_saturating"` (default) or `"minimax"`.
        update: `"alternating"` (default, Algorithm 1: k D updates, then G on fresh
            noise against the updated D) or `"simultaneous"` (the authors' pylearn2
            code: one minibatch, one forward pass and one dropout mask give both
            gradients, each taken before either update; needs `d_steps=1`).
        noise: `"gaussian"` (N(0, I), the authors' MNIST code) or `"uniform"`
            (U(-sqrt 3, sqrt 3)^d, unit variance; the 1-D toy of Figure 1).
        from_logits: whether the discriminator's outputs are logits.
        seed: int or None, seed of the noise sampler.

    Metrics: `d_loss` (= -V on the minibatch), `g_loss`, `d_real` (mean D(x)),
    `d_fake` (mean D(G(z))).

    Presets (`GAN_PRESETS`): `GAN.from_preset(name, **overrides)` takes the GAN's
    arguments and those of the preset's network pair (`GAN_NETWORKS`: `image_shape`,
    `latent_dim`, `generator_units`, ...); `latent_dim` sizes the generator's input too.

    Example:

    ```python
    import numpy as np
    from keras_paperzoo.models import GAN
    gan = GAN.from_preset("gan_mnist")
    gan.compile()
    images = np.random.rand(200, 28, 28, 1).astype("float32")
    gan.fit(images, batch_size=100, epochs=1)
    samples = gan.generate(16)  # (16, 28, 28, 1)
    ```
    """

    presets = GAN_PRESETS
    fixed_loss = True  # the minimax game's losses and metrics
    shared_network_arguments = ("latent_dim",)

    def __init__(
        self,
        generator,
        discriminator,
        latent_dim=None,
        d_steps=1,
        generator_loss="non_saturating",
        update="alternating",
        noise="gaussian",
        from_logits=True,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not isinstance(generator, keras.Model) or not isinstance(discriminator, keras.Model):
            raise ValueError(
                "GAN needs keras.Model instances for `generator` and `discriminator`; "
                f"got {type(generator).__name__} and {type(discriminator).__name__}."
            )
        if latent_dim is None:
            try:
                latent_dim = generator.input_shape[-1]
            except (AttributeError, ValueError):
                latent_dim = None
            if latent_dim is None:
                raise ValueError(
                    "GAN could not read latent_dim from the generator (it has no input "
                    "shape yet); pass latent_dim=..."
                )
        latent_dim = check_int("GAN", "latent_dim", latent_dim)
        d_steps = check_int("GAN", "d_steps", d_steps, label="d_steps (the paper's k)", named=False)
        check_choice("GAN", "generator_loss", generator_loss, sorted(GENERATOR_LOSSES))
        check_choice("GAN", "update", update, UPDATES)
        check_choice("GAN", "noise", noise, NOISE_KINDS)
        if update == "simultaneous" and d_steps != 1:
            raise ValueError(
                f"update='simultaneous' takes one minibatch for D and G (d_steps=1); got d_steps={d_steps}."
            )
        self.generator = generator
        self.discriminator = discriminator
        self.latent_dim = latent_dim
        self.d_steps = d_steps
        self.generator_loss = generator_loss
        self.update = update
        self.noise = noise
        self.from_logits = from_logits
        self.seed = seed
        self.noise_seed = keras.random.SeedGenerator(seed, name="noise_seed")
        self.d_loss_tracker = keras.metrics.Mean(name="d_loss")
        self.g_loss_tracker = keras.metrics.Mean(name="g_loss")
        self.d_real_tracker = keras.metrics.Mean(name="d_real")
        self.d_fake_tracker = keras.metrics.Mean(name="d_fake")
        self._build_networks()

    def _build_networks(self):
        if not self.generator.built:
            self.generator.build((None, self.latent_dim))
        sample_shape = self.generator.compute_output_shape((None, self.latent_dim))
        if not self.discriminator.built:
            self.discriminator.build(sample_shape)
        expected = getattr(self.discriminator, "input_shape", None)
        if expected is not None and tuple(expected[1:]) != tuple(sample_shape[1:]):
            raise ValueError(
                f"The generator makes samples of shape {tuple(sample_shape[1:])} but the "
                f"discriminator takes {tuple(expected[1:])}."
            )
        self.built = True

    @property
    def metrics(self):
        return [self.d_loss_tracker, self.g_loss_tracker, self.d_real_tracker, self.d_fake_tracker]

    def call(self, z, training=False):
        """G(z): noise (batch, latent_dim) -> samples."""
        return self.generator(z, training=training)

    def sample_noise(self, num_samples):
        """z ~ p_z, shape (num_samples, latent_dim), from the trainer's own seed."""
        shape = (num_samples, self.latent_dim)
        if self.noise == "gaussian":
            return keras.random.normal(shape, seed=self.noise_seed)
        limit = 3.0**0.5
        return keras.random.uniform(shape, -limit, limit, seed=self.noise_seed)

    def generate(self, num_samples, batch_size=500):
        """`num_samples` samples of G as a NumPy array (drawn from the trainer's seed)."""
        z = ops.convert_to_numpy(self.sample_noise(num_samples))
        return self.generator.predict(z, batch_size=batch_size, verbose=0)

    # --- Algorithm 1 ------------------------------------------------------------
    def optimizer_groups(self):
        return {
            "discriminator": self.discriminator.trainable_variables,
            "generator": self.generator.trainable_variables,
        }

    def multi_optimizer_step(self, data):
        real = data[0] if isinstance(data, (tuple, list)) else data
        if self.update == "simultaneous":
            return self._simultaneous_step(real)
        m = ops.shape(real)[0] // self.d_steps

        for i in range(self.d_steps):  # k discriminator updates
            real_minibatch = real[i * m : (i + 1) * m]
            z = self.sample_noise(m)
            d_loss, (real_out, fake_out) = self.apply_update(
                "discriminator", lambda x=real_minibatch, z=z: self._discriminator_objective(x, z)
            )

        z = self.sample_noise(m)  # then one generator update
        g_loss, _ = self.apply_update("generator", lambda: self._generator_objective(z))

        self._track(d_loss, g_loss, real_out, fake_out)
        return {metric.name: metric.result() for metric in self.metrics}

    def _simultaneous_step(self, real):
        """The authors' step: both gradients from one forward pass, then both updates."""
        z = self.sample_noise(ops.shape(real)[0])
        losses, (real_out, fake_out) = self.apply_updates_together(lambda: self._joint_objective(real, z))
        self._track(losses["discriminator"], losses["generator"], real_out, fake_out)
        return {metric.name: metric.result() for metric in self.metrics}

    def _joint_objective(self, real, z):
        """D's loss (taken w.r.t. D's weights) and G's (w.r.t. G's) on the same D outputs."""
        real_out = self.discriminator(real, training=True)
        fake_out = self.discriminator(self.generator(z, training=True), training=True)
        losses = {
            "discriminator": discriminator_loss(real_out, fake_out, from_logits=self.from_logits),
            "generator": GENERATOR_LOSSES[self.generator_loss](fake_out, from_logits=self.from_logits),
        }
        return losses, (real_out, fake_out)

    def _track(self, d_loss, g_loss, real_out, fake_out):
        self.d_loss_tracker.update_state(d_loss)
        self.g_loss_tracker.update_state(g_loss)
        self.d_real_tracker.update_state(ops.mean(self._probability(real_out)))
        self.d_fake_tracker.update_state(ops.mean(self._probability(fake_out)))

    def _discriminator_objective(self, real, z):
        fake = ops.stop_gradient(self.generator(z, training=True))
        real_out = self.discriminator(real, training=True)
        fake_out = self.discriminator(fake, training=True)
        loss = discriminator_loss(real_out, fake_out, from_logits=self.from_logits)
        return loss, (real_out, fake_out)

    def _generator_objective(self, z):
        fake_out = self.discriminator(self.generator(z, training=True), training=True)
        loss = GENERATOR_LOSSES[self.generator_loss](fake_out, from_logits=self.from_logits)
        return loss, fake_out

    def _probability(self, outputs):
        return ops.sigmoid(outputs) if self.from_logits else outputs

    def evaluation_step(self, data):
        real = data[0] if isinstance(data, (tuple, list)) else data
        z = self.sample_noise(ops.shape(real)[0])
        d_loss, (real_out, fake_out) = self._discriminator_objective(real, z)
        g_loss = GENERATOR_LOSSES[self.generator_loss](fake_out, from_logits=self.from_logits)
        self._track(d_loss, g_loss, real_out, fake_out)
        return {metric.name: metric.result() for metric in self.metrics}

    # --- compile with the paper's defaults -------------------------------------
    def paper_optimizer(self, steps_per_epoch=500):
        """The paper's SGD for each network (`paper_optimizer`); D's at half the rate (class docstring).

        Args:
            steps_per_epoch: updates per epoch, used to place the momentum ramp's
                end at epoch 250 (500 in the paper: 50,000 images, batch 100).
        """
        # D: 0.1 on the authors' half-scaled cost = 0.05 on -V (see the class docstring).
        return {
            "discriminator": paper_optimizer(steps_per_epoch, learning_rate=0.05),
            "generator": paper_optimizer(steps_per_epoch),
        }

    def compile(self, d_optimizer=None, g_optimizer=None, **kwargs):
        """Separate optimizers for D and G; the paper's SGD (`GAN.paper_optimizer`) for each one omitted.

        Args:
            d_optimizer, g_optimizer: `keras.optimizers.Optimizer`s (or names).
            **kwargs: `steps_per_epoch` (the paper's recipe, 500 by default) and
                `keras.Model.compile`'s arguments (e.g. `jit_compile`).
        """
        if kwargs.get("optimizer") is not None or kwargs.get("loss") is not None:
            raise ValueError(
                "GAN.compile takes d_optimizer= and g_optimizer= (its losses are the "
                "paper's); got optimizer= or loss=."
            )
        kwargs.pop("optimizer", None)
        kwargs.pop("loss", None)
        optimizer = None  # both omitted: Trainer.compile asks paper_optimizer
        if d_optimizer is not None or g_optimizer is not None:
            given = {"discriminator": d_optimizer, "generator": g_optimizer}
            optimizer = self.paper_optimizer(kwargs.get("steps_per_epoch", 500))  # for the one omitted
            optimizer.update({group: opt for group, opt in given.items() if opt is not None})
        super().compile(optimizer=optimizer, **kwargs)

    @property
    def d_optimizer(self):
        return self.optimizer["discriminator"]

    @property
    def g_optimizer(self):
        return self.optimizer["generator"]

    # --- presets: two networks ----------------------------------------------------
    @classmethod
    def _network_arguments(cls):
        return ("generator", "discriminator")

    @classmethod
    def build_backbones(cls, backbone_spec, overrides):
        """{"generator", "discriminator"} from the `GAN_NETWORKS` builder a preset names."""
        builder = GAN_NETWORKS[backbone_spec["preset"]]
        arguments = {**backbone_spec.get("overrides", {}), **overrides}
        known = list(inspect.signature(builder).parameters)
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            own = [name for name in inspect.signature(cls.__init__).parameters if name not in ("self", "kwargs")]
            raise ValueError(
                f"Unknown override(s) {unknown} for GAN.from_preset: not an argument of GAN "
                f"({', '.join(own)}) nor of its {backbone_spec['preset']!r} networks ({', '.join(known)})."
            )
        return builder(**arguments)


def paper_optimizer(steps_per_epoch=500, learning_rate=0.1):
    """The GAN paper's MNIST optimizer (authors' pylearn2 configuration).

    SGD, lr 0.1 divided by 1.000004 per update (floor 1e-6), momentum 0.5 rising
    linearly to 0.7 by epoch 250.
    """
    return ScheduledMomentumSGD(
        learning_rate=ExponentialDecayWithFloor(learning_rate, decay_factor=1.000004, min_learning_rate=1e-6),
        momentum=LinearRamp(0.5, 0.7, ramp_steps=250 * int(steps_per_epoch)),
    )
