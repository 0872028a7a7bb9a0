"""`paperzoo train bert`: pre-training then fine-tuning on the built-in sample, outputs written and loadable."""

import argparse
import csv
import json

import numpy as np
import pytest

import keras

from keras_paperzoo.recipes import bert as recipe
from keras_paperzoo.recipes.common import RecipeError

pytestmark = pytest.mark.needs_tensorflow  # the recipe trains a WordPiece vocabulary (keras-hub: TF ops)


def _args(tmp_path, **overrides):
    values = dict(recipe="bert", dataset=None, epochs=1, steps_per_epoch=2, batch_size=16, image_size=None,
                  preset=None, output_dir=str(tmp_path), backend=None, seed=0, resume=False, verbose=0)
    values.update(overrides)
    return argparse.Namespace(**values)


@pytest.fixture
def micro_backbone(monkeypatch):
    """The recipe's preset check, then a 1-layer model of width 16."""
    from keras_paperzoo.models.bert import BertBackbone

    build = recipe.build_backbone

    def micro(preset, vocabulary_size, sequence_length, seed=0):
        build(preset, vocabulary_size, 8, seed)
        return BertBackbone(vocabulary_size, num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32,
                            max_sequence_length=sequence_length)

    monkeypatch.setattr(recipe, "build_backbone", micro)


@pytest.mark.one_leg("torch")
def test_bert_recipe_on_the_sample(tmp_path, micro_backbone):
    metrics = recipe.run(_args(tmp_path))
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["preset"] == "bert_tiny" and saved["dataset"] == "sample"
    assert saved["fine_tuning_task"] == "sample_sentiment" and "task_data" not in saved
    assert saved["steps_per_epoch"] == 2 and saved["epochs"] == 1 and saved["sequence_length"] == 64
    for name in ("pretraining_loss", "pretraining_mlm_loss", "pretraining_nsp_loss"):
        assert np.isfinite(saved[name])
    # At initialisation the MLM loss is about ln(V); the NSP loss about ln 2.
    assert abs(saved["pretraining_mlm_loss"] - np.log(saved["vocabulary_size"])) < 1.5
    assert 0.0 <= saved["dev_accuracy"] <= 1.0
    vocabulary = (tmp_path / "vocabulary.txt").read_text().split("\n")
    assert vocabulary[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    backbone = keras.saving.load_model(tmp_path / "backbone.keras")
    assert backbone.count_params() == metrics["parameters"]
    classifier = keras.saving.load_model(tmp_path / "model.keras")
    x = {k: np.ones((2, 8), "int32") for k in ("token_ids", "segment_ids", "padding_mask")}
    assert tuple(classifier(x).shape) == (2, 2)
    assert not (tmp_path / "checkpoint").exists()


def test_bad_requests_are_one_clear_error(tmp_path):
    with pytest.raises(RecipeError, match="--preset 'vit_b16' is not a BERT preset; known: bert_base"):
        recipe.run(_args(tmp_path / "a", preset="vit_b16"))
    with pytest.raises(RecipeError, match="Unknown text corpus 'nowhere.txt'"):
        recipe.run(_args(tmp_path / "b", dataset="nowhere.txt"))


# --- --task tagging / multiple_choice / squad on --task-data ----------------------------------------------------
PEOPLE, PLACES, OTHER = ["john", "mary", "anna"], ["paris", "london"], ["the", "cat", "sat", "on", "mat", "in"]


def _write_conll(path, sentences=20):
    """CoNLL-2003-shaped lines (word POS chunk NER), BIO person and place names, -DOCSTART- first."""
    rng = np.random.default_rng(0)
    lines = ["-DOCSTART- -X- -X- O", ""]
    for _ in range(sentences):
        words = [(w, "O") for w in rng.choice(OTHER, size=3)]
        words.insert(int(rng.integers(0, 3)), (rng.choice(PEOPLE), "B-PER"))
        if rng.random() < 0.5:
            words[1:1] = [("smith", "B-PER"), ("jones", "I-PER")]
        words.append((rng.choice(PLACES), "B-LOC"))
        lines += [f"{w} NN O {t}" for w, t in words] + [""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _write_swag(path, rows=20):
    """A SWAG .csv (its columns: video-id, fold-ind, startphrase, sent1, sent2, gold-source, ending0-3, label)."""
    rng = np.random.default_rng(1)
    names = ["video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source", *recipe.SWAG_ENDINGS, "label"]
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(names)
        for i in range(rows):
            endings = [" ".join(rng.choice(OTHER, size=3)) + " ." for _ in range(4)]
            writer.writerow([f"v{i}", i, "a b", f"the cat {i % 3} sat .", "then it", "gold", *endings, i % 4])
    return path


def _squad_file(path, paragraphs, impossible=False):
    """A SQuAD v1.1 (or v2.0 with `impossible`) file: a question per person of each paragraph."""
    data = []
    for p in range(paragraphs):
        person, place = PEOPLE[p % 3], PLACES[p % 2]
        context = f"the cat of {person} sat on the mat in {place} . " * 6 + f"{person} smith lives in {place} ."
        qas = [{"id": f"q{p}", "question": f"where does {person} live ?",
                "answers": [{"text": place, "answer_start": context.rindex(place)}]}]
        if impossible:
            qas.append({"id": f"n{p}", "question": "who is the king ?", "answers": [], "is_impossible": True})
        data.append({"title": f"t{p}", "paragraphs": [{"context": context, "qas": qas}]})
    path.write_text(json.dumps({"version": "v2.0" if impossible else "1.1", "data": data}), encoding="utf-8")
    return path


def _write_documents(path):
    """A small pre-training corpus of the task files' words: 8 documents of 5 sentences."""
    rng = np.random.default_rng(3)
    words = PEOPLE + PLACES + OTHER + ["smith", "jones", "lives", "where", "does", "live", "then", "it", "?"]
    documents = ["\n".join(" ".join(rng.choice(words, size=6)) + " ." for _ in range(5)) for _ in range(8)]
    path.write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    return path


def _tokenizer(out):
    import keras_hub

    vocabulary = (out / "vocabulary.txt").read_text(encoding="utf-8").splitlines()
    return keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=True)


TASK_RUNS = [
    pytest.param("tagging", marks=pytest.mark.one_leg("torch")),
    pytest.param("multiple_choice", marks=pytest.mark.one_leg("torch")),  # JAX compiles pre-training and the
    # folded 4-choice step: about 45 s of CPU, so the JAX leg runs the GPT classification instead
    pytest.param("squad", marks=pytest.mark.one_leg("tensorflow")),
]


@pytest.mark.parametrize("task", TASK_RUNS)
def test_bert_recipe_fine_tunes_the_task_head_on_task_data(tmp_path, micro_backbone, task):
    from keras_paperzoo.data.conll import read_conll

    if task == "tagging":  # one file: its last 10 % of sentences (2 of 20) is the dev set
        data = _write_conll(tmp_path / "ner.txt")
        sentences = read_conll(data)
        train, dev = sentences[:18], sentences[18:]
    elif task == "multiple_choice":
        data = _write_swag(tmp_path / "swag.csv")
        train, dev = recipe.read_multiple_choice(data)[:18], recipe.read_multiple_choice(data)[18:]
    else:  # a folder with train and dev files, v2.0: unanswerable questions in dev
        data = tmp_path / "squad"
        data.mkdir()
        _squad_file(data / "train-v2.0.json", 6)
        _squad_file(data / "dev-v2.0.json", 2, impossible=True)
        from keras_paperzoo.data.squad import read_squad

        train, dev = read_squad(data / "train-v2.0.json"), read_squad(data / "dev-v2.0.json")
    out = tmp_path / "run"
    # Pre-training on a small corpus, one update, then 3 fine-tuning epochs of one update (--steps-per-epoch 1).
    metrics = recipe.run(_args(out, dataset=str(_write_documents(tmp_path / "documents.txt")), task=task,
                               task_data=str(data), batch_size=4, steps_per_epoch=1))
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["fine_tuning_task"] == task and saved["task_data"] == str(data)
    assert saved["train_examples"] == len(train) and saved["dev_examples"] == len(dev)
    assert saved["fine_tuning_batch_size"] == 4 and np.isfinite(saved["fine_tuning_train_loss"])
    assert saved["steps_per_epoch"] == 1 and saved["documents"] == 8 and saved["paper"] == recipe.TASK_PAPERS[task]

    # The saved head reloads and scores the dev set as reported.
    model = keras.saving.load_model(out / "model.keras")
    tokenizer = _tokenizer(out)
    tags = saved.get("tags")
    x, _, info = recipe.task_features(task, dev, tokenizer, recipe.SEQUENCE_LENGTH, tags)
    recomputed = recipe.evaluate_task(task, model, dev, x, info, tags)
    if task == "tagging":
        from keras_paperzoo.data.conll import word_tags
        from keras_paperzoo.evaluation.tagging import span_f1

        assert tags == ["O", "B-LOC", "B-PER", "I-PER"]
        assert type(model).__name__ == "BertTokenTagger"
        predicted = word_tags(model.predict(x, verbose=0), info, dev, tags)
        assert saved["dev_span_f1"] == pytest.approx(span_f1([t for _, t in dev], predicted)["f1"])
        for name in ("precision", "recall", "f1"):
            assert 0.0 <= saved[f"dev_span_{name}"] <= 1.0
            assert saved[f"dev_span_{name}"] == pytest.approx(recomputed[f"dev_span_{name}"])
    elif task == "multiple_choice":
        assert type(model).__name__ == "BertMultipleChoice" and x["token_ids"].shape == (2, 4, 64)
        # Row k of an example: [CLS] sent1 [SEP] sent2 ending_k [SEP], the context's segment 0, the ending's 1.
        assert (x["token_ids"][:, :, 0] == tokenizer.cls_token_id).all()
        assert (x["segment_ids"][:, :, 1] == 0).all() and x["segment_ids"].max() == 1
        logits = model.predict(x, verbose=0)
        assert saved["dev_accuracy"] == pytest.approx(np.mean(logits.argmax(-1) == [e[2] for e in dev]))
        assert saved["dev_accuracy"] == pytest.approx(recomputed["dev_accuracy"]) and saved["dev_accuracy"] in (0, .5, 1)
    else:
        from keras_paperzoo.evaluation.squad import squad_scores

        assert type(model).__name__ == "BertSpanExtractor" and saved["squad_version"] == "2.0"
        assert len(x["token_ids"]) > len(dev)  # the passages are longer than one window: doc stride
        for name in ("dev_exact_match", "dev_f1", "dev_null_threshold", "dev_best_f1"):
            assert saved[name] == pytest.approx(recomputed[name])
        assert 0.0 <= saved["dev_exact_match"] <= saved["dev_f1"] <= 100.0 and saved["dev_best_f1"] >= saved["dev_f1"]
        answers = {e["id"]: "" for e in dev}  # answering nothing: the unanswerable half right
        assert squad_scores(dev, answers)["f1"] == 50.0
    assert metrics["dev_examples"] == len(dev)
    assert keras.saving.load_model(out / "backbone.keras").count_params() == metrics["parameters"]


def test_bert_task_requests_are_checked_in_one_line_before_pre_training(tmp_path):
    conll = _write_conll(tmp_path / "ner.txt")
    with pytest.raises(RecipeError, match=r"^bert: --task tagging needs --task-data PATH"):
        recipe.run(_args(tmp_path / "a", task="tagging"))
    with pytest.raises(RecipeError, match=r"^bert: --task 'ner' is not one of sst2, tagging, multiple_choice, squad\.$"):
        recipe.run(_args(tmp_path / "b", task="ner", task_data=str(conll)))
    with pytest.raises(RecipeError, match=r"^bert: --task-data is read by --task tagging / multiple_choice / squad"):
        recipe.run(_args(tmp_path / "c", task_data=str(conll)))
    with pytest.raises(RecipeError, match=r"^bert: --task-data .*nowhere.txt' does not exist\.$"):
        recipe.run(_args(tmp_path / "d", task="tagging", task_data=str(tmp_path / "nowhere.txt")))
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "train.txt").write_text(conll.read_text())
    with pytest.raises(RecipeError, match=r"holds none of dev\.txt, eng\.testa; a tagging folder needs a train"):
        recipe.run(_args(tmp_path / "e", task="tagging", task_data=str(folder)))
    squad = {"data": [{"paragraphs": [{"context": "abc", "qas": [
        {"id": "q", "question": "?", "answers": [{"text": "c", "answer_start": 0}]}]}]}]}
    bad_files = [  # (task, file, contents, the error)
        ("tagging", "untagged.txt", "the O\ncat O\n\nsat O\n", r"every word is tagged 'O'; tagging needs at least 2 tags\.$"),
        ("tagging", "io.txt", "john PER\nsat O\n\nmary PER\n", r"Tag 'PER' is not a BIO / IOB / IOBES tag"),
        ("multiple_choice", "one.jsonl", '{"context": "a", "endings": ["b", "c"], "label": 0}\n',
         r"0 training and 1 dev examples; each split needs at least one\.$"),
        ("squad", "squad.json", json.dumps(squad), r"question q: answer 'c' is not at its answer_start 0"),
    ]
    for task, name, contents, message in bad_files:
        (tmp_path / name).write_text(contents)
        with pytest.raises(RecipeError, match=r"^bert: --task-data .*" + message):
            recipe.run(_args(tmp_path / name.replace(".", "_"), task=task, task_data=str(tmp_path / name)))
        assert not (tmp_path / name.replace(".", "_") / "checkpoint").exists()
    for name in "abcde":
        assert not (tmp_path / name / "checkpoint").exists()  # nothing recorded: the corrected run starts afresh


@pytest.mark.backend_free("jax")  # pure Python: the same on every leg
@pytest.mark.parametrize("line, message", [
    ('{"context": "a", "endings": ["b", "c"]}', r"line 2: no 'label' field; each line needs 'context', 'endings', 'label'"),
    ('{"context": "a", "endings": ["b"], "label": 0}', r"line 2: 'endings' should be a list of at least 2 strings"),
    ('{"context": "a", "endings": ["b", "c", "d"], "label": 0}', r"line 2: 3 endings, but line 1 has 2"),
    ('{"context": "a", "endings": ["b", "c"], "label": 2}', r"line 2: 'label' should be the right ending's index, an int in \[0, 2\); got 2"),
    ('{"context": "a", "endings": ["b", "c"], "label": true}', r"line 2: 'label' .* got True"),
    ('["a", "b"]', r"line 2: a JSON list, not an object"),
    ('{"context": "a", ', r"line 2: not JSON"),
])
def test_multiple_choice_files_are_read_or_refused_naming_the_line(tmp_path, line, message):
    path = tmp_path / "mc.jsonl"
    path.write_text('{"context": "a", "endings": ["b", "c"], "label": 1}\n' + line + "\n")
    with pytest.raises(ValueError, match=message):
        recipe.read_multiple_choice(path)
    swag = _write_swag(tmp_path / "swag.csv", rows=3)
    examples = recipe.read_multiple_choice(swag)
    assert [label for _, _, label in examples] == [0, 1, 2] and examples[1][0] == "the cat 1 sat ."
    assert len(examples[0][1]) == 4 and all(e.startswith("then it ") for e in examples[0][1])
    (tmp_path / "bad.csv").write_text("sent1,sent2,label\na,b,0\n")
    with pytest.raises(ValueError, match=r"is not a SWAG file: its header lacks ending0, ending1, ending2, ending3\."):
        recipe.read_multiple_choice(tmp_path / "bad.csv")
