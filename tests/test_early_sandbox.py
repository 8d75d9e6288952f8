"""``grade submit``'s first sandbox started before the CLI is imported (grader/sandbox/early.py, issue
25): the command line is read as click reads it, the runner is started with the exercise's own
limits and runtime, the grading uses it and scores exactly as a cold run, a runner that does not fit
the job is not used, and none outlives the process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.grading.exercise import exercise_ids, get_exercise
from grader.grading.grade import grade_submission
from grader.sandbox import early
from grader.sandbox.process import WARM_PREFIX

ROOT = Path(__file__).resolve().parent.parent
MHA = str(ROOT / "reference" / "mha.py")


def _essence(card) -> tuple:
    return (card.status, card.score, card.max_score, tuple((c.id, c.verdict, c.points) for c in card.checks))


@pytest.fixture(autouse=True)
def nothing_held():
    early._discard()
    yield
    early._discard()


@pytest.mark.parametrize("argv, expected", [
    (["submit", "mha", MHA], {"exercise_id": "mha", "file": MHA, "sandbox": "auto", "require_isolation": False,
                              "track": None}),
    (["submit", "--sandbox=process", "mha", "--track", "numpy", MHA, "-q", "--seed", "3", "--json"],
     {"exercise_id": "mha", "file": MHA, "sandbox": "process", "require_isolation": False, "track": "numpy"}),
    (["submit", "mha", "--require-isolation", "--out", "x.json", "--", MHA],
     {"exercise_id": "mha", "file": MHA, "sandbox": "auto", "require_isolation": True, "track": None}),
])
def test_a_local_submit_command_line_is_read_as_click_reads_it(argv, expected):
    assert early.submit_request(argv) == expected


@pytest.mark.parametrize("argv", [
    ["batch", "mha", MHA],                                  # another command
    ["submit", "mha", MHA, "--help"],                       # click answers it: nothing to grade
    ["submit", "mha", MHA, "--server", "http://x", "--token", "t"],  # graded by a service
    ["submit", "mha", MHA, "--sandbo", "process"],          # abbreviated or unknown: click's to judge
    ["submit", "mha", str(ROOT / "no-such-file.py")],       # a usage error follows
    ["submit", "mha"],                                      # FILE missing
    ["submit", "mha", MHA, "--seed"],                       # a value missing
    [],
])
def test_anything_else_starts_nothing(argv):
    assert early.submit_request(argv) is None
    assert early.start_for_argv(argv) is False
    assert early.claim("auto", False) is None


@pytest.mark.parametrize("exercise_id", exercise_ids())
def test_the_limits_read_ahead_are_the_exercises_own(exercise_id):
    """The runner started ahead is used only when its limits equal the grading's: read from
    exercise.toml without the exercise module, they must equal load_exercise's for every track."""
    for track in get_exercise(exercise_id).tracks:
        got_track, limits = early.track_limits(exercise_id, track)
        from grader.sandbox.base import Limits  # noqa: PLC0415

        assert got_track == track
        assert Limits(**limits) == get_exercise(exercise_id, track=track).limits
    assert early.track_limits(exercise_id, None)[0] == get_exercise(exercise_id).track
    assert early.track_limits(exercise_id, "fortran") is None
    assert early.track_limits("../" + exercise_id, None) is None


def test_the_runner_started_ahead_grades_as_a_cold_run_and_is_used():
    ex = get_exercise("mha", track="numpy")
    cold = grade_submission(ex, MHA.replace("mha.py", "mha_numpy.py"), sandbox="process", seed=11)
    assert early.start_for_argv(["submit", "mha", "--track", "numpy", MHA, "--sandbox", "process"])
    runner = early._held.warm.result(timeout=60)
    warm = grade_submission(ex, MHA.replace("mha.py", "mha_numpy.py"), sandbox="process", seed=11)
    assert runner.used and not os.path.exists(runner.root)  # given the public part, then gone
    assert early._held is None
    assert _essence(warm) == _essence(cold) and cold.score == cold.max_score


def test_a_runner_that_does_not_fit_the_job_is_not_used():
    """Started for other limits (here: a grading given its own) or another --sandbox, the runner is
    discarded and the part runs cold, with the same result."""
    ex = get_exercise("mha", track="numpy")
    path = MHA.replace("mha.py", "mha_numpy.py")
    assert early.start_for_argv(["submit", "mha", "--track", "numpy", MHA, "--sandbox", "process"])
    runner = early._held.warm.result(timeout=60)
    tighter = ex.limits.__class__(**{**ex.limits.__dict__, "wall_seconds": ex.limits.wall_seconds + 1})
    card = grade_submission(ex, path, sandbox="process", seed=11, limits=tighter)
    assert not runner.used and not runner.alive() and not os.path.exists(runner.root)
    assert card.score == card.max_score

    assert early.start_for_argv(["submit", "mha", "--track", "numpy", MHA, "--sandbox", "process"])
    runner = early._held.warm.result(timeout=60)
    assert early.claim("auto", False) is None  # asked for another --sandbox
    assert not runner.used and not os.path.exists(runner.root)


def _warm_folders() -> set[str]:
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith(WARM_PREFIX)}


@pytest.mark.parametrize("source, code", [("def multi_head_attention(:\n", 1),  # graded: compile error
                                          (None, 2)])                               # usage error: bad --out
def test_the_grade_script_leaves_no_runner_behind(tmp_path, source, code):
    """Through the console script's entry in a real process: a file that never reaches the sandbox
    (it does not compile), or a usage error found after the runner started, leaves no runner process
    and no folder."""
    path = tmp_path / "sub.py"
    path.write_text(source or (ROOT / "reference" / "mha_numpy.py").read_text())
    out = tmp_path / "card.json" if source else tmp_path / "missing-dir" / "x" / "card.json"
    if source is None:
        (tmp_path / "missing-dir").write_text("a file where a folder is needed")
    before = _warm_folders()
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.argv[0] = 'grade'; from grader.entry import run; run()",
                             "submit", "mha", str(path), "--track", "numpy", "--sandbox", "process", "-q",
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == code, stderr[-2000:]
    assert "Traceback" not in stderr
    if source:
        assert json.loads(out.read_text())["status"] == "compile_error"
    # discard kills the runner's process group, then removes its folder (named after the grading's pid)
    assert not {n for n in _warm_folders() - before if n.startswith(f"{WARM_PREFIX}{proc.pid}-")}


def test_the_grade_script_grades_as_the_cli_does(tmp_path):
    """The same file and seed through ``grader.entry`` (runner started ahead) and ``grader.cli`` (no
    early start): the same scorecard."""
    cards = []
    for module in ("grader.entry", "grader.cli"):
        out = tmp_path / f"{module}.json"
        proc = subprocess.run([sys.executable, "-c", f"import sys; sys.argv[0] = 'grade'; from {module} import run; run()",
                               "submit", "mha", MHA, "--sandbox", "process", "--seed", "5", "-q", "--out", str(out)],
                              capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-2000:]
        cards.append(json.loads(out.read_text()))
    first, second = ([(c["id"], c["verdict"], c["points"]) for c in card["checks"]] for card in cards)
    assert first == second and cards[0]["score"] == cards[0]["max_score"]
