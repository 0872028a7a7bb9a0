"""What the backbone and trainer tests share (as keras-hub's `TestCase.run_backbone_test`).

    run_backbone_test(cls, init_kwargs, input_data, expected_output_shape, tmp_path)
    run_ssl_trainer_test(cls, init_kwargs, x, tmp_path, y=None, compile_kwargs=..., fit_kwargs=...)
    check_resume_from_saved(fresh, fit, tmp_path)     # 2 epochs = 1 epoch, save, load, 1 more
    with shapes_only(): ...                           # build without drawing weights

and the tiny pieces the self-supervised trainers' tests build on (`to_numpy`, `tiny_backbone`,
`random_images`, `two_views`, `keras_hub_resnet`). Each helper returns what it built, so that a
paper's test goes on to assert its own values (parameter counts, the paper's invariants).
"""

import contextlib

import numpy as np
import pytest

import keras
from keras.src.backend.common import global_state

from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model


def to_numpy(x):
    """A NumPy copy of a tensor or variable (safe to keep across later updates)."""
    return np.asarray(keras.ops.convert_to_numpy(x)).copy()


@contextlib.contextmanager
def shapes_only():
    """Build models without drawing their initial weights (shapes and counts only).

    Variables made in a `StatelessScope(initialize_variables=False)` stay uninitialized,
    so ViT-H's 632M or VGG's 140M parameters build in milliseconds (on JAX each new kernel
    shape would compile its own RNG program); such models cannot run. Keras's list of
    uninitialized variables is restored afterwards, so no later scope fills them.
    """
    before = list(global_state.get_global_attribute("uninitialized_variables", None) or [])
    try:
        with keras.StatelessScope(initialize_variables=False):
            yield
    finally:
        global_state.set_global_attribute("uninitialized_variables", before)


@pytest.fixture(autouse=True)
def seeded():
    """The same initial weights whatever ran before (a tiny ReLU backbone can start dead).

    A test module that imports it gets it for every test (autouse).
    """
    keras.utils.set_random_seed(0)


# --- tiny networks and data ---------------------------------------------------------------------


def tiny_backbone(size=8, filters=4, channels=3, batch_norm=True, name="tiny"):
    """Conv 3x3/2 (`filters`) [-> BN] -> ReLU on (size, size, channels) images: (B, 3, 3, filters) at size 8."""
    layers = [keras.Input((size, size, channels)), keras.layers.Conv2D(filters, 3, strides=2, name="conv")]
    if batch_norm:
        layers.append(keras.layers.BatchNormalization(name="bn"))
    layers.append(keras.layers.ReLU())
    return keras.Sequential(layers, name=name)


def random_images(n, size=8, seed=0, channels=3):
    """(n, size, size, channels) float32 images uniform in [0, 1)."""
    return np.random.default_rng(seed).random((n, size, size, channels)).astype("float32")


def two_views(n, size=8, seed=0):
    """Two independent batches of random images: [view_1, view_2]."""
    rng = np.random.default_rng(seed)
    return [rng.random((n, size, size, 3)).astype("float32") for _ in range(2)]


def keras_hub_resnet(image_shape):
    """A two-stage keras-hub `ResNetBackbone` (a 64-filter stem, basic blocks of 64 and 16 filters)."""
    import keras_hub

    return keras_hub.models.ResNetBackbone(
        input_conv_filters=[64], input_conv_kernel_sizes=[3], stackwise_num_filters=[64, 16],
        stackwise_num_blocks=[1, 1], stackwise_num_strides=[1, 2], block_type="basic_block",
        image_shape=image_shape,
    )


# --- backbones ----------------------------------------------------------------------------------


def run_backbone_test(cls, init_kwargs, input_data, expected_output_shape, tmp_path, preset=None, fit=True,
                      atol=1e-6):
    """The checks every backbone passes, at a tiny size; returns the backbone.

    - `cls(**init_kwargs)` (`cls.from_preset(preset, **init_kwargs)` with a `preset`) and its
      `get_config` round trip (JSON-safe, same class, same config);
    - the output of `input_data` has `expected_output_shape` (a dict of shapes for dict outputs);
    - `.keras` save and load (safe mode) give identical outputs and weights;
    - with `fit`, a linear head on the (flattened) output trains for a step on a regression
      target, every logged value finite, and the backbone's weights move.
    """
    backbone = cls.from_preset(preset, **init_kwargs) if preset else cls(**init_kwargs)
    assert type(check_config_roundtrip(backbone)) is cls
    output = backbone(input_data, training=False)
    if isinstance(expected_output_shape, dict):
        assert {k: tuple(output[k].shape) for k in expected_output_shape} == expected_output_shape
    else:
        assert tuple(output.shape) == tuple(expected_output_shape)
    check_saved_model(backbone, input_data, tmp_path, atol=atol)
    if fit:
        batch = keras.ops.shape(output)[0]
        head = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(1)])
        model = keras.Sequential([backbone, head])
        model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
        before = [to_numpy(w) for w in backbone.trainable_weights]
        target = np.ones((int(batch), 1), "float32")
        check_fit(model, input_data, target, batch_size=int(batch), epochs=1)
        moved = [not np.array_equal(to_numpy(w), b) for w, b in zip(backbone.trainable_weights, before)]
        assert any(moved), f"{cls.__name__}: a step of fit moved no backbone weight"
    return backbone


# --- self-supervised trainers -------------------------------------------------------------------


def run_ssl_trainer_test(cls, init_kwargs, x, tmp_path, y=None, compile_kwargs=None, fit_kwargs=None,
                         expected_metrics=None, state=None, loss_decreases=False, outputs_of=None, inputs=None,
                         atol=1e-6):
    """The checks every self-supervised trainer passes, at a tiny size; returns (model, history, loaded).

    - `cls(**init_kwargs)` compiled with `compile_kwargs` (default: the paper's optimizer);
    - a short `fit` of `x` (and `y`) with `fit_kwargs` (default: batch 8, 1 epoch, no shuffling):
      every logged value finite, the loss finite from the first epoch, the logged names
      `expected_metrics` when given;
    - the trainer learned: with `loss_decreases` the last epoch's loss is below the first's
      (give 2 epochs or more); else every variable in `state(model)` moved (the trainer's own
      state: a bank, a queue, a target network), or without `state` at least one trainable
      variable;
    - its `get_config` round trip;
    - `.keras` save and load (safe mode): the same outputs (`outputs_of(model, inputs)`; default
      the model called on `inputs`, default the first 4 rows of `x`), weights and optimizer state.
    """
    model = cls(**init_kwargs)
    model.compile(**(compile_kwargs or {}))
    fit_kwargs = {"batch_size": 8, "epochs": 1, "shuffle": False, **(fit_kwargs or {})}
    watched = list(state(model)) if state is not None else list(model.trainable_variables)
    before = [to_numpy(v) for v in watched]
    history = check_fit(model, x, y, **fit_kwargs)
    logs = history.history
    assert np.isfinite(logs["loss"][0]), f"{cls.__name__}: the first epoch's loss is {logs['loss'][0]}"
    if expected_metrics is not None:
        assert set(logs) == set(expected_metrics), sorted(logs)
    if loss_decreases:
        assert len(logs["loss"]) >= 2 and logs["loss"][-1] < logs["loss"][0], logs["loss"]
    elif state is not None:
        assert_moved(watched, before)
    else:  # some trainable variable moved (a probe without labels, a frozen prototype may not)
        assert watched, f"{cls.__name__} has no trainable variables before fit"
        assert any(not np.allclose(to_numpy(v), b) for v, b in zip(watched, before)), "fit moved no weight"
    check_config_roundtrip(model)
    if inputs is None:
        inputs = x[:4] if not isinstance(x, dict) else {k: v[:4] for k, v in x.items()}
    loaded = check_saved_model(model, inputs, tmp_path, outputs_of=outputs_of, atol=atol)
    return model, history, loaded


def fit_probe_only(model, views, labels):
    """One epoch (batch 8) of a compiled two-view trainer whose contrastive gradient vanishes (tau = 1e30): its
    online probe learns, and the stop-gradient on h keeps the representation (backbone, head) where it was, to
    1e-20 (the contrastive step itself is ~1e-30). Returns the history.
    """
    representation = model.backbone.trainable_weights + model.head.trainable_weights
    start = [to_numpy(w) for w in representation]
    probe_start = [to_numpy(w) for w in model.probe.weights]
    history = model.fit(views, labels, batch_size=8, epochs=1, shuffle=False, verbose=0).history
    assert 0.0 <= history["probe_accuracy"][0] <= 1.0
    assert all(not np.allclose(to_numpy(w), s) for w, s in zip(model.probe.weights, probe_start))  # it learned
    for w, s in zip(representation, start):  # (zero biases get 1e-37)
        np.testing.assert_allclose(to_numpy(w), s, rtol=0, atol=1e-20, err_msg=w.path)
    return history


def assert_moved(variables, before, what="state"):
    """Every variable in `variables` differs from its value in `before` (a list of arrays)."""
    assert len(variables) == len(before) and variables, f"no {what} to compare"
    for v, b in zip(variables, before):
        assert not np.allclose(to_numpy(v), b), f"{what} {v.path} did not move"


def check_resume_from_saved(fresh, fit, tmp_path, check_saved=None, save_and_load=None):
    """2 epochs straight = 1 epoch, save, load (safe mode), 1 more: every weight and optimizer variable.

    `fresh()` returns a compiled model; `fit(model, epochs, initial_epoch=0)` trains it (the
    test's data, batches and `EpochSeeds` callback). The resumed half reuses the straight run's
    model from its saved start, so the compiled step is built once. `check_saved(model, resumed,
    straight)` asserts what the test knows of the model after epoch 1 and of the loaded one (its
    optimizer's class, steps, the trainer's own state). Returns (model, resumed, start, straight) with the arrays of
    `model.weights + model.optimizer.variables` at the start and the straight run's
    (weights, optimizer variables) at the end. `save_and_load(model)` returns the loaded model (default
    `model.save` then `keras.saving.load_model` in safe mode; e.g. `check_saved_model` to compare outputs too).
    """
    model = fresh()
    model.optimizer.build(model.trainable_variables)
    start = [to_numpy(v) for v in model.weights + model.optimizer.variables]
    fit(model, 2)  # uninterrupted
    straight = [to_numpy(v) for v in model.weights], [to_numpy(v) for v in model.optimizer.variables]
    # The same model from the same start (its compiled step reused): 1 epoch, save, load, 1 more.
    for v, value in zip(model.weights + model.optimizer.variables, start):
        v.assign(value)
    fit(model, 1)
    if save_and_load is None:
        model.save(tmp_path / "epoch1.keras")
        resumed = keras.saving.load_model(tmp_path / "epoch1.keras", safe_mode=True)
    else:
        resumed = save_and_load(model)
    if check_saved is not None:
        check_saved(model, resumed, straight)
    fit(resumed, 2, initial_epoch=1)
    assert len(resumed.weights) == len(straight[0])
    for a, b in zip(resumed.weights, straight[0]):  # every weight: networks, banks, queues, statistics, seeds
        np.testing.assert_array_equal(to_numpy(a), b, err_msg=a.path)
    assert len(resumed.optimizer.variables) == len(straight[1])
    for a, b in zip(resumed.optimizer.variables, straight[1]):
        np.testing.assert_array_equal(to_numpy(a), b, err_msg=a.path)
    return model, resumed, start, straight
