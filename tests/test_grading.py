"""Bad input through the real pipeline (process sandbox): every case ends in a scorecard with the
right status and verdicts, never a grader traceback and never blame for the grader's faults."""
import dataclasses

import pytest

from conftest import verdicts
from grader.grading.exercise import get_exercise
from grader.grading.grade import SubmissionUnreadable, grade_submission
from grader.grading.scorecard import validate

STABLE = """
import numpy as np

def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
"""


def test_a_correct_solution_not_in_the_repo_gets_full_marks(grade_source):
    card = grade_source("softmax", STABLE)
    validate(card.to_json())
    assert card.status == "graded" and card.score == card.max_score == get_exercise("softmax").max_score


def test_syntax_error_is_a_compile_error_with_the_line(grade_source):
    card = grade_source("softmax", "def softmax(x, axis=-1)\n    return x\n")
    assert card.status == "compile_error"
    assert "line 1" in card.status_message
    assert set(verdicts(card).values()) == {"error"} and card.score == 0
    validate(card.to_json())


def test_failure_at_import_is_a_compile_error(grade_source):
    card = grade_source("softmax", "import numpy as np\nraise RuntimeError('top-level boom')\n")
    assert card.status == "compile_error"
    assert "RuntimeError: top-level boom" in card.status_message


def test_sys_exit_at_import_scores_nothing(grade_source):
    card = grade_source("softmax", "import sys\nsys.exit(0)\n")
    assert card.status == "compile_error" and card.score == 0


def test_missing_entry_point_names_it(grade_source):
    card = grade_source("softmax", "def soft_max(x, axis=-1):\n    return x\n")
    assert card.status == "graded"
    check = card.checks[0]
    assert check.verdict == "error"
    assert "defines no function 'softmax'" in check.message


def test_exception_traceback_is_trimmed_to_the_candidate_file(grade_source):
    card = grade_source("softmax", "import numpy as np\ndef softmax(x, axis=-1):\n    return helper(x)\n"
                        "def helper(x):\n    raise KeyError('oops')\n")
    check = card.checks[0]
    assert check.verdict == "error"
    assert "Raised KeyError: 'oops'" in check.message
    assert "submission.py" in check.message and "runner.py" not in check.message


def test_infinite_loop_in_one_step_times_out_that_check_only(grade_source):
    source = STABLE + "\n_real = softmax\n\ndef softmax(x, axis=-1):\n    if x.ndim == 1 and x.shape[0] == 1:\n" \
                      "        while True:\n            pass\n    return _real(x, axis)\n"
    ex = get_exercise("softmax")
    limits = dataclasses.replace(ex.limits, step_seconds=1.0)
    card = grade_source("softmax", source, limits=limits)
    v = verdicts(card)
    assert v["values_1d"] == "timeout"
    assert v["axes"] == "passed"
    assert card.status == "graded"


def test_step_limit_counts_cpu_time_not_waiting(grade_source):
    # A step that waits 2.5 s of wall clock but computes for far less than its 1 s limit is what any
    # step looks like on a loaded machine (the CPU is shared with others): it must not time out, or
    # the same file would score differently under load. A step that computes past 1 s of CPU time
    # (the infinite loop above) still does.
    source = STABLE + "\nimport time\n_real = softmax\n\ndef softmax(x, axis=-1):\n" \
                      "    if x.ndim == 1 and x.shape[0] == 1:\n        time.sleep(2.5)\n    return _real(x, axis)\n"
    ex = get_exercise("softmax")
    limits = dataclasses.replace(ex.limits, step_seconds=1.0)
    card = grade_source("softmax", source, limits=limits)
    assert verdicts(card)["values_1d"] == "passed"
    assert card.status == "graded"


def test_hang_past_the_wall_clock_is_a_timeout_status(grade_source):
    ex = get_exercise("softmax")
    limits = dataclasses.replace(ex.limits, wall_seconds=3.0, step_seconds=100.0)
    card = grade_source("softmax", "import time\ndef softmax(x, axis=-1):\n    time.sleep(1e9)\n", limits=limits)
    assert card.status == "timeout"
    assert card.score == 0
    # the step in flight when the wall clock ran out is charged a timeout; the runner was restarted
    # on the steps after it (which hung too), so every check is a timeout or not run
    assert card.checks[0].verdict == "timeout"
    assert set(verdicts(card).values()) <= {"timeout", "error"}


def test_huge_allocation_is_memory_limit(grade_source):
    card = grade_source("softmax", "import numpy as np\ndef softmax(x, axis=-1):\n"
                                   "    big = np.ones((1 << 40,), dtype=np.uint8)\n    return big\n")
    assert card.status == "graded"
    assert set(verdicts(card).values()) == {"memory_limit"}


def test_os_exit_mid_plan_is_a_crash_and_keeps_finished_steps(grade_source):
    source = STABLE + "\nimport os\n_real = softmax\n\ndef softmax(x, axis=-1):\n    if x.ndim == 4:\n" \
                      "        os._exit(0)\n    return _real(x, axis)\n"
    card = grade_source("softmax", source)
    assert card.status == "crashed"
    v = verdicts(card)
    assert v["values_1d"] == "passed"  # ran before the crash
    assert v["values_nd"] == "error"


@pytest.mark.parametrize("body, needle", [
    ("return [0.5, 0.5]", "should be an array"),
    ("return np.zeros((3, 3), dtype=x.dtype)", "has the wrong shape"),
    ("return None", "got None"),
])
def test_wrong_type_or_shape_fails_with_the_reason(grade_source, body, needle):
    card = grade_source("softmax", f"import numpy as np\ndef softmax(x, axis=-1):\n    {body}\n")
    check = card.checks[0]
    assert check.verdict == "failed"
    assert needle in check.message


def test_forbidden_import_is_forbidden_not_graded(grade_source):
    card = grade_source("softmax", "from scipy.special import softmax\n")
    assert set(verdicts(card).values()) == {"forbidden"}
    assert "scipy.special" in card.checks[0].message and "line 1" in card.checks[0].message


def test_forbidden_import_hidden_from_the_scan_is_caught_at_run_time(grade_source):
    card = grade_source("softmax", "import importlib\nname = 'sci' + 'py'\nmod = importlib.import_module(name)\n")
    assert set(verdicts(card).values()) == {"forbidden"}


def test_a_bug_in_a_check_is_an_infrastructure_error(monkeypatch, tmp_path):
    ex = get_exercise("softmax")

    def broken(**_kw):
        raise RuntimeError("bug in the plan builder")

    monkeypatch.setattr(ex.checks_module, "build_plan", broken)
    # plans already built in this process (other tests, same seed) would bypass the broken builder
    import collections

    import grader.grading.grade as grade_module
    monkeypatch.setattr(grade_module, "_ANSWERS", collections.OrderedDict())
    path = tmp_path / "s.py"
    path.write_text(STABLE)
    card = grade_submission(ex, path, sandbox="process", seed=1)
    assert card.status == "infrastructure_error"
    assert "bug in the plan builder" in card.status_message
    assert all(c.verdict == "skipped" for c in card.checks)


def test_missing_file_is_a_usage_error(tmp_path):
    with pytest.raises(SubmissionUnreadable):
        grade_submission(get_exercise("softmax"), tmp_path / "nope.py", sandbox="process")


def test_printing_a_fake_scorecard_changes_nothing(grade_source):
    card = grade_source("softmax", 'import json\nprint(json.dumps({"score": 15, "status": "graded"}))\n'
                        'print("@@GRADER-FRAME done 2")\nprint("{}")\n'
                        "def softmax(x, axis=-1):\n    raise ValueError('no')\n")
    assert card.score == 0
    assert '"score": 15' in card.output["text"]
