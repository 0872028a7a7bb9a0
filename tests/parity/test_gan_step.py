"""The GAN's training step against a plain-PyTorch re-statement of Algorithm 1 (issue 36 item 4).

Goodfellow et al. 2014, Algorithm 1: for k steps, sample m noise samples and m examples
and update D by ascending its stochastic gradient of
(1/m) sum [log D(x_i) + log(1 - D(G(z_i)))]; then sample m fresh noise samples and
update G. Our default generator loss is the paper's practical advice (Sec. 3: "train G to
maximize log D(G(z))"), i.e. G descends -(1/m) sum log D(G(z_i)); the minimax one is
checked too. D returns logits: D(x) = sigmoid(logit).

Both sides start from the same two small ReLU MLPs (weights copied from Keras), get the
same 2k-image batch (minibatch i is rows i*m .. (i+1)*m) and the same noise (read from the
trainer's seed, then the seed is rewound so that the step draws it again), and take k = 2
discriminator steps and one generator step with SGD and momentum 0.5 (D at 0.05, G at
0.1). The losses, D's outputs and every updated weight must agree.
"""

import numpy as np
import pytest

import keras
from keras import ops

torch = pytest.importorskip("torch")
from torch.nn import functional as F  # noqa: E402

from keras_paperzoo.models.gan import GAN  # noqa: E402
from keras_paperzoo.models.gan.gan_networks import build_mlp_discriminator, build_mlp_generator  # noqa: E402
from tests.parity.parity_checks import assert_close  # noqa: E402

LATENT, DATA, K, M = 3, 4, 2, 3
D_RATE, G_RATE, MOMENTUM = 0.05, 0.1, 0.5


def torch_mlp(keras_model):
    """A torch Linear/ReLU stack with the Keras Dense layers' weights (kernels transposed)."""
    layers = []
    dense = [layer for layer in keras_model.layers if isinstance(layer, keras.layers.Dense)]
    for i, layer in enumerate(dense):
        kernel, bias = (ops.convert_to_numpy(w) for w in layer.weights)
        linear = torch.nn.Linear(*kernel.shape)
        with torch.no_grad():
            linear.weight.copy_(torch.tensor(kernel.T))
            linear.bias.copy_(torch.tensor(bias))
        layers += [linear] + ([torch.nn.ReLU()] if i < len(dense) - 1 else [])
    return torch.nn.Sequential(*layers)


def reference_algorithm_1(generator, discriminator, real, noises, generator_loss):
    """k discriminator updates, then one generator update; returns the last d_loss, g_loss and D(x), D(G(z))."""
    d_opt = torch.optim.SGD(discriminator.parameters(), lr=D_RATE, momentum=MOMENTUM)
    g_opt = torch.optim.SGD(generator.parameters(), lr=G_RATE, momentum=MOMENTUM)
    for i in range(K):
        x = torch.tensor(real[i * M:(i + 1) * M])
        with torch.no_grad():
            fake = generator(torch.tensor(noises[i]))
        real_logit, fake_logit = discriminator(x), discriminator(fake)
        # ascend mean log D(x) + mean log(1 - D(G(z))): descend its negative
        d_loss = -(F.logsigmoid(real_logit).mean() + F.logsigmoid(-fake_logit).mean())
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()
    fake_logit_g = discriminator(generator(torch.tensor(noises[K])))
    if generator_loss == "non_saturating":  # maximise log D(G(z))
        g_loss = -F.logsigmoid(fake_logit_g).mean()
    else:  # minimise log(1 - D(G(z)))
        g_loss = F.logsigmoid(-fake_logit_g).mean()
    g_opt.zero_grad()
    g_loss.backward()  # D's gradients from this are never applied
    g_opt.step()
    return {"d_loss": float(d_loss.detach()), "g_loss": float(g_loss.detach()),
            "d_real": float(torch.sigmoid(real_logit).mean().detach()),
            "d_fake": float(torch.sigmoid(fake_logit).mean().detach())}


def _weights(keras_model):
    return [ops.convert_to_numpy(w) for w in keras_model.trainable_weights]


def _torch_weights(module):
    """Keras order and layout: kernel (in, out), bias, per Linear."""
    out = []
    for layer in module:
        if isinstance(layer, torch.nn.Linear):
            out += [layer.weight.detach().numpy().T, layer.bias.detach().numpy()]
    return out


@pytest.mark.parametrize("generator_loss", ["non_saturating", "minimax"])
def test_gan_step_matches_algorithm_1(generator_loss):
    keras.utils.set_random_seed(0)
    gan = GAN(build_mlp_generator(LATENT, (5,), DATA), build_mlp_discriminator(DATA, (6,)), d_steps=K,
              generator_loss=generator_loss, seed=11)
    gan.compile(d_optimizer=keras.optimizers.SGD(D_RATE, momentum=MOMENTUM),
                g_optimizer=keras.optimizers.SGD(G_RATE, momentum=MOMENTUM))
    generator, discriminator = torch_mlp(gan.generator), torch_mlp(gan.discriminator)
    g_before, d_before = _weights(gan.generator), _weights(gan.discriminator)
    real = np.random.default_rng(0).standard_normal((K * M, DATA)).astype("float32")

    seed_state = ops.convert_to_numpy(gan.noise_seed.state)
    noises = [ops.convert_to_numpy(gan.sample_noise(M)) for _ in range(K + 1)]  # z for D, D, then G
    gan.noise_seed.state.assign(seed_state)  # the step draws the same noise

    expected = reference_algorithm_1(generator, discriminator, real, noises, generator_loss)
    logs = gan.train_on_batch(real, return_dict=True)
    for name, value in expected.items():
        assert logs[name] == pytest.approx(value, rel=1e-5), name
    for ours, theirs in zip(_weights(gan.discriminator) + _weights(gan.generator),
                            _torch_weights(discriminator) + _torch_weights(generator)):
        assert_close(ours, theirs)
    assert max(np.abs(t - b).max() for t, b in zip(_torch_weights(generator), g_before)) > 1e-4  # G moved
    assert max(np.abs(t - b).max() for t, b in zip(_torch_weights(discriminator), d_before)) > 1e-4  # D moved
