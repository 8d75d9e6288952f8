"""`grade selfcheck` for every exercise: references full, stubs zero, samples as their docstrings say."""
import pytest

from grader.grading.exercise import exercise_ids, get_exercise
from grader.cohort.selfcheck import diagnosis_stats, expected_failures, run_selfcheck, samples_dir


TRACKS = [(i, t) for i in exercise_ids() for t in get_exercise(i).tracks]


@pytest.mark.parametrize("exercise_id, track", TRACKS)
def test_selfcheck(exercise_id, track):
    rows = run_selfcheck([get_exercise(exercise_id, track=track)], seed=99)  # the warm path (trusted files)
    bad = [(r.file, r.expectation, r.status, r.failed_checks, r.note) for r in rows if not r.ok]
    assert not bad
    # counting, not timing, judges every complexity check of a correct file (issue 15)
    assert not [(r.file, r.timed) for r in rows if r.kind in ("reference", "correct") and r.timed]
    kinds = [r.kind for r in rows]
    assert kinds.count("correct") >= 2 and kinds.count("bug") + kinds.count("mistake") >= 5


@pytest.mark.parametrize("exercise_id, track", TRACKS)
def test_every_bug_sample_names_a_check(exercise_id, track):
    for path in samples_dir(get_exercise(exercise_id, track=track)).glob("bug_*.py"):
        assert expected_failures(path), path


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id, track", TRACKS)
def test_selfcheck_scores_do_not_depend_on_the_seed(exercise_id, track):
    """What CI runs: the warm path at 5 seeds for NumPy tracks and 3 for torch ones; every file as
    intended at every seed with one score, no correct file diagnosed, every named diagnosis right."""
    seeds = 5 if track == "numpy" else 3
    rows = run_selfcheck([get_exercise(exercise_id, track=track)], seed=1, seeds=seeds)
    bad = [(r.file, r.expectation, r.scores, r.note) for r in rows if not r.ok]
    assert not bad
    assert all(len(r.scores) == seeds for r in rows if r.kind != "missing")
    stats = diagnosis_stats(rows)
    assert stats.correct_diagnosed == 0 and stats.precision == 1.0


def test_a_bug_sample_without_a_must_fail_line_is_a_failed_row_not_a_crash(tmp_path):
    """A sample whose docstring lacks `Must fail:` makes its row fail with the reason (selfcheck went on
    to a traceback before)."""
    from types import SimpleNamespace  # noqa: PLC0415

    from grader.cohort.selfcheck import _judge_row  # noqa: PLC0415

    sample = tmp_path / "bug_no_line.py"
    sample.write_text('"""Wrong: forgot to say which check it fails."""\n')
    card = SimpleNamespace(checks=[], status="graded", score=1.0, max_score=2.0, all_passed=False, status_message="")
    row = _judge_row(get_exercise("softmax"), sample, "bug", card)
    assert row.ok is False and "no 'Must fail: <check id>' line" in row.note
