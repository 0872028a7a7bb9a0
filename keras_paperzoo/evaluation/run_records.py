"""The runs of a CPU-budget reproduction, saved one by one into a JSON file and kept while the budget is the same.

A reproduction script (`applications/*.py`) trains several runs, each minutes long.
`RunRecords` saves each result as it finishes, so a rerun with the same budget skips
the runs already there (and several processes can share the work); a change of any
budget key starts afresh. Observations added to the file by hand (`notes`) stay.
`timed` measures a run's wall time and the machine's load around it.

Example:

```python
records = RunRecords("results/ssl_mnist_metrics.json", budget, keys=("dataset", "epochs"),
                     summarize=lambda runs: {"claims": claims(runs)})
done = records.load()
if "byol" not in done:
    records.save({"byol": timed(train, "byol")})
```
"""

import json
import os
import pathlib
import time


class RunRecords:
    """Runs saved into `path` under a budget (see the module docstring).

    Args:
        path: the JSON file.
        budget: dict describing the budget (written as "budget").
        keys: the budget keys that must match for saved runs to be kept.
        summarize: `runs -> dict` of what the file holds beside them (claims, references).
        kept: keys of the file kept across saves with the same budget (added by hand).
    """

    def __init__(self, path, budget, keys, summarize=lambda runs: {}, kept=("notes",)):
        self.path, self.budget, self.keys = pathlib.Path(path), dict(budget), tuple(keys)
        self.summarize, self.kept = summarize, tuple(kept)

    def _old(self):
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def same_budget(self, other):
        return all(other.get(k) == self.budget.get(k) for k in self.keys)

    def load(self):
        """The runs already saved with this budget ({} if none, or another budget)."""
        old = self._old()
        return dict(old.get("runs", {})) if self.same_budget(old.get("budget", {})) else {}

    def save(self, runs):
        """Add `runs` to those saved (re-read first: another process may have saved meanwhile); returns all."""
        old = self._old()
        runs = {**self.load(), **runs}
        metrics = {**self.summarize(runs), "budget": self.budget, "runs": runs}
        if self.same_budget(old.get("budget", {})):
            metrics.update({k: old[k] for k in self.kept if k in old})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(metrics, indent=2) + "\n")
        return runs


def timed(function, *args, **kwargs):
    """`function(*args, **kwargs)` (a dict) with its `wall_seconds` and the load average before and after."""
    load, start = os.getloadavg(), time.perf_counter()
    result = function(*args, **kwargs)
    result["wall_seconds"] = round(time.perf_counter() - start, 1)
    result["load_average_1_5_15_min"] = [[round(v, 2) for v in load], [round(v, 2) for v in os.getloadavg()]]
    return result
