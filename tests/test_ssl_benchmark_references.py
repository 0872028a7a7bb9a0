"""benchmarks/torch_reference/{moco,simclr,byol}_cifar.py compute MoCo v2's, SimCLR's and BYOL's steps as
keras-paperzoo does.

`python -m benchmarks ssl --models moco_v2 simclr byol` times our trainers against these plain
PyTorch steps (their shared pieces in `ssl_parts.py`); the comparison means something only if
both compute the same objective with the same state updates. The references import neither
torchvision nor lightly, so they run here: losses, queue, momentum update and tau schedule
against keras-paperzoo's on the same NumPy inputs, and each reference, built as the family
builds it, takes a step with the Keras preset's parameter count.
"""

import types

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers.feature_queue import FeatureQueue
from keras_paperzoo.losses import byol_loss, info_nce, nt_xent, symmetric_byol_loss
from keras_paperzoo.training.ema import ema_update
from keras_paperzoo.training.momentum import cosine_momentum

torch = pytest.importorskip("torch")
from benchmarks.families import ssl  # noqa: E402
from benchmarks.torch_reference import byol_cifar, moco_cifar, simclr_cifar, ssl_parts  # noqa: E402  (need torch)


@pytest.fixture
def one_thread():
    """One torch thread for the ResNet-18 steps: with two on a shared machine, each tiny op waits its turn."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _unit_rows(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype("float32")
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _float(x):
    return float(ops.convert_to_numpy(x))


def test_info_nce_with_a_queue_matches_keras_paperzoos():
    q, k, queue = _unit_rows((6, 8), 0), _unit_rows((6, 8), 1), _unit_rows((12, 8), 2)  # B = 6, K = 12
    expected = _float(info_nce(q, k, queue, temperature=0.2))
    tq, tk = torch.tensor(q), torch.tensor(k)
    got = ssl_parts.info_nce((tq * tk).sum(1, keepdim=True), tq @ torch.tensor(queue).t(), 0.2)
    assert float(got) == pytest.approx(expected, rel=1e-5)
    assert float(ssl_parts.info_nce(torch.zeros(3, 1), torch.zeros(3, 12), 0.2)) == pytest.approx(np.log(13))


def test_feature_queue_matches_keras_paperzoos_ring_buffer():
    keras_queue = FeatureQueue(size=6, dim=4, seed=0)
    queue = ssl_parts.FeatureQueue(6, 4)
    np.testing.assert_allclose(queue.queue.norm(dim=1).numpy(), 1.0, rtol=1e-6)  # random unit keys at start
    queue.queue.copy_(torch.tensor(ops.convert_to_numpy(keras_queue.queue)))
    first = queue.read()
    for i in range(4):  # B = 2: the fourth batch wraps round to rows 0-1
        keys = _unit_rows((2, 4), 10 + i)
        keras_queue.enqueue(keys)
        queue.enqueue(torch.tensor(keys))
        np.testing.assert_allclose(queue.queue.numpy(), ops.convert_to_numpy(keras_queue.queue), atol=1e-7)
        assert queue.pointer == int(ops.convert_to_numpy(keras_queue.pointer)) == 2 * (i + 1) % 6
    assert not torch.equal(first, queue.queue)  # `read()` is a copy, not a view of the buffer


def test_nt_xent_matches_keras_paperzoos():
    rng = np.random.default_rng(3)
    z_a, z_b = rng.standard_normal((2, 5, 8)).astype("float32") * 3.0  # not normalised: the loss does it
    expected = _float(nt_xent(z_a, z_b, temperature=0.5))
    assert float(ssl_parts.nt_xent(torch.tensor(z_a), torch.tensor(z_b), 0.5)) == pytest.approx(expected, rel=1e-5)
    same = torch.tensor(z_a)  # each positive identical to its anchor: the top logit, so below log(2N - 1)
    assert float(ssl_parts.nt_xent(same, same, 0.5)) < np.log(9)


def test_byol_loss_matches_keras_paperzoos_and_stops_the_target_gradient():
    rng = np.random.default_rng(4)
    q1, z2, q2, z1 = rng.standard_normal((4, 6, 8)).astype("float32")
    expected = _float(symmetric_byol_loss(q1, z2, q2, z1))
    tq1, tz2 = torch.tensor(q1, requires_grad=True), torch.tensor(z2, requires_grad=True)
    got = ssl_parts.byol_loss(tq1, tz2) + ssl_parts.byol_loss(torch.tensor(q2), torch.tensor(z1))
    assert float(got.detach()) == pytest.approx(expected, rel=1e-5)
    assert float(ssl_parts.byol_loss(tq1, tz2).detach()) == pytest.approx(_float(byol_loss(q1, z2)), rel=1e-5)
    got.backward()
    assert tq1.grad is not None and tz2.grad is None  # sg(z')


def test_momentum_update_and_cosine_tau_match_keras_paperzoos():
    torch.manual_seed(0)
    online = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    target = ssl_parts.momentum_copy(online)
    assert all(not p.requires_grad for p in target.parameters())
    with torch.no_grad():
        for p in online.parameters():
            p.add_(1.0)
        online[1].running_mean.fill_(5.0)
    before = [p.detach().numpy().copy() for p in target.parameters()]
    sources = [p.detach().numpy().copy() for p in online.parameters()]
    variables = [keras.Variable(b) for b in before]
    ssl_parts.momentum_update(online, target, 0.9)
    ema_update(variables, sources, 0.9)
    for got, b, s, v in zip(target.parameters(), before, sources, variables):
        np.testing.assert_allclose(got.numpy(), 0.9 * b + 0.1 * s, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(got.numpy(), ops.convert_to_numpy(v), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(target[1].running_mean.numpy(), 0.0)  # BN statistics not averaged
    for k in (0, 1, 5, 9, 10, 12):  # K = 10; past K tau stays 1
        expected = float(ops.convert_to_numpy(cosine_momentum(k, 10, 0.996)))
        assert ssl_parts.cosine_momentum(k, 10, 0.996) == pytest.approx(expected, rel=1e-7, abs=1e-7)
    assert ssl_parts.cosine_momentum(0, 10, 0.996) == pytest.approx(0.996)
    assert ssl_parts.cosine_momentum(10, 10, 0.996) == 1.0


def test_moco_reference_reads_the_queue_before_enqueueing_the_keys(one_thread):
    torch.manual_seed(0)
    model = moco_cifar.MoCoV2(queue_size=8, hidden_dim=16, projection_dim=8, bn_splits=1).eval()  # fixed BN stats
    x_q, x_k = torch.randn(4, 3, 8, 8), torch.randn(4, 3, 8, 8)
    queue = model.queue.read().numpy()
    loss = model.loss(x_q, x_k)
    with torch.no_grad():  # before any optimizer step the key encoder equals the query encoder
        q = torch.nn.functional.normalize(model.head(model.backbone(x_q)), dim=1).numpy()
        k = torch.nn.functional.normalize(model.head(model.backbone(x_k)), dim=1).numpy()
    assert float(loss.detach()) == pytest.approx(_float(info_nce(q, k, queue, temperature=0.2)), rel=1e-4)
    np.testing.assert_allclose(model.queue.queue[:4].numpy(), k, atol=1e-5)  # this batch's keys, rows 0-3
    np.testing.assert_array_equal(model.queue.queue[4:].numpy(), queue[4:])
    assert model.queue.pointer == 4


REFERENCES = [("moco_v2", moco_cifar), ("simclr", simclr_cifar), ("byol", byol_cifar)]


def _family_reference(name):
    """The reference as `python -m benchmarks ssl` builds it (`ssl.reference_model`): no lightly needed."""
    torch.manual_seed(0)
    return ssl.reference_model(name, types.SimpleNamespace(bn_splits=2, steps=1, repeats=0, batch_size=4))


@pytest.mark.parametrize("name, module", REFERENCES)
def test_reference_takes_a_step(name, module, one_thread):
    net, description, params, make_step = _family_reference(name)
    assert "plain PyTorch" in description and make_step is module.make_step
    assert f"{params:,}" in module.__doc__  # the count the docstring states (the Keras preset's: below)
    net.train()
    step, _ = make_step(net, 4)
    weight = net.backbone[0][0].weight.detach().clone()  # the stem conv
    loss = float(step(torch.randn(4, 3, 8, 8), torch.randn(4, 3, 8, 8)))  # 8x8: a 1x1 map after stage 4
    assert np.isfinite(loss) and loss > 0
    assert not torch.equal(weight, net.backbone[0][0].weight)


# The count does not depend on the backend; a first CIFAR ResNet-18 build compiles its initialisers
# on JAX (8-14 s here), so the Keras trainers are built on the torch backend only.
@pytest.mark.skipif(keras.config.backend() != "torch", reason="backend-independent count, checked on torch")
@pytest.mark.parametrize("name, module", REFERENCES)
def test_reference_has_the_keras_presets_parameter_count(name, module):
    _, _, params, _ = _family_reference(name)
    trainer, _ = ssl.build_keras_model(name, batch_size=4, steps=1, epochs=1, bn_splits=2)
    assert params == sum(int(np.prod(w.shape)) for w in trainer.trainable_weights)
