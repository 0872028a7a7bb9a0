"""The front page says only what the committed runs and the CLI hold (issues 33.10 and 36.1).

- Every number in a row of the README's Papers table ("ours vs paper") is in the committed
  results file(s) that the row links, to the README's rounding; a row with a number links at
  least one file; the command each link names exists (`paperzoo reproduce PAPER`, `paperzoo
  train RECIPE`, `python -m benchmarks COMMAND`).
- The README is at most 1,500 words; it and docs/command.md name as many papers as
  `paperzoo reproduce --help` lists; every flag of `paperzoo train`, `export`, `reproduce`
  and `evaluate few-shot` is in docs/command.md.
- No user-facing text names the project's local data folder.
"""

import pathlib
import re

import pytest

from keras_paperzoo.cli import build_parser
from keras_paperzoo.recipes import RECIPES
from keras_paperzoo.reproductions import REPRODUCTIONS

pytestmark = pytest.mark.backend_free("jax")

REPO = pathlib.Path(__file__).resolve().parents[1]
README = REPO / "README.md"
COMMAND_DOC = REPO / "docs" / "command.md"
MAX_README_WORDS = 1500
# Committed runs: the reproductions' results, and the benchmarks' (the self-supervised table).
RESULTS = ("applications/results/", "benchmarks/results/")

# A number: digits with thousands commas and decimals, an optional k / M / B multiplier.
NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?([kMB](?![a-zA-Z]))?")
SCALE = {"k": 1e3, "M": 1e6, "B": 1e9, None: 1.0}


def numbers(text):
    """[(value, half of the last digit's unit, the text)] of every number in `text`.

    Numbers inside names (ResNet-20, v2, H100, GPT-3, Fig. 3's "3" is kept) are skipped: a
    number right after a letter, or after a letter and a hyphen.
    """
    found = []
    for match in NUMBER.finditer(text):
        before = text[max(0, match.start() - 2):match.start()]
        if re.search(r"[A-Za-z]$|[A-Za-z]-$", before):
            continue
        whole, decimals, suffix = match.groups()
        decimals = decimals or ""
        scale = SCALE[suffix]
        value = float(whole.replace(",", "") + decimals) * scale
        half_unit = 0.5 * 10.0 ** -(len(decimals) - 1 if decimals else 0) * scale
        found.append((value, half_unit, match.group(0)))
    return found


def holds(value, half_unit, file_values):
    """Whether a file number rounds to `value` at the README's precision (signs aside)."""
    return any(abs(abs(f) - value) <= half_unit * (1 + 1e-9) + 1e-12 for f in file_values)


def papers_table(text):
    """[(cells, raw row)] of the table under `## Papers`, header and rule excluded."""
    section = text.split("\n## Papers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return rows[0], [([c.strip() for c in row.strip("|").split(" | ")], row) for row in rows[2:]]


def links(row):
    return re.findall(r"\[([^\]]*)\]\(([^)\s]+)\)", row)


def check_row(cells, row, claim_column):
    """The problems of one Papers row: numbers not in its linked files, links to nothing."""
    problems, file_values = [], []
    for _, target in links(row):
        if not target.startswith(RESULTS):
            continue  # an example or a doc is not a committed run
        path = REPO / target
        if not path.is_file():
            problems.append(f"links {target}, which is not a file")
            continue
        file_values += [v for v, _, _ in numbers(path.read_text(encoding="utf-8"))]
    claim = cells[claim_column]
    claimed = numbers(claim)
    if claimed and not file_values:
        problems.append("has numbers but links no committed results file")
    elif file_values:
        problems += [f"{text} is in none of its linked files" for value, half, text in claimed
                     if not holds(value, half, file_values)]
    return problems


def benchmark_commands():
    """The commands of `python -m benchmarks` (its parser's subcommands)."""
    import argparse

    from benchmarks.cli import build_parser as benchmarks_parser

    actions = [a for a in benchmarks_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return set(actions[0].choices)


def claim_column(header):
    columns = [c.strip() for c in header.strip("|").split(" | ")]
    return next(i for i, c in enumerate(columns) if c.startswith("ours"))


def test_every_number_of_the_papers_table_is_in_its_linked_results():
    header, rows = papers_table(README.read_text(encoding="utf-8"))
    assert len(rows) >= 20, "the Papers table was not found"
    problems = []
    for cells, row in rows:
        problems += [f"{cells[0]}: {p}" for p in check_row(cells, row, claim_column(header))]
    assert not problems, "\n".join(problems)


def test_each_papers_row_names_a_real_command_for_its_link():
    _, rows = papers_table(README.read_text(encoding="utf-8"))
    problems = []
    for cells, row in rows:
        for text, target in links(row):
            if not target.startswith(RESULTS):
                continue
            words = text.strip("`").split()
            if words[:1] == ["reproduce"] and words[1] not in REPRODUCTIONS:
                problems.append(f"{cells[0]}: {text} names no reproduction")
            if words[:1] == ["train"] and words[1] not in RECIPES:
                problems.append(f"{cells[0]}: {text} names no recipe")
            if words[:3] == ["python", "-m", "benchmarks"] and words[3] not in benchmark_commands():
                problems.append(f"{cells[0]}: {text} names no benchmark")
        if links(row) and not any(t.strip("`").split()[:1] in (["reproduce"], ["train"]) or
                                  t.strip("`").split()[:3] == ["python", "-m", "benchmarks"] for t, _ in links(row)):
            problems.append(f"{cells[0]}: no link names the command that wrote its file")
    assert not problems, "\n".join(problems)


def seeds_problems(text, target):
    """A link `reproduce X --seeds N` must point at the file that `--seeds N` writes, with N seeds in it."""
    found = re.search(r"--seeds (\d+)", text)
    if not found:
        return []
    wanted = int(found.group(1))
    path = REPO / target
    header = path.read_text(encoding="utf-8").splitlines()[0] if path.is_file() else ""
    held = re.search(r": (\d+) training seeds", header)
    if not held or int(held.group(1)) != wanted:
        return [f"{text} links {target}, whose first line does not say {wanted} training seeds"]
    return []


def test_a_link_naming_seeds_holds_that_many_seeds():
    """Each arm comparison cited with `--seeds N` (issue 36.1) links a combined file of N seeds."""
    _, rows = papers_table(README.read_text(encoding="utf-8"))
    problems = [f"{cells[0]}: {p}" for cells, row in rows for text, target in links(row)
                for p in seeds_problems(text, target)]
    assert not problems, "\n".join(problems)
    assert seeds_problems("`reproduce moco --seeds 3`", "applications/results/moco_mnist_results.md")  # one seed


def test_a_not_shown_effect_says_so_first():
    """A row whose linked results say its claim does not hold leads with "not shown"."""
    header, rows = papers_table(README.read_text(encoding="utf-8"))
    for cells, _ in rows:
        claim = cells[claim_column(header)]
        if "not shown" in claim:
            assert claim.startswith("not shown") or re.search(r"[;:] [^;:]*not shown", claim), (
                f"{cells[0]}: 'not shown' is buried: {claim}")


def test_the_row_check_catches_a_number_its_file_lacks(tmp_path):
    """check_row fails on an overstatement (iGPT's row once quoted the example, not its results file)."""
    cells = ["iGPT", "not shown: the best probe is layer 0 (75.5 %)", "[`reproduce igpt`](applications/results/igpt_mnist_results.md)"]
    assert check_row(cells, " | ".join(cells), 1) == []
    cells[1] = "digits, 4 layers: layer-3 probe 45.5 -> 79.1 %"
    assert check_row(cells, " | ".join(cells), 1) == ["45.5 is in none of its linked files", "79.1 is in none of its linked files"]
    assert check_row(["GAN", "Parzen 159", ""], "| GAN | Parzen 159 | [gan_digits.py](examples/gan_digits.py) |", 1) == [
        "has numbers but links no committed results file"]
    assert [t for _, _, t in numbers("ResNet-20 at 64k steps: 12.3 % vs 8.75, 1,024 canvases, 1.4M, v2")] == [
        "64k", "12.3", "8.75", "1,024", "1.4M"]
    assert holds(*numbers("41.0")[0][:2], [40.95]) and not holds(*numbers("41.0")[0][:2], [40.9])


def test_readme_is_at_most_1500_words():
    words = len(README.read_text(encoding="utf-8").split())
    assert words <= MAX_README_WORDS, f"README.md has {words} words; at most {MAX_README_WORDS}"


def test_readme_and_command_doc_count_the_papers_that_reproduce_lists():
    epilog = build_parser()._subparsers._group_actions[0].choices["reproduce"].epilog
    listed = [name for name in REPRODUCTIONS if re.search(rf"^  {re.escape(name)}\s", epilog, re.M)]
    assert len(listed) == len(REPRODUCTIONS)
    for path in (README, COMMAND_DOC):
        counts = re.findall(r"lists\s+the\s+(\d+)\s+papers", path.read_text(encoding="utf-8"))
        assert counts, f"{path.name} does not say how many papers `paperzoo reproduce --help` lists"
        assert {int(c) for c in counts} == {len(REPRODUCTIONS)}, (path.name, counts, len(REPRODUCTIONS))
    text = COMMAND_DOC.read_text(encoding="utf-8")
    missing = [name for name in REPRODUCTIONS if not re.search(rf"\b{re.escape(name)}\b", text)]
    assert not missing, f"docs/command.md does not name the reproductions {missing}"


def _sub(parser, *names):
    for name in names:
        parser = parser._subparsers._group_actions[0].choices[name]
    return parser


@pytest.mark.parametrize("command", [("train",), ("export",), ("reproduce",), ("evaluate", "few-shot")],
                         ids=lambda c: " ".join(c))
def test_every_flag_is_in_the_command_doc(command):
    text = COMMAND_DOC.read_text(encoding="utf-8")
    parser = _sub(build_parser(), *command)
    flags = [o for action in parser._actions for o in action.option_strings if o.startswith("--") and o != "--help"]
    assert flags
    missing = [flag for flag in flags if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text)]
    assert not missing, f"paperzoo {' '.join(command)}: flags missing from docs/command.md: {missing}"


@pytest.mark.parametrize("path", [README] + sorted((REPO / "docs").glob("*.md")), ids=lambda p: p.name)
def test_no_user_facing_text_names_the_local_data_folder(path):
    text = path.read_text(encoding="utf-8")
    found = re.findall(r"[^\s`(]*shared/data[^\s`)]*|PAPERZOO_SHARED_DATA", text)
    assert not found, f"{path.name} names the project's local data folder: {found}"


@pytest.mark.parametrize("path", [README] + sorted((REPO / "docs").glob("*.md")), ids=lambda p: p.name)
def test_relative_links_resolve(path):
    """Every relative link of the README and docs/ points at a file or folder of the repository."""
    targets = re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8"))
    broken = [t for t in targets if "://" not in t and not (path.parent / t).exists()]
    assert not broken, f"{path.name}: links to nothing: {broken}"


def test_every_extra_the_docs_install_exists():
    """`pip install -e ".[jax,tf]"` and the like name extras that pyproject.toml defines."""
    import tomllib

    extras = set(tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"])
    named = {}
    for path in [README] + sorted((REPO / "docs").glob("*.md")):
        for group in re.findall(r"\.\[([a-z0-9_,-]+)\]", path.read_text(encoding="utf-8")):
            for extra in group.split(","):
                named.setdefault(extra, path.name)
    assert {"jax", "torch", "tf", "export"} <= set(named), f"the install extras are not all documented: {named}"
    unknown = {extra: where for extra, where in named.items() if extra not in extras}
    assert not unknown, f"extras that pyproject.toml does not define: {unknown}"
