"""A whole MoCo step against a plain-PyTorch re-statement of the authors' step (issue 36 item 4).

He et al. 2020, Algorithm 1 and eq. 1-2, with the facts of the authors' `moco/builder.py`
(facebookresearch/moco; read for facts only): q = normalize(f_q(x_q)); with no gradient,
first the momentum update theta_k <- m theta_k + (1 - m) theta_q on the parameters, then
k = normalize(f_k(x_k)); logits = [q . k+ | q . queue] / T with the positive at column 0
and `CrossEntropyLoss` against label 0 (mean over the batch); then the batch's keys
replace the oldest queue entries and the pointer advances by B mod K; the optimizer step
changes the query encoder only. MoCo v1: a linear head, T = 0.07; MoCo v2 (Chen et al.
2020): an MLP head (fc-ReLU-fc), T = 0.2 (each version's default temperature is used).

Both sides start from identical weights (a Flatten + Dense backbone and the head; the
key encoder set apart from the query encoder so that the momentum update shows), the
same queue and the same two views (augmentation off); one device, so no Shuffling BN
(the backbone has no batch norm). Plain SGD on both sides. Loss, updated query encoder,
updated key encoder, queue and pointer must agree.
"""

import numpy as np
import pytest

import keras
from keras import ops

torch = pytest.importorskip("torch")
from torch.nn import functional as F  # noqa: E402

from keras_paperzoo.models.moco import MoCo  # noqa: E402
from tests.parity.parity_checks import assert_close  # noqa: E402

LEARNING_RATE, M, K, B = 0.1, 0.9, 8, 4
TEMPERATURE = {1: 0.07, 2: 0.2}  # v1 Sec. 4; v2 "--moco-t 0.2"
HEAD = {1: [(6, 3), (3,)], 2: [(6, 5), (5,), (5, 3), (3,)]}  # v1: fc; v2: fc-ReLU-fc


def encoder(x, params):
    """f(x) = normalize(head(backbone(x))): v1 head fc, v2 fc-ReLU-fc; Keras layouts (kernel (in, out), bias)."""
    h = x.reshape(x.shape[0], -1) @ params[0] + params[1]  # the Flatten + Dense backbone
    if len(params) == 6:  # v2
        h = torch.relu(h @ params[2] + params[3])
    return F.normalize(h @ params[-2] + params[-1], dim=1)


def reference_moco_step(x_q, x_k, query_params, key_params, queue, pointer, temperature):
    """The authors' forward and update. queue (K, C) here (theirs is (C, K)). Returns the new state and loss."""
    params_q = [torch.tensor(p, requires_grad=True) for p in query_params]
    params_k = [torch.tensor(p) for p in key_params]
    q = encoder(torch.tensor(x_q), params_q)
    with torch.no_grad():
        params_k = [pk * M + pq.detach() * (1.0 - M) for pk, pq in zip(params_k, params_q)]  # eq. 2, first
        k = encoder(torch.tensor(x_k), params_k)
    queue = torch.tensor(queue)
    l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
    l_neg = torch.einsum("nc,kc->nk", q, queue)
    logits = torch.cat([l_pos, l_neg], dim=1) / temperature
    loss = F.cross_entropy(logits, torch.zeros(logits.shape[0], dtype=torch.long))
    new_queue = queue.clone()
    new_queue[pointer:pointer + B] = k  # dequeue and enqueue
    loss.backward()
    with torch.no_grad():
        new_q = [(p - LEARNING_RATE * p.grad).numpy() for p in params_q]
    return float(loss.detach()), new_q, [p.numpy() for p in params_k], new_queue.numpy(), (pointer + B) % K


@pytest.mark.parametrize("version", [1, 2])
def test_moco_step_matches_the_authors_step(version):
    keras.utils.set_random_seed(0)
    backbone = keras.Sequential([keras.Input((4, 4, 1)), keras.layers.Flatten(), keras.layers.Dense(6)])
    moco = MoCo(backbone, version=version, queue_size=K, momentum=M, projection_dim=3,
                projection_hidden_dim=5, shuffle_bn_splits=1, augmentation=None, seed=0)
    moco.compile(optimizer=keras.optimizers.SGD(LEARNING_RATE))
    pairs = moco._momentum_pairs  # (key variable, query variable), in the encoders' order
    assert [tuple(q.shape) for _, q in pairs] == [(16, 6), (6,)] + HEAD[version]
    assert moco.temperature == pytest.approx(TEMPERATURE[version])  # the version's default
    rng = np.random.default_rng(1)
    for key, _ in pairs:  # a key encoder that differs from the query encoder
        key.assign(rng.normal(size=key.shape).astype("float32") * 0.5)
    query_params = [ops.convert_to_numpy(q) for _, q in pairs]
    key_params = [ops.convert_to_numpy(k) for k, _ in pairs]
    queue, pointer = ops.convert_to_numpy(moco.queue), int(ops.convert_to_numpy(moco.queue_pointer))
    x_q, x_k = (rng.random((B, 4, 4, 1)).astype("float32") for _ in range(2))

    loss, new_q, new_k, new_queue, new_pointer = reference_moco_step(x_q, x_k, query_params, key_params, queue,
                                                                      pointer, TEMPERATURE[version])
    logs = moco.train_on_batch((x_q, x_k), return_dict=True)
    assert logs["loss"] == pytest.approx(loss, rel=1e-5)
    for (key, query), ref_k, ref_q in zip(pairs, new_k, new_q):
        assert_close(ops.convert_to_numpy(query), ref_q)
        assert_close(ops.convert_to_numpy(key), ref_k)
    assert_close(ops.convert_to_numpy(moco.queue), new_queue)
    assert int(ops.convert_to_numpy(moco.queue_pointer)) == new_pointer
    assert max(np.abs(a - b).max() for a, b in zip(new_q, query_params)) > 1e-3  # the step moved f_q
