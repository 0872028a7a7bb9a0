"""A whole DenseCL step against a plain-PyTorch re-statement of the authors' step (issue 36 item 4).

Wang et al. 2021 (https://arxiv.org/abs/2011.09157), Sec. 3.1-3.3: L_q, MoCo's InfoNCE on
the global head (eq. 1); L_r = (1/S^2) sum_s -log exp(r^s . t+^s / tau) / (exp(r^s . t+^s /
tau) + sum_t- exp(r^s . t- / tau)) on the dense head (eq. 2, the paper's missing "/tau" in
the first denominator term restored); L = (1 - lambda) L_q + lambda L_r (eq. 3), lambda
= 0.5; the positive t+^s is the key's dense vector at c_s = argmax_j cos(f_s, f'_j) of the
two views' backbone features (Sec. 3.3). The facts of the authors' code
(WXinlong/DenseCL `openselfsup/models/densecl.py`, `necks.py` `DenseCLNeck`,
`heads/contrastive_head.py`; read for facts only), written here from them, not from
keras_paperzoo:

- the neck: q from AdaptiveAvgPool(1) -> Linear -> ReLU -> Linear; the dense grid from
  Conv1x1 -> ReLU -> Conv1x1 (biases on; `num_grid=None`: S x S is the backbone's
  resolution); q2 = AdaptiveAvgPool(1) of the dense grid *before* normalisation; q, q2,
  the grid and the backbone map (flattened N x C x S^2) each L2-normalised over C;
- with no gradient: the momentum update of every encoder_q / encoder_k parameter pair
  (backbone and both heads), theta_k <- m theta_k + (1 - m) theta_q, then the key forward
  with the updated key encoder (one device: no batch shuffle; the backbone has no batch norm);
- l_pos = q . k, l_neg = q @ queue; `backbone_sim_matrix = q_b^T k_b` (N x S^2 x S^2, query
  backbone against key backbone), `max(dim=2)[1]` its argmax, the key grid gathered there,
  l_pos_dense = sum_C q_grid * gathered (N S^2 x 1), l_neg_dense = q_grid @ queue2;
- `ContrastiveHead`: cat([pos, neg]) / T, `CrossEntropyLoss` against label 0 (a mean over
  N rows, or over the N S^2 locations), T = 0.2 (the configs' temperature);
- loss = (1 - loss_lambda) loss_single + loss_lambda loss_dense; afterwards k enters
  `queue` and k2 (the pooled dense key) enters `queue2`, each at its own pointer, which
  advances by N mod K; SGD moves encoder_q only.

The reference runs in float64. Both sides start from identical weights: a Conv2D 2 x 2
backbone (a 3 x 3 map of 6 channels from 4 x 4 x 2 images, so S^2 = 9 locations), the two
heads (8 hidden, 4 out), a key encoder set apart from the query encoder so that the
momentum update shows, the same two queues and the same two views (augmentation off);
plain SGD. The data are checked to be telling: every location's best match leads the
second by a margin (a float32 argmax cannot flip), the correspondence is not the identity
and changes the positives, matching on the dense grids instead of the backbone maps would
give other matches, and L_q and L_r differ. Loss, L_q, L_r, updated query encoder, updated key encoder,
both queues and both pointers must agree to 1e-5. lambda = 0.5 (the default) and 0.2 (at
0.5 a swap of the two weights would not show).

No difference from the authors' step was found. The one difference in wording is the
paper's, already named in the trainer's docstring: the text calls the dense negatives
"global projection head" features, the code (and ours) keeps the pooled dense-head keys.
"""

import numpy as np
import pytest

import keras
from keras import ops

torch = pytest.importorskip("torch")
from torch.nn import functional as F  # noqa: E402

from keras_paperzoo.models import DenseCL  # noqa: E402
from tests.parity.parity_checks import assert_close  # noqa: E402

LEARNING_RATE, M, K, B, TEMPERATURE = 0.5, 0.9, 8, 4, 0.2
PARTS = ("backbone", "head", "dense_head")  # the reference's parameter groups


def encoder(x, p):
    """The authors' encoder_q / encoder_k on NHWC images x: (q, q_grid, q2, q_b), each normalised over C.

    p: {"backbone": [conv kernel (kh, kw, in, out), bias], "head": [W0, b0, W1, b1], "dense_head": [...]}
    in Keras layouts (a kernel (in, out)); the convolutions use them as 1 x 1 / 2 x 2 weights."""
    w, b = p["backbone"]
    feature_map = F.conv2d(x.permute(0, 3, 1, 2), w.permute(3, 2, 0, 1), b)  # (N, D, S, S), the backbone
    pooled = feature_map.mean(dim=(2, 3))  # AdaptiveAvgPool2d((1, 1)), flattened: (N, D)
    w0, b0, w1, b1 = p["head"]
    q = torch.relu(pooled @ w0 + b0) @ w1 + b1  # mlp: Linear - ReLU - Linear
    w0, b0, w1, b1 = p["dense_head"]
    hidden = torch.relu(F.conv2d(feature_map, w0.T[:, :, None, None], b0))  # Conv2d(D, hid, 1) - ReLU
    grid = F.conv2d(hidden, w1.T[:, :, None, None], b1)  # Conv2d(hid, C, 1): (N, C, S, S)
    q2 = grid.mean(dim=(2, 3))  # avgpool2 of the un-normalised grid: (N, C)
    grid = grid.reshape(grid.shape[0], grid.shape[1], -1)  # (N, C, S^2)
    q_b = feature_map.reshape(feature_map.shape[0], feature_map.shape[1], -1)  # (N, D, S^2)
    return F.normalize(q, dim=1), F.normalize(grid, dim=1), F.normalize(q2, dim=1), F.normalize(q_b, dim=1)


def contrastive_head(pos, neg):
    logits = torch.cat((pos, neg), dim=1) / TEMPERATURE
    return F.cross_entropy(logits, torch.zeros(logits.shape[0], dtype=torch.long))


def reference_densecl_step(im_q, im_k, query_params, key_params, queue, queue2, pointer, loss_lambda):
    """The authors' `forward_train` and the SGD step, float64. Queues (K, C) here (theirs are (C, K))."""
    params_q = {part: [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
                for part, values in query_params.items()}
    params_k = {part: [torch.tensor(v, dtype=torch.float64) for v in values] for part, values in key_params.items()}
    q, q_grid, q2, q_b = encoder(torch.tensor(im_q, dtype=torch.float64), params_q)
    with torch.no_grad():
        params_k = {part: [pk * M + pq.detach() * (1.0 - M) for pk, pq in zip(params_k[part], params_q[part])]
                    for part in PARTS}  # _momentum_update_key_encoder, before the keys
        k, k_grid, k2, k_b = encoder(torch.tensor(im_k, dtype=torch.float64), params_k)
    queue, queue2 = torch.tensor(queue, dtype=torch.float64), torch.tensor(queue2, dtype=torch.float64)
    l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
    l_neg = torch.einsum("nc,kc->nk", q, queue)
    backbone_sim_matrix = torch.matmul(q_b.permute(0, 2, 1), k_b)  # (N, S^2, S^2)
    densecl_sim_ind = backbone_sim_matrix.max(dim=2)[1]  # (N, S^2)
    indexed_k_grid = torch.gather(k_grid, 2, densecl_sim_ind.unsqueeze(1).expand(-1, k_grid.size(1), -1))
    densecl_sim_q = (q_grid * indexed_k_grid).sum(1)  # (N, S^2)
    l_pos_dense = densecl_sim_q.view(-1).unsqueeze(-1)  # (N S^2, 1)
    identity_sim_q = (q_grid * k_grid).sum(1)  # location s against s: what a missing correspondence gives
    q_grid = q_grid.permute(0, 2, 1).reshape(-1, q_grid.size(1))  # (N S^2, C)
    l_neg_dense = torch.einsum("nc,kc->nk", q_grid, queue2)
    loss_single, loss_dense = contrastive_head(l_pos, l_neg), contrastive_head(l_pos_dense, l_neg_dense)
    loss = loss_single * (1 - loss_lambda) + loss_dense * loss_lambda
    new_queue, new_queue2 = queue.clone(), queue2.clone()
    new_queue[pointer:pointer + B] = k  # _dequeue_and_enqueue(k)
    new_queue2[pointer:pointer + B] = k2  # _dequeue_and_enqueue2(k2)
    loss.backward()
    with torch.no_grad():
        new_q = {part: [(v - LEARNING_RATE * v.grad).numpy() for v in params_q[part]] for part in PARTS}
        # the data must make the argmax unambiguous in float32 and differ from a match on the dense grids
        top2 = torch.topk(backbone_sim_matrix, 2, dim=2).values
        dense_sim = torch.matmul(F.normalize(q_grid.reshape(B, -1, q_grid.size(1)), dim=2), k_grid)
    return {
        "loss": loss.item(), "global_loss": loss_single.item(), "dense_loss": loss_dense.item(),
        "query": new_q, "key": {part: [v.numpy() for v in params_k[part]] for part in PARTS},
        "queue": new_queue.numpy(), "queue2": new_queue2.numpy(), "pointer": (pointer + B) % K,
        "matches": densecl_sim_ind.numpy(), "margin": float((top2[..., 0] - top2[..., 1]).min()),
        "dense_matches": dense_sim.max(dim=2)[1].numpy(),
        "identity_gap": float((densecl_sim_q - identity_sim_q).detach().abs().max()),
    }


def _part(variable):
    path = variable.path
    return "dense_head" if path.startswith("dense_head/") else "head" if path.startswith("head/") else "backbone"


@pytest.mark.parametrize("dense_weight", [None, 0.2])  # None: the default, lambda = 0.5
def test_densecl_step_matches_the_authors_step(dense_weight):
    keras.utils.set_random_seed(0)
    backbone = keras.Sequential([keras.Input((4, 4, 2)), keras.layers.Conv2D(6, 2)])  # (B, 3, 3, 6)
    extra = {} if dense_weight is None else {"dense_weight": dense_weight}
    densecl = DenseCL(backbone, queue_size=K, momentum=M, projection_dim=4, projection_hidden_dim=8,
                      shuffle_bn_splits=1, augmentation=None, seed=0, **extra)
    densecl.compile(optimizer=keras.optimizers.SGD(LEARNING_RATE))
    loss_lambda = 0.5 if dense_weight is None else dense_weight
    assert densecl.dense_weight == loss_lambda and densecl.temperature == pytest.approx(TEMPERATURE)
    pairs = densecl._momentum_pairs  # (key variable, query variable)
    assert len(pairs) == len(densecl.trainable_variables) == 10  # backbone 2, head 4, dense head 4
    rng = np.random.default_rng(1)
    for key, query in pairs:  # biases away from 0 and a key encoder that differs from the query encoder
        query.assign(rng.normal(size=query.shape).astype("float32") * 0.5)
        key.assign(rng.normal(size=key.shape).astype("float32") * 0.5)
    query_params, key_params = {part: [] for part in PARTS}, {part: [] for part in PARTS}
    for key, query in pairs:  # in each part: kernel, bias, kernel, bias
        query_params[_part(query)].append(ops.convert_to_numpy(query))
        key_params[_part(query)].append(ops.convert_to_numpy(key))
    queue, queue2 = ops.convert_to_numpy(densecl.queue), ops.convert_to_numpy(densecl.dense_queue.queue)
    pointer = int(ops.convert_to_numpy(densecl.queue_pointer))
    assert pointer == int(ops.convert_to_numpy(densecl.dense_queue.pointer)) == 0
    x_q, x_k = (rng.normal(size=(B, 4, 4, 2)).astype("float32") for _ in range(2))

    ref = reference_densecl_step(x_q, x_k, query_params, key_params, queue, queue2, pointer, loss_lambda)
    assert ref["margin"] > 1e-4  # no near-tie in the correspondence
    assert (ref["matches"] != np.arange(9)).any() and ref["identity_gap"] > 1e-2  # not the identity
    assert (ref["matches"] != ref["dense_matches"]).any()  # matching on the dense grids instead would show
    assert abs(ref["global_loss"] - ref["dense_loss"]) > 1e-2  # so would the weights' order

    logs = densecl.train_on_batch((x_q, x_k), return_dict=True)
    for name in ("loss", "global_loss", "dense_loss"):
        assert logs[name] == pytest.approx(ref[name], rel=1e-5), name
    for key, query in pairs:
        part = _part(query)
        index = [id(q) for _, q in pairs if _part(q) == part].index(id(query))
        assert_close(ops.convert_to_numpy(query), ref["query"][part][index],
                                   err_msg=query.path)
        assert_close(ops.convert_to_numpy(key), ref["key"][part][index],
                                   err_msg=key.path)
        assert np.abs(ref["query"][part][index] - query_params[part][index]).max() > 1e-3, f"{query.path} did not move"
    assert_close(ops.convert_to_numpy(densecl.queue), ref["queue"])
    assert_close(ops.convert_to_numpy(densecl.dense_queue.queue), ref["queue2"])
    assert int(ops.convert_to_numpy(densecl.queue_pointer)) == ref["pointer"]
    assert int(ops.convert_to_numpy(densecl.dense_queue.pointer)) == ref["pointer"]
