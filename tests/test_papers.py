"""One record per paper (keras_paperzoo/papers.py, issue 34 item 1): what the records and the lists read from them hold.

- Every `Trainer` subclass defined under keras_paperzoo/models (every module imported, not only
  what models/__init__.py exports) has exactly one record; every record's classes import and
  are trainers.
- `RECIPES`, `REPRODUCTIONS`, `cli.EXPORT_SUBMODELS`, tests/trainer_zoo.py's `TRAINERS` and
  tests/recipes/tiny_runs.py's `FAST_ARGUMENTS` hold what the records hold; each recipe's and
  reproduction's module exists; each deployable sub-model is an attribute its trainer sets.
- The docs' tables name every paper: the README's Papers table, and docs/reproductions.md's
  budgets table (every reproduction) and its "By paper" table (every paper with a trainer or a
  recipe, and every trainer class); the README's results links are the records' `results`.
- Importing the records (and the recipe and reproduction lists, and the CLI) imports no Keras.
"""

import importlib
import importlib.util
import inspect
import pathlib
import pkgutil
import re
import subprocess
import sys

import pytest

from keras_paperzoo.papers import BY_NAME, PAPERS, class_name, load_class

# The records are data and the checks read classes and files: no model is built, no op runs.
pytestmark = pytest.mark.backend_free("jax")
REPO = pathlib.Path(__file__).resolve().parents[1]
KERAS_HUB = importlib.util.find_spec("keras_hub") is not None
RECORDED = [path for paper in PAPERS for path in paper.trainers]
# The papers recorded on 2026-12-06: a record lost by mistake fails; a new paper needs no edit here.
TODAYS_PAPERS = ("gan", "alexnet", "vgg", "resnet", "vit", "transformer", "bert", "gpt", "moco", "mae", "simclr", "byol",
                 "swav", "instdisc", "invaspread", "cpc", "cmc", "deepcluster", "densecl", "beit", "gpt1", "gpt3", "igpt")


def _table(text, heading):
    """The first cells and the whole text of the first Markdown table after `heading`."""
    lines = text.split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    rows = lines[start + 2:end]  # the header and its rule left out
    return [row.strip("|").split(" | ")[0].strip() for row in rows], "\n".join(rows)


def _package_trainers():
    """Every class under keras_paperzoo.models that is a `Trainer` and a `keras.Model` (every module imported)."""
    import keras

    import keras_paperzoo.models
    from keras_paperzoo.models.trainer import Trainer

    for module in pkgutil.walk_packages(keras_paperzoo.models.__path__, "keras_paperzoo.models."):
        try:
            importlib.import_module(module.name)
        except ModuleNotFoundError as error:  # keras-hub is optional: BERT, GPT, iGPT, the Transformer need it
            if error.name.split(".")[0] != "keras_hub":
                raise
    found, todo = set(), list(Trainer.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("keras_paperzoo.models.") and issubclass(cls, keras.Model):
            found.add(cls)
    return found


def unrecorded(classes):
    """The problems of a set of trainer classes against the records: a class with no record, or with several."""
    names = [class_name(path) for path in RECORDED]
    problems = [f"{cls.__name__} ({cls.__module__}) has no record in keras_paperzoo/papers.py"
                for cls in sorted(classes, key=lambda c: c.__name__) if cls.__name__ not in names]
    return problems + [f"{name} is in {names.count(name)} records" for name in sorted(set(names))
                       if names.count(name) > 1]


def test_every_trainer_has_exactly_one_record():
    trainers = _package_trainers()
    assert len(trainers) >= (25 if KERAS_HUB else 17), sorted(c.__name__ for c in trainers)
    assert unrecorded(trainers) == []
    if KERAS_HUB:
        assert {c.__name__ for c in trainers} == {class_name(path) for path in RECORDED}


def test_a_trainer_without_a_record_is_named():
    from keras_paperzoo.models import MoCo

    class SelfLabel(MoCo):
        pass

    assert unrecorded({SelfLabel, MoCo}) == [f"SelfLabel ({__name__}) has no record in keras_paperzoo/papers.py"]


@pytest.mark.parametrize("path", RECORDED)
def test_each_recorded_class_imports_and_is_a_trainer(path):
    import keras

    from keras_paperzoo.models.trainer import Trainer

    if not KERAS_HUB and class_name(path) in importlib.import_module("keras_paperzoo.models").KERAS_HUB_MODELS:
        pytest.skip("keras-hub is not installed")
    cls = load_class(path)
    assert issubclass(cls, Trainer) and issubclass(cls, keras.Model) and cls.__name__ == class_name(path)
    # `from keras_paperzoo.models import <Class>`: written out in models/__init__.py, or found from the record
    assert getattr(importlib.import_module("keras_paperzoo.models"), cls.__name__) is cls
    submodel = next(paper.trainers[path] for paper in PAPERS if path in paper.trainers)
    if submodel:  # `paperzoo export` deploys model.<submodel>: an attribute the trainer (or a base) sets
        sources = "".join(inspect.getsource(c) for c in cls.__mro__ if c.__module__.startswith("keras_paperzoo."))
        assert re.search(rf"self\.{submodel}\b[^=\n]*=|def {submodel}\(self", sources), (path, submodel)


def test_the_lists_hold_what_the_records_hold():
    from keras_paperzoo.cli import EXPORT_SUBMODELS
    from keras_paperzoo.recipes import RECIPES
    from keras_paperzoo.reproductions import REPRODUCTIONS
    from tests.recipes.tiny_runs import FAST_ARGUMENTS
    from tests.trainer_zoo import TRAINERS

    names = [paper.name for paper in PAPERS]
    assert len(names) == len(BY_NAME) and set(TODAYS_PAPERS) <= set(names)  # one record per name, none lost
    assert list(REPRODUCTIONS) == [p.name for p in PAPERS if p.reproduction]
    assert list(RECIPES) == [p.recipe.name for p in PAPERS if p.recipe] and len(RECIPES) >= 21
    assert RECIPES["resnet-cifar"].paper == BY_NAME["resnet"].citation
    assert REPRODUCTIONS["gpt1"].claim == BY_NAME["gpt1"].claim and REPRODUCTIONS["gpt1"].module == "gpt1_sst2"
    assert EXPORT_SUBMODELS == {class_name(path): sub for p in PAPERS for path, sub in p.trainers.items()}
    assert EXPORT_SUBMODELS["GAN"] == "generator" and EXPORT_SUBMODELS["VisualTokenizer"] == "encoder"
    assert list(TRAINERS) == [tiny.name for p in PAPERS for tiny in p.tiny]
    assert FAST_ARGUMENTS == {r.name: list(r.tiny_run) for r in RECIPES.values() if r.tiny_run}
    for paper in PAPERS:
        for tiny in paper.tiny:
            assert not tiny.trainer or tiny.trainer in {class_name(p) for p in RECORDED}, tiny
        if paper.recipe:
            assert importlib.util.find_spec(paper.recipe.module), paper.recipe.module
        if paper.reproduction:
            assert importlib.util.find_spec(f"keras_paperzoo.reproductions.{paper.reproduction.module}"), paper.name


def test_the_docs_tables_name_every_paper():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    reproductions_doc = (REPO / "docs" / "reproductions.md").read_text(encoding="utf-8")
    papers_cells, papers_table = _table(readme, "\n## Papers")
    budget_cells, _ = _table(reproductions_doc, "\n## Running one")
    by_paper_cells, by_paper_table = _table(reproductions_doc, "\n## By paper")

    def named(title, cells):
        return any(re.search(rf"(?<![\w-]){re.escape(title)}(?![\w-])", cell) for cell in cells)

    problems = [f"README.md's Papers table has no row for {p.title}" for p in PAPERS
                if not named(p.title, papers_cells)]
    reproductions = {name.strip() for cell in budget_cells for name in cell.split(",")}
    problems += [f"docs/reproductions.md's budgets table has no row for {p.name}" for p in PAPERS
                 if p.reproduction and p.name not in reproductions]
    problems += [f"docs/reproductions.md's By paper table has no row for {p.title}" for p in PAPERS
                 if (p.trainers or p.recipe) and not named(p.title, by_paper_cells)]
    problems += [f"docs/reproductions.md's By paper table does not name `{class_name(path)}`" for path in RECORDED
                 if f"`{class_name(path)}`" not in by_paper_table]
    linked = set(re.findall(r"\(applications/results/([^)\s]+)\)", papers_table))
    recorded = {name for paper in PAPERS for name in paper.results}
    problems += [f"README.md's Papers table links {name}, in no record's results" for name in sorted(linked - recorded)]
    problems += [f"{name} is in a record's results, not in README.md's Papers table"
                 for name in sorted(recorded - linked)]
    problems += [f"{name} is not in applications/results/" for name in sorted(recorded)
                 if not (REPO / "applications" / "results" / name).is_file()]
    assert not problems, "\n".join(problems)


def test_the_records_and_the_lists_import_no_keras():
    code = ("import sys, keras_paperzoo.papers, keras_paperzoo.recipes, keras_paperzoo.reproductions, "
            "keras_paperzoo.cli; print(sorted(m for m in sys.modules if m.split('.')[0] in ('keras', 'tensorflow', "
            "'jax', 'torch')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert out.strip() == "[]"


def test_a_recorded_trainer_not_written_out_is_found_from_its_record():
    import keras_paperzoo.models as models
    from keras_paperzoo.models.densecl.densecl import DenseCL

    # models.__getattr__ runs only for a name that models/__init__.py does not import: called directly here,
    # as Python calls it for a new paper's trainer whose import line is not written yet.
    assert models.__getattr__("DenseCL") is DenseCL
    with pytest.raises(AttributeError, match="has no attribute 'SelfLabel'"):
        models.__getattr__("SelfLabel")
