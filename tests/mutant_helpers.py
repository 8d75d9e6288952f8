"""Mutants of the mistake bank as files, so tests grade them by path the way they grade samples.

A one-line mistake lives once, as a mutant (``exercises/<id>/mistakes*/<name>.py``, see
``grader.judge.mistakes``), instead of as a copy of a correct sample with that line changed.
"""
from __future__ import annotations

from pathlib import Path

from grader.grading.exercise import get_exercise


def mutant_file(exercise_id: str, name: str, folder: Path, track: str | None = None) -> Path:
    """Write the full source of mutant ``name`` of ``exercise_id`` (in ``track``) to ``folder/<name>.py``.

    Raises:
        StopIteration: the exercise's bank has no mistake of that name.
    """
    mistake = next(m for m in get_exercise(exercise_id, track=track).mistakes if m.name == name)
    path = Path(folder) / f"{name}.py"
    path.write_text(mistake.source, encoding="utf-8")
    return path
