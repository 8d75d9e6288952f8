"""Mutants of the mistake bank as files, so tests grade them by path the way they grade samples.

A one-line mistake lives once, as a mutant (``exercises/<id>/mistakes*/<name>.py``, see
``grader.judge.mistakes``), instead of as a copy of a correct sample with that line changed.
"""
from __future__ import annotations

from pathlib import Path

from grader.grading.exercise import get_exercise


def mutant_source(exercise_id: str, name: str, track: str | None = None) -> str:
    """The full source of mutant ``name`` of ``exercise_id`` (in ``track``): a wrong solution file.

    Raises:
        StopIteration: the exercise's bank has no mistake of that name.
    """
    return next(m for m in get_exercise(exercise_id, track=track).mistakes if m.name == name).source


def mutant_file(exercise_id: str, name: str, folder: Path, track: str | None = None) -> Path:
    """Write the full source of mutant ``name`` of ``exercise_id`` (in ``track``) to ``folder/<name>.py``.

    Raises:
        StopIteration: the exercise's bank has no mistake of that name.
    """
    path = Path(folder) / f"{name}.py"
    path.write_text(mutant_source(exercise_id, name, track), encoding="utf-8")
    return path


def assert_named_as(exercise, source: str, name: str, folder: Path, seed: int = 5):
    """Grade ``source`` (a correct solution with one mistake of the bank written into its own style) in
    this process, and assert that the mutant ``name``'s ``Must fail:`` checks fail and that replay
    names ``name`` and no other mistake. Returns the scorecard.

    Raises:
        AssertionError: a named check passed, or the named mistakes are not exactly ``{name}``.
    """
    from grader.grading.grade import _MEASURE_LOCK, grade_submission  # noqa: PLC0415
    from grader.grading.trusted import TrustedInProcess  # noqa: PLC0415

    path = Path(folder) / f"styled_{name}.py"
    path.write_text(source, encoding="utf-8")
    card = grade_submission(exercise, path, seed=seed, trusted_runner=TrustedInProcess(path.name, _MEASURE_LOCK))
    mistake = next(m for m in exercise.mistakes if m.name == name)
    failed = {c.id for c in card.checks if c.verdict != "passed"}
    assert set(mistake.must_fail) <= failed, failed
    named = {c.details.get("mistake") for c in card.checks if c.details.get("mistake")}
    assert named == {name}, {c.id: c.message.splitlines()[0] for c in card.checks if c.verdict != "passed"}
    return card
