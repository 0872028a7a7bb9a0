"""Two CMC steps equal a plain-PyTorch re-statement of the authors' L/ab step (issue 36 item 4).

The reference follows Tian, Krishnan and Isola (https://arxiv.org/abs/1906.05849, Sec. 3.1-3.2,
eq. 2-3 with InstDisc's NCE) and the authors' HobbitLong/CMC (`train_CMC.py`'s `RGB2Lab` +
`Normalize`, `NCEAverage`, `NCECriterion`), written here from them, not from keras_paperzoo:

- Lab as scikit-image's `rgb2lab` (sRGB -> linear -> XYZ -> D65 -> L, a, b), normalised by
  mean ((0+100)/2, (-86.183+98.233)/2, (-107.857+94.478)/2) and std ((100-0)/2,
  (86.183+98.233)/2, (107.857+94.478)/2); l, ab = split(x, [1, 2]);
- l = normalize(fc_l(f_l(L))), ab = normalize(fc_ab(f_ab(ab)));
- one draw of idx (B, 1 + m), column 0 the image's row, for both directions; out_l =
  exp(memory_ab[idx] . l / T), out_ab = exp(memory_l[idx] . ab / T);
- Z_l = out_l.mean() * n and Z_ab likewise on the first batch, then kept (floats);
- NCECriterion on each (eps 1e-7), loss = l_loss + ab_loss;
- memory_l[y] <- normalize(m memory_l[y] + (1 - m) l), memory_ab likewise (read before).

The noise rows: the test reads the indices the trainer will draw (the L bank's seed
generator's state saved, `sample` called, the state restored) and gives them to the
reference. Two steps: the first sets both Zs, the second keeps them and reads rows the
first wrote.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import keras  # noqa: E402

from keras_paperzoo.models import CMC  # noqa: E402
from tests.parity.parity_checks import (assert_close, dense_relu_backbone, kernels_and_biases, next_noise,  # noqa: E402
                                        set_scaled_normal_start)

N, M, TEMPERATURE, MOMENTUM, LR = 16, 5, 0.07, 0.5, 0.1
LAB_MEAN = np.array([(0 + 100) / 2, (-86.183 + 98.233) / 2, (-107.857 + 94.478) / 2])
LAB_STD = np.array([(100 - 0) / 2, (86.183 + 98.233) / 2, (107.857 + 94.478) / 2])


def rgb2lab(rgb):
    """scikit-image's `rgb2lab` (D65, 2 degrees) in float64: (..., 3) in [0, 1] -> (..., 3) L, a, b."""
    rgb = np.asarray(rgb, dtype=np.float64)
    linear = np.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
    xyz_from_rgb = np.array([[0.412453, 0.357580, 0.180423],
                             [0.212671, 0.715160, 0.072169],
                             [0.019334, 0.119193, 0.950227]])
    xyz = linear @ xyz_from_rgb.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16.0 / 116.0)
    return np.stack([116.0 * f[..., 1] - 16.0, 500.0 * (f[..., 0] - f[..., 1]), 200.0 * (f[..., 1] - f[..., 2])], -1)


def nce_criterion(x, n_data):
    """The authors' NCECriterion: x (B, 1 + m) of P = exp(s) / Z, the positive first."""
    m, pn, eps = x.shape[1] - 1, 1.0 / n_data, 1e-7
    log_d1 = torch.log(x[:, 0] / (x[:, 0] + m * pn + eps))
    log_d0 = torch.log((m * pn) / (x[:, 1:] + m * pn + eps))
    return -(log_d1.sum(0) + log_d0.sum()) / x.shape[0]


def reference_step(params, memory_l, memory_ab, zs, images, y, noise, lr):
    """One step of the authors' CMC in plain PyTorch: (loss, new params, memories, (Z_l, Z_ab))."""
    p = {name: torch.tensor(value, requires_grad=True) for name, value in params.items()}
    memory_l, memory_ab = torch.tensor(memory_l), torch.tensor(memory_ab)
    lab = torch.tensor(((rgb2lab(images) - LAB_MEAN) / LAB_STD).astype("float32"))  # (B, H, W, 3)
    l_view, ab_view = torch.split(lab, [1, 2], dim=-1)
    l = torch.relu(l_view.flatten(1) @ p["l_kernel"] + p["l_bias"]) @ p["l_fc_kernel"] + p["l_fc_bias"]
    ab = torch.relu(ab_view.flatten(1) @ p["ab_kernel"] + p["ab_bias"]) @ p["ab_fc_kernel"] + p["ab_fc_bias"]
    l, ab = torch.nn.functional.normalize(l, dim=1), torch.nn.functional.normalize(ab, dim=1)
    y = torch.tensor(y).long()
    idx = torch.cat([y[:, None], torch.tensor(noise).long()], dim=1)  # (B, 1 + m)
    out_ab = torch.exp(torch.bmm(memory_l[idx].detach(), ab[:, :, None]).squeeze(2) / TEMPERATURE)
    out_l = torch.exp(torch.bmm(memory_ab[idx].detach(), l[:, :, None]).squeeze(2) / TEMPERATURE)
    z_l, z_ab = zs
    if z_l is None:
        z_l, z_ab = out_l.mean().item() * N, out_ab.mean().item() * N
    loss = nce_criterion(out_l / z_l, N) + nce_criterion(out_ab / z_ab, N)
    loss.backward()
    with torch.no_grad():
        new = {name: (t - lr * t.grad).numpy() for name, t in p.items()}
        for memory, feature in ((memory_l, l), (memory_ab, ab)):
            pos = memory[y] * MOMENTUM + feature * (1 - MOMENTUM)
            memory[y] = pos / pos.pow(2).sum(1, keepdim=True).pow(0.5)
    return loss.item(), new, memory_l.numpy(), memory_ab.numpy(), (z_l, z_ab)


def _variables(model):
    return kernels_and_biases(l=model.backbone, ab=model.ab_backbone, l_fc=model.l_head, ab_fc=model.ab_head)


def _numpy(variable):
    return keras.ops.convert_to_numpy(variable).copy()


def test_two_cmc_steps_equal_the_authors_nce_steps():
    model = CMC(dense_relu_backbone(1), num_data=N, ab_backbone=dense_relu_backbone(2), num_negatives=M,
                temperature=TEMPERATURE, feature_dim=4, bank_momentum=MOMENTUM, loss="nce", augmentation=None, seed=5)
    model.compile(optimizer=keras.optimizers.SGD(LR))
    rng = np.random.default_rng(0)
    set_scaled_normal_start(model, rng)  # the same start on every backend and run
    params = _variables(model)
    memory_l, memory_ab, zs = _numpy(model.l_bank.bank), _numpy(model.ab_bank.bank), (None, None)
    for y in (np.array([3, 7, 0, 12]), np.array([7, 1, 3, 9])):  # rows 7 and 3 again: written by step 1
        images = rng.random((4, 2, 2, 3)).astype("float32")  # RGB in [0, 1]
        noise = next_noise(model.l_bank, 4, M)  # one draw for both directions, from the L bank's generator
        loss, expected, memory_l, memory_ab, zs = reference_step(params, memory_l, memory_ab, zs, images, y,
                                                                  noise, LR)
        logs = model.train_on_batch(x={"images": images, "index": y.astype("int32")}, return_dict=True)
        params = _variables(model)
        assert logs["loss"] == pytest.approx(loss, rel=1e-5)
        for name, value in expected.items():
            assert_close(params[name], value, err_msg=name)
        assert_close(_numpy(model.l_bank.bank), memory_l)
        assert_close(_numpy(model.ab_bank.bank), memory_ab)
