"""GPT-1's task input transformations (Sec. 3.3, Figure 1): packing, added task tokens, the four task heads."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.models.gpt.gpt_backbone import GPTBackbone
from keras_paperzoo.models.gpt.gpt_classifier import GPTClassifier
from keras_paperzoo.models.gpt.gpt_task_inputs import add_task_tokens, pack_task_inputs, task_token_ids
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model

V, T = 20, 12  # 20 text tokens, then <s> = 20, $ = 21, <e> = 22
# Every eager forward pass below runs 8 sequences of T tokens: JAX compiles each op once per shape.
CONFIG = dict(vocabulary_size=V, num_layers=1, hidden_dim=16, num_heads=2, intermediate_dim=32, max_sequence_length=T,
              dropout=0.0, norm_first=False)  # GPT-1's post-norm
SPECIAL = {"start": V, "delimiter": V + 1, "extract": V + 2}
RNG = np.random.default_rng(0)


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


@pytest.fixture(scope="module")
def backbone():
    return add_task_tokens(GPTBackbone(**CONFIG))


def _pairs(n):
    return [(list(RNG.integers(1, V, RNG.integers(1, 4))), list(RNG.integers(1, V, RNG.integers(1, 4))))
            for _ in range(n)]


# --- packing ------------------------------------------------------------------------------
def test_packing_places_the_special_tokens_exactly():
    s, d, e = V, V + 1, V + 2
    x = pack_task_inputs("entailment", [([1, 2, 3], [4, 5])], 10, SPECIAL)
    np.testing.assert_array_equal(x["token_ids"], [[s, 1, 2, 3, d, 4, 5, e, 0, 0]])
    np.testing.assert_array_equal(x["padding_mask"], [[1] * 8 + [0] * 2])
    x = pack_task_inputs("classification", [[7, 8], [9]], 5, SPECIAL)
    np.testing.assert_array_equal(x["token_ids"], [[s, 7, 8, e, 0], [s, 9, e, 0, 0]])
    x = pack_task_inputs("similarity", [([1, 2], [3])], 7, SPECIAL)
    np.testing.assert_array_equal(x["token_ids"], [[[s, 1, 2, d, 3, e, 0], [s, 3, d, 1, 2, e, 0]]])  # both orders
    x = pack_task_inputs("multiple_choice", [([1, 2], [[3], [4, 5], [6]])], 7, SPECIAL, padding_id=9)
    np.testing.assert_array_equal(
        x["token_ids"], [[[s, 1, 2, d, 3, e, 9], [s, 1, 2, d, 4, 5, e], [s, 1, 2, d, 6, e, 9]]]
    )
    assert x["padding_mask"].dtype == bool and x["padding_mask"].sum() == 6 + 7 + 6
    assert x["token_ids"].dtype == np.int32


def test_added_task_tokens_keep_every_weight_and_draw_three_new_rows():
    base = GPTBackbone(**CONFIG)
    extended = add_task_tokens(base)
    assert extended.vocabulary_size == V + 3 and task_token_ids(extended) == SPECIAL
    table = np_(extended.token_embedding.embeddings)
    np.testing.assert_array_equal(table[:V], np_(base.token_embedding.embeddings))
    assert 0.005 < table[V:].std() < 0.05  # N(0, 0.02^2) draws, not zeros, not a copy
    ids = RNG.integers(0, V, (8, T)).astype("int32")
    np.testing.assert_allclose(np_(extended(ids)), np_(base(ids)), atol=1e-6)  # same network on old tokens
    assert extended.count_params() == base.count_params() + 3 * 16


@pytest.mark.parametrize(
    "task, examples, length, message",
    [("multiple_choice", [([1], [[2]])], 8, "at least 2 answers"),
     ("multiple_choice", [([1], [[2], [3]]), ([1], [[2], [3], [4]])], 8, "same number of choices"),
     ("entailment", [([1] * 5, [2] * 5)], 8, "has 13 tokens"),
     ("translation", [[1]], 8, "task must be one of")],
)
def test_packing_refuses(task, examples, length, message):
    with pytest.raises(ValueError, match=message):
        pack_task_inputs(task, examples, length, SPECIAL)


# --- the heads ------------------------------------------------------------------------------
def test_similarity_is_symmetric_and_adds_the_two_orderings(backbone):
    model = GPTClassifier(backbone, num_classes=3, task="similarity")
    pairs = _pairs(4)
    x = pack_task_inputs("similarity", pairs, T, SPECIAL)
    swapped = pack_task_inputs("similarity", [(b, a) for a, b in pairs], T, SPECIAL)
    out = model(x)
    assert tuple(out["logits"].shape) == (4, 3) and tuple(out["lm_logits"].shape) == (4, 2, T, V + 3)
    np.testing.assert_allclose(np_(model(swapped)["logits"]), np_(out["logits"]), atol=1e-5)
    # the head reads h(A $ B) + h(B $ A) at each ordering's extract token
    hidden = np_(backbone(x["token_ids"].reshape(8, T))).reshape(4, 2, T, -1)
    last = x["padding_mask"].sum(-1) - 1  # (4, 2)
    summed = hidden[np.arange(4)[:, None], np.arange(2)[None], last].sum(1)  # (4, D)
    head = model.get_layer("classifier")
    np.testing.assert_allclose(np_(out["logits"]), summed @ np_(head.kernel) + np_(head.bias), atol=1e-5)


def test_multiple_choice_is_a_softmax_over_independently_scored_answers(backbone):
    model = GPTClassifier(backbone, task="multiple_choice")
    examples = [(list(RNG.integers(1, V, 3)), [list(RNG.integers(1, V, 2)) for _ in range(4)]) for _ in range(2)]
    x = pack_task_inputs("multiple_choice", examples, T, SPECIAL)
    out = {k: np_(v) for k, v in model(x).items()}
    scores = out["logits"]
    assert scores.shape == (2, 4) and out["lm_logits"].shape == (2, 4, T, V + 3)
    permuted = pack_task_inputs("multiple_choice", [(c, a[::-1]) for c, a in examples], T, SPECIAL)
    np.testing.assert_allclose(np_(model(permuted)["logits"]), scores[:, ::-1], atol=1e-5)  # one score per answer
    two = pack_task_inputs("multiple_choice", [(c, a[:2]) for c, a in examples + examples], T, SPECIAL)
    np.testing.assert_allclose(np_(model(two)["logits"]), np.tile(scores[:, :2], (2, 1)), atol=1e-5)  # any N
    y = np.array([2, 0])
    task = -_log_softmax(out["logits"])[np.arange(2), y].mean()  # softmax over the 4 answers
    ids, mask = x["token_ids"].reshape(8, T), x["padding_mask"].reshape(8, T)
    lm_logp = _log_softmax(out["lm_logits"].reshape(8, T, -1)[:, :-1])
    nll = -np.take_along_axis(lm_logp, ids[:, 1:, None], axis=-1)[..., 0]
    lm = (nll * mask[:, 1:]).sum() / mask[:, 1:].sum()  # L_1 over every answer's sequence
    out = {k: ops.convert_to_tensor(v) for k, v in out.items()}
    np.testing.assert_allclose(float(np_(model.compute_loss(x, y, out))), task + 0.5 * lm, rtol=1e-5)
    one = {k: np.repeat(v[:, :1], 4, axis=0) for k, v in x.items()}  # choice lists of one (the packer refuses)
    with pytest.raises(ValueError, match="at least 2 answers"):
        model.compute_loss(one, np.zeros(8, "int32"), model(one))


def test_entailment_reads_the_extract_token(backbone):
    model = GPTClassifier(backbone, num_classes=3, task="entailment")
    x = pack_task_inputs("entailment", _pairs(8), T, SPECIAL)
    last = x["padding_mask"].sum(-1) - 1
    assert (x["token_ids"][np.arange(8), last] == SPECIAL["extract"]).all()
    hidden = np_(backbone(x["token_ids"]))[np.arange(8), last]
    head = model.get_layer("classifier")
    np.testing.assert_allclose(np_(model(x)["logits"]), hidden @ np_(head.kernel) + np_(head.bias), atol=1e-5)


@pytest.mark.parametrize(
    "kwargs, message",
    [(dict(task="multiple_choice", num_classes=4), "num_classes must be None"),
     (dict(task="similarity"), "num_classes must be an int >= 2"),
     (dict(task="qa", num_classes=2), "task must be one of")],
)
def test_bad_task_arguments(backbone, kwargs, message):
    with pytest.raises(ValueError, match=message):
        GPTClassifier(backbone, **kwargs)


def test_similarity_config_round_trip_and_save(backbone, tmp_path):
    model = GPTClassifier(backbone, num_classes=2, task="similarity", lm_weight=0.25)
    restored = check_config_roundtrip(model)
    assert (restored.task, restored.num_classes, restored.lm_weight) == ("similarity", 2, 0.25)
    check_saved_model(model, pack_task_inputs("similarity", _pairs(4), T, SPECIAL), tmp_path,
                      outputs_of=lambda m, x: m(x)["logits"])


def test_multiple_choice_fits_round_trips_and_saves(backbone, tmp_path):
    """The folded path (S sequences per example) trained; similarity shares it but for the sum."""
    keras.utils.set_random_seed(0)
    examples = [(list(RNG.integers(1, V, 2)), [list(RNG.integers(1, V, 2)) for _ in range(4)]) for _ in range(32)]
    x = pack_task_inputs("multiple_choice", examples, T, SPECIAL)
    y = RNG.integers(0, 4, 32)
    model = GPTClassifier(backbone, task="multiple_choice")
    # TF's XLA compile of this step costs ~20 s of test CPU (it passed); test_gpt_classifier's fit keeps XLA on
    jit_compile = "auto" if keras.backend.backend() != "tensorflow" else False
    model.compile(optimizer=keras.optimizers.Adam(1e-3), jit_compile=jit_compile)
    history = check_fit(model, x, y, epochs=1, batch_size=16)
    assert {"loss", "task_loss", "lm_loss", "accuracy"} <= set(history.history)
    np.testing.assert_allclose(history.history["loss"][-1],
                               history.history["task_loss"][-1] + 0.5 * history.history["lm_loss"][-1], rtol=1e-3)
    assert check_config_roundtrip(model).task == "multiple_choice"
    check_saved_model(model, {k: v[:2] for k, v in x.items()}, tmp_path, outputs_of=lambda m, x: m(x)["logits"])
