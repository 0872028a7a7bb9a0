"""One SwAV step equals a plain-PyTorch re-statement of the authors' step (issue 36 item 4).

The reference follows Caron et al. 2020 (https://arxiv.org/abs/2006.09882, Sec. 3.1-3.2,
eq. 1-4, Algorithm 1) and the authors' `main_swav.py` / `src/resnet50.py`, written here
from them, not from keras_paperzoo:

- multi-crop: each run of same-size crops through the backbone together, every crop
  through the projector (Linear - BN - ReLU - Linear) at once, z = normalize(., dim=1);
- output = z @ prototypes (a bias-free Linear), the prototypes normalised;
- `distributed_sinkhorn` on one worker: Q = exp(out / eps)^T, Q /= sum(Q), then
  `sinkhorn_iterations` times (rows / row sums / K; columns / column sums / B), Q *= B;
- loss: for each crop in `crops_for_assign`, subloss -= mean(sum(q * log_softmax(
  output_v / T))) over every other crop v, divided by (crops - 1); the total divided by
  len(crops_for_assign);
- the step: SGD on every parameter (no freeze here: `freeze_prototypes_niters` 0), then
  the prototypes re-normalised (the authors do it at the start of the next iteration,
  `w = normalize(w, dim=1, p=2)`: the same weights for the next forward).

One documented difference is carried over to the reference rather than tested: the
projector's batch norm uses Keras's epsilon 1e-3 where PyTorch's BatchNorm1d has 1e-5
(`ProjectionHead`'s docstring names it); the reference takes the epsilon as an argument.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import keras  # noqa: E402

from keras_paperzoo.models import SwAV  # noqa: E402
from tests.parity.parity_checks import assert_close  # noqa: E402

LR = 0.5  # large enough that the update is far above the comparison's atol
BN_EPS = 1e-3  # Keras's BatchNormalization default (PyTorch's is 1e-5): see the module docstring


def _sinkhorn(out, epsilon, iterations):
    """The authors' `distributed_sinkhorn` on one worker: codes (B, K), no gradient."""
    with torch.no_grad():
        q = torch.exp(out / epsilon).t()  # (K, B)
        b, k = q.shape[1], q.shape[0]
        q /= torch.sum(q)
        for _ in range(iterations):
            q /= torch.sum(q, dim=1, keepdim=True)
            q /= k
            q /= torch.sum(q, dim=0, keepdim=True)
            q /= b
        q *= b
        return q.t()


def reference_step(params, crops, crop_counts, crops_for_assign, temperature, epsilon, iterations, lr):
    """The authors' SwAV iteration in plain PyTorch: (loss, updated params) after one SGD step."""
    p = {name: torch.tensor(value, requires_grad=True) for name, value in params.items()}
    with torch.no_grad():  # main_swav.py: normalise the prototypes before the forward
        p["prototypes"].copy_(torch.nn.functional.normalize(p["prototypes"], dim=1, p=2))
    crops = [torch.tensor(c) for c in crops]
    # the backbone: a Dense + ReLU on each pixel's channels, then global average pooling (B, H, W, C) -> (B, D)
    groups, start = [], 0
    while start < len(crops):
        end = start + 1
        while end < len(crops) and crops[end].shape == crops[start].shape:
            end += 1
        x = torch.cat(crops[start:end])
        groups.append(torch.relu(x @ p["backbone_kernel"] + p["backbone_bias"]).mean(dim=(1, 2)))
        start = end
    h = torch.cat(groups)  # (V B, D)
    # projection head: Linear(D, hidden) - BatchNorm1d (train mode) - ReLU - Linear(hidden, 128)
    a = h @ p["hidden_kernel"]
    a = torch.nn.functional.batch_norm(a, None, None, p["bn_gamma"], p["bn_beta"], training=True, eps=BN_EPS)
    z = torch.relu(a) @ p["out_kernel"] + p["out_bias"]
    z = torch.nn.functional.normalize(z, dim=1, p=2)
    output = z @ p["prototypes"].t()  # (V B, K): nn.Linear(128, K, bias=False) with weight (K, 128)
    bs = crops[0].shape[0]
    n_crops = sum(crop_counts)
    loss = 0
    for crop_id in crops_for_assign:
        with torch.no_grad():
            q = _sinkhorn(output[bs * crop_id: bs * (crop_id + 1)].detach(), epsilon, iterations)
        subloss = 0
        for v in np.delete(np.arange(n_crops), crop_id):
            x = output[bs * v: bs * (v + 1)] / temperature
            subloss -= torch.mean(torch.sum(q * torch.log_softmax(x, dim=1), dim=1))
        loss += subloss / (n_crops - 1)
    loss /= len(crops_for_assign)
    loss.backward()
    with torch.no_grad():
        new = {name: (t - lr * t.grad) for name, t in p.items()}
        new["prototypes"] = torch.nn.functional.normalize(new["prototypes"], dim=1, p=2)  # next iteration's
    return loss.item(), {name: t.numpy() for name, t in new.items()}


def _trainer(crop_counts, temperature, epsilon):
    images = keras.Input((None, None, 3))
    features = keras.layers.GlobalAveragePooling2D()(keras.layers.Dense(6, activation="relu")(images))
    backbone = keras.Model(images, features)
    swav = SwAV(backbone, projection_dims=(5, 4), num_prototypes=6, temperature=temperature, epsilon=epsilon,
                sinkhorn_iterations=3, crop_counts=crop_counts, crops_for_assign=(0, 1),
                freeze_prototypes_epochs=0, augmentation=None, seed=3)
    swav.compile(optimizer=keras.optimizers.SGD(LR))
    rng = np.random.default_rng(1)
    for variable in [*swav.backbone.trainable_variables, *swav.projector.trainable_variables]:
        scale = 1 / np.sqrt(variable.shape[0]) if len(variable.shape) == 2 else 0.1  # biases not zero either
        variable.assign((rng.normal(size=variable.shape) * scale).astype("float32"))  # the same start everywhere
    prototypes = rng.normal(size=swav.prototypes.kernel.shape)  # (D, K)
    swav.prototypes.kernel.assign((prototypes / np.linalg.norm(prototypes, axis=0)).astype("float32"))
    return swav


def _variables(swav):
    """Our variables by the reference's names (torch layouts: the prototypes (K, 128))."""
    (backbone_kernel, backbone_bias) = swav.backbone.trainable_variables
    hidden_kernel, bn_gamma, bn_beta, out_kernel, out_bias = swav.projector.trainable_variables
    named = dict(backbone_kernel=backbone_kernel, backbone_bias=backbone_bias, hidden_kernel=hidden_kernel,
                 bn_gamma=bn_gamma, bn_beta=bn_beta, out_kernel=out_kernel, out_bias=out_bias)
    values = {name: keras.ops.convert_to_numpy(v).astype("float32") for name, v in named.items()}
    values["prototypes"] = keras.ops.convert_to_numpy(swav.prototypes.kernel).T.copy()  # (D, K) -> (K, D)
    return values


def test_one_swav_step_equals_the_authors_step():
    crop_counts, temperature, epsilon = (2, 2), 0.1, 0.05
    swav = _trainer(crop_counts, temperature, epsilon)
    rng = np.random.default_rng(0)
    means = rng.normal(size=(8, 1, 1, 3))  # images that differ (their pooled features too), as real ones do
    crops = [(means + 0.5 * rng.normal(size=(8, size, size, 3))).astype("float32")
             for size in (4, 4, 2, 2)]  # two full-size crops, two small ones
    # prototypes of norm != 1 on entry would be normalised by the reference first; ours start unit-norm
    before = _variables(swav)
    np.testing.assert_allclose(np.linalg.norm(before["prototypes"], axis=1), 1.0, rtol=1e-6)

    expected_loss, expected = reference_step(before, crops, crop_counts, (0, 1), temperature, epsilon, 3, LR)
    logs = swav.train_on_batch(x=crops, return_dict=True)
    after = _variables(swav)

    assert logs["loss"] == pytest.approx(expected_loss, rel=1e-5)
    for name, value in expected.items():
        assert np.abs(value - before[name]).max() > 1e-4, f"{name} did not move: the test would be blind to it"
        assert_close(after[name], value, err_msg=name)
