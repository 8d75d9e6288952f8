"""Jupyter notebook submissions (issue 21, item 5): the code cells are graded as one file, IPython
syntax is removed and said in a note, messages name cell and line, and a notebook that cannot be
read is a compile error. Notebooks are written with nbformat, graded by the process sandbox."""

from __future__ import annotations

import hashlib
import json

import nbformat
import pytest
from click.testing import CliRunner

from conftest import verdicts
from grader.cli import main
from grader.grading.exercise import get_exercise
from grader.grading.grade import grade_submission
from grader.grading.notebook import (REMOVED_LINE, NotebookInvalid, looks_like_notebook, read_notebook,
                                     submission_text)
from grader.grading.scorecard import validate

IMPORTS = "import numpy as np"
SOFTMAX = """def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)"""


def notebook(*cells: tuple[str, str]) -> bytes:
    """The bytes of an nbformat 4 notebook of ``(kind, source)`` cells (``code`` or ``markdown``)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) if kind == "code" else nbformat.v4.new_markdown_cell(src)
                for kind, src in cells]
    return nbformat.writes(nb).encode("utf-8")


def correct_in_two_cells() -> bytes:
    """Correct softmax in two code cells, with a ``%timeit`` magic and a ``!pip`` line (and markdown)."""
    return notebook(("markdown", "# Softmax"),
                    ("code", "!pip install numpy\n" + IMPORTS),
                    ("code", SOFTMAX + "\n\n%timeit softmax(np.ones(8))\nsoftmax(np.ones(3))"))


@pytest.fixture
def grade_notebook(tmp_path):
    def run(exercise_id: str, data: bytes, name: str = "solution.ipynb", seed: int = 7):
        path = tmp_path / name
        path.write_bytes(data)
        return grade_submission(get_exercise(exercise_id), path, sandbox="process", seed=seed)
    return run


# -- the conversion ---------------------------------------------------------------------------------

def test_code_cells_are_joined_with_magics_and_shell_escapes_removed():
    src = read_notebook(correct_in_two_cells())
    assert src.cells == 3 and src.code_cells == 2
    assert [(r.cell, r.line, r.kind, r.text) for r in src.removed] == [
        (2, 1, "shell escape", "!pip install numpy"), (3, 9, "line magic", "%timeit softmax(np.ones(8))")]
    lines = src.text.splitlines()
    assert lines[0] == REMOVED_LINE and lines[1] == IMPORTS and lines[2] == ""  # a blank line between cells
    assert src.origin[:4] == ((2, 1), (2, 2), None, (3, 1))
    assert src.where(4) == "cell 3, line 1" and src.where(3) is None
    compile(src.text, "submission.py", "exec")  # the joined file is Python
    note = src.note()
    assert "2 code cells" in note and "cell 2, line 1: !pip install numpy" in note and "%timeit" in note


def test_a_cell_magic_leaves_out_its_whole_cell_and_a_magic_in_a_block_keeps_it_valid():
    src = read_notebook(notebook(("code", "%%bash\necho hi\nls"),
                                 ("code", "def f(x):\n    %time y = 1\n    return x\nout = !ls")))
    assert [(r.cell, r.line, r.kind) for r in src.removed] == [
        (1, 1, "cell magic"), (2, 2, "line magic"), (2, 4, "shell escape")]
    assert "echo hi" not in src.text and "    " + REMOVED_LINE in src.text.splitlines()
    compile(src.text, "submission.py", "exec")


def test_a_cell_that_is_python_is_kept_verbatim_even_with_a_percent_line_in_a_string():
    cell = 'TEXT = """\n%d items\n!"""\nx = 1'
    assert read_notebook(notebook(("code", cell))).text == cell + "\n"


def test_relocate_names_cell_and_line_in_tracebacks_scan_and_syntax_messages():
    src = read_notebook(correct_in_two_cells())
    message = ('File "/sandbox/in/submission.py", line 6, in softmax\nuses torch at line 2, which ...\n'
               'SyntaxError (line 4): x; line 5 untouched')
    assert src.relocate(message) == ('File "/sandbox/in/submission.py", line 6 [cell 3, line 3], in softmax\n'
                                     'uses torch at line 2 [cell 2, line 2], which ...\n'
                                     'SyntaxError (line 4) [cell 3, line 1]: x; line 5 untouched')


@pytest.mark.parametrize("data, why", [
    (b'{"cells": [', "not valid JSON"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code"}]}', "not a valid notebook"),
    (b"\xff\xfe{", "not UTF-8"),
])
def test_a_malformed_notebook_is_refused_with_one_sentence(data, why):
    with pytest.raises(NotebookInvalid, match=why):
        read_notebook(data)


def test_stored_bytes_tell_a_notebook_from_a_python_file():
    assert looks_like_notebook(correct_in_two_cells()) and looks_like_notebook(b"\xef\xbb\xbf \n{")
    assert not looks_like_notebook(b"import numpy as np\n") and not looks_like_notebook(b"# {\n")
    assert submission_text(correct_in_two_cells()).startswith(REMOVED_LINE + "\n" + IMPORTS)
    assert submission_text(b"x = 1\n") == "x = 1\n" and submission_text(b"{oops") is None


# -- graded through the real pipeline ------------------------------------------------------------------

def test_correct_notebook_gets_full_marks_and_the_scorecard_says_what_was_removed(grade_notebook):
    data = correct_in_two_cells()
    card = grade_notebook("softmax", data)
    validate(card.to_json())
    assert card.status == "graded" and card.score == card.max_score, card.status_message
    assert card.submission["sha256"] == hashlib.sha256(data).hexdigest()  # the .ipynb's own bytes
    nb = card.submission["notebook"]
    assert nb["cells"] == 3 and nb["code_cells"] == 2
    assert [r["text"] for r in nb["removed"]] == ["!pip install numpy", "%timeit softmax(np.ones(8))"]
    assert "removed, not run" in nb["note"]
    assert card.candidate_view().submission["notebook"] == nb


def test_syntax_error_in_cell_3_is_reported_as_cell_3(grade_notebook):
    data = notebook(("code", IMPORTS), ("markdown", "text"), ("code", "def softmax(x, axis=-1)\n    return x"))
    card = grade_notebook("softmax", data)
    assert card.status == "compile_error" and card.score == 0
    assert "(line 3) [cell 3, line 1]" in card.status_message, card.status_message
    assert set(verdicts(card).values()) == {"error"}
    validate(card.to_json())


def test_notebook_without_the_function_gets_the_status_of_a_py_without_it(grade_notebook, grade_source):
    card = grade_notebook("softmax", notebook(("code", IMPORTS), ("code", "def soft_max(x, axis=-1):\n    return x")))
    plain = grade_source("softmax", IMPORTS + "\n\ndef soft_max(x, axis=-1):\n    return x\n")
    assert card.status == plain.status == "graded" and card.score == plain.score == 0
    assert card.status_message == plain.status_message and "defines no function 'softmax'" in card.status_message
    assert verdicts(card) == verdicts(plain)


def test_malformed_json_is_a_compile_error_not_a_traceback(grade_notebook):
    card = grade_notebook("softmax", b'{"cells": [{"cell_type": "code", "source": "def softmax(x')
    assert card.status == "compile_error" and card.score == 0
    assert card.status_message.startswith("The notebook cannot be read: it is not valid JSON")
    assert "notebook" not in card.submission
    validate(card.to_json())


def test_traceback_and_forbidden_api_point_at_the_cell(grade_notebook):
    raising = notebook(("code", IMPORTS), ("code", "def softmax(x, axis=-1):\n    return helper(x)"),
                       ("code", "def helper(x):\n    raise KeyError('oops')"))
    check = grade_notebook("softmax", raising).checks[0]
    assert "Raised KeyError" in check.message and "[cell 3, line 2]" in check.message, check.message
    forbidden = notebook(("code", IMPORTS), ("code", "from scipy.special import softmax as s\n"
                                                     "def softmax(x, axis=-1):\n    return s(x, axis)"))
    card = grade_notebook("softmax", forbidden)
    assert set(verdicts(card).values()) == {"forbidden"}
    assert "[cell 2, line 1]" in card.status_message, card.status_message


def test_cli_submit_grades_a_notebook(tmp_path):
    path = tmp_path / "mine.ipynb"
    path.write_bytes(correct_in_two_cells())
    out = tmp_path / "card.json"
    result = CliRunner().invoke(main, ["submit", "softmax", str(path), "--sandbox", "process", "--seed", "3",
                                       "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "note: Graded the 2 code cells" in result.output
    doc = json.loads(out.read_text())
    assert doc["submission"]["notebook"]["removed"][0]["text"] == "!pip install numpy"


def test_grade_batch_grades_a_notebook_where_a_py_may_stand(tmp_path):
    from grader.cohort.batch import batch, discover
    from grader.grading.scorecard import read_scorecard

    root = tmp_path / "cohort"
    root.mkdir()
    (root / "ann.ipynb").write_bytes(correct_in_two_cells())
    (root / "ben.py").write_text(IMPORTS + "\n\n" + SOFTMAX + "\n")
    (root / "ben.ipynb").write_bytes(correct_in_two_cells())  # beside ben.py: the .py is graded
    found = discover(root, exercise="softmax")
    assert [(i.candidate, i.path.name) for i in found.items] == [("ann", "ann.ipynb"), ("ben", "ben.py")]
    assert [(p.name, why) for p, why in found.ignored] == [("ben.ipynb", "ben.py is graded instead")]
    out = tmp_path / "out"
    result = batch(root, out, exercise="softmax", jobs=1, sandbox="process", seed=3)
    assert [o.score == o.max_score for o in result.outcomes] == [True, True]
    card = read_scorecard(out / "softmax" / "ann.json")
    assert card.submission["notebook"]["code_cells"] == 2
    assert card.submission["sha256"] == hashlib.sha256((root / "ann.ipynb").read_bytes()).hexdigest()


@pytest.mark.docker
def test_in_the_docker_sandbox_a_notebooks_traceback_names_the_cell(tmp_path):
    raising = notebook(("code", IMPORTS), ("code", "%matplotlib inline\ndef softmax(x, axis=-1):\n    return helper(x)"),
                       ("code", "def helper(x):\n    raise KeyError('oops')"))
    path = tmp_path / "nb.ipynb"
    path.write_bytes(raising)
    card = grade_submission(get_exercise("softmax"), path, sandbox="docker", seed=7)
    assert card.sandbox["backend"] == "docker" and card.status == "graded"
    check = card.checks[0]
    assert "Raised KeyError" in check.message and "[cell 3, line 2]" in check.message, check.message
    assert card.submission["notebook"]["removed"][0]["text"] == "%matplotlib inline"
