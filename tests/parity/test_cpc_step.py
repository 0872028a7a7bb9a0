"""One CPC step (sequences, GRU context) equals a plain-PyTorch re-statement of the paper's step
(issue 36 item 4).

CPC v1 (van den Oord et al. 2018, https://arxiv.org/abs/1807.03748, Sec. 2.1-2.3, eq. 3-4;
Sec. 3.1's audio model: a strided encoder and a GRU) has no public code from its authors;
CPC v2's authors give the loss as pseudo-code (Henaff et al. 2019, Appendix A.2). The
reference is written from those, not from keras_paperzoo:

- z = g_enc(x) (B, T, D); c = GRU(z) (`torch.nn.GRU`, batch first) (B, T, units);
- for k = 1 .. K: preds = W_k c_t for t < T - k (eq. 3's log-bilinear f_k, no bias);
  logits = preds @ targets^T against every position of every sequence (N = B T, A.2's
  `targets = reshape(latents, [-1, D])`); labels = b T + t + k (A.2's
  `b * col_dim * rows + (i + 1) * rows + col` with one column); the cross-entropy
  averaged over the predictions (A.2's `cross_entropy_with_logits`, eq. 4's InfoNCE);
- A.2 sums the K losses; ours averages them over k (the trainer's docstring: "the mean
  keeps the loss comparable to log N"). The test asserts that documented difference,
  loss = sum / K, and compares the step of the mean (the same direction, 1/K the size).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import keras  # noqa: E402

from keras_paperzoo.models import CPC  # noqa: E402
from tests.parity.parity_checks import assert_close, set_scaled_normal_start  # noqa: E402

B, T, C, D, UNITS, K, LR = 3, 6, 3, 4, 5, 2, 0.5


def reference_step(params, x, lr):
    """(A.2's loss summed over k, updated params after SGD on the sum / K)."""
    p = {name: torch.tensor(value, requires_grad=True) for name, value in params.items()}
    gru = torch.nn.GRU(D, UNITS, batch_first=True)
    # Keras's GRU gates in the order (update z, reset r, candidate); PyTorch's (r, z, n): same equations
    # (reset after the matmul), the weights re-ordered.
    def torch_order(w):
        wz, wr, wn = torch.split(w, UNITS, dim=-1)
        return torch.cat([wr, wz, wn], dim=-1)
    z = torch.relu(torch.tensor(x) @ p["enc_kernel"] + p["enc_bias"])  # (B, T, D)
    gru_params = {"weight_ih_l0": torch_order(p["gru_kernel"]).t(), "weight_hh_l0": torch_order(p["gru_recurrent"]).t(),
                  "bias_ih_l0": torch_order(p["gru_bias"][0]), "bias_hh_l0": torch_order(p["gru_bias"][1])}
    c, _ = torch.func.functional_call(gru, gru_params, (z,))  # (B, T, units)
    targets = z.reshape(-1, D)  # (N, D), N = B T
    loss = 0.0
    for k in range(1, K + 1):
        preds = (c[:, :T - k] @ p[f"w_{k}"]).reshape(-1, D)  # (B (T - k), D)
        logits = preds @ targets.t()  # (M, N)
        m = torch.arange(logits.shape[0])
        labels = (m // (T - k)) * T + k + m % (T - k)  # z at (b, t + k)
        loss = loss + torch.nn.functional.cross_entropy(logits, labels)
    (loss / K).backward()
    with torch.no_grad():
        return loss.item(), {name: (t - lr * t.grad).numpy() for name, t in p.items()}


def _variables(model):
    enc_kernel, enc_bias = model.backbone.trainable_variables
    gru_kernel, gru_recurrent, gru_bias = model.contexts[0].trainable_variables
    named = dict(enc_kernel=enc_kernel, enc_bias=enc_bias, gru_kernel=gru_kernel, gru_recurrent=gru_recurrent,
                 gru_bias=gru_bias)
    for k, predictor in zip(range(1, K + 1), model.predictors):
        (named[f"w_{k}"],) = predictor.trainable_variables
    return {name: keras.ops.convert_to_numpy(v).copy() for name, v in named.items()}


def test_one_cpc_step_equals_the_papers_infonce_step():
    sequences = keras.Input((T, C))
    backbone = keras.Model(sequences, keras.layers.Dense(D, activation="relu")(sequences))
    model = CPC(backbone, context="gru", context_units=UNITS, prediction_steps=K, augmentation=None, seed=1)
    model.compile(optimizer=keras.optimizers.SGD(LR))
    rng = np.random.default_rng(0)
    set_scaled_normal_start(model, rng)  # the same start everywhere; W_k not at their zero start
    x = rng.normal(size=(B, T, C)).astype("float32")
    before = _variables(model)
    loss_sum, expected = reference_step(before, x, LR)
    logs = model.train_on_batch(x=x, return_dict=True)
    after = _variables(model)
    assert logs["loss"] == pytest.approx(loss_sum / K, rel=1e-5)  # the documented mean over k
    assert logs["mi_bound"] == pytest.approx(np.log(B * T) - loss_sum / K, abs=1e-6)  # eq. 5 (log N - loss: near 0)
    for name, value in expected.items():
        assert np.abs(value - before[name]).max() > 1e-3, f"{name} did not move"
        assert_close(after[name], value, err_msg=name)
