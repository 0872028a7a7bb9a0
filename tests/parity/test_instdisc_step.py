"""Two InstDisc steps equal a plain-PyTorch re-statement of the authors' NCE step (issue 36 item 4).

The reference follows Wu et al. 2018 (https://arxiv.org/abs/1805.01978, Sec. 3.1-3.3,
eq. 3, 6, 7 and the proximal term of Sec. 3.3) and the authors' `lemniscate.pytorch`
(`NCEAverage`, `NCECriterion`), written here from them, not from keras_paperzoo:

- f = normalize(Linear(h)); the memory bank V (n, d) under no gradient; for each image
  the scores out = exp(V[idx] . f / T) over idx = [i, m noise rows] (column 0 the image's
  own row);
- Z = out.mean() * n on the first batch, then kept (a Python float: no gradient);
  P = out / Z;
- NCECriterion: -(sum log(P_0 / (P_0 + m/n + 1e-7)) + sum log((m/n) / (P_j + m/n + 1e-7))) / B;
- the proximal term of Sec. 3.3, lambda ||f_i - v_i^(t-1)||^2 averaged over the batch
  (the paper's; the authors' code has none: lambda = 0 there);
- after the step, V[i] <- normalize(momentum V[i] + (1 - momentum) f_i) (the authors'
  `--nce-m` 0.5).

The noise rows are random: the test reads the indices the trainer's memory bank will
draw (its seed generator's state saved, `sample` called, the state put back) and gives
the same to the reference. Two steps: the first sets Z, the second keeps it and reads
rows the first step wrote.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import keras  # noqa: E402

from keras_paperzoo.models import InstDisc  # noqa: E402
from tests.parity.parity_checks import (assert_close, dense_relu_backbone, kernels_and_biases, next_noise,  # noqa: E402
                                        set_scaled_normal_start)

N, M, TEMPERATURE, MOMENTUM, PROXIMAL, LR = 16, 5, 0.07, 0.5, 0.5, 0.1


def reference_step(params, bank, z, images, index, noise, lr):
    """One step of the authors' InstDisc in plain PyTorch: (loss, new params, new bank, Z)."""
    p = {name: torch.tensor(value, requires_grad=True) for name, value in params.items()}
    bank = torch.tensor(bank)
    x = torch.tensor(images).flatten(1)
    h = torch.relu(x @ p["backbone_kernel"] + p["backbone_bias"])  # (B, D)
    f = torch.nn.functional.normalize(h @ p["head_kernel"] + p["head_bias"], dim=1)  # (B, d)
    idx = torch.cat([torch.tensor(index)[:, None], torch.tensor(noise)], dim=1).long()  # (B, 1 + m), own row first
    weight = bank[idx]  # (B, 1 + m, d), no gradient
    out = torch.exp(torch.bmm(weight, f[:, :, None]).squeeze(2) / TEMPERATURE)  # (B, 1 + m)
    if z is None:
        z = out.mean().item() * N  # eq. 7, from the first batch, then fixed
    out = out / z  # eq. 3: P(i | v)
    k, pn, eps = out.shape[1] - 1, 1.0 / N, 1e-7  # NCECriterion
    ln_pmt = torch.log(out[:, 0] / (out[:, 0] + k * pn + eps))
    ln_pon = torch.log((k * pn) / (out[:, 1:] + k * pn + eps))
    nce = -(ln_pmt.sum() + ln_pon.sum()) / out.shape[0]  # eq. 6
    positives = bank[torch.tensor(index).long()]  # v_i^(t-1)
    proximal = PROXIMAL * ((f - positives) ** 2).sum(dim=1).mean()  # Sec. 3.3
    loss = nce + proximal
    loss.backward()
    with torch.no_grad():
        new = {name: (t - lr * t.grad).numpy() for name, t in p.items()}
        rows = MOMENTUM * positives + (1 - MOMENTUM) * f  # NCEAverage's memory update
        bank[torch.tensor(index).long()] = rows / rows.pow(2).sum(1, keepdim=True).pow(0.5)
    return loss.item(), new, bank.numpy(), z


def _variables(model):
    return kernels_and_biases(backbone=model.backbone, head=model.head)


def test_two_instdisc_steps_equal_the_authors_nce_steps():
    model = InstDisc(dense_relu_backbone(), num_data=N, num_negatives=M, temperature=TEMPERATURE, feature_dim=4,
                     bank_momentum=MOMENTUM, proximal=PROXIMAL, loss="nce", augmentation=None, seed=5)
    model.compile(optimizer=keras.optimizers.SGD(LR))
    rng = np.random.default_rng(0)
    set_scaled_normal_start(model, rng)  # the same start on every backend and run
    params = _variables(model)
    bank = keras.ops.convert_to_numpy(model.bank).copy()
    z = None
    for index in (np.array([3, 7, 0, 12]), np.array([7, 1, 3, 9])):  # rows 7 and 3 again: written by step 1
        images = rng.normal(size=(4, 2, 2, 3)).astype("float32")
        noise = next_noise(model.memory_bank, 4, M)
        loss, expected, bank, z = reference_step(params, bank, z, images, index, noise, LR)
        logs = model.train_on_batch(x={"images": images, "index": index.astype("int32")}, return_dict=True)
        params = _variables(model)
        assert logs["loss"] == pytest.approx(loss, rel=1e-5)
        assert float(keras.ops.convert_to_numpy(model.z)) == pytest.approx(z, rel=1e-5)
        for name, value in expected.items():
            assert_close(params[name], value, err_msg=name)
        assert_close(keras.ops.convert_to_numpy(model.bank), bank)
    assert logs["proximal_loss"] > 1e-3  # the proximal term is in the compared loss
