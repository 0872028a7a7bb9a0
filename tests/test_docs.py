"""Every code block of README.md and docs/*.md runs as written (issue 33, items 2 and 10).

- ```python blocks: each file's blocks run in order in one child process, in a fresh
  folder, each block with a namespace of its own (a block that uses a name it does not
  define fails: the README's `x_train` once did), files the earlier blocks wrote kept (the
  README's load-and-export block reads the SimCLR block's `simclr.keras` and says so).
  At smoke size (the blocks are short already; this keeps the suite's time): `epochs=N`
  becomes `epochs=1`, `batch_size=N` 32, `fit` takes 2 steps an epoch and `load_dataset`
  gives 256 images.
  A block that imports an optional package (timm, torchvision, transformers) or sets its
  own KERAS_BACKEND runs alone, and skips, with the reason, where the package is absent. Blocks that run TensorFlow
  (export) run in the `needs_tensorflow` leg, after the earlier blocks that write the files
  they read. ```python fragment blocks are pieces of a class, not meant to run.
- ```bash blocks: every `paperzoo ...` command parses with the CLI's own parser (its
  sub-command, flags and their values), its recipe or paper exists, and `python -m
  pytest` / `bash tests/run.sh` name real files.
- Plain ``` blocks (the command synopses): every `--flag` on a `paperzoo SUB` line exists
  in SUB's parser.

The blocks reach a Keras backend, but what they check is the documentation, which is the
same on every backend: each child runs PyTorch (eager: no compile time for a few steps; a
block that sets its own KERAS_BACKEND keeps it), and the files' groups are spread over the
legs so that none carries more than about a minute of them (`LEG`).
"""

import importlib.util
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

from keras_paperzoo.cli import build_parser
from keras_paperzoo.recipes import RECIPES
from keras_paperzoo.reproductions import REPRODUCTIONS

REPO = pathlib.Path(__file__).resolve().parents[1]
DOC_FILES = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))
OPTIONAL_PACKAGES = ("timm", "torchvision", "transformers")
# The leg whose run executes each file's blocks (the child's backend is torch whatever the leg).
LEG = {"README.md": "torch", "models.md": "tensorflow", "accelerators.md": "jax"}
FENCE = re.compile(r"^```(.*)$")


def code_blocks(path):
    """[(info words, code, first code line number)] of the fenced blocks of a Markdown file."""
    blocks, info, start, lines = [], None, 0, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = FENCE.match(line.strip()) if line.startswith("```") else None
        if info is None and match:
            info, start, lines = match.group(1).split(), number + 1, []
        elif info is not None and line.startswith("```"):
            blocks.append((info, "\n".join(lines) + "\n", start))
            info = None
        elif info is not None:
            lines.append(line)
    assert info is None, f"{path.name}: a code block opened at line {start - 1} is never closed"
    return blocks


def _relative(path):
    return str(path.relative_to(REPO))


def python_blocks(path):
    return [(code, line) for info, code, line in code_blocks(path) if info[:1] == ["python"] and "fragment" not in info]


def _imports(code, package):
    return re.search(rf"^\s*(import|from)\s+{package}\b", code, re.M) is not None


def _optional(code):
    return [p for p in OPTIONAL_PACKAGES if _imports(code, p)]


def _alone(code):
    """Blocks that run in a process of their own: an optional package, or a backend of their own."""
    return bool(_optional(code)) or "os.environ[\"KERAS_BACKEND\"]" in code


def _needs_tensorflow(code):
    return _imports(code, "tensorflow") or _imports(code, r"keras_paperzoo\.export")


def smoke(code):
    """The block at smoke size: `epochs=N` becomes `epochs=1`, `batch_size=N` 32, a `fit` takes 2 steps an epoch.

    Also `pretrained=True` becomes `pretrained=False`: no download in the tests.
    """
    lines = []
    for line in code.splitlines(keepends=True):
        line = re.sub(r"\bepochs=\d+", "epochs=1", line).replace("pretrained=True", "pretrained=False")
        line = re.sub(r"\bbatch_size=\d+", "batch_size=32", line)
        if ".fit(" in line and "steps_per_epoch" not in line:
            line = line.replace("epochs=1", "epochs=1, steps_per_epoch=2")
        lines.append(line)
    return "".join(lines)


RUNNER = r"""
import json, sys, time, traceback
cpu = time.process_time()
import keras_paperzoo.data, keras_paperzoo.data.datasets as datasets

full_load_dataset = datasets.load_dataset
def load_dataset(*args, **kwargs):  # smoke size: the first 256 images of every split
    x, y = full_load_dataset(*args, **kwargs)
    return x[:256], (None if y is None else y[:256])
keras_paperzoo.data.load_dataset = datasets.load_dataset = load_dataset

for block in json.load(open(sys.argv[1])):
    code = "\n" * (block["line"] - 1) + block["code"]   # tracebacks give the document's line numbers
    try:
        exec(compile(code, block["file"], "exec"), {"__name__": "__main__"})
    except BaseException:
        traceback.print_exc()
        sys.exit(f"the block at {block['file']}:{block['line']} failed")
    print(f"ran {block['file']}:{block['line']} ({time.process_time() - cpu:.1f} s of CPU)", flush=True)
    cpu = time.process_time()
"""


def run_blocks(blocks, folder, timeout=300):
    """Run [(file, code, line)] in order in one child process in `folder`; fail with its output."""
    script = folder / "blocks.json"
    script.write_text(json.dumps([{"file": f, "code": smoke(c), "line": n} for f, c, n in blocks]))
    env = dict(os.environ, KERAS_BACKEND="torch", TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-c", RUNNER, str(script)], cwd=folder, env=env,
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    return result.stdout


def _plain_cases():
    cases = []
    for path in DOC_FILES:
        blocks = [(_relative(path), c, n) for c, n in python_blocks(path) if not _alone(c) and not _needs_tensorflow(c)]
        if blocks:
            cases.append(pytest.param(blocks, id=path.name, marks=pytest.mark.one_leg(LEG.get(path.name, "torch"))))
    return cases


def _tensorflow_cases():
    """Each file's TensorFlow blocks, after the earlier blocks that write the files they read."""
    cases = []
    for path in DOC_FILES:
        blocks = [(c, n) for c, n in python_blocks(path) if not _alone(c)]
        chosen = set()
        for i, (code, _) in enumerate(blocks):
            if not _needs_tensorflow(code):
                continue
            chosen.add(i)
            for name in re.findall(r"[\"']([\w./-]+\.(?:keras|npz|json|txt))[\"']", code):
                chosen.update(j for j in range(i) if f'"{name}"' in blocks[j][0] or f"'{name}'" in blocks[j][0])
        if chosen:
            cases.append(pytest.param([(_relative(path), *blocks[i]) for i in sorted(chosen)], id=path.name))
    return cases


def _alone_cases():
    cases = []
    for path in DOC_FILES:
        for code, line in python_blocks(path):
            if _alone(code):
                cases.append(pytest.param(_relative(path), code, line, id=f"{path.name}:{line}",
                                          marks=pytest.mark.one_leg(LEG.get(path.name, "torch"))))
    return cases


@pytest.mark.slow(reason="every block of a file in a child process; the README's trains four small models: 20-60 s")
@pytest.mark.parametrize("blocks", _plain_cases())
def test_python_blocks_run(blocks, tmp_path):
    output = run_blocks(blocks, tmp_path)
    assert output.count("ran ") == len(blocks)


@pytest.mark.needs_tensorflow
@pytest.mark.one_leg("torch")
@pytest.mark.parametrize("blocks", _tensorflow_cases())
def test_python_blocks_that_need_tensorflow_run(blocks, tmp_path):
    run_blocks(blocks, tmp_path)
    assert any(tmp_path.iterdir())


@pytest.mark.parametrize("file, code, line", _alone_cases())
def test_python_blocks_that_run_alone_run(file, code, line, tmp_path):
    missing = [p for p in _optional(code) if importlib.util.find_spec(p) is None]
    if missing:
        pytest.skip(f"{file}:{line} needs {', '.join(missing)}, not installed here")
    run_blocks([(file, code, line)], tmp_path)


# --- the shell commands -------------------------------------------------------------------------
def _subparsers(parser):
    """{name: sub-parser} of an argparse parser's sub-commands."""
    for action in parser._actions:
        if action.__class__.__name__ == "_SubParsersAction":
            return dict(action.choices)
    return {}


def parser_for(words):
    """(sub-parser, the words after the sub-command) for `paperzoo WORDS`, e.g. ["evaluate", "few-shot", ...]."""
    parser, rest = build_parser(), list(words)
    while rest and rest[0] in _subparsers(parser):
        parser = _subparsers(parser)[rest.pop(0)]
    return parser, rest


def option_strings(parser):
    return {o for action in parser._actions for o in action.option_strings}


def shell_commands(code):
    """Each simple command of a bash block as a word list, comments and VAR=value prefixes dropped."""
    code = code.replace("\\\n", " ")
    commands = []
    for line in code.splitlines():
        words = shlex.split(line, comments=True)
        command = []
        for word in words + ["&&"]:
            if word in ("&&", "||", ";", "|"):
                while command and re.match(r"^[A-Z_][A-Z0-9_]*=", command[0]):
                    command.pop(0)
                if command:
                    commands.append(command)
                command = []
            else:
                command.append(word)
    return commands


def check_paperzoo_command(words):
    """The problems of `paperzoo WORDS` against the CLI's parser ([] when it parses)."""
    parser = build_parser()
    try:
        if words[:1] == ["reproduce"]:
            args, _ = parser.parse_known_args(words)
            if args.paper not in REPRODUCTIONS:
                return [f"unknown paper {args.paper!r}"]
        else:
            args = parser.parse_args(words)
            if words[:1] == ["train"] and args.recipe not in RECIPES:
                return [f"unknown recipe {args.recipe!r}"]
    except BaseException as error:  # the CLI's parser raises its usage error instead of exiting
        return [f"does not parse: {error}"]
    parser, rest = parser_for(words)
    known = option_strings(parser)
    flags = [w.split("=")[0] for w in rest if w.startswith("--")]
    if words[:1] == ["reproduce"]:
        return []  # flags after the known ones go to the reproduction module
    return [f"{flag} is not the name of a flag (argparse would take it as an abbreviation)"
            for flag in flags if flag not in known]


BASH_CASES = [pytest.param(_relative(path), code, line, id=f"{path.name}:{line}")
              for path in DOC_FILES for info, code, line in code_blocks(path) if info[:1] == ["bash"]]


@pytest.mark.backend_free("jax")
@pytest.mark.parametrize("file, code, line", BASH_CASES)
def test_bash_blocks_name_real_commands(file, code, line):
    problems = []
    for words in shell_commands(code):
        if words[0] == "paperzoo":
            problems += [f"`{' '.join(words)}`: {p}" for p in check_paperzoo_command(words[1:])]
        elif words[:2] == ["bash", "tests/run.sh"] and not (REPO / "tests/run.sh").is_file():
            problems.append("tests/run.sh is missing")
        elif words[0].endswith("python") and words[1:3] == ["-m", "pytest"]:
            problems += [f"{w} is missing" for w in words[3:] if not w.startswith("-") and not (REPO / w).exists()]
    assert not problems, f"{file}:{line}: " + "; ".join(problems)


def synopsis_flags(code):
    """[(sub-command words, flag)] for each `--flag` on a `paperzoo SUB` line or its continuation lines."""
    found, current = [], None
    for line in code.splitlines():
        stripped = line.split("#")[0]
        if stripped.lstrip().startswith("paperzoo "):
            words = stripped.split()[1:]
            current = [w for w in words[:2] if re.fullmatch(r"[a-z][a-z-]*", w)]
            if current and current[0] not in _subparsers(build_parser()):
                current = None
        elif not line.startswith(" "):
            current = None
        if current:
            found += [(current, flag) for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", stripped)]
    return found


SYNOPSIS_CASES = [pytest.param(_relative(path), code, line, id=f"{path.name}:{line}")
                  for path in DOC_FILES for info, code, line in code_blocks(path)
                  if not info and re.search(r"^\s*paperzoo [a-z]", code, re.M)]


@pytest.mark.backend_free("jax")
@pytest.mark.parametrize("file, code, line", SYNOPSIS_CASES)
def test_synopsis_flags_exist(file, code, line):
    flags = synopsis_flags(code)
    assert flags, f"{file}:{line}: no paperzoo flags found: the parse of the synopsis is broken"
    unknown = []
    for words, flag in flags:
        parser, _ = parser_for(words)
        if flag not in option_strings(parser) and f"--no-{flag[2:]}" not in option_strings(parser):
            unknown.append(f"paperzoo {' '.join(words)} {flag}")
    assert not unknown, f"{file}:{line}: flags the CLI does not have: {unknown}"


@pytest.mark.backend_free("jax")
def test_the_checks_catch_a_wrong_command():
    """The checks above fail on what they are meant to catch (a test that cannot fail is a defect)."""
    assert check_paperzoo_command(["train", "gan", "--epoch", "3"])
    assert check_paperzoo_command(["train", "no-such-recipe"])
    assert check_paperzoo_command(["reproduce", "no-such-paper", "--budget", "cpu"])
    assert not check_paperzoo_command(["reproduce", "resnet", "--budget", "cpu", "--nets", "resnet20_cifar"])
    assert shell_commands("KERAS_BACKEND=jax paperzoo train gan \\\n  --epochs 2   # a comment\n") == [
        ["paperzoo", "train", "gan", "--epochs", "2"]]
    flags = synopsis_flags("paperzoo train RECIPE [--epochs N]\n      [--bogus]\npaperzoo list\n")
    assert flags == [(["train"], "--epochs"), (["train"], "--bogus")]
    parser, _ = parser_for(["evaluate", "few-shot"])
    assert "--shots" in option_strings(parser)
    assert smoke("m.fit(x, batch_size=128, epochs=164)\nm.compile(epochs=5, steps_per_epoch=3)") == (
        "m.fit(x, batch_size=32, epochs=1, steps_per_epoch=2)\nm.compile(epochs=1, steps_per_epoch=3)")


@pytest.mark.backend_free("jax")
def test_every_doc_has_runnable_python_or_none_hidden():
    """The README's quick start is among the blocks that run, and no ```py / ```Python block escapes the test."""
    readme = python_blocks(REPO / "README.md")
    assert len(readme) >= 5, "the README's quick-start blocks are not found"
    for path in DOC_FILES:
        for info, _, line in code_blocks(path):
            assert not info or info[0] in ("python", "bash", "text", "json"), (
                f"{_relative(path)}:{line}: fence {' '.join(info)!r}: use python, python fragment, bash or a plain fence")
