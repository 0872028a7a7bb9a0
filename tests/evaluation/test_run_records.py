"""RunRecords: runs kept across processes while the budget is the same; hand-added notes stay; `timed`."""

import json

import pytest

from keras_paperzoo.evaluation.run_records import RunRecords, timed

# backend_free (tests/conftest.py): run records are Python and JSON: every leg would run the same code.
pytestmark = pytest.mark.backend_free("tensorflow")


def test_runs_are_kept_for_the_same_budget_and_dropped_for_another(tmp_path):
    path = tmp_path / "metrics.json"
    budget = {"dataset": "mnist", "epochs": 2, "cpu_cores": 2}
    records = RunRecords(path, budget, keys=("dataset", "epochs"), summarize=lambda runs: {"count": len(runs)})
    assert records.load() == {}
    records.save({"a": {"knn": 1.0}})
    other_process = RunRecords(path, {**budget, "cpu_cores": 16}, keys=("dataset", "epochs"))  # not a budget key
    assert other_process.save({"b": {"knn": 2.0}}) == {"a": {"knn": 1.0}, "b": {"knn": 2.0}}
    saved = json.loads(path.read_text())
    saved["notes"] = ["added by hand"]
    path.write_text(json.dumps(saved))
    assert records.save({"c": {"knn": 3.0}})["c"] == {"knn": 3.0}
    saved = json.loads(path.read_text())
    assert saved["count"] == 3 and saved["notes"] == ["added by hand"] and saved["budget"] == budget
    longer = RunRecords(path, {**budget, "epochs": 20}, keys=("dataset", "epochs"))
    assert longer.load() == {}
    longer.save({"d": {}})
    assert set(json.loads(path.read_text())) == {"budget", "runs"}  # another budget: runs and notes start afresh


def test_timed_adds_wall_time_and_load():
    result = timed(lambda x: {"x": x}, 3)
    assert result["x"] == 3 and result["wall_seconds"] >= 0 and len(result["load_average_1_5_15_min"]) == 2
