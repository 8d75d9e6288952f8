"""Shared fixtures: a helper that grades inline source text through the real pipeline."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from grader.exercise import get_exercise
from grader.grading import grade_submission


@pytest.fixture
def grade_source(tmp_path: Path):
    """Grade ``source`` (dedented) as a submission of ``exercise_id`` with the process sandbox."""

    def run(exercise_id: str, source: str, *, seed: int = 7, limits=None, name: str = "submission.py"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(source))
        return grade_submission(get_exercise(exercise_id), path, sandbox="process", seed=seed, limits=limits)

    return run


def verdicts(card) -> dict[str, str]:
    """Check id -> verdict of a scorecard."""
    return {c.id: c.verdict for c in card.checks}
