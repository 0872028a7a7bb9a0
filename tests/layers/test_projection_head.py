"""ProjectionHead: the MLP heads of SimCLR v1/v2, MoCo v2 and BYOL from one layer."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers.projection_head import ProjectionHead
from tests.model_checks import check_config_roundtrip, check_saved_model

D = 8  # the width of h fed to every head here


def _np(x):
    return np.asarray(ops.convert_to_numpy(x)).copy()


def _built(widths, **kwargs):
    head = ProjectionHead(widths, **kwargs)
    head.build((None, D))
    return head


def _layers(head, kind):
    return [layer for block in head.blocks for layer in block if isinstance(layer, kind)]


def _randomise(head, seed=0):
    """Every weight (kernels, biases, gamma, beta and the moving statistics) set to random values."""
    rng = np.random.default_rng(seed)
    for weight in head.weights:
        values = rng.normal(0, 0.5, weight.shape)
        if "moving_variance" in weight.path:
            values = rng.uniform(0.5, 2.0, weight.shape)
        weight.assign(values.astype("float32"))


# (widths, batch_norm, output_batch_norm) of each paper's head, as the layer's docstring tables them.
PAPERS = {
    "simclr_v1": ((16, 4), True, True),
    "simclr_v2": ((16, 16, 4), True, True),
    "moco_v2": ((16, 4), False, False),
    "byol": ((16, 4), True, False),
}


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_layers_and_widths_per_paper(paper):
    widths, batch_norm, output_batch_norm = PAPERS[paper]
    head = _built(widths, batch_norm=batch_norm, output_batch_norm=output_batch_norm)
    dense = _layers(head, keras.layers.Dense)
    norms = _layers(head, keras.layers.BatchNormalization)
    assert head.depth == len(dense) == {"simclr_v1": 2, "simclr_v2": 3, "moco_v2": 2, "byol": 2}[paper]
    assert [layer.units for layer in dense] == list(widths)
    # Batch norm after every hidden Dense (SimCLR, BYOL) or none (MoCo v2); after the output in SimCLR only.
    expected_norms = (len(widths) - 1) * batch_norm + output_batch_norm
    assert len(norms) == expected_norms
    for i, block in enumerate(head.blocks):
        last = i == len(widths) - 1
        has_norm = output_batch_norm if last else batch_norm
        assert [type(layer).__name__ for layer in block] == (
            ["Dense"] + ["BatchNormalization"] * has_norm + ["Activation"] * (not last))
        assert block[0].use_bias == (not has_norm)  # the norm's beta (or nothing) replaces the bias
        if has_norm:
            assert block[1].center == (not last)  # the output norm has no beta (SimCLR's code)
            assert block[1].scale
    # Widths on the wire.
    assert tuple(head.compute_output_spec(keras.KerasTensor((None, D))).shape) == (None, widths[-1])


def test_parameter_counts_by_hand():
    # SimCLR v1: Dense 8->16 without bias, BN(16) gamma beta mean var, Dense 16->4 without bias,
    # BN(4) without beta: gamma mean var.
    head = _built((16, 4), batch_norm=True, output_batch_norm=True)
    assert head.count_params() == 8 * 16 + 4 * 16 + 16 * 4 + 3 * 4
    assert sum(int(np.prod(w.shape)) for w in head.trainable_weights) == 8 * 16 + 2 * 16 + 16 * 4 + 4
    # SimCLR v2: one more hidden layer 16->16 with its BN.
    head = _built((16, 16, 4), batch_norm=True, output_batch_norm=True)
    assert head.count_params() == 8 * 16 + 4 * 16 + 16 * 16 + 4 * 16 + 16 * 4 + 3 * 4
    # MoCo v2: two Dense with biases, no norm.
    head = _built((16, 4))
    assert head.count_params() == (8 * 16 + 16) + (16 * 4 + 4)
    assert len(head.trainable_weights) == 4 and not head.non_trainable_weights
    # BYOL: Dense without bias, BN, ReLU, Dense with bias.
    head = _built((16, 4), batch_norm=True)
    assert head.count_params() == 8 * 16 + 4 * 16 + (16 * 4 + 4)
    assert sum(int(np.prod(w.shape)) for w in head.non_trainable_weights) == 2 * 16  # moving mean, var
    # One int gives a linear head (MoCo v1, InstDisc).
    head = _built(4)
    assert head.widths == (4,) and head.count_params() == 8 * 4 + 4


def _numpy_head(head, x, training, depth=None):
    """The head in NumPy: Dense -> BN (batch or moving statistics) -> ReLU per layer."""
    outputs = []
    for block in head.blocks[:depth]:
        for layer in block:
            if isinstance(layer, keras.layers.Dense):
                x = x @ _np(layer.kernel) + (_np(layer.bias) if layer.use_bias else 0.0)
            elif isinstance(layer, keras.layers.BatchNormalization):
                if training:
                    mean, var = x.mean(axis=0), x.var(axis=0)
                else:
                    mean, var = _np(layer.moving_mean), _np(layer.moving_variance)
                x = (x - mean) / np.sqrt(var + layer.epsilon) * _np(layer.gamma)
                x = x + (_np(layer.beta) if layer.center else 0.0)
            else:
                x = np.maximum(x, 0.0)
        outputs.append(x)
    return outputs


@pytest.mark.parametrize("training", [False, True])
def test_depth_k_is_the_kth_layers_activation(training):
    head = _built((16, 12, 4), batch_norm=True, output_batch_norm=True)
    _randomise(head)
    x = np.random.default_rng(1).normal(size=(6, D)).astype("float32")
    expected = _numpy_head(head, x, training)
    for k in (1, 2, 3):
        out = _np(head(x, training=training, depth=k))
        assert out.shape == (6, (16, 12, 4)[k - 1])
        np.testing.assert_allclose(out, expected[k - 1], rtol=1e-4, atol=1e-4)
    if not training:
        assert (expected[0] == 0).any() and (expected[0] > 0).any()  # the ReLU is part of layer 1's output
    np.testing.assert_allclose(_np(head(x, training=training)), expected[-1], rtol=1e-4, atol=1e-4)


def test_config_roundtrip():
    head = ProjectionHead((16, 16, 4), batch_norm=True, output_batch_norm=True, activation="gelu",
                          kernel_initializer="he_normal", momentum=0.9, epsilon=1e-5, name="head")
    clone = check_config_roundtrip(head)
    assert clone.widths == (16, 16, 4) and clone.batch_norm and clone.output_batch_norm
    assert clone.activation == "gelu" and clone.momentum == 0.9 and clone.epsilon == 1e-5
    clone.build((None, D))
    assert clone.blocks[0][1].momentum == 0.9 and clone.blocks[0][1].epsilon == 1e-5
    assert type(clone.blocks[0][0].kernel_initializer).__name__ == "HeNormal"


def test_saved_model_gives_identical_outputs(tmp_path):
    inputs = keras.Input((D,))
    head = ProjectionHead((16, 4), batch_norm=True, output_batch_norm=True, name="head")
    model = keras.Model(inputs, head(inputs))
    _randomise(head, seed=2)
    x = np.random.default_rng(3).normal(size=(5, D)).astype("float32")
    loaded = check_saved_model(model, x, tmp_path)
    # The moving statistics (non-trainable) came back too: inference uses them.
    for a, b in zip(loaded.get_layer("head").non_trainable_weights, head.non_trainable_weights):
        np.testing.assert_array_equal(_np(a), _np(b))
    np.testing.assert_allclose(_np(loaded.get_layer("head")(x, depth=1)), _np(head(x, depth=1)), atol=1e-6)


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match=r"non-empty list of ints >= 1; got widths=\(\)"):
        ProjectionHead(())
    with pytest.raises(ValueError, match=r"got widths=\[\]"):
        ProjectionHead([])
    with pytest.raises(ValueError, match=r"ints >= 1; got widths=\(16, 0\)"):
        ProjectionHead((16, 0))
    with pytest.raises(ValueError, match=r"got widths=\(0,\)"):
        ProjectionHead(0)
    with pytest.raises(ValueError, match=r"got widths=\(16, 2.5\)"):
        ProjectionHead((16, 2.5))
    with pytest.raises(ValueError, match=r"got widths=\(True,\)"):
        ProjectionHead((True,))
    with pytest.raises(ValueError, match="batch_norm must be True or False; got 'yes'"):
        ProjectionHead((16, 4), batch_norm="yes")
    with pytest.raises(ValueError, match="output_batch_norm must be True or False; got 1"):
        ProjectionHead((16, 4), output_batch_norm=1)
    head = _built((16, 4))
    x = np.ones((2, D), "float32")
    for depth in (0, 3, -1, 1.0):
        with pytest.raises(ValueError, match=rf"depth must be an int in \[1, 2\]; got depth={depth!r}"):
            head(x, depth=depth)
