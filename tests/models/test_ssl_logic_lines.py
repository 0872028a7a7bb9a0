"""Issue 34: every self-supervised trainer's own file stays under 150 lines of logic.

A logic line is a line of the file that holds part of a Python token other than a
comment or a line break (`tokenize`), and is not inside a docstring (the first statement
of the module, a class or a function, when it is a string; `ast`). Blank lines, comment
lines and docstrings do not count; a statement spread over three lines counts three.
Only the trainer's own module counts (`models/<paper>/<paper>.py`), not its presets,
layers or the shared parts it imports (`SelfSupervisedTrainer`, `models/checks.py`,
`layers/multi_crop.py`).
"""

import ast
import io
import pathlib
import tokenize

import pytest

import keras_paperzoo

MODELS = pathlib.Path(keras_paperzoo.__file__).parent / "models"
SSL_TRAINERS = ("simclr", "byol", "moco", "swav", "deepcluster", "cmc", "cpc", "densecl", "instdisc", "invaspread")
LIMIT = 150
SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def logic_lines(source):
    """The number of logic lines of Python `source` (see the module docstring)."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    code = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in SKIPPED:
            code.update(range(token.start[0], token.end[0] + 1))
    return len(code - docstrings)


def test_logic_lines_count_code_not_comments_blank_lines_or_docstrings():
    source = '''"""Module docstring,
on two lines."""

import os  # a comment


def f(x):
    """f's docstring."""
    # a comment line
    y = (x +
         1)
    return """a string
    that is code"""
'''
    # import, def, the two lines of y = (...), and the two lines of the returned string.
    assert logic_lines(source) == 6
    assert logic_lines("") == 0
    assert logic_lines("x = 1\n\n\n# c\n") == 1


@pytest.mark.parametrize("paper", SSL_TRAINERS)
def test_each_ssl_trainer_is_under_150_logic_lines(paper):
    path = MODELS / paper / f"{paper}.py"
    count = logic_lines(path.read_text())
    assert 0 < count < LIMIT, f"{path.name} has {count} logic lines; the limit is {LIMIT - 1}"
