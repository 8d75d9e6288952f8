"""Judge one complexity probe of a file in this process: the probe's own steps only (set-up, warm-up and
measured steps), measured for the file and for the reference exactly as a grading measures them, then
judged by the probe's series judge (``grader.judge.probes.series_judge``). Much cheaper than a whole
grading, and the verdict is the one a grading would give (counts and bytes, never the clock)."""
from __future__ import annotations

from pathlib import Path

from grader.grading import diagnosis
from grader.grading.exercise import get_exercise
from grader.grading.grade import _MEASURE_LOCK, build_plan
from grader.judge.judges import JudgeContext, Outcome
from grader.judge.mistakes import Mistake
from grader.judge.probes import measured_groups

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "submissions" / "samples"


def _as_mistake(name: str, path: Path, source: str) -> Mistake:
    return Mistake(name=name, path=path, diagnosis="", must_fail=(), source=source)


def probe_outcome(exercise_id: str, track: str | None, check: str, *, path: Path | None = None,
                  mistake: str | None = None, seed: int = 3) -> Outcome:
    """The outcome of probe ``check`` of ``exercise_id`` (``track``; None: the default) for the file at
    ``path`` or for the bank's mutant ``mistake`` (one of the two).

    Raises:
        StopIteration: the bank has no mutant of that name.
    """
    ex = get_exercise(exercise_id, track=track)
    plan = build_plan(ex, seed)
    if mistake is not None:
        candidate = next(m for m in ex.mistakes if m.name == mistake)
    else:
        candidate = _as_mistake(Path(path).stem, Path(path), Path(path).read_text(encoding="utf-8"))
    reference = _as_mistake("reference", ex.reference_path, ex.reference_path.read_text(encoding="utf-8"))
    got = diagnosis.run_mutant_measured(candidate, plan, check, _MEASURE_LOCK)
    expected = diagnosis.run_mutant_measured(reference, plan, check, _MEASURE_LOCK)
    _, groups = measured_groups(plan, check)
    last = groups[-1][-1]
    ctx = JudgeContext(step=last, plan=plan, got=got.steps.get(last.id), expected=expected.steps[last.id],
                       golden=expected.steps[last.id], candidate_steps=got.steps, expected_steps=expected.steps)
    return last.judge(ctx)
